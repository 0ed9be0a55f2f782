package storetest

import (
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// testKeyPlaces: where an entity's keys stand among its properties
// (edm.Entity.Keys, which the cosmos profile records) is kept by every
// write and given back by every read: GetEntity, ReadEntity, a query with
// and without a filter; a write with the keys first gives back the zero
// value, also over an entity that had them elsewhere.
func testKeyPlaces(t *testing.T, s *store.Store) {
	createTable(t, s, "acct", "t")
	props := []edm.Property{prop("Amount", edm.NewInt32(3)), prop("Price", edm.NewDouble(9.5)), prop("name", edm.NewString("x"))}
	placed := func(rk string, at edm.KeyPlaces) *edm.Entity {
		e := entity("p", rk, props...)
		e.Keys = at
		return e
	}
	want := map[string]edm.KeyPlaces{
		"first": {},
		"last":  {PK: 3, RK: 3},
		"split": {PK: 1, RK: 2},
		"rk":    {RKFirst: true},
	}
	for rk, at := range want {
		insert(t, s, "acct", "t", placed(rk, at))
	}
	check := func(when string) {
		t.Helper()
		f, err := odata.ParseFilter("Price gt 1.0")
		if err != nil {
			t.Fatal(err)
		}
		view(t, s, func(tx *store.Tx) error {
			tb := table(t, tx, "acct", "t")
			for rk, at := range want {
				e, err := tx.GetEntity(tb, "p", rk)
				if err != nil || e.Keys != at {
					t.Errorf("%s: GetEntity(p, %s): keys at %+v (%v), want %+v", when, rk, e, err, at)
				}
				err = tx.ReadEntity(tb, "p", rk, func(e *edm.Entity) error {
					if e.Keys != at {
						t.Errorf("%s: ReadEntity(p, %s): keys at %+v, want %+v", when, rk, e.Keys, at)
					}
					return nil
				})
				if err != nil {
					t.Error(err)
				}
			}
			for _, filter := range []odata.Expr{nil, f} {
				page, err := tx.QueryEntities(tb, store.EntityQuery{Top: 1000, Filter: filter})
				if err != nil || len(page.Entities) != len(want) {
					t.Fatalf("%s: query %v: %d entities, %v", when, filter, len(page.Entities), err)
				}
				for _, e := range page.Entities {
					if e.Keys != want[e.RowKey] || len(e.Properties) != len(props) {
						t.Errorf("%s: query %v: %s has keys at %+v and %d properties, want %+v and %d",
							when, filter, e.RowKey, e.Keys, len(e.Properties), want[e.RowKey], len(props))
					}
				}
			}
			return nil
		})
	}
	check("inserted")
	// Put: new places, the keys back first, and elsewhere again.
	want["first"], want["last"], want["split"] = edm.KeyPlaces{PK: 0, RK: 3}, edm.KeyPlaces{}, edm.KeyPlaces{PK: 2, RK: 2, RKFirst: true}
	update(t, s, func(tx *store.Tx) error {
		tb := table(t, tx, "acct", "t")
		for _, rk := range []string{"first", "last", "split"} {
			old, err := tx.GetEntity(tb, "p", rk)
			if err != nil {
				return err
			}
			if err := tx.PutEntity(tb, placed(rk, want[rk]), old.Timestamp); err != nil {
				return err
			}
		}
		return nil
	})
	check("put")
}
