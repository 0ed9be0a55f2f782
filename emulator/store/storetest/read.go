package storetest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata/edm"
)

// testReadEntity: ReadEntity hands fn the entity GetEntity returns, once;
// not found is ErrEntityNotFound without a call; fn's error comes back;
// a ReadEntity inside fn (the engine's reused entity already lent) and
// several in a row on one connection each see their own entity.
func testReadEntity(t *testing.T, s *store.Store) {
	createTable(t, s, "acct", "t")
	insert(t, s, "acct", "t",
		entity("p", "a", prop("S", edm.NewString("first")), prop("N", edm.NewInt64(7)), prop("X", edm.NewString("a\"b"))),
		entity("p", "b", prop("S", edm.NewString("second"))))
	read := func(tx *store.Tx, rk string) (got *edm.Entity, calls int, err error) {
		tb := table(t, tx, "acct", "t")
		err = tx.ReadEntity(tb, "p", rk, func(e *edm.Entity) error {
			calls++
			got = clone(e)
			return nil
		})
		return got, calls, err
	}
	for _, viewFn := range []func(func(*store.Tx) error) error{
		func(fn func(*store.Tx) error) error { return s.View(ctx, fn) },
		func(fn func(*store.Tx) error) error { return s.ViewPoint(ctx, fn) },
		func(fn func(*store.Tx) error) error { return s.Update(ctx, fn) },
	} {
		for range 2 { // the second time on a connection that lent its entity before
			err := viewFn(func(tx *store.Tx) error {
				for _, rk := range []string{"a", "b", "a"} {
					want, err := tx.GetEntity(table(t, tx, "acct", "t"), "p", rk)
					if err != nil {
						return err
					}
					got, calls, err := read(tx, rk)
					if err != nil || calls != 1 || !sameEntity(got, want) {
						t.Errorf("ReadEntity(p, %s): %+v after %d calls, %v; GetEntity: %+v", rk, got, calls, err, want)
					}
				}
				if _, calls, err := read(tx, "missing"); !errors.Is(err, store.ErrEntityNotFound) || calls != 0 {
					t.Errorf("ReadEntity of a missing entity: %v after %d calls, want ErrEntityNotFound and no call", err, calls)
				}
				boom := errors.New("boom")
				if err := tx.ReadEntity(table(t, tx, "acct", "t"), "p", "a", func(*edm.Entity) error { return boom }); !errors.Is(err, boom) {
					t.Errorf("ReadEntity returned %v, want fn's error", err)
				}
				// Nested: the outer entity stays whole while fn reads another.
				return tx.ReadEntity(table(t, tx, "acct", "t"), "p", "a", func(outer *edm.Entity) error {
					before := clone(outer)
					inner, _, err := read(tx, "b")
					if err != nil || inner.RowKey != "b" || inner.Properties[0].Value.S != "second" {
						t.Errorf("nested ReadEntity: %+v, %v", inner, err)
					}
					if !sameEntity(outer, before) {
						t.Errorf("a nested ReadEntity changed the outer entity: %+v, was %+v", outer, before)
					}
					return nil
				})
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// clone copies e out of whatever buffers it points into.
func clone(e *edm.Entity) *edm.Entity {
	c := &edm.Entity{PartitionKey: string([]byte(e.PartitionKey)), RowKey: string([]byte(e.RowKey)), Timestamp: e.Timestamp, Keys: e.Keys}
	for _, p := range e.Properties {
		p.Name = string([]byte(p.Name))
		p.Value.S = string([]byte(p.Value.S))
		p.Value.B = append([]byte(nil), p.Value.B...)
		c.Properties = append(c.Properties, p)
	}
	return c
}

// sameEntity compares keys, where they stand, Timestamp and properties'
// names and values (not Plain, an encoding hint that differs between
// readers).
func sameEntity(a, b *edm.Entity) bool {
	if a == nil || b == nil || a.PartitionKey != b.PartitionKey || a.RowKey != b.RowKey || a.Keys != b.Keys ||
		a.Timestamp != b.Timestamp || len(a.Properties) != len(b.Properties) {
		return false
	}
	for i := range a.Properties {
		if a.Properties[i].Name != b.Properties[i].Name || !reflect.DeepEqual(a.Properties[i].Value, b.Properties[i].Value) {
			return false
		}
	}
	return true
}
