package storetest

import (
	"slices"
	"strings"
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// RunCreationOrder runs the contract of store.OrderCreation (the cosmos
// profile's order, docs/cosmos.md) against stores that open makes with the
// engine's CreationOrder option: a partition's entities in the order they
// were created, an update, merge or upsert of an existing entity keeping
// its place, an upsert that inserts and an entity deleted and inserted
// again going last; partitions in PartitionKey order.
func RunCreationOrder(t *testing.T, open Open) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, *store.Store)
	}{
		{"Writes", testOrderWrites},
		{"Paging", testOrderPaging},
		{"Filters", testOrderFilters},
		{"KeyRange", testOrderKeyRange},
		{"ChangeSet", testOrderChangeSet},
		{"Snapshots", testOrderSnapshots},
		{"PageFull", testPageFull},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { s.Close() })
			tc.fn(t, s)
		})
	}
}

// byCreation is the query of every entity in creation order, top per page.
func byCreation(top int) store.EntityQuery {
	return store.EntityQuery{Top: top, Order: store.OrderCreation}
}

func joined(keys []string) string { return strings.Join(keys, " ") }

// orderSetup creates acct/t with partition p holding c, a, b and partition
// q holding z, y, inserted in that order one request each.
func orderSetup(t *testing.T, s *store.Store) {
	createTable(t, s, "acct", "t")
	for _, k := range [][2]string{{"q", "z"}, {"p", "c"}, {"p", "a"}, {"q", "y"}, {"p", "b"}} {
		insert(t, s, "acct", "t", entity(k[0], k[1], prop("N", edm.NewInt32(int32(k[1][0])))))
	}
}

func testOrderWrites(t *testing.T, s *store.Store) {
	orderSetup(t, s)
	if got, want := joined(scanAll(t, s, "acct", "t", byCreation(1000))), "p/c p/a p/b q/z q/y"; got != want {
		t.Fatalf("inserted: %s, want %s", got, want)
	}
	// Key order is unchanged in the same store.
	if got, want := joined(scanAll(t, s, "acct", "t", store.EntityQuery{Top: 1000})), "p/a p/b p/c q/y q/z"; got != want {
		t.Fatalf("OrderKeys: %s, want %s", got, want)
	}
	update(t, s, func(tx *store.Tx) error {
		tb := table(t, tx, "acct", "t")
		// An update (replace or merge: a PutEntity of an existing entity)
		// keeps the place; so does an import's LoadEntity.
		if err := tx.PutEntity(tb, entity("p", "c", prop("N", edm.NewInt32(1))), 0); err != nil {
			return err
		}
		return tx.LoadEntity(tb, &edm.Entity{PartitionKey: "q", RowKey: "z", Timestamp: 638000000000000000})
	})
	update(t, s, func(tx *store.Tx) error {
		tb := table(t, tx, "acct", "t")
		// An upsert that inserts goes last.
		return tx.PutEntity(tb, entity("p", "0"), 0)
	})
	update(t, s, func(tx *store.Tx) error {
		tb := table(t, tx, "acct", "t")
		// Deleted and inserted again: last.
		if err := tx.DeleteEntity(tb, "p", "c"); err != nil {
			return err
		}
		return tx.InsertEntity(tb, entity("p", "c"))
	})
	// The last entity of a partition deleted: an insert still goes last.
	update(t, s, func(tx *store.Tx) error { return tx.DeleteEntity(table(t, tx, "acct", "t"), "p", "c") })
	insert(t, s, "acct", "t", entity("p", "d"))
	if got, want := joined(scanAll(t, s, "acct", "t", byCreation(1000))), "p/a p/b p/0 p/d q/z q/y"; got != want {
		t.Fatalf("after writes: %s, want %s", got, want)
	}
}

func testOrderPaging(t *testing.T, s *store.Store) {
	orderSetup(t, s)
	for _, top := range []int{1, 2, 3} {
		if got, want := joined(scanAll(t, s, "acct", "t", byCreation(top))), "p/c p/a p/b q/z q/y"; got != want {
			t.Errorf("pages of %d: %s, want %s", top, got, want)
		}
	}
	// A write between two pages: an entity inserted after the
	// continuation's entity is on a later page; the continuation holds.
	var page store.EntityPage
	view(t, s, func(tx *store.Tx) (err error) {
		page, err = tx.QueryEntities(table(t, tx, "acct", "t"), byCreation(2))
		return err
	})
	if page.Next == nil || page.Next.PK != "p" || page.Next.RK != "b" {
		t.Fatalf("next after two: %+v, want p/b", page.Next)
	}
	insert(t, s, "acct", "t", entity("p", "aa"))
	q := byCreation(1000)
	q.Start = page.Next
	if got, want := joined(scanAll(t, s, "acct", "t", q)), "p/b p/aa q/z q/y"; got != want {
		t.Errorf("from the continuation: %s, want %s", got, want)
	}
}

func testOrderFilters(t *testing.T, s *store.Store) {
	orderSetup(t, s)
	insert(t, s, "acct", "t", entity("p", "0", prop("N", edm.NewInt32(1)), prop("S", edm.NewString("x"))))
	for _, tc := range []struct{ filter, want string }{
		// Evaluated on the stored properties, compiled to SQL, and on the
		// keys: each of the engines' ways of filtering.
		{"N ge 98", "p/c p/b q/z q/y"},
		{"N ge 98 and S eq 'x' or N eq 97", "p/a"},
		{"Timestamp ge datetime'2000-01-01T00:00:00Z'", "p/c p/a p/b p/0 q/z q/y"},
		{"PartitionKey eq 'p'", "p/c p/a p/b p/0"},
		{"PartitionKey eq 'p' and RowKey gt 'a'", "p/c p/b"},
		{"PartitionKey ge 'q'", "q/z q/y"},
		{"RowKey lt 'c' and N lt 1000", "p/a p/b p/0"},
		{"PartitionKey eq 'p' and RowKey ne 'c' and N ge 0", "p/a p/b p/0"},
	} {
		f, err := odata.ParseFilter(tc.filter)
		if err != nil {
			t.Fatal(err)
		}
		for _, top := range []int{1, 1000} {
			q := byCreation(top)
			q.Filter = f
			if got := joined(scanAll(t, s, "acct", "t", q)); got != tc.want {
				t.Errorf("%s, pages of %d: %s, want %s", tc.filter, top, got, tc.want)
			}
		}
	}
}

func testOrderKeyRange(t *testing.T, s *store.Store) {
	orderSetup(t, s)
	for _, tc := range []struct {
		r    store.KeyRange
		want string
	}{
		// A SAS key range bounds (PartitionKey, RowKey); the entities
		// inside it come in creation order.
		{store.KeyRange{From: &store.Key{PK: "p", RK: "b"}, To: true, ToPK: "q", ToRK: "y", HasToRK: true}, "p/c p/b q/y"},
		{store.KeyRange{From: &store.Key{PK: "p"}, To: true, ToPK: "p"}, "p/c p/a p/b"},
		{store.KeyRange{From: &store.Key{PK: "q", RK: "z"}}, "q/z"},
	} {
		for _, top := range []int{1, 1000} {
			q := byCreation(top)
			q.Range = &tc.r
			if got := joined(scanAll(t, s, "acct", "t", q)); got != tc.want {
				t.Errorf("range %+v, pages of %d: %s, want %s", tc.r, top, got, tc.want)
			}
		}
	}
}

// testOrderChangeSet: the writes of one transaction (a $batch's change
// set) take their places in the order made, as Cosmos DB answers
// test_batch_all_operations_together (python-cosmos).
func testOrderChangeSet(t *testing.T, s *store.Store) {
	createTable(t, s, "acct", "t")
	insert(t, s, "acct", "t", entity("p", "-1"), entity("p", "-2"), entity("p", "-3"), entity("p", "-4"))
	update(t, s, func(tx *store.Tx) error {
		tb := table(t, tx, "acct", "t")
		tx.ShareTimestamp()
		if err := tx.InsertEntity(tb, entity("p", "bare")); err != nil {
			return err
		}
		if err := tx.DeleteEntity(tb, "p", "-1"); err != nil {
			return err
		}
		for _, rk := range []string{"-2", "-3", "-4", "-5"} {
			if err := tx.PutEntity(tb, entity("p", rk, prop("X", edm.NewInt32(1))), 0); err != nil {
				return err
			}
		}
		for _, rk := range []string{"z3", "z1", "z2"} {
			if err := tx.InsertEntity(tb, entity("p", rk)); err != nil {
				return err
			}
		}
		return nil
	})
	if got, want := joined(scanAll(t, s, "acct", "t", byCreation(1000))), "p/-2 p/-3 p/-4 p/bare p/-5 p/z3 p/z1 p/z2"; got != want {
		t.Fatalf("after a change set: %s, want %s", got, want)
	}
}

func testOrderSnapshots(t *testing.T, s *store.Store) {
	orderSetup(t, s)
	const want = "p/c p/a p/b q/z q/y"
	update(t, s, func(tx *store.Tx) error { _, _, err := tx.SaveSnapshot("acct", "s"); return err })
	update(t, s, func(tx *store.Tx) error { _, err := tx.ResetAccount("acct"); return err })
	update(t, s, func(tx *store.Tx) error { _, err := tx.RestoreSnapshot("acct", "s"); return err })
	if got := joined(scanAll(t, s, "acct", "t", byCreation(2))); got != want {
		t.Fatalf("restored: %s, want %s", got, want)
	}
	// Changed since the restore and restored again: each entity back in
	// its place.
	update(t, s, func(tx *store.Tx) error {
		tb := table(t, tx, "acct", "t")
		if err := tx.DeleteEntity(tb, "p", "c"); err != nil {
			return err
		}
		return tx.InsertEntity(tb, entity("p", "c"))
	})
	update(t, s, func(tx *store.Tx) error { _, err := tx.RestoreSnapshot("acct", "s"); return err })
	if got := joined(scanAll(t, s, "acct", "t", byCreation(1000))); got != want {
		t.Fatalf("restored again: %s, want %s", got, want)
	}
}

// testPageFull: a callback that returns store.ErrPageFull ends the page
// before its entity, which the next page starts at, in either order.
func testPageFull(t *testing.T, s *store.Store) {
	orderSetup(t, s)
	filter, _ := odata.ParseFilter("N ge 0")
	for _, q := range []store.EntityQuery{byCreation(1000), {Top: 1000}, {Top: 1000, Filter: filter}, {Top: 1000, Order: store.OrderCreation, Filter: filter}} {
		var all []string
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatal("the continuation does not advance")
			}
			var res store.ScanResult
			view(t, s, func(tx *store.Tx) (err error) {
				n := 0
				res, err = tx.ScanEntities(table(t, tx, "acct", "t"), q, func(e *edm.Entity) error {
					if n == 2 {
						return store.ErrPageFull
					}
					n++
					all = append(all, e.PartitionKey+"/"+e.RowKey)
					return nil
				})
				return err
			})
			if res.Next == nil {
				break
			}
			q.Start = res.Next
		}
		want := []string{"p/c", "p/a", "p/b", "q/z", "q/y"}
		if q.Order == store.OrderKeys {
			want = []string{"p/a", "p/b", "p/c", "q/y", "q/z"}
		}
		if !slices.Equal(all, want) {
			t.Errorf("order %d, filter %v, pages cut at two: %v, want %v", q.Order, q.Filter != nil, all, want)
		}
	}
}

// testOrderWithoutSequence: a store opened without CreationOrder (Run's)
// keeps no creation sequence; queried in creation order it answers in key
// order, as every entity it wrote has sequence 0.
func testOrderWithoutSequence(t *testing.T, s *store.Store) {
	orderSetup(t, s)
	if got, want := joined(scanAll(t, s, "acct", "t", byCreation(2))), "p/a p/b p/c q/y q/z"; got != want {
		t.Fatalf("OrderCreation without the sequence: %s, want %s", got, want)
	}
}
