package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/store/postgres/pgtest"
	"github.com/tableemu/tableemu/odata/edm"
)

// Deferred writes and cached tables (pending.go) keep every result exact,
// with both protocols.

// twoStores opens two stores on one database, as two tableemu processes.
func twoStores(t *testing.T, mode string) (*store.Store, *store.Store) {
	u, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	if mode != "" {
		q := u.Query()
		q.Set("default_query_exec_mode", mode)
		u.RawQuery = q.Encode()
	}
	return openURL(t, u.String()), openURL(t, u.String())
}

func forModes(t *testing.T, fn func(t *testing.T, mode string)) {
	for _, mode := range []string{"", "simple_protocol"} {
		t.Run(map[string]string{"": "prepared", "simple_protocol": "simple"}[mode], func(t *testing.T) { fn(t, mode) })
	}
}

// TestCachedTableDeleted: a table another process deleted (and created
// again under the same name) is never used from this process's cache.
func TestCachedTableDeleted(t *testing.T) {
	forModes(t, func(t *testing.T, mode string) {
		a, b := twoStores(t, mode)
		ctx := context.Background()
		var old store.Table
		update(t, a, func(tx *store.Tx) error {
			var err error
			if old, err = tx.CreateTable("acct", "t"); err != nil {
				return err
			}
			return tx.InsertEntity(old, entity("p", "r", 1))
		})
		cache := func() store.Table {
			t.Helper()
			var tb store.Table
			update(t, a, func(tx *store.Tx) error { var err error; tb, err = tx.GetTable("acct", "t"); return err })
			return tb
		}
		recreate := func() store.Table {
			t.Helper()
			var tb store.Table
			update(t, b, func(tx *store.Tx) error {
				if err := tx.DeleteTable("acct", "t"); err != nil && !errors.Is(err, store.ErrTableNotFound) {
					return err
				}
				var err error
				tb, err = tx.CreateTable("acct", "t")
				return err
			})
			return tb
		}
		drop := func() { update(t, b, func(tx *store.Tx) error { return tx.DeleteTable("acct", "t") }) }

		// A read, its check in the entity's statement.
		cache()
		drop()
		err := a.ViewPoint(ctx, func(tx *store.Tx) error {
			tb, err := tx.GetTable("acct", "t")
			if err != nil {
				return err
			}
			_, err = tx.GetEntity(tb, "p", "r")
			return err
		})
		if !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("read of a deleted table: %v, want ErrTableNotFound", err)
		}

		// A write to a table deleted and created again goes to the new one.
		recreate()
		cache()
		now := recreate()
		var got store.Table
		update(t, a, func(tx *store.Tx) error {
			var err error
			if got, err = tx.GetTable("acct", "t"); err != nil {
				return err
			}
			return tx.InsertEntity(got, entity("p", "x", 1))
		})
		if got.ID != now.ID {
			t.Errorf("GetTable after the table was created again: id %d, want %d", got.ID, now.ID)
		}
		view(t, b, func(tx *store.Tx) error { _, err := tx.GetEntity(now, "p", "x"); return err })

		// A write to a deleted table (sent with COMMIT) writes nothing.
		cache()
		drop()
		err = a.Update(ctx, func(tx *store.Tx) error {
			tb, err := tx.GetTable("acct", "t")
			if err != nil {
				return err
			}
			return tx.InsertEntity(tb, entity("p", "y", 1))
		})
		if !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("write to a deleted table: %v, want ErrTableNotFound", err)
		}
		view(t, b, func(tx *store.Tx) error {
			if _, err := tx.GetEntity(now, "p", "y"); !errors.Is(err, store.ErrEntityNotFound) {
				t.Errorf("entity written into a deleted table: %v", err)
			}
			return nil
		})

		// A lookup alone, and a closure that fails after the lookup: the
		// check runs before the answer.
		recreate()
		cache()
		drop()
		err = a.ViewPoint(ctx, func(tx *store.Tx) error { _, err := tx.GetTable("acct", "t"); return err })
		if !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("lookup of a deleted table: %v, want ErrTableNotFound", err)
		}
		recreate()
		cache()
		drop()
		errOther := errors.New("other")
		err = a.Update(ctx, func(tx *store.Tx) error {
			if _, err := tx.GetTable("acct", "t"); err != nil {
				return err
			}
			return errOther
		})
		if !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("failed closure after the lookup of a deleted table: %v, want ErrTableNotFound", err)
		}
	})
}

// TestDeferredInsertConflict: in a $batch-like closure that stops at the
// first failure, the insert of a taken key fails at its own place, and
// nothing of the closure is written; without conflict, every entity is
// stored with the Timestamp it was given.
func TestDeferredInsertConflict(t *testing.T) {
	forModes(t, func(t *testing.T, mode string) {
		s, _ := twoStores(t, mode)
		ctx := context.Background()
		var tb store.Table
		update(t, s, func(tx *store.Tx) error {
			var err error
			if tb, err = tx.CreateTable("acct", "t"); err != nil {
				return err
			}
			return tx.InsertEntity(tb, entity("p", "r050", 0))
		})
		errLater := errors.New("a later operation failed")
		for _, c := range []struct {
			name   string
			failAt int // -1: no other failure
		}{{"conflict", -1}, {"conflict, then another failure", 70}} {
			failed := -1
			err := s.Update(ctx, func(tx *store.Tx) error {
				failed = -1
				for i := range 100 {
					if i == c.failAt {
						failed = i
						return errLater
					}
					if err := tx.InsertEntity(tb, entity("p", fmt.Sprintf("r%03d", i), i)); err != nil {
						failed = i
						return err
					}
				}
				return nil
			})
			if !errors.Is(err, store.ErrEntityExists) || failed != 50 {
				t.Errorf("%s: failed at %d with %v, want 50 with ErrEntityExists", c.name, failed, err)
			}
		}
		// Three statements in one implicit transaction (nothing read): the
		// third's conflict leaves nothing of the first two.
		failed := -1
		err := s.Update(ctx, func(tx *store.Tx) error {
			failed = -1
			if err := tx.InsertEntity(tb, entity("p", "a", 1)); err != nil {
				failed = 0
				return err
			}
			if err := tx.PutEntity(tb, entity("p", "b", 1), 0); err != nil {
				failed = 1
				return err
			}
			if err := tx.InsertEntity(tb, entity("p", "r050", 1)); err != nil {
				failed = 2
				return err
			}
			return nil
		})
		if !errors.Is(err, store.ErrEntityExists) || failed != 2 {
			t.Errorf("insert, upsert, conflicting insert: failed at %d with %v, want 2 with ErrEntityExists", failed, err)
		}
		view(t, s, func(tx *store.Tx) error {
			n := 0
			_, err := tx.ScanEntities(tb, store.EntityQuery{Top: 1000}, func(*edm.Entity) error { n++; return nil })
			if n != 1 {
				t.Errorf("%d entities after the failed closures, want 1", n)
			}
			return err
		})

		// No conflict: 100 inserts and an upsert of one of them.
		var written []*edm.Entity
		update(t, s, func(tx *store.Tx) error {
			written = written[:0]
			for i := range 100 {
				e := entity("q", fmt.Sprintf("r%03d", i), i)
				if err := tx.InsertEntity(tb, e); err != nil {
					return err
				}
				written = append(written, e)
			}
			if err := tx.InsertEntity(tb, entity("q", "r007", 0)); !errors.Is(err, store.ErrEntityExists) {
				t.Errorf("second insert of a key in one transaction: %v", err)
			}
			e := entity("q", "r007", 700)
			if err := tx.PutEntity(tb, e, written[7].Timestamp); err != nil {
				return err
			}
			written[7] = e
			return nil
		})
		view(t, s, func(tx *store.Tx) error {
			for i, w := range written {
				e, err := tx.GetEntity(tb, w.PartitionKey, w.RowKey)
				if err != nil {
					return err
				}
				if e.Timestamp != w.Timestamp || len(e.Properties) != 1 || e.Properties[0].Value.N != int64(i)*map[bool]int64{true: 100, false: 1}[i == 7] {
					t.Errorf("entity %d: %+v, want Timestamp %d", i, e, w.Timestamp)
				}
			}
			return nil
		})
	})
}

// TestViewPointSpeculated: a ViewPoint's first statement goes alone; a
// second one begins a transaction that must show what the first read, or
// the closure runs again.
func TestViewPointSpeculated(t *testing.T) {
	forModes(t, func(t *testing.T, mode string) {
		a, b := twoStores(t, mode)
		ctx := context.Background()
		var tb store.Table
		update(t, a, func(tx *store.Tx) error {
			var err error
			if tb, err = tx.CreateTable("acct", "t"); err != nil {
				return err
			}
			if err := tx.InsertEntity(tb, entity("p", "r", 1)); err != nil {
				return err
			}
			return tx.InsertEntity(tb, entity("p", "s", 1))
		})
		for _, c := range []struct {
			name    string
			between func(tx *store.Tx) error // b's write between the two reads
			runs    int
			wantN   int64
			wantErr error
		}{
			{"unchanged", nil, 1, 1, nil},
			{"entity changed", func(tx *store.Tx) error { return tx.PutEntity(tb, entity("p", "r", 2), 0) }, 2, 2, nil},
			// Three runs: the second finds the cached table gone.
			{"table deleted", func(tx *store.Tx) error { return tx.DeleteTable("acct", "t") }, 3, 0, store.ErrTableNotFound},
		} {
			runs := 0
			var n int64
			err := a.ViewPoint(ctx, func(tx *store.Tx) error {
				runs++
				t1, err := tx.GetTable("acct", "t")
				if err != nil {
					return err
				}
				e, err := tx.GetEntity(t1, "p", "r")
				if err != nil {
					return err
				}
				n = e.Properties[0].Value.N
				if c.between != nil && runs == 1 {
					update(t, b, c.between)
				}
				_, err = tx.GetEntity(t1, "p", "s")
				return err
			})
			if !errors.Is(err, c.wantErr) || runs != c.runs || (err == nil && n != c.wantN) {
				t.Errorf("%s: %d runs, read %d, error %v; want %d runs, %d, %v", c.name, runs, n, err, c.runs, c.wantN, c.wantErr)
			}
		}
	})
}
