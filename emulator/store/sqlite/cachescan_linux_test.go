package sqlite

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/tableemu/tableemu/odata/edm"
)

// TestCachedScanKeepsOffTheMap: a scan answered from the filter cache
// reads the entities it returns with large values through read(), not
// the memory map, so the resident set does not grow by the pages they are
// on; the reader has its map back afterwards, and the answer is SQLite's.
func TestCachedScanKeepsOffTheMap(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := openStore(ctx, Options{Dir: dir, NoAutoIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// 2,000 entities with a 2,000-character value each: 4 MB on about a
	// thousand pages, every one of which the scan returns.
	pad := strings.Repeat("x", 2000)
	var tb Table
	err = s.Update(ctx, func(tx *Tx) error {
		if tb, err = tx.CreateTable("a", "wide"); err != nil {
			return err
		}
		for i := range 2000 {
			e := &edm.Entity{PartitionKey: fmt.Sprintf("p%d", i%10), RowKey: fmt.Sprintf("r%04d", i),
				Properties: []edm.Property{{Name: "Tag", Value: edm.NewString("t")}, {Name: "Pad", Value: edm.NewString(pad)}}}
			if err := tx.InsertEntity(tb, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.loadTable(tb.ID)
	s.fc.WaitLoads()
	if _, ok := s.fc.Keys(tb.ID); !ok {
		t.Fatal("the table was not cached")
	}

	before := mappedRSS(t, s.path)
	got, hits := scanAll(t, s, tb, "Tag eq 't'", 1000, true)
	grew := mappedRSS(t, s.path) - before
	if hits == 0 {
		t.Fatal("the scan did not read the cache")
	}
	if want, _ := scanAll(t, s, tb, "Tag eq 't'", 1000, false); got != want {
		t.Fatalf("from the cache:\n%.300s\nfrom SQLite:\n%.300s", got, want)
	}
	// Mapped, the scan made 4 MB resident; a few pages (the header, a
	// page the pragma's schema check reads) may still come through it.
	if grew > 256<<10 {
		t.Errorf("the cached scan added %d KiB of the database's map to the resident set", grew>>10)
	}
	err = s.View(ctx, func(tx *Tx) error {
		var size int64
		if err := tx.queryRow("PRAGMA mmap_size").Scan(&size); err != nil {
			return err
		}
		if !tx.c.mapped || size == 0 {
			t.Errorf("after a cached scan the reader is not mapped: mapped %v, mmap_size %d", tx.c.mapped, size)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// mappedRSS is the resident size in bytes of this process's maps of file.
func mappedRSS(t *testing.T, file string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps:", err)
	}
	defer f.Close()
	var total int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":"):
			// A map's first line: address range, perms, offset, device, inode, path.
			in = len(fields) >= 6 && fields[5] == file
		case in && len(fields) == 3 && fields[0] == "Rss:":
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			total += kb << 10
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return total
}
