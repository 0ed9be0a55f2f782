package sqlite

import (
	"context"
	"fmt"
	"strings"
	"testing"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/tableemu/tableemu/odata/edm"
)

// TestReaderLeavesTheWriterItsCache: the page caches of all connections
// share one pool (conn.trimCache). A reader that scans a table larger
// than its cache takes the writer's pages; if it kept them once back in
// its pool, the writer would read its path from the root again for every
// write. The reader must come back within its own share, and the writes
// that follow must find their pages in the writer's cache.
func TestReaderLeavesTheWriterItsCache(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	var a, b Table
	err := s.Update(ctx, func(tx *Tx) (err error) {
		if a, err = tx.CreateTable("acct", "scanned"); err != nil {
			return err
		}
		b, err = tx.CreateTable("acct", "written")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// 12 MB in "scanned": three times a reader's cache, most of the
	// writer's 16 MB, which keeps what it wrote.
	pad := strings.Repeat("x", 1000)
	for g := range 24 {
		err := s.Update(ctx, func(tx *Tx) error {
			for i := range 500 {
				e := &edm.Entity{PartitionKey: fmt.Sprintf("p%02d", i%10), RowKey: fmt.Sprintf("r%06d", g*500+i),
					Properties: []edm.Property{{Name: "Pad", Value: edm.NewString(pad)}}}
				if err := tx.InsertEntity(a, e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	// A scan of every row on a reader that reads with pread, so that each
	// page it reads goes into the shared pool.
	var used int64
	var reader *conn
	err = s.view(ctx, s.rp, func(tx *Tx) error {
		reader = tx.c
		r, err := tx.query(`SELECT props FROM entities WHERE tid = ?`, a.ID)
		if err != nil {
			return err
		}
		for r.Next() {
		}
		used = tx.c.cacheUsed()
		return r.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	if used <= readerCacheMax {
		t.Fatalf("the scan kept %d bytes of pages: no more than a reader's own share (%d), so it proves nothing", used, readerCacheMax)
	}
	if after := reader.cacheUsed(); after > readerCacheMax {
		t.Fatalf("the reader went back to its pool with %d bytes of pages, more than its share of %d", after, readerCacheMax)
	}

	// Then 40 groups of 100 inserts in key order into another table: with
	// its cache, the writer reads next to nothing; starved, it reads the
	// b-tree's path for every insert (about 1,070 pages per group here
	// when the reader kept its pages).
	var misses int64
	for g := range 40 {
		err := s.Update(ctx, func(tx *Tx) error {
			m0 := tx.c.dbStatus(sqlite3.SQLITE_DBSTATUS_CACHE_MISS)
			for i := range 100 {
				e := &edm.Entity{PartitionKey: fmt.Sprintf("b%04d", g), RowKey: fmt.Sprintf("r%03d", i),
					Properties: []edm.Property{{Name: "Pad", Value: edm.NewString(pad)}}}
				if err := tx.InsertEntity(b, e); err != nil {
					return err
				}
			}
			misses += tx.c.dbStatus(sqlite3.SQLITE_DBSTATUS_CACHE_MISS) - m0
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("writer: %d pages read per group of 100 inserts; scan kept %d bytes", misses/40, used)
	if per := misses / 40; per > 60 {
		t.Fatalf("the writer read %d pages per group of 100 inserts after the scan: its cache is starved", per)
	}
}
