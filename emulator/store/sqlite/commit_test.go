package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tableemu/tableemu/odata/edm"
)

// TestGroupCommit: many concurrent Updates, every third failing after its
// write. Grouped into shared transactions, each failure still undoes only
// its own write, and every success is visible.
func TestGroupCommit(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	var tb Table
	if err := s.Update(ctx, func(tx *Tx) error { var err error; tb, err = tx.CreateTable("a", "g"); return err }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	const n = 300
	// Hold the writer in a closure until every Update below is waiting to
	// be handed over, so that grouping does not depend on how fast this
	// machine commits (on a loaded machine each write could otherwise be
	// committed alone before the next one arrives).
	release := make(chan struct{})
	held := make(chan error)
	go func() { held <- s.Update(ctx, func(tx *Tx) error { <-release; return nil }) }()
	var wg, started sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		started.Add(1)
		go func(i int) {
			defer wg.Done()
			started.Done()
			errs[i] = s.Update(ctx, func(tx *Tx) error {
				if err := tx.InsertEntity(tb, &edm.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}); err != nil {
					return err
				}
				if i%3 == 0 {
					return boom
				}
				return nil
			})
		}(i)
	}
	started.Wait()
	time.Sleep(50 * time.Millisecond) // from Done to blocking in Update's send
	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if s.largestGroup.Load() < 2 {
		t.Fatalf("no commit carried more than one closure (largest %d)", s.largestGroup.Load())
	}
	err := s.View(ctx, func(tx *Tx) error {
		for i := 0; i < n; i++ {
			_, err := tx.GetEntity(tb, "p", fmt.Sprint(i))
			switch {
			case i%3 == 0 && !errors.Is(errs[i], boom):
				t.Errorf("%d: %v, want boom", i, errs[i])
			case i%3 == 0 && !errors.Is(err, ErrEntityNotFound):
				t.Errorf("%d: a failed closure's write is visible (%v)", i, err)
			case i%3 != 0 && (errs[i] != nil || err != nil):
				t.Errorf("%d: update %v, read %v", i, errs[i], err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestUpdatePanicsInCaller(t *testing.T) {
	s := open(t)
	defer func() {
		if p := recover(); p != "kaboom" {
			t.Fatalf("recovered %v", p)
		}
		// The writer survives a panicking closure.
		if err := s.Update(context.Background(), func(tx *Tx) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}()
	s.Update(context.Background(), func(tx *Tx) error { panic("kaboom") })
}

func TestUpdateAfterClose(t *testing.T) {
	s, err := openStore(context.Background(), Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := s.Update(context.Background(), func(tx *Tx) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Update after Close: %v", err)
	}
}

// TestTableCacheInWriter: a write looks its table up in the table cache,
// and fills it, while its group has changed no table; a closure that
// follows a table's delete in the same group no longer finds the table,
// though the cache held it.
func TestTableCacheInWriter(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	var made Table
	if err := s.Update(ctx, func(tx *Tx) error { var err error; made, err = tx.CreateTable("a", "w"); return err }); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.tables.get("a", "w", s.tables.gen.Load()); ok {
		t.Fatal("the creating write cached its own table")
	}
	// Only writes from here: the entry can come from the writer alone.
	if err := s.Update(ctx, func(tx *Tx) error {
		tb, err := tx.GetTable("a", "W")
		if err != nil || tb != made {
			t.Errorf("GetTable in a write: %+v %v, want %+v", tb, err, made)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if tb, ok := s.tables.get("a", "w", s.tables.gen.Load()); !ok || tb != made {
		t.Fatalf("after a write's lookup the cache holds %+v %v, want %+v", tb, ok, made)
	}

	// One group: a delete of the table, then a lookup of it.
	release := make(chan struct{})
	held := make(chan error)
	go func() { held <- s.Update(ctx, func(tx *Tx) error { <-release; return nil }) }()
	deleted := make(chan error)
	go func() { deleted <- s.Update(ctx, func(tx *Tx) error { return tx.DeleteTable("a", "w") }) }()
	time.Sleep(50 * time.Millisecond) // the delete waits to be handed over first
	looked := make(chan error)
	go func() {
		looked <- s.Update(ctx, func(tx *Tx) error {
			_, err := tx.GetTable("a", "w")
			return err
		})
	}()
	time.Sleep(50 * time.Millisecond)
	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if err := <-deleted; err != nil {
		t.Fatal(err)
	}
	if err := <-looked; !errors.Is(err, ErrTableNotFound) {
		t.Errorf("a lookup after the table's delete in the same group: %v, want ErrTableNotFound", err)
	}
	if s.largestGroup.Load() < 2 {
		t.Skip("the delete and the lookup were not grouped (a slow machine): nothing shown")
	}
}

// TestWriterReusesPropertyMemory: the writer encodes each write's
// properties into memory it hands out again to the next group
// (Tx.encodeProps). Groups of several closures, each writing entities whose
// values are unique to the write — only short ones, whose cached copy is
// made from the encoded object itself, or long ones too, which the filter
// cache leaves out, some past propChunk/8 so that they take their own
// allocation — must leave SQLite and the cache holding exactly what was
// written, group after group: the cache keeps its copies of the encoded
// objects made at commit, and a group that reused memory before its
// commit, or before the cache copied it, would show another write's values.
func TestWriterReusesPropertyMemory(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	var tb Table
	if err := s.Update(ctx, func(tx *Tx) (err error) { tb, err = tx.CreateTable("a", "reuse"); return }); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{} // RowKey -> fingerprint
	var mu sync.Mutex
	entity := func(round, c, i int) *edm.Entity {
		id := fmt.Sprintf("%02d-%d-%d", round, c, i)
		long := strings.Repeat(id, 12) // 96 bytes: past the cache's slim limit
		if i == 0 && c == 0 {
			long = strings.Repeat(id, propChunk/8/len(id)+1) // its own allocation
		}
		props := []edm.Property{
			{Name: "Short", Value: edm.NewString(id)},
			{Name: "N", Value: edm.NewInt32(int32(round*100 + c*10 + i))},
		}
		if i%2 == 0 { // else the cache's copy is made from the encoded object itself
			props = append(props, edm.Property{Name: "Long", Value: edm.NewString(long)})
		}
		return &edm.Entity{PartitionKey: "p", RowKey: id, Properties: props}
	}
	for round := 0; round < 12; round++ {
		var wg sync.WaitGroup
		for c := 0; c < 5; c++ { // concurrent closures share one commit
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := s.Update(ctx, func(tx *Tx) error {
					for i := 0; i < 4; i++ {
						e := entity(round, c, i)
						var err error
						if round%2 == 0 {
							err = tx.InsertEntity(tb, e)
						} else { // replaces the entity a previous round inserted
							e.RowKey = fmt.Sprintf("%02d-%d-%d", round-1, c, i)
							err = tx.PutEntity(tb, e, 0)
						}
						if err != nil {
							return err
						}
						mu.Lock()
						want[e.RowKey] = fingerprint(e)
						mu.Unlock()
					}
					return nil
				})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		// From SQLite, entity by entity.
		err := s.View(ctx, func(tx *Tx) error {
			for rk, fp := range want {
				e, err := tx.GetEntity(tb, "p", rk)
				if err != nil {
					return err
				}
				if got := fingerprint(e); got != fp {
					return fmt.Errorf("round %d: SQLite holds %.80s…, want %.80s…", round, got, fp)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// From the cache, which holds the short values, against SQLite.
		for _, filter := range []string{"N ge 0", "Short gt '05'"} {
			got, hits := scanAll(t, s, tb, filter, 1000, true)
			sql, _ := scanAll(t, s, tb, filter, 1000, false)
			if got != sql || hits == 0 {
				t.Fatalf("round %d, %s (%d cache hits): from the cache\n%.300s\nfrom SQLite\n%.300s", round, filter, hits, got, sql)
			}
		}
	}
	if s.largestGroup.Load() < 2 {
		t.Logf("no commit carried more than one closure (largest %d): the reuse across closures of one group went untested", s.largestGroup.Load())
	}
}

// TestTableCacheBeforeFirstRead: a reader that took its table from the
// cache had no snapshot until its first read; a commit that replaced the
// table in between (a restore racing a query: TestIsolationRaces once saw
// an empty table) left it reading the old table's id in the new snapshot.
// The table it is given must be the one its snapshot holds: the same id a
// listing of the tables in the same transaction finds, and its entity.
func TestTableCacheBeforeFirstRead(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	replace := func(rk string) {
		t.Helper()
		if err := s.Update(ctx, func(tx *Tx) error {
			if err := tx.DeleteTable("a", "t"); err != nil && !errors.Is(err, ErrTableNotFound) {
				return err
			}
			tb, err := tx.CreateTable("a", "t")
			if err != nil {
				return err
			}
			return tx.InsertEntity(tb, &edm.Entity{PartitionKey: "p", RowKey: rk})
		}); err != nil {
			t.Fatal(err)
		}
	}
	replace("old")
	for range 2 { // the first lookup fills the cache, the second uses it
		if err := s.View(ctx, func(tx *Tx) error { _, err := tx.GetTable("a", "t"); return err }); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	var listed int64
	var tb Table
	err := s.View(ctx, func(tx *Tx) error {
		var err error
		if tb, err = tx.GetTable("a", "t"); err != nil {
			return err
		}
		// The writer commits after the lookup, before any other read.
		done := make(chan struct{})
		go func() { defer close(done); replace("new") }()
		<-done
		page, err := tx.QueryTables("a", TableQuery{Top: 10})
		if err != nil || len(page.Tables) != 1 {
			return fmt.Errorf("listing: %+v %v", page, err)
		}
		listed = page.Tables[0].ID
		_, err = tx.ScanEntities(tb, EntityQuery{Top: 10}, func(e *edm.Entity) error {
			got = append(got, strings.Clone(e.RowKey))
			return nil
		})
		return err
	})
	if err != nil || tb.ID != listed || len(got) != 1 || got[0] != "old" {
		t.Fatalf("the reader was given table %d, its snapshot lists %d, and it read %q (%v); want one table, and [old]", tb.ID, listed, got, err)
	}
}
