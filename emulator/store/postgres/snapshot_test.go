package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata/edm"
)

func TestACLAndServiceProperties(t *testing.T) {
	s := open(t)
	start := time.Date(2024, 6, 1, 12, 0, 0, 123456700, time.UTC)
	ids := []store.SignedIdentifier{
		{ID: "second", Start: start, Expiry: start.Add(time.Hour), Permission: "raud"},
		{ID: "first"},
		{ID: "far", Expiry: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), Permission: "r"},
	}
	var tb store.Table
	update(t, s, func(tx *store.Tx) error {
		var err error
		if tb, err = tx.CreateTable("a", "Policies"); err != nil {
			return err
		}
		if err := tx.SetTableACL(tb, []store.SignedIdentifier{{ID: "gone"}}); err != nil {
			return err
		}
		return tx.SetTableACL(tb, ids)
	})
	view(t, s, func(tx *store.Tx) error {
		got, err := tx.TableACL(tb)
		if err != nil {
			return err
		}
		if fmt.Sprint(got) != fmt.Sprint(ids) {
			t.Errorf("ACL %v, want %v", got, ids)
		}
		si, ok, err := tx.AccessPolicy("a", "POLICIES", "second")
		if err != nil || !ok || !si.Start.Equal(start) || si.Permission != "raud" {
			t.Errorf("AccessPolicy: %+v %v %v", si, ok, err)
		}
		for _, miss := range [][3]string{{"a", "policies", "SECOND"}, {"a", "other", "second"}, {"b", "policies", "second"}, {"a", "policies", "gone"}} {
			if _, ok, err := tx.AccessPolicy(miss[0], miss[1], miss[2]); ok || err != nil {
				t.Errorf("AccessPolicy %v: %v %v", miss, ok, err)
			}
		}
		if _, ok, err := tx.ServiceProperties("a"); ok || err != nil {
			t.Errorf("service properties of a new account: %v %v", ok, err)
		}
		return nil
	})
	update(t, s, func(tx *store.Tx) error { return tx.SetServiceProperties("a", "<one/>") })
	update(t, s, func(tx *store.Tx) error { return tx.SetServiceProperties("a", "<two/>") })
	view(t, s, func(tx *store.Tx) error {
		doc, ok, err := tx.ServiceProperties("a")
		if doc != "<two/>" || !ok || err != nil {
			t.Errorf("service properties: %q %v %v", doc, ok, err)
		}
		return err
	})
	// Deleting the table deletes its policies; a new table of that name
	// has none.
	update(t, s, func(tx *store.Tx) error { return tx.DeleteTable("a", "policies") })
	update(t, s, func(tx *store.Tx) error {
		nt, err := tx.CreateTable("a", "Policies")
		if err != nil {
			return err
		}
		acl, err := tx.TableACL(nt)
		if len(acl) != 0 || err != nil {
			t.Errorf("a new table's ACL: %v %v", acl, err)
		}
		return err
	})
}

// dump is an account as a request can see it.
func dump(t *testing.T, s *store.Store, account string) string {
	t.Helper()
	var b strings.Builder
	view(t, s, func(tx *store.Tx) error {
		page, err := tx.QueryTables(account, store.TableQuery{Top: 1000})
		if err != nil {
			return err
		}
		for _, tb := range page.Tables {
			fmt.Fprintf(&b, "table %s\n", tb.Name)
			_, err := tx.ScanEntities(tb, store.EntityQuery{Top: 1000}, func(e *edm.Entity) error {
				fmt.Fprintf(&b, "  %q %q %d", e.PartitionKey, e.RowKey, e.Timestamp)
				for _, p := range e.Properties {
					fmt.Fprintf(&b, " %s=%v", p.Name, p.Value)
				}
				b.WriteByte('\n')
				return nil
			})
			if err != nil {
				return err
			}
			acl, err := tx.TableACL(tb)
			if err != nil {
				return err
			}
			for _, si := range acl {
				fmt.Fprintf(&b, "  acl %s %s\n", si.ID, si.Permission)
			}
		}
		doc, ok, err := tx.ServiceProperties(account)
		fmt.Fprintf(&b, "properties %v %s\n", ok, doc)
		return err
	})
	return b.String()
}

// fill gives account two tables, policies and service properties.
func fill(t *testing.T, s *store.Store, account string, n int) {
	t.Helper()
	update(t, s, func(tx *store.Tx) error {
		for _, name := range []string{"Orders", "people"} {
			tb, err := tx.CreateTable(account, name)
			if err != nil {
				return err
			}
			for i := range n {
				if err := tx.InsertEntity(tb, entity("p"+fmt.Sprint(i%3), fmt.Sprintf("r%04d", i), i)); err != nil {
					return err
				}
			}
			if err := tx.SetTableACL(tb, []store.SignedIdentifier{{ID: "read-" + name, Permission: "r"}}); err != nil {
				return err
			}
		}
		return tx.SetServiceProperties(account, "<StorageServiceProperties>"+account+"</StorageServiceProperties>")
	})
}

func TestSnapshots(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	fill(t, s, "acct", 30)
	fill(t, s, "other", 5)
	saved, other := dump(t, s, "acct"), dump(t, s, "other")
	var sn store.Snapshot
	update(t, s, func(tx *store.Tx) error {
		var replaced bool
		var err error
		sn, replaced, err = tx.SaveSnapshot("acct", "fixtures")
		if replaced {
			t.Error("a first save replaced")
		}
		return err
	})
	if sn.Tables != 2 || sn.Entities != 60 || sn.Created == 0 {
		t.Fatalf("saved %+v", sn)
	}
	// Change everything: an entity, a table gone, a new table, policies,
	// properties.
	update(t, s, func(tx *store.Tx) error {
		tb, err := tx.GetTable("acct", "orders")
		if err != nil {
			return err
		}
		if err := tx.PutEntity(tb, entity("p0", "r0000", -1), 0); err != nil {
			return err
		}
		if err := tx.SetTableACL(tb, nil); err != nil {
			return err
		}
		if err := tx.DeleteTable("acct", "people"); err != nil {
			return err
		}
		nt, err := tx.CreateTable("acct", "scratch")
		if err != nil {
			return err
		}
		if err := tx.InsertEntity(nt, entity("x", "y", 1)); err != nil {
			return err
		}
		return tx.SetServiceProperties("acct", "<changed/>")
	})
	if dump(t, s, "acct") == saved {
		t.Fatal("nothing changed")
	}
	update(t, s, func(tx *store.Tx) error { _, _, err := tx.SaveSnapshot("acct", "later"); return err })
	var restored store.Snapshot
	update(t, s, func(tx *store.Tx) error {
		var err error
		restored, err = tx.RestoreSnapshot("acct", "fixtures")
		return err
	})
	if got := dump(t, s, "acct"); got != saved {
		t.Errorf("after restore:\n%s\nwant\n%s", got, saved)
	}
	if restored != sn {
		t.Errorf("restore returned %+v, want %+v", restored, sn)
	}
	if got := dump(t, s, "other"); got != other {
		t.Errorf("another account changed:\n%s", got)
	}
	view(t, s, func(tx *store.Tx) error {
		list, err := tx.Snapshots("acct")
		if err != nil || len(list) != 2 || list[0].Name != "fixtures" || list[1].Name != "later" || list[1].Tables != 2 {
			t.Errorf("snapshots %+v %v", list, err)
		}
		if list, _ := tx.Snapshots("other"); len(list) != 0 {
			t.Errorf("other's snapshots: %+v", list)
		}
		got, err := tx.GetSnapshot("acct", "later")
		if err != nil || got.Entities != 31 {
			t.Errorf("GetSnapshot: %+v %v", got, err)
		}
		if _, err := tx.GetSnapshot("acct", "nosuch"); !errors.Is(err, store.ErrSnapshotNotFound) {
			t.Errorf("GetSnapshot of a missing one: %v", err)
		}
		return nil
	})
	// Replace, restore the replaced one, delete.
	update(t, s, func(tx *store.Tx) error {
		_, replaced, err := tx.SaveSnapshot("acct", "later")
		if !replaced {
			t.Error("second save of 'later' did not replace it")
		}
		return err
	})
	update(t, s, func(tx *store.Tx) error { _, err := tx.RestoreSnapshot("acct", "later"); return err })
	if got := dump(t, s, "acct"); got != saved {
		t.Errorf("after restoring the replaced snapshot:\n%s", got)
	}
	update(t, s, func(tx *store.Tx) error { return tx.DeleteSnapshot("acct", "later") })
	err := s.Update(ctx, func(tx *store.Tx) error { _, err := tx.RestoreSnapshot("acct", "later"); return err })
	if !errors.Is(err, store.ErrSnapshotNotFound) {
		t.Errorf("restore of a deleted snapshot: %v", err)
	}
	var n int
	if err := s.Update(ctx, func(tx *store.Tx) error {
		var err error
		n, err = tx.ResetAccount("acct")
		return err
	}); err != nil || n != 2 {
		t.Fatalf("ResetAccount: %d tables, %v", n, err)
	}
	if got := dump(t, s, "acct"); got != "properties false \n" {
		t.Errorf("after reset:\n%s", got)
	}
	if got := dump(t, s, "other"); got != other {
		t.Errorf("reset changed another account:\n%s", got)
	}
	view(t, s, func(tx *store.Tx) error {
		if _, ok, _ := tx.AccessPolicy("acct", "orders", "read-Orders"); ok {
			t.Error("a policy of a reset table still authorizes")
		}
		return nil
	})
	update(t, s, func(tx *store.Tx) error { _, err := tx.RestoreSnapshot("acct", "fixtures"); return err })
	if got := dump(t, s, "acct"); got != saved {
		t.Errorf("restore after reset:\n%s", got)
	}
	if err := s.Update(ctx, func(tx *store.Tx) error {
		var err error
		n, err = tx.ResetAll()
		return err
	}); err != nil || n != 4 {
		t.Fatalf("ResetAll: %d tables, %v", n, err)
	}
	for _, a := range []string{"acct", "other"} {
		if got := dump(t, s, a); got != "properties false \n" {
			t.Errorf("%s after ResetAll:\n%s", a, got)
		}
	}
	view(t, s, func(tx *store.Tx) error {
		if list, _ := tx.Snapshots("acct"); len(list) != 1 {
			t.Errorf("ResetAll dropped snapshots: %+v", list)
		}
		return nil
	})
}
