package storetest

import (
	"errors"
	"slices"
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata"
)

// Reopen opens a store on one database, the same for every call within a
// test, with the engine's ExactTableNames option or without; the caller
// closes each store before opening the next.
type Reopen func(t *testing.T, exact bool) *store.Store

// RunExactTableNames runs the contract of the engines' ExactTableNames
// option (the cosmos profile, docs/cosmos.md, "table names") against
// stores that open makes with it: names differing only in case are tables
// of their own, found only by their exact name, through every path that
// resolves a table by name. Run covers the stores without it, where a
// name finds its table in any case (testTables). With reopen (nil for a
// store that cannot be opened again, in memory) it checks a database
// written without the option and opened with it, and back.
func RunExactTableNames(t *testing.T, open Open, reopen Reopen) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, *store.Store)
	}{
		{"Tables", testExactTables},
		{"QueryTables", testExactQueryTables},
		{"ACL", testExactACL},
		{"Snapshots", testExactSnapshots},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { s.Close() })
			tc.fn(t, s)
		})
	}
	if reopen != nil {
		t.Run("WrittenWithout", func(t *testing.T) { testExactWrittenWithout(t, reopen) })
	}
}

// exactNames is a name in three cases, created in this order.
var exactNames = []string{"orders", "Orders", "ORDERS"}

func testExactTables(t *testing.T, s *store.Store) {
	ids := map[int64]bool{}
	for _, n := range exactNames {
		ids[createTable(t, s, "acct", n).ID] = true
		insert(t, s, "acct", n, entity("p", n))
	}
	if len(ids) != len(exactNames) {
		t.Fatalf("table ids %v, want one per name", ids)
	}
	for _, n := range exactNames {
		err := s.Update(ctx, func(tx *store.Tx) error { _, err := tx.CreateTable("acct", n); return err })
		if !errors.Is(err, store.ErrTableExists) {
			t.Errorf("creating %s again: %v, want ErrTableExists", n, err)
		}
		view(t, s, func(tx *store.Tx) error {
			if tb := table(t, tx, "acct", n); tb.Name != n {
				t.Errorf("GetTable(%s) is %s", n, tb.Name)
			}
			return nil
		})
		// Each holds its own entity.
		if got := scanAll(t, s, "acct", n, store.EntityQuery{Top: 1000}); !slices.Equal(got, []string{"p/" + n}) {
			t.Errorf("%s holds %v", n, got)
		}
	}
	view(t, s, func(tx *store.Tx) error {
		if _, err := tx.GetTable("acct", "oRDERS"); !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("GetTable in a fourth case: %v, want ErrTableNotFound", err)
		}
		return nil
	})
	if err := s.Update(ctx, func(tx *store.Tx) error { return tx.DeleteTable("acct", "oRDERS") }); !errors.Is(err, store.ErrTableNotFound) {
		t.Errorf("DeleteTable in a fourth case: %v, want ErrTableNotFound", err)
	}
	update(t, s, func(tx *store.Tx) error { return tx.DeleteTable("acct", "Orders") })
	view(t, s, func(tx *store.Tx) error {
		if _, err := tx.GetTable("acct", "Orders"); !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("deleted Orders: %v", err)
		}
		return nil
	})
	for _, n := range []string{"orders", "ORDERS"} {
		if got := scanAll(t, s, "acct", n, store.EntityQuery{Top: 1000}); !slices.Equal(got, []string{"p/" + n}) {
			t.Errorf("after deleting Orders, %s holds %v", n, got)
		}
	}
	// Created again, it starts empty.
	createTable(t, s, "acct", "Orders")
	if got := scanAll(t, s, "acct", "Orders", store.EntityQuery{Top: 1000}); len(got) != 0 {
		t.Errorf("recreated Orders holds %v", got)
	}
}

func testExactQueryTables(t *testing.T, s *store.Store) {
	for _, n := range []string{"beta", "ORDERS", "Alpha", "orders", "ordersA", "Orders"} {
		createTable(t, s, "acct", n)
	}
	var got []string
	q := store.TableQuery{Top: 1}
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("the continuation does not advance")
		}
		var page store.TablePage
		view(t, s, func(tx *store.Tx) (err error) {
			page, err = tx.QueryTables("acct", q)
			return err
		})
		for _, tb := range page.Tables {
			got = append(got, tb.Name)
		}
		if page.Next == "" {
			break
		}
		q.After = page.Next
	}
	// Storage's order, without regard to case; a name's case variants
	// after the lower-case one, by exact name (store.TableKey).
	if want := []string{"Alpha", "beta", "orders", "ORDERS", "Orders", "ordersA"}; !slices.Equal(got, want) {
		t.Errorf("tables %v, want %v", got, want)
	}
	f, err := odata.ParseFilter("TableName eq 'Orders'")
	if err != nil {
		t.Fatal(err)
	}
	view(t, s, func(tx *store.Tx) error {
		page, err := tx.QueryTables("acct", store.TableQuery{Top: 1000, Filter: f})
		if err != nil || len(page.Tables) != 1 || page.Tables[0].Name != "Orders" {
			t.Errorf("TableName eq 'Orders': %+v %v", page.Tables, err)
		}
		return nil
	})
}

func testExactACL(t *testing.T, s *store.Store) {
	for i, n := range exactNames[:2] {
		createTable(t, s, "acct", n)
		perm := []string{"r", "a"}[i]
		update(t, s, func(tx *store.Tx) error {
			return tx.SetTableACL(table(t, tx, "acct", n), []store.SignedIdentifier{{ID: "pol", Permission: perm}})
		})
	}
	view(t, s, func(tx *store.Tx) error {
		// The exact name's table first; a SAS's tn lower-cased by
		// its client still finds a case variant's.
		for _, c := range []struct{ table, perm string }{{"orders", "r"}, {"Orders", "a"}, {"ORDERS", "r"}} {
			p, ok, err := tx.AccessPolicy("acct", c.table, "pol")
			if err != nil || !ok || p.Permission != c.perm {
				t.Errorf("AccessPolicy(%s): %+v %v %v, want permission %s", c.table, p, ok, err, c.perm)
			}
		}
		got, err := tx.TableACL(table(t, tx, "acct", "Orders"))
		if err != nil || len(got) != 1 || got[0].Permission != "a" {
			t.Errorf("TableACL(Orders): %+v %v", got, err)
		}
		return nil
	})
}

func testExactSnapshots(t *testing.T, s *store.Store) {
	for _, n := range exactNames[:2] {
		createTable(t, s, "acct", n)
		insert(t, s, "acct", n, entity("p", n))
	}
	update(t, s, func(tx *store.Tx) error { _, _, err := tx.SaveSnapshot("acct", "both"); return err })
	update(t, s, func(tx *store.Tx) error { return tx.DeleteTable("acct", "Orders") })
	insert(t, s, "acct", "orders", entity("p", "later"))
	update(t, s, func(tx *store.Tx) error { _, err := tx.RestoreSnapshot("acct", "both"); return err })
	for _, n := range exactNames[:2] {
		if got := scanAll(t, s, "acct", n, store.EntityQuery{Top: 1000}); !slices.Equal(got, []string{"p/" + n}) {
			t.Errorf("restored %s holds %v", n, got)
		}
	}
	err := s.Update(ctx, func(tx *store.Tx) error { _, err := tx.CreateTable("acct", "Orders"); return err })
	if !errors.Is(err, store.ErrTableExists) {
		t.Errorf("creating the restored Orders again: %v, want ErrTableExists", err)
	}
}

// testExactWrittenWithout: a table a store without the option created is
// found with it by its exact name only, and keeps its name in every case
// from a variant of its lower-case form (docs/cosmos.md, "table names");
// opened without the option again, the database finds a lower-case name
// in any case, and a case variant created with the option not at all.
func testExactWrittenWithout(t *testing.T, reopen Reopen) {
	s := reopen(t, false)
	createTable(t, s, "acct", "Legacy")
	insert(t, s, "acct", "Legacy", entity("p", "old"))
	createTable(t, s, "acct", "plain")
	s.Close()

	s = reopen(t, true)
	view(t, s, func(tx *store.Tx) error {
		if tb := table(t, tx, "acct", "Legacy"); tb.Name != "Legacy" {
			t.Errorf("GetTable(Legacy) is %s", tb.Name)
		}
		if _, err := tx.GetTable("acct", "legacy"); !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("GetTable(legacy): %v, want ErrTableNotFound", err)
		}
		return nil
	})
	if got := scanAll(t, s, "acct", "Legacy", store.EntityQuery{Top: 1000}); !slices.Equal(got, []string{"p/old"}) {
		t.Errorf("Legacy holds %v", got)
	}
	for _, c := range []struct {
		name   string
		exists bool
	}{{"Legacy", true}, {"legacy", true}, {"LEGACY", false}, {"Plain", false}, {"plain", true}} {
		err := s.Update(ctx, func(tx *store.Tx) error { _, err := tx.CreateTable("acct", c.name); return err })
		if c.exists != errors.Is(err, store.ErrTableExists) || (err != nil && !c.exists) {
			t.Errorf("CreateTable(%s): %v, want exists %v", c.name, err, c.exists)
		}
	}
	insert(t, s, "acct", "LEGACY", entity("p", "new"))
	s.Close()

	s = reopen(t, false)
	defer s.Close()
	view(t, s, func(tx *store.Tx) error {
		if tb := table(t, tx, "acct", "PLAIN"); tb.Name != "plain" {
			t.Errorf("GetTable(PLAIN) without the option is %s", tb.Name)
		}
		if tb := table(t, tx, "acct", "legacy"); tb.Name != "Legacy" {
			t.Errorf("GetTable(legacy) without the option is %s", tb.Name)
		}
		return nil
	})
}
