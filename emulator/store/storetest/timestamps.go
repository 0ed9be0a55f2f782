package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata/edm"
)

// testSharedTimestamp: a transaction that calls ShareTimestamp gives every
// entity it writes one Timestamp (the batch's), later than the versions it
// replaces; one that does not gives each write its own.
func testSharedTimestamp(t *testing.T, s *store.Store) {
	createTable(t, s, "acct", "t")
	old := entity("p", "old")
	insert(t, s, "acct", "t", old)

	var a, b, c *edm.Entity
	update(t, s, func(tx *store.Tx) error {
		tx.ShareTimestamp()
		tb := table(t, tx, "acct", "t")
		a, b, c = entity("p", "a"), entity("p", "b"), entity("p", "old")
		if err := tx.InsertEntity(tb, a); err != nil {
			return err
		}
		if err := tx.InsertEntity(tb, b); err != nil {
			return err
		}
		return tx.PutEntity(tb, c, old.Timestamp)
	})
	if a.Timestamp != b.Timestamp || b.Timestamp != c.Timestamp {
		t.Errorf("shared: Timestamps %d, %d, %d; want one", a.Timestamp, b.Timestamp, c.Timestamp)
	}
	if c.Timestamp <= old.Timestamp {
		t.Errorf("shared: replaced version %d, new %d: not later", old.Timestamp, c.Timestamp)
	}
	view(t, s, func(tx *store.Tx) error {
		got, err := tx.GetEntity(table(t, tx, "acct", "t"), "p", "b")
		if err == nil && got.Timestamp != a.Timestamp {
			t.Errorf("stored Timestamp %d, answered %d", got.Timestamp, a.Timestamp)
		}
		return err
	})

	var d, e *edm.Entity
	update(t, s, func(tx *store.Tx) error {
		tb := table(t, tx, "acct", "t")
		d, e = entity("p", "d"), entity("p", "e")
		if err := tx.InsertEntity(tb, d); err != nil {
			return err
		}
		return tx.InsertEntity(tb, e)
	})
	if d.Timestamp == e.Timestamp || d.Timestamp <= a.Timestamp {
		t.Errorf("unshared: Timestamps %d, %d after %d; want each its own, later", d.Timestamp, e.Timestamp, a.Timestamp)
	}
}

// testLoadEntity: LoadEntity writes an entity, new or not, with the
// Timestamp it is given (an import keeping its source's), and a later
// write that passes it as prev is stamped later still, even when the
// loaded one is in the future. A transaction that loads more entities
// than an engine defers (postgres/pending.go) keeps them all, and is
// still all or nothing.
func testLoadEntity(t *testing.T, s *store.Store) {
	createTable(t, s, "acct", "t")
	insert(t, s, "acct", "t", entity("p", "old", prop("A", edm.NewInt32(1))))
	past := edm.TicksFromTime(time.Date(1601, 1, 1, 0, 0, 0, 100, time.UTC))
	future := edm.TicksFromTime(time.Date(9999, 12, 31, 23, 59, 59, 999_999_900, time.UTC))
	a := entity("p", "old", prop("B", edm.NewString("loaded")))
	a.Timestamp = past
	b := entity("p", "new", prop("C", edm.NewInt64(7)))
	b.Timestamp = future
	update(t, s, func(tx *store.Tx) error {
		tb := table(t, tx, "acct", "t")
		if err := tx.LoadEntity(tb, a); err != nil {
			return err
		}
		return tx.LoadEntity(tb, b)
	})
	if a.Timestamp != past || b.Timestamp != future {
		t.Errorf("LoadEntity changed the Timestamps: %d, %d; want %d, %d", a.Timestamp, b.Timestamp, past, future)
	}
	view(t, s, func(tx *store.Tx) error {
		tb := table(t, tx, "acct", "t")
		for _, want := range []*edm.Entity{a, b} {
			got, err := tx.GetEntity(tb, want.PartitionKey, want.RowKey)
			if err != nil {
				t.Fatal(err)
			}
			if got.Timestamp != want.Timestamp || len(got.Properties) != 1 || got.Properties[0].Name != want.Properties[0].Name {
				t.Errorf("%s: stored %d %+v, want %d %+v", want.RowKey, got.Timestamp, got.Properties, want.Timestamp, want.Properties)
			}
		}
		return nil
	})
	next := entity("p", "new", prop("C", edm.NewInt64(8)))
	update(t, s, func(tx *store.Tx) error { return tx.PutEntity(table(t, tx, "acct", "t"), next, future) })
	if next.Timestamp <= future {
		t.Errorf("a write after a loaded Timestamp %d got %d: not later", future, next.Timestamp)
	}

	// Many in one transaction, loaded and inserted.
	const n = 2500
	createTable(t, s, "acct", "many")
	update(t, s, func(tx *store.Tx) error {
		tb := table(t, tx, "acct", "many")
		for i := range n {
			e := entity("p", fmt.Sprintf("%05d", i))
			if i%2 == 0 {
				e.Timestamp = past + int64(i)
				if err := tx.LoadEntity(tb, e); err != nil {
					return err
				}
			} else if err := tx.InsertEntity(tb, e); err != nil {
				return err
			}
		}
		return nil
	})
	if got := scanAll(t, s, "acct", "many", store.EntityQuery{Top: 1000}); len(got) != n {
		t.Errorf("%d entities after loading %d in one transaction", len(got), n)
	}
	view(t, s, func(tx *store.Tx) error {
		got, err := tx.GetEntity(table(t, tx, "acct", "many"), "p", "00010")
		if err != nil || got.Timestamp != past+10 {
			t.Errorf("p/00010: %+v %v, want Timestamp %d", got, err, past+10)
		}
		return nil
	})
	// An insert of a key written long before in the same transaction
	// fails it whole.
	createTable(t, s, "acct", "dup")
	err := s.Update(ctx, func(tx *store.Tx) error {
		tb := table(t, tx, "acct", "dup")
		for i := range n {
			e := entity("p", fmt.Sprintf("%05d", i))
			e.Timestamp = past
			if err := tx.LoadEntity(tb, e); err != nil {
				return err
			}
		}
		return tx.InsertEntity(tb, entity("p", "00000"))
	})
	if !errors.Is(err, store.ErrEntityExists) {
		t.Errorf("inserting a key loaded earlier in the transaction: %v, want ErrEntityExists", err)
	}
	if got := scanAll(t, s, "acct", "dup", store.EntityQuery{Top: 1000}); len(got) != 0 {
		t.Errorf("a failed transaction left %d entities", len(got))
	}
}
