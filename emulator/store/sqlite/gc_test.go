package sqlite

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/tableemu/tableemu/odata/edm"
)

// Parked tables and the atomicity of resets and restores (gc.go,
// snapshot.go); the helpers are snapshot_test.go's.

// parkedCount counts the parked tables (retired, with a base).
func parkedCount(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	update(t, s, func(tx *Tx) error {
		return tx.queryRow(`SELECT count(*) FROM tables WHERE account = '' AND base IS NOT NULL`).Scan(&n)
	})
	return n
}

// TestParkedCopies: a reset parks the tables of the snapshot last saved
// or restored, and restoring that snapshot takes them back; switching to
// another snapshot copies it whole and makes the parked copies garbage,
// so an account holds at most one parked copy, of one snapshot.
func TestParkedCopies(t *testing.T) {
	s := open(t)
	fill(t, s, "acct", 20)
	update(t, s, func(tx *Tx) error { _, _, err := tx.SaveSnapshot("acct", "a"); return err })
	stateA := dump(t, s, "acct")
	ordersA := tableID(t, s, "acct", "orders")
	update(t, s, func(tx *Tx) error { _, err := tx.ResetAccount("acct"); return err })
	if n := parkedCount(t, s); n != 2 {
		t.Fatalf("%d parked tables after a reset, want 2", n)
	}
	update(t, s, func(tx *Tx) error { _, err := tx.RestoreSnapshot("acct", "a"); return err })
	if tableID(t, s, "acct", "orders") != ordersA || parkedCount(t, s) != 0 || dump(t, s, "acct") != stateA {
		t.Fatal("restoring after a reset did not take the parked tables back")
	}
	update(t, s, func(tx *Tx) error { return tx.DeleteTable("acct", "people") })
	update(t, s, func(tx *Tx) error { _, _, err := tx.SaveSnapshot("acct", "b"); return err })
	stateB := dump(t, s, "acct")
	if n := parkedCount(t, s); n != 0 {
		t.Fatalf("saving b kept %d parked tables of a", n)
	}
	update(t, s, func(tx *Tx) error { _, err := tx.ResetAccount("acct"); return err })
	update(t, s, func(tx *Tx) error { _, err := tx.RestoreSnapshot("acct", "a"); return err })
	if dump(t, s, "acct") != stateA || tableID(t, s, "acct", "orders") == ordersA {
		t.Fatal("switching from b to a did not copy a whole")
	}
	if n := parkedCount(t, s); n != 0 {
		t.Fatalf("%d parked tables of b are kept after restoring a", n)
	}
	update(t, s, func(tx *Tx) error { _, err := tx.RestoreSnapshot("acct", "b"); return err })
	if dump(t, s, "acct") != stateB || parkedCount(t, s) != 0 {
		t.Fatal("switching back to b")
	}
	if err := s.CollectGarbage(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := rowCount(t, s, "entities"); got != 20 {
		t.Errorf("%d entities after collection, want b's 20", got)
	}
}

// TestRestoreIsAtomic: readers counting the entities of all of an
// account's tables in one transaction, while resets and restores of two
// different snapshots commit, only ever see one of the three whole states.
func TestRestoreIsAtomic(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	fill(t, s, "acct", 300) // 600 entities
	update(t, s, func(tx *Tx) error { _, _, err := tx.SaveSnapshot("acct", "big"); return err })
	update(t, s, func(tx *Tx) error { return tx.DeleteTable("acct", "people") })
	update(t, s, func(tx *Tx) error {
		tb, err := tx.CreateTable("acct", "small")
		for i := 0; i < 7 && err == nil; i++ {
			err = tx.InsertEntity(tb, entity("p", fmt.Sprint(i), i))
		}
		return err
	})
	update(t, s, func(tx *Tx) error { _, _, err := tx.SaveSnapshot("acct", "small"); return err }) // 300 + 7
	allowed := []int{0, 600, 307}

	stop := make(chan struct{})
	const readers = 4
	errs := make(chan error, readers)
	var seen [3]atomic.Int64 // reads that saw allowed[i]
	for range readers {
		go func() {
			for {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				total := 0
				err := s.View(ctx, func(tx *Tx) error {
					page, err := tx.QueryTables("acct", TableQuery{Top: 1000})
					for _, tb := range page.Tables {
						if err != nil {
							break
						}
						_, err = tx.ScanEntities(tb, EntityQuery{Top: 1000}, func(*edm.Entity) error { total++; return nil })
					}
					return err
				})
				i := slices.Index(allowed, total)
				if err == nil && i < 0 {
					err = fmt.Errorf("a reader counted %d entities, not one of %v", total, allowed)
				}
				if err != nil {
					errs <- err
					return
				}
				seen[i].Add(1)
			}
		}()
	}
	// Until the readers have seen every state, so that they did run
	// beside the resets and restores (or for 3000 of them).
	for i := 0; i < 3000 && (i < 60 || seen[0].Load() == 0 || seen[1].Load() == 0 || seen[2].Load() == 0); i++ {
		update(t, s, func(tx *Tx) error {
			var err error
			switch i % 3 {
			case 0:
				_, err = tx.RestoreSnapshot("acct", "big")
			case 1:
				_, err = tx.RestoreSnapshot("acct", "small")
			default:
				_, err = tx.ResetAccount("acct")
			}
			return err
		})
	}
	close(stop)
	for range readers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("reads that saw %v entities: %d, %d, %d", allowed, seen[0].Load(), seen[1].Load(), seen[2].Load())
	if seen[0].Load() == 0 || seen[1].Load() == 0 || seen[2].Load() == 0 {
		t.Error("the readers did not see every state: they did not run beside the writer")
	}
}
