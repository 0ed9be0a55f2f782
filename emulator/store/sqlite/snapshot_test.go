package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// dump is an account as a request can see it: every table (name as
// created), its entities (keys, Timestamp, properties) and policies, and
// the service properties document.
func dump(t *testing.T, s *Store, account string) string {
	t.Helper()
	var b strings.Builder
	err := s.View(context.Background(), func(tx *Tx) error {
		page, err := tx.QueryTables(account, TableQuery{Top: 1000})
		if err != nil {
			return err
		}
		for _, tb := range page.Tables {
			fmt.Fprintf(&b, "table %s\n", tb.Name)
			_, err := tx.ScanEntities(tb, EntityQuery{Top: 1000}, func(e *edm.Entity) error {
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
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func update(t *testing.T, s *Store, fn func(tx *Tx) error) {
	t.Helper()
	if err := s.Update(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func entity(pk, rk string, n int) *edm.Entity {
	return &edm.Entity{PartitionKey: pk, RowKey: rk, Properties: []edm.Property{{Name: "N", Value: edm.NewInt32(int32(n))}}}
}

// fill gives account two tables, policies and service properties.
func fill(t *testing.T, s *Store, account string, n int) {
	t.Helper()
	update(t, s, func(tx *Tx) error {
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
			if err := tx.SetTableACL(tb, []SignedIdentifier{{ID: "read-" + name, Permission: "r"}}); err != nil {
				return err
			}
		}
		return tx.SetServiceProperties(account, "<StorageServiceProperties>"+account+"</StorageServiceProperties>")
	})
}

func tableID(t *testing.T, s *Store, account, name string) int64 {
	t.Helper()
	var id int64
	update(t, s, func(tx *Tx) error {
		tb, err := tx.GetTable(account, name)
		id = tb.ID
		return err
	})
	return id
}

// rowCount counts a table's rows across every account, retired ones too.
func rowCount(t *testing.T, s *Store, table string) int {
	t.Helper()
	var n int
	update(t, s, func(tx *Tx) error { return tx.queryRow("SELECT count(*) FROM " + table).Scan(&n) })
	return n
}

// TestResetAccount: the account has nothing left that a request can see,
// at once; another account and the snapshots are untouched. A table made
// since the snapshot is garbage, which the collector deletes, automatic
// index included; the tables saved in the snapshot are parked, index and
// all, until a restore takes them back or the snapshot is deleted.
func TestResetAccount(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	fill(t, s, "acct", 50)
	fill(t, s, "other", 20)
	other := dump(t, s, "other")
	update(t, s, func(tx *Tx) error { _, _, err := tx.SaveSnapshot("acct", "fixtures"); return err })
	update(t, s, func(tx *Tx) error {
		tb, err := tx.CreateTable("acct", "scratch")
		for i := 0; i < 5 && err == nil; i++ {
			err = tx.InsertEntity(tb, entity("p", fmt.Sprint(i), i))
		}
		return err
	})
	orders := Table{ID: tableID(t, s, "acct", "orders"), Account: "acct", Name: "Orders"}
	scratch := Table{ID: tableID(t, s, "acct", "scratch"), Account: "acct", Name: "scratch"}
	eq1 := &odata.Compare{Op: odata.Eq, Prop: "N", Lit: edm.NewInt32(1)}
	for _, tb := range []Table{orders, scratch} {
		if err := s.IndexNow(ctx, tb, eq1); err != nil {
			t.Fatal(err)
		}
	}
	ordersIdx := indexKey{tid: orders.ID, class: 'n', prop: "N"}

	var n int
	update(t, s, func(tx *Tx) error { var err error; n, err = tx.ResetAccount("acct"); return err })
	if n != 3 {
		t.Errorf("ResetAccount removed %d tables, want 3", n)
	}
	if got, want := dump(t, s, "acct"), "properties false \n"; got != want {
		t.Errorf("after reset the account shows\n%s", got)
	}
	if got := dump(t, s, "other"); got != other {
		t.Errorf("another account changed:\n%s\nwas\n%s", got, other)
	}
	err := s.View(ctx, func(tx *Tx) error {
		for _, name := range []string{"orders", "PEOPLE", "scratch"} {
			if _, err := tx.GetTable("acct", name); !errors.Is(err, ErrTableNotFound) {
				return fmt.Errorf("GetTable %s after reset: %v", name, err)
			}
		}
		if _, ok, _ := tx.AccessPolicy("acct", "orders", "read-Orders"); ok {
			return errors.New("a policy of a reset table still authorizes")
		}
		sn, err := tx.Snapshots("acct")
		if err != nil || len(sn) != 1 || sn[0].Name != "fixtures" || sn[0].Entities != 100 || sn[0].Tables != 2 {
			return fmt.Errorf("snapshots after reset: %+v, %v", sn, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CollectGarbage(ctx); err != nil {
		t.Fatal(err)
	}
	if got := rowCount(t, s, "entities"); got != 100+40 {
		t.Errorf("%d entities after collection, want 100 parked and the other account's 40", got)
	}
	if s.autoIdx.has(indexKey{tid: scratch.ID, class: 'n', prop: "N"}) || !s.autoIdx.has(ordersIdx) || indexCount(t, s) != 1 {
		t.Errorf("after reset: %d automatic indexes; want the parked Orders' alone", indexCount(t, s))
	}
	// A table of the same name is new and empty (a collected table's id
	// may come back: nothing is left under it).
	update(t, s, func(tx *Tx) error {
		tb, err := tx.CreateTable("acct", "orders")
		if err != nil {
			return err
		}
		if tb.ID == orders.ID {
			return fmt.Errorf("the new table has the parked table's id %d", tb.ID)
		}
		var n int
		if err := tx.queryRow(`SELECT count(*) FROM entities WHERE tid = ?`, tb.ID).Scan(&n); err != nil || n != 0 {
			return fmt.Errorf("the new table holds %d entities (%v)", n, err)
		}
		return nil
	})
	// The restore takes the parked tables back, as they were.
	update(t, s, func(tx *Tx) error { _, err := tx.RestoreSnapshot("acct", "fixtures"); return err })
	if tableID(t, s, "acct", "orders") != orders.ID || !s.autoIdx.has(ordersIdx) {
		t.Error("the restore did not take the parked Orders back, with its index")
	}
	update(t, s, func(tx *Tx) error { _, err := tx.ResetAccount("acct"); return err })
	update(t, s, func(tx *Tx) error { return tx.DeleteSnapshot("acct", "fixtures") })
	if err := s.CollectGarbage(ctx); err != nil {
		t.Fatal(err)
	}
	if got := rowCount(t, s, "entities"); got != 40 {
		t.Errorf("%d entities once the snapshot is deleted and collected, want the other account's 40", got)
	}
	if got := rowCount(t, s, "tables"); got != 2 {
		t.Errorf("%d table rows after collection, want 2", got)
	}
	if got := rowCount(t, s, "table_acl"); got != 2 {
		t.Errorf("%d policies after collection, want the other account's 2", got)
	}
	if indexCount(t, s) != 0 || s.autoIdx.has(ordersIdx) {
		t.Error("an automatic index outlived its table")
	}
}

func indexCount(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	update(t, s, func(tx *Tx) error {
		return tx.queryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name LIKE 'auto\_%' ESCAPE '\'`).Scan(&n)
	})
	return n
}

// TestResetAll: every account, configured or not, and nothing of the
// snapshots.
func TestResetAll(t *testing.T) {
	s := open(t)
	fill(t, s, "a1", 5)
	fill(t, s, "a2", 5)
	update(t, s, func(tx *Tx) error { _, _, err := tx.SaveSnapshot("a2", "s"); return err })
	var n int
	update(t, s, func(tx *Tx) error { var err error; n, err = tx.ResetAll(); return err })
	if n != 4 {
		t.Errorf("ResetAll removed %d tables, want 4", n)
	}
	for _, a := range []string{"a1", "a2"} {
		if got := dump(t, s, a); got != "properties false \n" {
			t.Errorf("%s after ResetAll:\n%s", a, got)
		}
	}
	update(t, s, func(tx *Tx) error { _, err := tx.RestoreSnapshot("a2", "s"); return err })
	if !strings.Contains(dump(t, s, "a2"), "table Orders") {
		t.Error("the snapshot did not survive ResetAll")
	}
}

// TestSnapshotRoundTrip: a restore puts back exactly what was saved —
// tables with their case, entities with their Timestamps, policies,
// service properties — whatever happened in between: writes of every
// kind, a table deleted and recreated in another case, a new table, new
// properties; and twice in a row. It rewrites only what changed when
// little did, and copies a table whole when most of it changed.
func TestSnapshotRoundTrip(t *testing.T) {
	s := open(t)
	fill(t, s, "acct", 40)
	fill(t, s, "other", 3)
	saved := dump(t, s, "acct")
	other := dump(t, s, "other")
	var sn Snapshot
	update(t, s, func(tx *Tx) error {
		var err error
		var replaced bool
		sn, replaced, err = tx.SaveSnapshot("acct", "fixtures")
		if err == nil && replaced {
			err = errors.New("a first save says it replaced a snapshot")
		}
		return err
	})
	if sn.Tables != 2 || sn.Entities != 80 || sn.Name != "fixtures" || sn.Created == 0 {
		t.Fatalf("SaveSnapshot: %+v", sn)
	}
	ordersID := tableID(t, s, "acct", "orders")
	peopleID := tableID(t, s, "acct", "people")

	// A few writes of every kind to Orders; people deleted and made again
	// as PEOPLE; a new table; the service properties changed.
	update(t, s, func(tx *Tx) error {
		tb, err := tx.GetTable("acct", "orders")
		if err != nil {
			return err
		}
		if err := tx.InsertEntity(tb, entity("p9", "new", 1)); err != nil {
			return err
		}
		if err := tx.PutEntity(tb, entity("p1", "r0001", 100), 0); err != nil {
			return err
		}
		if err := tx.DeleteEntity(tb, "p2", "r0002"); err != nil {
			return err
		}
		if err := tx.SetTableACL(tb, nil); err != nil {
			return err
		}
		if err := tx.DeleteTable("acct", "people"); err != nil {
			return err
		}
		if _, err := tx.CreateTable("acct", "PEOPLE"); err != nil {
			return err
		}
		if _, err := tx.CreateTable("acct", "extra"); err != nil {
			return err
		}
		return tx.SetServiceProperties("acct", "<changed/>")
	})
	if dump(t, s, "acct") == saved {
		t.Fatal("the writes changed nothing")
	}
	for i := range 2 {
		update(t, s, func(tx *Tx) error { _, err := tx.RestoreSnapshot("acct", "fixtures"); return err })
		if got := dump(t, s, "acct"); got != saved {
			t.Fatalf("restore %d gives\n%s\nwant\n%s", i+1, got, saved)
		}
	}
	if got := dump(t, s, "other"); got != other {
		t.Errorf("another account changed:\n%s", got)
	}
	if id := tableID(t, s, "acct", "orders"); id != ordersID {
		t.Errorf("Orders, with 3 of 40 entities changed, was copied whole (id %d → %d), not restored in place", ordersID, id)
	}
	if id := tableID(t, s, "acct", "people"); id != peopleID {
		t.Errorf("people, deleted since, was copied whole (id %d → %d), not taken back from where it was parked", peopleID, id)
	}
	if n := rowCount(t, s, "entity_changes"); n != 0 {
		t.Errorf("%d recorded changes right after a restore", n)
	}

	// Most of Orders rewritten: copied whole.
	update(t, s, func(tx *Tx) error {
		tb, err := tx.GetTable("acct", "orders")
		for i := 0; i < 30 && err == nil; i++ {
			err = tx.PutEntity(tb, entity(fmt.Sprint("p", i%3), fmt.Sprintf("r%04d", i), -i), 0)
		}
		return err
	})
	update(t, s, func(tx *Tx) error { _, err := tx.RestoreSnapshot("acct", "fixtures"); return err })
	if got := dump(t, s, "acct"); got != saved {
		t.Fatalf("restore after rewriting most of a table gives\n%s", got)
	}
	if id := tableID(t, s, "acct", "orders"); id == ordersID {
		t.Error("Orders, with 30 of 40 entities rewritten, was patched in place rather than copied")
	}
	if err := s.CollectGarbage(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := rowCount(t, s, "entities"); got != 80+6 {
		t.Errorf("%d entities after collection, want 86", got)
	}
}

// TestSnapshotReplaceDelete: saving under a taken name replaces the
// snapshot; deleting it leaves its data to the collector; unknown names
// are ErrSnapshotNotFound; each account has its own names.
func TestSnapshotReplaceDelete(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	fill(t, s, "acct", 10)
	update(t, s, func(tx *Tx) error { _, _, err := tx.SaveSnapshot("acct", "s"); return err })
	update(t, s, func(tx *Tx) error { return tx.DeleteTable("acct", "people") })
	after := dump(t, s, "acct")
	update(t, s, func(tx *Tx) error {
		sn, replaced, err := tx.SaveSnapshot("acct", "s")
		if err == nil && (!replaced || sn.Tables != 1 || sn.Entities != 10) {
			err = fmt.Errorf("replacing: %+v replaced=%v", sn, replaced)
		}
		return err
	})
	update(t, s, func(tx *Tx) error { _, err := tx.ResetAccount("acct"); return err })
	update(t, s, func(tx *Tx) error { _, err := tx.RestoreSnapshot("acct", "s"); return err })
	if got := dump(t, s, "acct"); got != after {
		t.Errorf("the replaced snapshot restores\n%s\nwant\n%s", got, after)
	}
	err := s.Update(ctx, func(tx *Tx) error {
		if _, err := tx.RestoreSnapshot("other", "s"); !errors.Is(err, ErrSnapshotNotFound) {
			return fmt.Errorf("another account's snapshot: %v", err)
		}
		if err := tx.DeleteSnapshot("acct", "S"); !errors.Is(err, ErrSnapshotNotFound) {
			return fmt.Errorf("names are exact: %v", err)
		}
		if err := tx.DeleteSnapshot("acct", "s"); err != nil {
			return err
		}
		if _, err := tx.GetSnapshot("acct", "s"); !errors.Is(err, ErrSnapshotNotFound) {
			return fmt.Errorf("after delete: %v", err)
		}
		list, err := tx.Snapshots("acct")
		if err == nil && len(list) != 0 {
			err = fmt.Errorf("after delete: %+v", list)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := rowCount(t, s, "entity_changes"); n != 0 {
		t.Errorf("writes are still recorded for a deleted snapshot: %d rows", n)
	}
	if err := s.CollectGarbage(ctx); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"snapshot_entities", "snapshot_tables", "snapshot_acl", "snapshots"} {
		if n := rowCount(t, s, table); n != 0 {
			t.Errorf("%s has %d rows after the snapshots were deleted and collected", table, n)
		}
	}
}

// TestSnapshotSurvivesRestart: snapshots are in the database file, and
// garbage left at Close is collected by the next Open.
func TestSnapshotSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := openStore(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, s, "acct", 30)
	saved := dump(t, s, "acct")
	update(t, s, func(tx *Tx) error { _, _, err := tx.SaveSnapshot("acct", "s"); return err })
	update(t, s, func(tx *Tx) error {
		tb, err := tx.CreateTable("acct", "scratch")
		for i := 0; i < 30 && err == nil; i++ {
			err = tx.InsertEntity(tb, entity("p", fmt.Sprint(i), i))
		}
		return err
	})
	s.stopCollector() // leave the garbage of the reset below for the next Open
	s.gc = collector{}
	update(t, s, func(tx *Tx) error { _, err := tx.ResetAccount("acct"); return err })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = openStore(ctx, Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	deadline := time.Now().Add(10 * time.Second)
	for rowCount(t, s, "entities") != 60 { // the 60 parked
		if time.Now().After(deadline) {
			t.Fatal("the garbage left by the last run was not collected after Open")
		}
		time.Sleep(10 * time.Millisecond)
	}
	update(t, s, func(tx *Tx) error { _, err := tx.RestoreSnapshot("acct", "s"); return err })
	if got := dump(t, s, "acct"); got != saved {
		t.Errorf("after a restart the snapshot restores\n%s", got)
	}
}

// TestTrackingCostsOnlyBasedTables: a table never saved nor restored
// records nothing, and writes to a based table record their keys once.
func TestTrackingCostsOnlyBasedTables(t *testing.T) {
	s := open(t)
	fill(t, s, "acct", 3)
	update(t, s, func(tx *Tx) error {
		tb, _ := tx.GetTable("acct", "orders")
		return tx.PutEntity(tb, entity("p", "x", 1), 0)
	})
	if n := rowCount(t, s, "entity_changes"); n != 0 {
		t.Fatalf("an untracked table recorded %d changes", n)
	}
	update(t, s, func(tx *Tx) error { _, _, err := tx.SaveSnapshot("acct", "s"); return err })
	update(t, s, func(tx *Tx) error {
		tb, _ := tx.GetTable("acct", "orders")
		for range 3 {
			if err := tx.PutEntity(tb, entity("p", "x", 2), 0); err != nil {
				return err
			}
		}
		return tx.DeleteEntity(tb, "p", "x")
	})
	if n := rowCount(t, s, "entity_changes"); n != 1 {
		t.Fatalf("four writes of one entity recorded %d changes, want 1", n)
	}
}
