package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tableemu/tableemu/emulator/store/sqlite/filtercache"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// writeTables creates tables of n entities each in a database in dir
// and closes it, so that the tables are on disk before the next Open.
func writeTables(t *testing.T, dir string, n int, names ...string) []Table {
	t.Helper()
	ctx := context.Background()
	s, err := openStore(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var tbs []Table
	for _, name := range names {
		err = s.Update(ctx, func(tx *Tx) error {
			tb, err := tx.CreateTable("a", name)
			if err != nil {
				return err
			}
			tbs = append(tbs, tb)
			for i := 0; i < n; i++ {
				e := &edm.Entity{PartitionKey: fmt.Sprintf("p%d", i%10), RowKey: fmt.Sprintf("r%04d", i),
					Properties: []edm.Property{{Name: "Tag", Value: edm.NewString(fmt.Sprintf("t%d", i%100))}}}
				if err := tx.InsertEntity(tb, e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return tbs
}

// TestFilterCachePreload: Open reads the tables of a database of moderate
// size into the cache before any scan asks, and scans of them read the
// cache and answer as SQLite does. A database file larger than
// preloadFactor times the budget is not read at Open.
func TestFilterCachePreload(t *testing.T) {
	dir := t.TempDir()
	tbs := writeTables(t, dir, 1500, "one", "two")
	ctx := context.Background()
	s, err := openStore(ctx, Options{Dir: dir, NoAutoIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	s.fc.WaitLoads()
	for _, tb := range tbs {
		if _, ok := s.fc.Keys(tb.ID); !ok {
			t.Fatalf("table %s is not cached after Open", tb.Name)
		}
		want, _ := scanAll(t, s, tb, "Tag eq 't7'", 10, false)
		got, hits := scanAll(t, s, tb, "Tag eq 't7'", 10, true)
		if hits == 0 || got != want {
			t.Fatalf("table %s: %d pages from the cache; got\n%s\nwant\n%s", tb.Name, hits, got, want)
		}
	}
	s.Close()

	fi, err := os.Stat(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	budget := fi.Size()/preloadFactor - 1
	s, err = openStore(ctx, Options{Dir: dir, NoAutoIndex: true, FilterCache: budget})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.fc.WaitLoads()
	for _, tb := range tbs {
		if _, ok := s.fc.Keys(tb.ID); ok {
			t.Fatalf("table %s was read at Open though the file is %d bytes against a budget of %d", tb.Name, fi.Size(), budget)
		}
	}
}

// TestFilterCachePreloadCountsTheLog: after a kill the write-ahead log may
// hold the data the file does not yet; Open weighs both against the budget.
// (The long values stay out of the cache, so the table fits a budget of a
// quarter of the files.)
func TestFilterCachePreloadCountsTheLog(t *testing.T) {
	ctx := context.Background()
	dir, crashed := t.TempDir(), t.TempDir()
	s, err := openStore(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var tb Table
	err = s.Update(ctx, func(tx *Tx) error {
		if tb, err = tx.CreateTable("a", "logged"); err != nil {
			return err
		}
		for i := range 500 {
			e := &edm.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%04d", i),
				Properties: []edm.Property{{Name: "Tag", Value: edm.NewString("t")}, {Name: "Pad", Value: edm.NewString(strings.Repeat("x", 1000))}}}
			if err := tx.InsertEntity(tb, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The files as a kill would leave them: the commit is in the log.
	var size [2]int64
	for i, name := range []string{FileName, FileName + "-wal"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(crashed, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		size[i] = int64(len(b))
	}
	if size[1] < 2*size[0] {
		t.Fatalf("the log (%d bytes) does not hold most of the data (file %d bytes)", size[1], size[0])
	}
	for _, budget := range []int64{(size[0]+size[1])/preloadFactor - 1, (size[0] + size[1]) / preloadFactor} {
		s, err := openStore(ctx, Options{Dir: crashed, NoAutoIndex: true, FilterCache: budget})
		if err != nil {
			t.Fatal(err)
		}
		s.fc.WaitLoads()
		_, cached := s.fc.Keys(tb.ID)
		s.Close()
		if want := budget*preloadFactor >= size[0]+size[1]; cached != want {
			t.Errorf("file %d and log %d bytes, budget %d: read at Open %v, want %v", size[0], size[1], budget, cached, want)
		}
	}
}

// TestFilterCacheLoadStopsWhenFull: a load counts its tree against the
// budget as it reads, and stops when the tables already cached leave no
// room for it, rather than read the whole table and drop it then.
func TestFilterCacheLoadStopsWhenFull(t *testing.T) {
	ctx := context.Background()
	const budget = 1 << 20
	s, err := openStore(ctx, Options{Dir: t.TempDir(), FilterCache: budget, NoAutoIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fill := func(name string, n int) Table {
		var tb Table
		err := s.Update(ctx, func(tx *Tx) (err error) {
			if tb, err = tx.CreateTable("a", name); err != nil {
				return err
			}
			for i := range n {
				e := &edm.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%05d", i),
					Properties: []edm.Property{{Name: "Tag", Value: edm.NewString(fmt.Sprintf("t%d", i%100))}}}
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
	// Each about 0.7 MiB counted: the second evicts the first.
	first, second := fill("first", 5000), fill("second", 5000)
	if _, ok := s.fc.Keys(first.ID); ok {
		t.Fatal("the first table is still cached")
	}
	held := s.fc.Stats().Bytes
	var read error
	loaded := false
	s.fc.Load(first.ID, func(tid int64, l *filtercache.Loader) error {
		loaded = true
		read = s.readTable(tid, l)
		return read
	})
	s.fc.WaitLoads()
	if !loaded {
		t.Fatal("no load started")
	}
	if !errors.Is(read, filtercache.ErrNoRoom) {
		t.Fatalf("the load ended with %v, want ErrNoRoom", read)
	}
	_, load, _ := s.fc.Lookup(first.ID, s.fc.Committed())
	if total := s.fc.Stats().Bytes; total != held || !load {
		t.Fatalf("after the load the cache counts %d bytes (may be loaded again %v), want %d as before", total, load, held)
	}
	if _, ok := s.fc.Keys(second.ID); !ok {
		t.Fatal("the second table left the cache")
	}
}

// TestFilterCacheScanWaitsForLoad: a scan of a table being loaded waits
// for the load and reads the cache, with the answer SQLite gives; a scan
// whose request ends while it waits gives up with the context's error.
func TestFilterCacheScanWaitsForLoad(t *testing.T) {
	s, tb := openUnloaded(t, 1500, "wait")
	ctx := context.Background()
	want, _ := scanAll(t, s, tb, "Tag eq 't7'", 10, false)

	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	s.fc.SetHooks(&filtercache.Hooks{Load: func(int64) { close(started); <-release }})
	// Before Close, which waits for the load, also when the test fails.
	defer free()
	s.loadTable(tb.ID)
	<-started

	f, err := odata.ParseFilter("Tag eq 't7'")
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error, 1)
	go func() {
		gaveUp <- s.View(cctx, func(tx *Tx) error {
			_, err := tx.QueryEntities(tb, EntityQuery{Filter: f, Top: 10})
			return err
		})
	}()
	waitFor(t, func() bool { return s.cacheWaits.Load() == 1 })
	cancel()
	select {
	case err := <-gaveUp:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("a scan whose context ended while it waited: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a scan whose context ended kept waiting for the load")
	}

	type result struct {
		out  string
		hits int64
	}
	done := make(chan result, 1)
	go func() {
		out, hits := scanAll(t, s, tb, "Tag eq 't7'", 10, true)
		done <- result{out, hits}
	}()
	waitFor(t, func() bool { return s.cacheWaits.Load() == 2 })
	free()
	r := <-done
	// The table was not cached when the scan began: it read the cache
	// only because it waited for the load.
	if r.hits == 0 || r.out != want {
		t.Fatalf("%d pages from the cache; got\n%s\nwant\n%s", r.hits, r.out, want)
	}
}

// openUnloaded writes a table of n entities (writeTables) and opens its
// database without the start-up read, so that the test decides when the
// table loads. The store closes when the test ends.
func openUnloaded(t *testing.T, n int, name string) (*Store, Table) {
	t.Helper()
	dir := t.TempDir()
	tb := writeTables(t, dir, n, name)[0]
	preloadOn = false
	defer func() { preloadOn = true }() // read only by Open
	s, err := openStore(context.Background(), Options{Dir: dir, NoAutoIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, tb
}

// waitFor polls cond for up to a minute.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

// TestFilterCacheLoadRacesWrites: a write to a table the cache does not
// hold records no entity for it (opTouch: filtercache's TestPutRecords),
// and a load that races such writes never leaves the cache without one of
// them. First the worst interleaving, forced: the load reads the table
// and installs its tree after the write was recorded and before it
// commits. Then loads again and again beside a stream of inserts,
// replaces and deletes. After each, the cache holds SQLite's keys, or
// nothing, and scans from it answer as scans of SQLite.
func TestFilterCacheLoadRacesWrites(t *testing.T) {
	s, tb := openUnloaded(t, 1500, "race")
	ctx := context.Background()
	put := func(tx *Tx, i int, tag string) error {
		return tx.PutEntity(tb, &edm.Entity{PartitionKey: fmt.Sprintf("p%d", i%10), RowKey: fmt.Sprintf("r%04d", i),
			Properties: []edm.Property{{Name: "Tag", Value: edm.NewString(tag)}}}, 0)
	}
	check := func(when string) {
		t.Helper()
		if keys, ok := s.fc.Keys(tb.ID); ok && keys != sqliteKeys(t, s, tb.ID) {
			t.Fatalf("%s: the cache's keys differ from SQLite's", when)
		}
		want, _ := scanAll(t, s, tb, "Tag eq 't7'", 100, false)
		if got, _ := scanAll(t, s, tb, "Tag eq 't7'", 100, true); got != want {
			t.Fatalf("%s: from the cache\n%s\nfrom SQLite\n%s", when, got, want)
		}
	}
	// The table's first write makes it known to the cache as not held.
	if err := s.Update(ctx, func(tx *Tx) error { return put(tx, 2000, "t1") }); err != nil {
		t.Fatal(err)
	}
	err := s.Update(ctx, func(tx *Tx) error {
		if err := put(tx, 2001, "t7"); err != nil {
			return err
		}
		s.loadTable(tb.ID) // reads the snapshot before this write
		waitFor(t, func() bool { _, ok := s.fc.Keys(tb.ID); return ok })
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.fc.Keys(tb.ID); ok {
		t.Fatal("the tree installed between a write and its commit was kept")
	}
	check("after a load installed between a write and its commit")

	n := 0
	for round := 0; round < 30; round++ {
		s.fc.Forget(tb.ID)
		stop, wrote := make(chan struct{}), make(chan error, 1)
		go func() {
			for ; ; n++ {
				select {
				case <-stop:
					wrote <- nil
					return
				default:
				}
				err := s.Update(ctx, func(tx *Tx) error {
					i := n * 7 % 2200
					if n%5 == 4 {
						if err := tx.DeleteEntity(tb, fmt.Sprintf("p%d", i%10), fmt.Sprintf("r%04d", i)); err != ErrEntityNotFound {
							return err
						}
						return nil
					}
					return put(tx, i, fmt.Sprintf("t%d", n%11))
				})
				if err != nil {
					wrote <- err
					return
				}
			}
		}()
		s.loadTable(tb.ID)
		s.fc.WaitLoads()
		close(stop)
		if err := <-wrote; err != nil {
			t.Fatal(err)
		}
		// Compared once the writes stopped: both scans see one state.
		check(fmt.Sprintf("round %d", round))
	}
}

// TestFilterCacheLargeNamesAfterReload: a write records only the names of
// its large values its table's cache did not know (filtercache's
// TestPutRecords); should the table's tree be replaced before the write
// commits — forgotten, then loaded from a snapshot in which no entity has
// a large value of that name — the name still ends up in the new tree's
// list, and a filter on it reads SQLite, which holds the value the slim
// form left out.
func TestFilterCacheLargeNamesAfterReload(t *testing.T) {
	s, tb := openUnloaded(t, 10, "names")
	ctx := context.Background()
	long := strings.Repeat("D", filtercache.SlimMax+1)
	doc := func(rk string) *edm.Entity {
		return &edm.Entity{PartitionKey: "p", RowKey: rk, Properties: []edm.Property{{Name: "Doc", Value: edm.NewString(long)}}}
	}
	s.loadTable(tb.ID)
	s.fc.WaitLoads()
	// Doc becomes a known large name, and stays one after its entity goes.
	for _, fn := range []func(tx *Tx) error{
		func(tx *Tx) error { return tx.InsertEntity(tb, doc("a")) },
		func(tx *Tx) error { return tx.DeleteEntity(tb, "p", "a") },
	} {
		if err := s.Update(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	err := s.Update(ctx, func(tx *Tx) error {
		if err := tx.InsertEntity(tb, doc("b")); err != nil {
			return err
		}
		s.fc.Forget(tb.ID)
		s.loadTable(tb.ID) // a snapshot without any large Doc
		waitFor(t, func() bool { _, ok := s.fc.Keys(tb.ID); return ok })
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	filter := "Doc eq '" + long + "'"
	want, _ := scanAll(t, s, tb, filter, 10, false)
	if got, _ := scanAll(t, s, tb, filter, 10, true); got != want || !strings.Contains(want, "|b|") {
		t.Fatalf("from the cache\n%s\nfrom SQLite\n%s", got, want)
	}
}
