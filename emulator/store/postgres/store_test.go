package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/store/postgres/pgtest"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// open opens a store on a fresh database.
func open(t testing.TB) *store.Store {
	t.Helper()
	return openURL(t, pgtest.URL(t))
}

func openURL(t testing.TB, url string) *store.Store {
	t.Helper()
	s, err := Open(context.Background(), Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func update(t testing.TB, s *store.Store, fn func(tx *store.Tx) error) {
	t.Helper()
	if err := s.Update(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func view(t testing.TB, s *store.Store, fn func(tx *store.Tx) error) {
	t.Helper()
	if err := s.View(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func entity(pk, rk string, n int) *edm.Entity {
	return &edm.Entity{PartitionKey: pk, RowKey: rk, Properties: []edm.Property{{Name: "N", Value: edm.NewInt32(int32(n))}}}
}

func TestTablesAndEntities(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	var tb store.Table
	update(t, s, func(tx *store.Tx) error {
		var err error
		tb, err = tx.CreateTable("acct", "MyTable")
		return err
	})
	err := s.Update(ctx, func(tx *store.Tx) error { _, err := tx.CreateTable("acct", "mytable"); return err })
	if !errors.Is(err, store.ErrTableExists) {
		t.Fatalf("case-insensitive duplicate: %v", err)
	}
	update(t, s, func(tx *store.Tx) error { _, err := tx.CreateTable("other", "MyTable"); return err })
	view(t, s, func(tx *store.Tx) error {
		got, err := tx.GetTable("acct", "MYTABLE")
		if err != nil || got != tb {
			t.Errorf("GetTable in another case: %+v %v, want %+v", got, err, tb)
		}
		return nil
	})

	// A failing closure leaves nothing behind.
	boom := errors.New("boom")
	err = s.Update(ctx, func(tx *store.Tx) error {
		if err := tx.InsertEntity(tb, &edm.Entity{PartitionKey: "p", RowKey: "rolled back"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	err = s.View(ctx, func(tx *store.Tx) error { _, err := tx.GetEntity(tb, "p", "rolled back"); return err })
	if !errors.Is(err, store.ErrEntityNotFound) {
		t.Fatalf("rolled-back insert visible: %v", err)
	}

	var first, second int64
	update(t, s, func(tx *store.Tx) error {
		e := &edm.Entity{PartitionKey: "p", RowKey: "r", Properties: []edm.Property{{Name: "A", Value: edm.NewInt32(1)}}}
		if err := tx.InsertEntity(tb, e); err != nil {
			return err
		}
		first = e.Timestamp
		// A taken key is an error the transaction survives: it goes on.
		if err := tx.InsertEntity(tb, &edm.Entity{PartitionKey: "p", RowKey: "r"}); !errors.Is(err, store.ErrEntityExists) {
			t.Errorf("duplicate insert: %v", err)
		}
		if _, err := tx.CreateTable("acct", "MYTABLE"); !errors.Is(err, store.ErrTableExists) {
			t.Errorf("duplicate table: %v", err)
		}
		// A Timestamp far in the future (another instance's clock).
		e2 := &edm.Entity{PartitionKey: "p", RowKey: "r", Properties: []edm.Property{{Name: "B", Value: edm.NewString("x")}}}
		if err := tx.PutEntity(tb, e2, first+1e12); err != nil {
			return err
		}
		second = e2.Timestamp
		return nil
	})
	if second <= first+1e12 {
		t.Fatalf("timestamps %d then %d: not after prev", first, second)
	}
	view(t, s, func(tx *store.Tx) error {
		e, err := tx.GetEntity(tb, "p", "r")
		if err != nil {
			return err
		}
		if e.Timestamp != second || len(e.Properties) != 1 || e.Properties[0].Name != "B" || e.Properties[0].Value.S != "x" {
			t.Errorf("after Put: %+v", e)
		}
		return nil
	})
	update(t, s, func(tx *store.Tx) error { return tx.DeleteEntity(tb, "p", "r") })
	err = s.Update(ctx, func(tx *store.Tx) error { return tx.DeleteEntity(tb, "p", "r") })
	if !errors.Is(err, store.ErrEntityNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	update(t, s, func(tx *store.Tx) error { return tx.InsertEntity(tb, entity("p", "again", 1)) })
	update(t, s, func(tx *store.Tx) error { return tx.DeleteTable("acct", "MYTABLE") })
	err = s.View(ctx, func(tx *store.Tx) error { _, err := tx.GetTable("acct", "MyTable"); return err })
	if !errors.Is(err, store.ErrTableNotFound) {
		t.Fatal(err)
	}
	// A new table of the same name is empty.
	update(t, s, func(tx *store.Tx) error {
		nt, err := tx.CreateTable("acct", "mytable")
		if err != nil {
			return err
		}
		if nt.ID == tb.ID {
			t.Errorf("table id %d handed out twice", nt.ID)
		}
		page, err := tx.QueryEntities(nt, store.EntityQuery{Top: 1000})
		if err != nil || len(page.Entities) != 0 {
			t.Errorf("new table: %d entities, %v", len(page.Entities), err)
		}
		return err
	})
	err = s.Update(ctx, func(tx *store.Tx) error { return tx.DeleteTable("acct", "nosuch") })
	if !errors.Is(err, store.ErrTableNotFound) {
		t.Fatalf("delete of a missing table: %v", err)
	}
}

func TestPropertiesRoundTrip(t *testing.T) {
	s := open(t)
	props := []edm.Property{
		{Name: "S", Value: edm.NewString("quote \" nl \n 😀 \u00e9")},
		{Name: "I", Value: edm.NewInt32(-7)},
		{Name: "L", Value: edm.NewInt64(1 << 60)},
		{Name: "D", Value: edm.NewDouble(0.5)},
		{Name: "T", Value: edm.NewBoolean(true)},
		{Name: "DT", Value: edm.NewDateTime(edm.MaxDateTime)},
		{Name: "G", Value: edm.Value{T: edm.Guid, S: "c9da6455-213d-42c9-9a79-3e9149a57833"}},
		{Name: "B", Value: edm.NewBinary([]byte{0, 0xff})},
	}
	var tb store.Table
	update(t, s, func(tx *store.Tx) error {
		var err error
		if tb, err = tx.CreateTable("a", "t"); err != nil {
			return err
		}
		return tx.InsertEntity(tb, &edm.Entity{PartitionKey: "p😀", RowKey: "", Properties: props})
	})
	view(t, s, func(tx *store.Tx) error {
		e, err := tx.GetEntity(tb, "p😀", "")
		if err != nil {
			return err
		}
		page, err := tx.QueryEntities(tb, store.EntityQuery{Top: 10})
		if err != nil || len(page.Entities) != 1 {
			return fmt.Errorf("query: %v, %d entities", err, len(page.Entities))
		}
		for _, got := range []*edm.Entity{e, page.Entities[0]} {
			if got.PartitionKey != "p😀" || got.RowKey != "" || len(got.Properties) != len(props) {
				t.Fatalf("got %+v", got)
			}
			for i, p := range props {
				g := got.Properties[i]
				if c, ok := edm.Compare(g.Value, p.Value); g.Name != p.Name || !ok || c != 0 {
					t.Errorf("property %s: %v, want %v", p.Name, g.Value, p.Value)
				}
			}
		}
		return nil
	})
}

// TestQueryTables: the order of lower-cased names, pages, a filter that
// skips tables across chunks.
func TestQueryTables(t *testing.T) {
	s := open(t)
	names := []string{"Zeta", "alpha", "Beta", "gamma9", "Gamma10", "delta"}
	update(t, s, func(tx *store.Tx) error {
		for _, n := range names {
			if _, err := tx.CreateTable("a", n); err != nil {
				return err
			}
		}
		_, err := tx.CreateTable("b", "other")
		return err
	})
	want := slices.Clone(names)
	sort.Slice(want, func(i, j int) bool { return strings.ToLower(want[i]) < strings.ToLower(want[j]) })
	var got []string
	q := store.TableQuery{Top: 4}
	pages := 0
	for {
		var page store.TablePage
		view(t, s, func(tx *store.Tx) error { var err error; page, err = tx.QueryTables("a", q); return err })
		pages++
		for _, tb := range page.Tables {
			got = append(got, tb.Name)
		}
		if page.Next == "" {
			break
		}
		q.After = page.Next
	}
	if pages != 2 || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("%d pages: %v, want %v", pages, got, want)
	}
	// Filters compare the names as created: "Beta" and "Gamma10" sort
	// before "b".
	f, err := odata.ParseFilter("TableName ge 'b' and TableName lt 'h'")
	if err != nil {
		t.Fatal(err)
	}
	var page store.TablePage
	view(t, s, func(tx *store.Tx) error {
		page, err = tx.QueryTables("a", store.TableQuery{Filter: f, Top: 1})
		return err
	})
	if len(page.Tables) != 1 || page.Tables[0].Name != "delta" || page.Next != "gamma9" {
		t.Fatalf("filtered page: %+v", page)
	}
}

func keysOf(es []*edm.Entity) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.PartitionKey+"/"+e.RowKey)
	}
	return out
}

// TestKeyOrder: entities come back in UTF-16 ordinal order, supplementary
// characters before U+E000..U+FFFF, across pages of any size.
func TestKeyOrder(t *testing.T) {
	s := open(t)
	keys := []string{"", "a", "z", "é", "\uD7FF", "😀", "😀a", "𝄞", "\uE000", "\uFF21", "\uFFFF", "a😀", "a\uFFFF"}
	var tb store.Table
	update(t, s, func(tx *store.Tx) error {
		var err error
		if tb, err = tx.CreateTable("a", "t"); err != nil {
			return err
		}
		for i, pk := range keys {
			for _, rk := range []string{"\uFFFF", "😀"} {
				if err := tx.InsertEntity(tb, entity(pk, rk, i)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	var want []string
	sorted := slices.Clone(keys)
	sort.Slice(sorted, func(i, j int) bool { return edm.CompareStrings(sorted[i], sorted[j]) < 0 })
	for _, pk := range sorted {
		want = append(want, pk+"/😀", pk+"/\uFFFF")
	}
	for _, top := range []int{1000, 1, 3} {
		for _, filter := range []string{"", "N ge 0"} {
			var f odata.Expr
			if filter != "" {
				f, _ = odata.ParseFilter(filter)
			}
			got := queryAll(t, s, tb, store.EntityQuery{Top: top, Filter: f})
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("top %d filter %q:\n%q\nwant\n%q", top, filter, got, want)
			}
		}
	}
}

// queryAll follows continuations to the end.
func queryAll(t testing.TB, s *store.Store, tb store.Table, q store.EntityQuery) []string {
	t.Helper()
	var got []string
	for {
		var page store.EntityPage
		view(t, s, func(tx *store.Tx) error { var err error; page, err = tx.QueryEntities(tb, q); return err })
		got = append(got, keysOf(page.Entities)...)
		if page.Next == nil {
			return got
		}
		q.Start = page.Next
	}
}
