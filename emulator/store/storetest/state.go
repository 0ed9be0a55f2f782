package storetest

// The account-wide state: access policies, service properties, snapshots
// and resets.

import (
	"errors"
	"slices"
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata/edm"
)

func testACL(t *testing.T, s *store.Store) {
	createTable(t, s, "acct", "T")
	ids := []store.SignedIdentifier{
		{ID: "second", Permission: "r"},
		{ID: "first", Permission: "raud"},
	}
	update(t, s, func(tx *store.Tx) error { return tx.SetTableACL(table(t, tx, "acct", "T"), ids) })
	view(t, s, func(tx *store.Tx) error {
		got, err := tx.TableACL(table(t, tx, "acct", "T"))
		if err != nil || len(got) != 2 || got[0].ID != "second" || got[1].ID != "first" || got[1].Permission != "raud" {
			t.Errorf("TableACL: %+v %v, want the policies in the order set", got, err)
		}
		p, ok, err := tx.AccessPolicy("acct", "t", "first")
		if err != nil || !ok || p.Permission != "raud" {
			t.Errorf("AccessPolicy through another case of the table name: %+v %v %v", p, ok, err)
		}
		if _, ok, err := tx.AccessPolicy("acct", "T", "third"); ok || err != nil {
			t.Errorf("unknown policy: %v %v", ok, err)
		}
		return nil
	})
	update(t, s, func(tx *store.Tx) error { return tx.SetTableACL(table(t, tx, "acct", "T"), nil) })
	view(t, s, func(tx *store.Tx) error {
		if got, err := tx.TableACL(table(t, tx, "acct", "T")); err != nil || len(got) != 0 {
			t.Errorf("after clearing: %+v %v", got, err)
		}
		return nil
	})
}

func testServiceProperties(t *testing.T, s *store.Store) {
	view(t, s, func(tx *store.Tx) error {
		if _, ok, err := tx.ServiceProperties("acct"); ok || err != nil {
			t.Errorf("never set: ok %v, %v", ok, err)
		}
		return nil
	})
	for _, doc := range []string{"<one/>", "<two/>"} {
		update(t, s, func(tx *store.Tx) error { return tx.SetServiceProperties("acct", doc) })
		view(t, s, func(tx *store.Tx) error {
			if got, ok, err := tx.ServiceProperties("acct"); got != doc || !ok || err != nil {
				t.Errorf("ServiceProperties %q %v %v, want %q", got, ok, err, doc)
			}
			if _, ok, _ := tx.ServiceProperties("other"); ok {
				t.Error("another account has properties")
			}
			return nil
		})
	}
}

func testSnapshots(t *testing.T, s *store.Store) {
	createTable(t, s, "acct", "t")
	insert(t, s, "acct", "t", entity("p", "1"), entity("p", "2"))
	update(t, s, func(tx *store.Tx) error {
		return tx.SetTableACL(table(t, tx, "acct", "t"), []store.SignedIdentifier{{ID: "pol", Permission: "r"}})
	})
	createTable(t, s, "other", "t")
	insert(t, s, "other", "t", entity("o", "1"))
	update(t, s, func(tx *store.Tx) error {
		sn, replaced, err := tx.SaveSnapshot("acct", "fixtures")
		if err != nil || replaced || sn.Tables != 1 || sn.Entities != 2 {
			t.Errorf("SaveSnapshot: %+v replaced %v %v", sn, replaced, err)
		}
		return err
	})
	// Change everything the snapshot holds, and the other account.
	update(t, s, func(tx *store.Tx) error {
		tb := table(t, tx, "acct", "t")
		if err := tx.DeleteEntity(tb, "p", "1"); err != nil {
			return err
		}
		if err := tx.PutEntity(tb, entity("p", "2", prop("X", edm.NewInt32(9))), 0); err != nil {
			return err
		}
		if _, err := tx.CreateTable("acct", "added"); err != nil {
			return err
		}
		return tx.SetTableACL(tb, nil)
	})
	insert(t, s, "other", "t", entity("o", "2"))
	update(t, s, func(tx *store.Tx) error { _, err := tx.RestoreSnapshot("acct", "fixtures"); return err })
	if got := scanAll(t, s, "acct", "t", store.EntityQuery{Top: 1000}); !slices.Equal(got, []string{"p/1", "p/2"}) {
		t.Errorf("after restore: %v", got)
	}
	view(t, s, func(tx *store.Tx) error {
		if e, err := tx.GetEntity(table(t, tx, "acct", "t"), "p", "2"); err != nil || len(e.Properties) != 0 {
			t.Errorf("restored entity: %+v %v, want it as saved", e, err)
		}
		if _, err := tx.GetTable("acct", "added"); !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("a table created after the snapshot survives the restore: %v", err)
		}
		if _, ok, _ := tx.AccessPolicy("acct", "t", "pol"); !ok {
			t.Error("the snapshot's access policy is not restored")
		}
		list, err := tx.Snapshots("acct")
		if err != nil || len(list) != 1 || list[0].Name != "fixtures" {
			t.Errorf("Snapshots: %+v %v", list, err)
		}
		if list, _ := tx.Snapshots("other"); len(list) != 0 {
			t.Errorf("the other account lists %+v", list)
		}
		if _, err := tx.GetTable("acct", "fixtures"); err == nil {
			t.Error("a snapshot shows as a table")
		}
		return nil
	})
	// Restored twice: the snapshot itself did not change.
	insert(t, s, "acct", "t", entity("p", "3"))
	update(t, s, func(tx *store.Tx) error { _, err := tx.RestoreSnapshot("acct", "fixtures"); return err })
	if got := scanAll(t, s, "acct", "t", store.EntityQuery{Top: 1000}); !slices.Equal(got, []string{"p/1", "p/2"}) {
		t.Errorf("after a second restore: %v", got)
	}
	if got := scanAll(t, s, "other", "t", store.EntityQuery{Top: 1000}); !slices.Equal(got, []string{"o/1", "o/2"}) {
		t.Errorf("the other account after acct's restores: %v", got)
	}
	err := s.Update(ctx, func(tx *store.Tx) error { _, err := tx.RestoreSnapshot("acct", "nope"); return err })
	if !errors.Is(err, store.ErrSnapshotNotFound) {
		t.Errorf("restoring an unknown snapshot: %v", err)
	}
	update(t, s, func(tx *store.Tx) error { return tx.DeleteSnapshot("acct", "fixtures") })
	err = s.Update(ctx, func(tx *store.Tx) error { return tx.DeleteSnapshot("acct", "fixtures") })
	if !errors.Is(err, store.ErrSnapshotNotFound) {
		t.Errorf("deleting twice: %v", err)
	}
}

func testReset(t *testing.T, s *store.Store) {
	for _, acct := range []string{"acct", "other"} {
		createTable(t, s, acct, "t")
		insert(t, s, acct, "t", entity("p", "1"))
		update(t, s, func(tx *store.Tx) error { return tx.SetServiceProperties(acct, "<doc/>") })
	}
	update(t, s, func(tx *store.Tx) error {
		n, err := tx.ResetAccount("acct")
		if n != 1 {
			t.Errorf("ResetAccount removed %d tables, want 1", n)
		}
		return err
	})
	view(t, s, func(tx *store.Tx) error {
		if _, err := tx.GetTable("acct", "t"); !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("after reset: %v", err)
		}
		if _, ok, _ := tx.ServiceProperties("acct"); ok {
			t.Error("service properties survive the reset")
		}
		if _, ok, _ := tx.ServiceProperties("other"); !ok {
			t.Error("the reset touched another account's properties")
		}
		return nil
	})
	if got := scanAll(t, s, "other", "t", store.EntityQuery{Top: 10}); len(got) != 1 {
		t.Errorf("the reset touched another account's entities: %v", got)
	}
	createTable(t, s, "acct", "t") // the name is free again, and empty
	if got := scanAll(t, s, "acct", "t", store.EntityQuery{Top: 10}); len(got) != 0 {
		t.Errorf("recreated after reset: %v", got)
	}
	update(t, s, func(tx *store.Tx) error { _, err := tx.ResetAll(); return err })
	view(t, s, func(tx *store.Tx) error {
		page, err := tx.QueryTables("other", store.TableQuery{Top: 10})
		if err != nil || len(page.Tables) != 0 {
			t.Errorf("after ResetAll: %+v %v", page.Tables, err)
		}
		return nil
	})
}
