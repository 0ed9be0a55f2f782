package sqlite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tableemu/tableemu/emulator/store/sqlite/filtercache"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// sqliteKeys renders a table's keys as SQLite holds them, in the form
// filtercache.Cache.Keys renders the cache's.
func sqliteKeys(t *testing.T, s *Store, tid int64) string {
	t.Helper()
	var b strings.Builder
	err := s.View(context.Background(), func(tx *Tx) error {
		rows, err := tx.query(`SELECT pk, rk FROM entities WHERE tid = ? ORDER BY pk, rk`, tid)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			b.WriteString(string(rows.Bytes(0)) + "|" + string(rows.Bytes(1)) + ";")
		}
		return rows.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// scanAll follows a filter's pages to the end, with the filter cache on or
// off, and renders every page (entities with their Timestamp and
// properties, continuation, count).
func scanAll(t *testing.T, s *Store, tb Table, filter string, top int, cached bool) (out string, hits int64) {
	t.Helper()
	f, err := odata.ParseFilter(filter)
	if err != nil {
		t.Fatal(err)
	}
	cacheScans = cached
	defer func() { cacheScans = true }()
	before := s.cacheHits.Load()
	var b strings.Builder
	var start *Key
	for {
		var page EntityPage
		err := s.View(context.Background(), func(tx *Tx) error {
			var err error
			page, err = tx.QueryEntities(tb, EntityQuery{Filter: f, Top: top, Start: start})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entities {
			fmt.Fprintf(&b, "%s@%d ", fingerprint(e), e.Timestamp)
		}
		fmt.Fprintf(&b, "| next=%v scanned=%d\n", page.Next, page.Scanned)
		if page.Next == nil {
			return b.String(), s.cacheHits.Load() - before
		}
		start = page.Next
	}
}

// TestFilterCacheWritesThrough: inserts, replaces, deletes and batches of
// several closures in one commit — some of them failing and rolled back
// to their savepoint — leave the cache holding exactly SQLite's rows, and
// scans from it return what scans of SQLite return, page by page. Keys
// outside the Basic Multilingual Plane check that the cache orders keys
// in their stored form, as SQLite does.
func TestFilterCacheWritesThrough(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	var tb Table
	if err := s.Update(ctx, func(tx *Tx) (err error) { tb, err = tx.CreateTable("a", "wt"); return }); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	keys := []string{"a", "b", "ab", "\U0001F600", "\uFFFD", "z\U0001F600", "zz", ""}
	failed := errors.New("rolled back")
	for round := 0; round < 40; round++ {
		var wg sync.WaitGroup
		for c := 0; c < 6; c++ { // concurrent closures share one commit
			wg.Add(1)
			go func(fail bool) {
				defer wg.Done()
				s.Update(ctx, func(tx *Tx) error {
					for i := 0; i < 5; i++ {
						e := &edm.Entity{PartitionKey: keys[r.IntN(len(keys))], RowKey: keys[r.IntN(len(keys))] + fmt.Sprint(r.IntN(3)),
							Properties: []edm.Property{{Name: "V", Value: edm.NewInt32(int32(r.IntN(10)))}}}
						var err error
						switch r.IntN(3) {
						case 0:
							err = tx.InsertEntity(tb, e)
						case 1:
							err = tx.PutEntity(tb, e, 0)
						default:
							err = tx.DeleteEntity(tb, e.PartitionKey, e.RowKey)
						}
						if err != nil && !errors.Is(err, ErrEntityExists) && !errors.Is(err, ErrEntityNotFound) {
							return err
						}
					}
					if fail {
						return failed
					}
					return nil
				})
			}(c%3 == 0)
		}
		wg.Wait()
		got, ok := s.fc.Keys(tb.ID)
		if !ok {
			t.Fatal("a table created by this store is not cached")
		}
		if want := sqliteKeys(t, s, tb.ID); got != want {
			t.Fatalf("round %d: cache holds\n%s\nSQLite holds\n%s", round, got, want)
		}
	}
	for _, filter := range []string{"V ge 5", "V lt 3 and PartitionKey ge 'ab'", "V eq 1 or RowKey gt 'z'",
		"PartitionKey eq '\U0001F600' and RowKey gt 'a' and V ne 2", "PartitionKey gt 'a' and PartitionKey le 'zz' and V gt 0"} {
		for _, top := range []int{1, 3, 1000} {
			got, hits := scanAll(t, s, tb, filter, top, true)
			want, _ := scanAll(t, s, tb, filter, top, false)
			if got != want {
				t.Fatalf("%s, top %d: from the cache\n%s\nfrom SQLite\n%s", filter, top, got, want)
			}
			if hits == 0 {
				t.Fatalf("%s: no page read the cache", filter)
			}
		}
	}
}

// TestFilterCacheSnapshots: scans from the cache see the table as their
// snapshot does while a writer changes it. Every commit sets one value V
// on every entity of the table, so a scan that mixed two commits, or read
// a state older or newer than its snapshot's, would return entities whose
// V differs from the one SQLite shows the same transaction. Compactions
// run all along, so scans also read trees whose arena was replaced.
func TestFilterCacheSnapshots(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	// Every commit overwrites the whole table, so most start a
	// compaction.
	s.fc.SetHooks(&filtercache.Hooks{CompactEarly: true})
	var tb Table
	const n = 100
	write := func(v int32) error {
		return s.Update(ctx, func(tx *Tx) error {
			for i := 0; i < n; i++ {
				e := &edm.Entity{PartitionKey: fmt.Sprintf("p%d", i%7), RowKey: fmt.Sprintf("r%03d", i),
					Properties: []edm.Property{{Name: "V", Value: edm.NewInt32(v)}}}
				if err := tx.PutEntity(tb, e, 0); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := s.Update(ctx, func(tx *Tx) (err error) { tb, err = tx.CreateTable("a", "snap"); return }); err != nil {
		t.Fatal(err)
	}
	if err := write(0); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan error)
	go func() {
		v := int32(1)
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if err := write(v); err != nil {
				done <- err
				return
			}
			v++
		}
	}()
	f, _ := odata.ParseFilter("V ge 0")
	var hits int64
	deadline := time.Now().Add(time.Second)
	for scans := 0; time.Now().Before(deadline) || hits == 0 && scans < 100_000; scans++ {
		before := s.cacheHits.Load()
		var page EntityPage
		var first *edm.Entity
		err := s.View(ctx, func(tx *Tx) error {
			// Read through SQLite first: the snapshot begins here, and
			// the scan must agree with it.
			var err error
			if first, err = tx.GetEntity(tb, "p0", "r000"); err != nil {
				return err
			}
			if scans%2 == 0 {
				time.Sleep(50 * time.Microsecond) // a commit may come in between
			}
			page, err = tx.QueryEntities(tb, EntityQuery{Filter: f, Top: 1000})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		hits += s.cacheHits.Load() - before
		if len(page.Entities) != n {
			t.Fatalf("scan %d: %d entities, want %d", scans, len(page.Entities), n)
		}
		want := first.Properties[0].Value.N
		for _, e := range page.Entities {
			if v, _ := e.Get("V"); v.N != want {
				t.Fatalf("scan %d: %s has V=%d, the snapshot has V=%d", scans, e.RowKey, v.N, want)
			}
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if hits == 0 {
		t.Fatal("no scan read the cache while the table was written")
	}
}

// TestFilterCacheLoads: a table that was on disk before Open is read
// into the cache after a scan examined enough of it, and the scans after
// that read the cache and answer as SQLite does. A table larger than the
// budget is never loaded; one written during its load is not installed
// stale.
func TestFilterCacheLoads(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	tb := writeTables(t, dir, 2000, "load")[0]
	preloadOn = false // the first scan loads the table (see TestFilterCachePreload)
	defer func() { preloadOn = true }()
	for _, budget := range []int64{1 << 10, 0} {
		s, err := openStore(ctx, Options{Dir: dir, FilterCache: budget, NoAutoIndex: true})
		if err != nil {
			t.Fatal(err)
		}
		want, hits := scanAll(t, s, tb, "Tag eq 't7'", 1000, true)
		if hits != 0 {
			t.Fatal("a table on disk before Open was read from the cache at once")
		}
		s.fc.WaitLoads()
		got, hits := scanAll(t, s, tb, "Tag eq 't7'", 1000, true)
		if got != want {
			t.Fatalf("budget %d: after the load\n%s\nbefore\n%s", budget, got, want)
		}
		if loaded := hits > 0; loaded != (budget == 0) {
			t.Fatalf("budget %d: read from the cache: %v", budget, loaded)
		}
		tree, load, wait := s.fc.Lookup(tb.ID, s.fc.Committed())
		if tree.Cached() != (budget == 0) || load || wait != nil {
			// Too big: no scan reads the whole table again in vain.
			t.Fatalf("budget %d: cached %v, to be loaded again %v, loading %v", budget, tree.Cached(), load, wait != nil)
		}
		s.Close()
	}
}

// TestFilterCacheBounded: past its budget the cache lets go of the tables
// scanned least recently, whose scans go back to SQLite with the same
// answers; it keeps the one being scanned.
func TestFilterCacheBounded(t *testing.T) {
	s, err := openStore(context.Background(), Options{Dir: t.TempDir(), FilterCache: 200 << 10, NoAutoIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	fill := func(name string) Table {
		var tb Table
		err := s.Update(ctx, func(tx *Tx) error {
			var err error
			if tb, err = tx.CreateTable("a", name); err != nil {
				return err
			}
			for i := 0; i < 500; i++ {
				e := &edm.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%04d", i),
					Properties: []edm.Property{{Name: "Pad", Value: edm.NewString(strings.Repeat("x", 100))}, {Name: "I", Value: edm.NewInt32(int32(i))}}}
				if err := tx.InsertEntity(tb, e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return tb
	}
	first := fill("first")
	if _, hits := scanAll(t, s, first, "I lt 10", 1000, true); hits == 0 {
		t.Fatal("the first table is not cached")
	}
	var last Table
	for i := 0; i < 3; i++ {
		last = fill(fmt.Sprintf("more%d", i))
	}
	if err := s.fc.Check(); err != nil {
		t.Fatal(err)
	}
	if total := s.fc.Stats().Bytes; total > 200<<10 {
		t.Fatalf("the cache holds %d bytes, over its budget", total)
	}
	if _, ok := s.fc.Keys(last.ID); !ok {
		t.Fatal("the table written last was evicted")
	}
	for _, tb := range []Table{first, last} {
		got, _ := scanAll(t, s, tb, "I lt 10", 1000, true)
		want, _ := scanAll(t, s, tb, "I lt 10", 1000, false)
		if got != want || !strings.Contains(got, "r0009") {
			t.Fatalf("%s: \n%s\nwant\n%s", tb.Name, got, want)
		}
	}
}

// TestFilterCacheRestore: a snapshot restore, which changes tables in
// bulk, empties the cache, and scans after it see the restored rows.
func TestFilterCacheRestore(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	put := func(tb Table, v int32) {
		err := s.Update(ctx, func(tx *Tx) error {
			tb, err := tx.GetTable("a", tb.Name) // as requests do: a snapshot rebases it
			if err != nil {
				return err
			}
			return tx.PutEntity(tb, &edm.Entity{PartitionKey: "p", RowKey: "r", Properties: []edm.Property{{Name: "V", Value: edm.NewInt32(v)}}}, 0)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var tb Table
	if err := s.Update(ctx, func(tx *Tx) (err error) { tb, err = tx.CreateTable("a", "r"); return }); err != nil {
		t.Fatal(err)
	}
	put(tb, 1)
	if err := s.Update(ctx, func(tx *Tx) error { _, _, err := tx.SaveSnapshot("a", "s"); return err }); err != nil {
		t.Fatal(err)
	}
	put(tb, 2)
	if got, _ := scanAll(t, s, tb, "V gt 0", 10, true); !strings.Contains(got, "V=Edm.Int32:2") {
		t.Fatalf("before the restore: %s", got)
	}
	if err := s.Update(ctx, func(tx *Tx) error { _, err := tx.RestoreSnapshot("a", "s"); return err }); err != nil {
		t.Fatal(err)
	}
	var now Table
	if err := s.View(ctx, func(tx *Tx) (err error) { now, err = tx.GetTable("a", "r"); return }); err != nil {
		t.Fatal(err)
	}
	got, _ := scanAll(t, s, now, "V gt 0", 10, true)
	want, _ := scanAll(t, s, now, "V gt 0", 10, false)
	if got != want || !strings.Contains(got, "V=Edm.Int32:1") {
		t.Fatalf("after the restore: %s, want %s", got, want)
	}
}

// TestFilterCacheLargeValues: the cache keeps values up to
// filtercache.SlimMax bytes.
// A filter on a property that some entity holds a larger value of scans
// SQLite; one on the other properties reads the cache and still returns
// the large values, read from SQLite.
func TestFilterCacheLargeValues(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	var tb Table
	err := s.Update(ctx, func(tx *Tx) error {
		var err error
		if tb, err = tx.CreateTable("a", "large"); err != nil {
			return err
		}
		for i := 0; i < 50; i++ {
			doc := fmt.Sprintf("d%d", i)
			if i%10 == 3 {
				doc = strings.Repeat("D", filtercache.SlimMax+1) + doc
			}
			e := &edm.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%02d", i), Properties: []edm.Property{
				{Name: "Doc", Value: edm.NewString(doc)}, {Name: "I", Value: edm.NewInt32(int32(i))},
				{Name: "Bin", Value: edm.NewBinary([]byte(strings.Repeat("b", 10*(i%3))))}}}
			if err := tx.InsertEntity(tb, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		filter string
		cached bool
	}{
		{"I ge 0", true},
		{"I gt 1 and I lt 14", true},
		{"Bin ne X'00'", true},
		{"Doc ge 'D'", false},
		{"I lt 5 or Doc eq 'd7'", false},
	} {
		got, hits := scanAll(t, s, tb, tc.filter, 7, true)
		want, _ := scanAll(t, s, tb, tc.filter, 7, false)
		if got != want {
			t.Fatalf("%s: from the cache\n%s\nfrom SQLite\n%s", tc.filter, got, want)
		}
		if (hits > 0) != tc.cached {
			t.Fatalf("%s: %d pages from the cache, want cached %v", tc.filter, hits, tc.cached)
		}
		if tc.cached && tc.filter == "I ge 0" && !strings.Contains(got, strings.Repeat("D", filtercache.SlimMax+1)+"d13") {
			t.Fatalf("%s: the large values are missing:\n%s", tc.filter, got)
		}
	}
}
