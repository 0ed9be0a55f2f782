package storetest

import (
	"testing"

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
