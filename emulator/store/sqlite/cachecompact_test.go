package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tableemu/tableemu/emulator/store/sqlite/filtercache"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// TestFilterCacheCompacts: overwrites leave the bytes of the entries they
// replace in the table's arena until those outweigh the live ones; then
// the live entries are copied into a new arena, while the writer goes on:
// changes made during the copy reach the copy too. Scans from the cache
// still return what SQLite returns, the budget counts the new arena, and
// a tree published to a scan before the copy still reads its own version
// of every entity.
func TestFilterCacheCompacts(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	var tb Table
	if err := s.Update(ctx, func(tx *Tx) (err error) { tb, err = tx.CreateTable("a", "compact"); return }); err != nil {
		t.Fatal(err)
	}
	const n = 1000
	write := func(round int, del func(i int) bool) {
		t.Helper()
		err := s.Update(ctx, func(tx *Tx) error {
			for i := 0; i < n; i++ {
				pk, rk := fmt.Sprintf("p%02d", i%10), fmt.Sprintf("r%04d-%s", i, strings.Repeat("k", 20))
				if del(i) {
					if err := tx.DeleteEntity(tb, pk, rk); err != nil && !errors.Is(err, ErrEntityNotFound) {
						return err
					}
					continue
				}
				e := &edm.Entity{PartitionKey: pk, RowKey: rk,
					Properties: []edm.Property{{Name: "V", Value: edm.NewInt32(int32(round))}, {Name: "S", Value: edm.NewString(strings.Repeat("s", 40))}}}
				if err := tx.PutEntity(tb, e, 0); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	none := func(int) bool { return false }
	write(0, none)
	old, _, _ := s.fc.Lookup(tb.ID, s.fc.Committed())
	if !old.Cached() {
		t.Fatal("the table's tree was not published to a scan")
	}
	first := s.fc.Stats().Compactions

	// Hold the first compaction until the writer has changed the table
	// again: deleted a seventh of it, rewritten the rest.
	started, hold := make(chan struct{}, 1), make(chan struct{})
	s.fc.SetHooks(&filtercache.Hooks{Compact: func() {
		select {
		case started <- struct{}{}:
		default:
		}
		<-hold
	}})
	for round := 1; len(started) == 0; round++ {
		if round > 5 {
			t.Fatal("five overwrites of the whole table started no compaction")
		}
		write(round, none)
	}
	write(10, func(i int) bool { return i%7 == 0 })
	close(hold)
	s.fc.WaitCompactions()
	write(11, func(i int) bool { return i%7 == 0 || i%11 == 0 })
	s.fc.WaitCompactions()

	if s.fc.Stats().Compactions == first {
		t.Fatal("the table is still in its first arena")
	}
	if err := s.fc.Check(); err != nil {
		t.Fatal(err) // the budget counts the new arena
	}

	// The tree published before reads round 0, from its own arena: every
	// one of its entities has V 0.
	f, err := odata.ParseFilter("V eq 0")
	if err != nil {
		t.Fatal(err)
	}
	examined, matched, _, err := old.Scan(&filtercache.Scan{Match: f, Top: 2 * n, Budget: 2 * n,
		Big: func(string, string) ([]byte, error) { return nil, errors.New("no value is large") }},
		func(*edm.Entity) error { return nil })
	if err != nil || examined != n || matched != n {
		t.Fatalf("the published tree: %d entities, %d with V 0 (%v); want %d", examined, matched, err, n)
	}

	got, ok := s.fc.Keys(tb.ID)
	if want := sqliteKeys(t, s, tb.ID); !ok || got != want {
		t.Fatalf("cache holds\n%s\nSQLite holds\n%s", got, want)
	}
	for _, filter := range []string{"V eq 11", "V ne 11", "S ne 'x' and RowKey gt 'r0500'", "PartitionKey eq 'p03' and V gt 0"} {
		got, hits := scanAll(t, s, tb, filter, 7, true)
		want, _ := scanAll(t, s, tb, filter, 7, false)
		if got != want {
			t.Fatalf("%s: from the cache\n%s\nfrom SQLite\n%s", filter, got, want)
		}
		if hits == 0 {
			t.Fatalf("%s: no page read the cache", filter)
		}
	}
}
