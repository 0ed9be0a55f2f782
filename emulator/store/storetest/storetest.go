// Package storetest is the behavioural suite every store engine passes:
// what the emulator relies on from store.Engine, checked the same way on
// SQLite and PostgreSQL. An engine's tests call Run with a function that
// opens a fresh, empty store.
//
// The suite checks results only through the contract (store.Tx), never an
// engine's tables, so a second engine cannot pass by resembling the first.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// Open returns a new, empty store; the suite closes it.
type Open func(t *testing.T) *store.Store

// Run runs every contract test against stores that open makes.
func Run(t *testing.T, open Open) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, *store.Store)
	}{
		{"Tables", testTables},
		{"QueryTables", testQueryTables},
		{"Rollback", testRollback},
		{"Entities", testEntities},
		{"ReadEntity", testReadEntity},
		{"KeyPlaces", testKeyPlaces},
		{"EveryType", testEveryType},
		{"KeyOrder", testKeyOrder},
		{"Continuation", testContinuation},
		{"Filters", testFilters},
		{"KeyRange", testKeyRange},
		{"ACL", testACL},
		{"ServiceProperties", testServiceProperties},
		{"Snapshots", testSnapshots},
		{"Reset", testReset},
		{"IsolationInterrupted", testIsolationInterrupted},
		{"NoLostUpdates", testNoLostUpdates},
		{"BatchAtomic", testBatchAtomic},
		{"SharedTimestamp", testSharedTimestamp},
		{"LoadEntity", testLoadEntity},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { s.Close() })
			tc.fn(t, s)
		})
	}
}

var ctx = context.Background()

func update(t *testing.T, s *store.Store, fn func(*store.Tx) error) {
	t.Helper()
	if err := s.Update(ctx, fn); err != nil {
		t.Fatal(err)
	}
}

func view(t *testing.T, s *store.Store, fn func(*store.Tx) error) {
	t.Helper()
	if err := s.View(ctx, fn); err != nil {
		t.Fatal(err)
	}
}

func createTable(t *testing.T, s *store.Store, account, name string) store.Table {
	t.Helper()
	var tb store.Table
	update(t, s, func(tx *store.Tx) (err error) {
		tb, err = tx.CreateTable(account, name)
		return err
	})
	return tb
}

// table re-reads a table by name, as the emulator does in each transaction.
func table(t *testing.T, tx *store.Tx, account, name string) store.Table {
	t.Helper()
	tb, err := tx.GetTable(account, name)
	if err != nil {
		t.Fatalf("GetTable(%s, %s): %v", account, name, err)
	}
	return tb
}

func insert(t *testing.T, s *store.Store, account, name string, es ...*edm.Entity) {
	t.Helper()
	update(t, s, func(tx *store.Tx) error {
		tb := table(t, tx, account, name)
		for _, e := range es {
			if err := tx.InsertEntity(tb, e); err != nil {
				return err
			}
		}
		return nil
	})
}

func entity(pk, rk string, props ...edm.Property) *edm.Entity {
	return &edm.Entity{PartitionKey: pk, RowKey: rk, Properties: props}
}

func prop(name string, v edm.Value) edm.Property { return edm.Property{Name: name, Value: v} }

// scanAll reads every page of q and returns the entities' keys as "pk/rk".
func scanAll(t *testing.T, s *store.Store, account, name string, q store.EntityQuery) []string {
	t.Helper()
	var keys []string
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatal("more than 10,000 pages: the continuation does not advance")
		}
		var page store.EntityPage
		view(t, s, func(tx *store.Tx) (err error) {
			page, err = tx.QueryEntities(table(t, tx, account, name), q)
			return err
		})
		if len(page.Entities) > q.Top && q.Top > 0 {
			t.Fatalf("page of %d entities, $top %d", len(page.Entities), q.Top)
		}
		for _, e := range page.Entities {
			keys = append(keys, e.PartitionKey+"/"+e.RowKey)
		}
		if page.Next == nil {
			return keys
		}
		q.Start = page.Next
	}
}

func testTables(t *testing.T, s *store.Store) {
	createTable(t, s, "acct", "MyTable")
	err := s.Update(ctx, func(tx *store.Tx) error { _, err := tx.CreateTable("acct", "mytable"); return err })
	if !errors.Is(err, store.ErrTableExists) {
		t.Fatalf("a name differing only in case: %v, want ErrTableExists", err)
	}
	createTable(t, s, "other", "MyTable") // another account, another table
	view(t, s, func(tx *store.Tx) error {
		tb, err := tx.GetTable("acct", "MYTABLE")
		if err != nil || tb.Name != "MyTable" || tb.Account != "acct" {
			t.Errorf("GetTable in another case: %+v %v, want MyTable as created", tb, err)
		}
		if _, err := tx.GetTable("acct", "nope"); !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("missing table: %v", err)
		}
		return nil
	})
	insert(t, s, "acct", "MyTable", entity("p", "r"))
	update(t, s, func(tx *store.Tx) error { return tx.DeleteTable("acct", "mytable") })
	if err := s.Update(ctx, func(tx *store.Tx) error { return tx.DeleteTable("acct", "MyTable") }); !errors.Is(err, store.ErrTableNotFound) {
		t.Errorf("deleting twice: %v", err)
	}
	// Recreated, the table starts empty: nothing of the old one shows.
	createTable(t, s, "acct", "MyTable")
	if got := scanAll(t, s, "acct", "MyTable", store.EntityQuery{Top: 1000}); len(got) != 0 {
		t.Errorf("recreated table holds %v", got)
	}
	view(t, s, func(tx *store.Tx) error {
		if _, err := tx.GetTable("other", "MyTable"); err != nil {
			t.Errorf("the other account's table: %v", err)
		}
		return nil
	})
}

func testQueryTables(t *testing.T, s *store.Store) {
	names := []string{"beta", "Alpha", "gamma1", "Gamma0", "delta"}
	for _, n := range names {
		createTable(t, s, "acct", n)
	}
	createTable(t, s, "other", "zeta")
	var got []string
	q := store.TableQuery{Top: 2}
	for {
		var page store.TablePage
		view(t, s, func(tx *store.Tx) (err error) {
			page, err = tx.QueryTables("acct", q)
			return err
		})
		if len(page.Tables) > 2 {
			t.Fatalf("page of %d tables, top 2", len(page.Tables))
		}
		for _, tb := range page.Tables {
			got = append(got, tb.Name)
		}
		if page.Next == "" {
			break
		}
		q.After = page.Next
	}
	if want := []string{"Alpha", "beta", "delta", "Gamma0", "gamma1"}; !slices.Equal(got, want) {
		t.Errorf("tables %v, want %v (by lower-cased name, one account)", got, want)
	}
	f, err := odata.ParseFilter("TableName ge 'd' and TableName lt 'h'")
	if err != nil {
		t.Fatal(err)
	}
	view(t, s, func(tx *store.Tx) error {
		page, err := tx.QueryTables("acct", store.TableQuery{Top: 1000, Filter: f})
		var names []string
		for _, tb := range page.Tables {
			names = append(names, tb.Name)
		}
		// Ordinal comparison on the name as created: "Gamma0" < "d".
		if want := []string{"delta", "gamma1"}; err != nil || !slices.Equal(names, want) {
			t.Errorf("filtered tables %v %v, want %v", names, err, want)
		}
		return nil
	})
}

func testRollback(t *testing.T, s *store.Store) {
	createTable(t, s, "acct", "t")
	boom := errors.New("boom")
	err := s.Update(ctx, func(tx *store.Tx) error {
		if err := tx.InsertEntity(table(t, tx, "acct", "t"), entity("p", "r")); err != nil {
			return err
		}
		if _, err := tx.CreateTable("acct", "made"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update returned %v, want the closure's error", err)
	}
	view(t, s, func(tx *store.Tx) error {
		if _, err := tx.GetEntity(table(t, tx, "acct", "t"), "p", "r"); !errors.Is(err, store.ErrEntityNotFound) {
			t.Errorf("an insert of a failed closure is visible: %v", err)
		}
		if _, err := tx.GetTable("acct", "made"); !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("a table of a failed closure exists: %v", err)
		}
		return nil
	})
}

func testEntities(t *testing.T, s *store.Store) {
	createTable(t, s, "acct", "t")
	e := entity("p", "r", prop("A", edm.NewInt32(1)))
	insert(t, s, "acct", "t", e)
	if e.Timestamp <= 0 {
		t.Fatalf("InsertEntity set Timestamp %d", e.Timestamp)
	}
	err := s.Update(ctx, func(tx *store.Tx) error { return tx.InsertEntity(table(t, tx, "acct", "t"), entity("p", "r")) })
	if !errors.Is(err, store.ErrEntityExists) {
		t.Errorf("duplicate insert: %v", err)
	}
	// Every version has its own Timestamp, later than the one it replaces,
	// even several in one transaction (the ETag derives from it).
	prev := e.Timestamp
	for i := 0; i < 3; i++ {
		next := entity("p", "r", prop("A", edm.NewInt32(int32(i+2))))
		update(t, s, func(tx *store.Tx) error { return tx.PutEntity(table(t, tx, "acct", "t"), next, prev) })
		if next.Timestamp <= prev {
			t.Fatalf("PutEntity Timestamp %d not after the replaced %d", next.Timestamp, prev)
		}
		prev = next.Timestamp
	}
	view(t, s, func(tx *store.Tx) error {
		got, err := tx.GetEntity(table(t, tx, "acct", "t"), "p", "r")
		if err != nil || got.Timestamp != prev || len(got.Properties) != 1 || got.Properties[0].Value.N != 4 {
			t.Errorf("GetEntity: %+v %v, want A=4 at %d", got, err, prev)
		}
		return nil
	})
	// PutEntity of a new key inserts it.
	update(t, s, func(tx *store.Tx) error { return tx.PutEntity(table(t, tx, "acct", "t"), entity("p", "new"), 0) })
	update(t, s, func(tx *store.Tx) error { return tx.DeleteEntity(table(t, tx, "acct", "t"), "p", "r") })
	err = s.Update(ctx, func(tx *store.Tx) error { return tx.DeleteEntity(table(t, tx, "acct", "t"), "p", "r") })
	if !errors.Is(err, store.ErrEntityNotFound) {
		t.Errorf("deleting twice: %v", err)
	}
	if got := scanAll(t, s, "acct", "t", store.EntityQuery{Top: 1000}); !slices.Equal(got, []string{"p/new"}) {
		t.Errorf("entities %v, want [p/new]", got)
	}
}

func testEveryType(t *testing.T, s *store.Store) {
	createTable(t, s, "acct", "t")
	g, _ := edm.NewGuid("c9da6455-213d-42c9-9a79-3e9149a57833")
	props := []edm.Property{
		prop("Bin", edm.NewBinary([]byte{0, 1, 2, 255})),
		prop("Bool", edm.NewBoolean(true)),
		prop("Date", edm.NewDateTime(638_000_000_000_000_001)),
		prop("Dbl", edm.NewDouble(-1.5e300)),
		prop("Empty", edm.NewString("")),
		prop("Guid", g),
		prop("I32", edm.NewInt32(math.MinInt32)),
		prop("I64", edm.NewInt64(math.MaxInt64)),
		prop("Inf", edm.NewDouble(math.Inf(-1))),
		prop("NaN", edm.NewDouble(math.NaN())),
		prop("Str", edm.NewString("naïve \x00 \U0001F600 \"quoted\"")),
	}
	insert(t, s, "acct", "t", entity("p\U0001F600", "r'quote", props...))
	view(t, s, func(tx *store.Tx) error {
		got, err := tx.GetEntity(table(t, tx, "acct", "t"), "p\U0001F600", "r'quote")
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Properties) != len(props) {
			t.Fatalf("%d properties back, want %d", len(got.Properties), len(props))
		}
		byName := map[string]edm.Value{}
		for _, p := range got.Properties {
			byName[p.Name] = p.Value
		}
		for _, p := range props {
			v, ok := byName[p.Name]
			same := ok && v.T == p.Value.T && v.N == p.Value.N && v.S == p.Value.S && string(v.B) == string(p.Value.B) &&
				(v.F == p.Value.F || math.IsNaN(v.F) && math.IsNaN(p.Value.F))
			if !same {
				t.Errorf("%s: got %+v, want %+v", p.Name, v, p.Value)
			}
		}
		return nil
	})
}

// utf16Less is the service's key order: ordinal by UTF-16 code unit.
func utf16Less(a, b string) bool {
	x, y := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	return slices.Compare(x, y) < 0
}

func testKeyOrder(t *testing.T, s *store.Store) {
	createTable(t, s, "acct", "t")
	// ASCII, Latin-1, the private use area (U+E000-U+FFFF) and a
	// supplementary character: UTF-8 byte order would put the last after
	// U+FFFD, UTF-16 order puts it before U+E000.
	keys := []string{"", "A", "a", "a0", "Z", "é", "\uE000", "\uFFFD", "\U0001F600", "\U0001F600x", "~"}
	var es []*edm.Entity
	for _, pk := range []string{"\U0001F600", "\uE000", "p"} {
		for _, rk := range keys {
			es = append(es, entity(pk, rk))
		}
	}
	insert(t, s, "acct", "t", es...)
	var want []string
	for _, e := range es {
		want = append(want, e.PartitionKey+"/"+e.RowKey)
	}
	sort.Slice(es, func(i, j int) bool {
		if es[i].PartitionKey != es[j].PartitionKey {
			return utf16Less(es[i].PartitionKey, es[j].PartitionKey)
		}
		return utf16Less(es[i].RowKey, es[j].RowKey)
	})
	want = want[:0]
	for _, e := range es {
		want = append(want, e.PartitionKey+"/"+e.RowKey)
	}
	for _, top := range []int{1000, 4, 1} {
		if got := scanAll(t, s, "acct", "t", store.EntityQuery{Top: top}); !slices.Equal(got, want) {
			t.Errorf("$top %d: order\n%q\nwant\n%q", top, got, want)
		}
	}
	f, _ := odata.ParseFilter("PartitionKey eq '\U0001F600' and RowKey gt '\uFFFD'")
	if got := scanAll(t, s, "acct", "t", store.EntityQuery{Top: 1000, Filter: f}); len(got) != 0 {
		t.Errorf("RowKey gt U+FFFD in UTF-16 order: %q, want none (U+1F600 sorts before U+E000)", got)
	}
}

func testContinuation(t *testing.T, s *store.Store) {
	createTable(t, s, "acct", "t")
	var es []*edm.Entity
	var want []string
	for p := 0; p < 3; p++ {
		for r := 0; r < 7; r++ {
			e := entity(fmt.Sprintf("p%d", p), fmt.Sprintf("r%02d", r), prop("N", edm.NewInt32(int32(r))))
			es = append(es, e)
			want = append(want, e.PartitionKey+"/"+e.RowKey)
		}
	}
	insert(t, s, "acct", "t", es...)
	// Up to 1000 as Table storage takes; past it as the cosmos profile
	// does, to the largest Edm.Int32 (docs/cosmos.md).
	for _, top := range []int{1, 2, 5, 21, 1000, 1001, 1<<31 - 1} {
		if got := scanAll(t, s, "acct", "t", store.EntityQuery{Top: top}); !slices.Equal(got, want) {
			t.Errorf("$top %d: %v", top, got)
		}
	}
	// A page that ends exactly at the last match may carry a continuation
	// (the service's does too), but the next page is then empty and last.
	f, _ := odata.ParseFilter("N ge 5")
	got := scanAll(t, s, "acct", "t", store.EntityQuery{Top: 2, Filter: f})
	if want := []string{"p0/r05", "p0/r06", "p1/r05", "p1/r06", "p2/r05", "p2/r06"}; !slices.Equal(got, want) {
		t.Errorf("N ge 5, $top 2: %v, want %v", got, want)
	}
}

// testFilters compares the engine's answer with odata.Eval, the reference,
// over entities whose properties differ in type: a comparison between
// different types matches nothing (docs/protocol.md 6.3).
func testFilters(t *testing.T, s *store.Store) {
	createTable(t, s, "acct", "t")
	g, _ := edm.NewGuid("00000000-0000-0000-0000-000000000005")
	values := []edm.Value{
		edm.NewInt32(5), edm.NewInt64(5), edm.NewDouble(5), edm.NewString("5"), edm.NewBoolean(true),
		edm.NewDateTime(5), g, edm.NewBinary([]byte{5}), edm.NewInt32(-7), edm.NewDouble(math.NaN()), edm.NewString("abc"),
	}
	var es []*edm.Entity
	for i, v := range values {
		es = append(es, entity("p", fmt.Sprintf("r%02d", i), prop("V", v), prop("I", edm.NewInt32(int32(i)))))
	}
	es = append(es, entity("p", "none")) // no V at all
	insert(t, s, "acct", "t", es...)
	for _, src := range []string{
		"V eq 5", "V gt 4", "V lt 5L", "V ge 5.0", "V eq '5'", "V gt 'a'", "V eq true", "V ne 5",
		"V eq datetime'0001-01-01T00:00:00.0000005Z'", "V eq guid'00000000-0000-0000-0000-000000000005'",
		"V eq X'05'", "not (V eq 5)", "V eq 5 or I eq 10", "I ge 3 and I lt 6", "V ne 'abc'", "RowKey gt 'r05' and V lt 100",
	} {
		f, err := odata.ParseFilter(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		var want []string
		for _, e := range es {
			if odata.Eval(f, e.Get) {
				want = append(want, e.PartitionKey+"/"+e.RowKey)
			}
		}
		sort.Strings(want) // ASCII keys: byte order is the service's order
		if got := scanAll(t, s, "acct", "t", store.EntityQuery{Top: 3, Filter: f}); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v (odata.Eval)", src, got, want)
		}
	}
}

func testKeyRange(t *testing.T, s *store.Store) {
	createTable(t, s, "acct", "t")
	for _, pk := range []string{"a", "b", "c"} {
		insert(t, s, "acct", "t", entity(pk, "1"), entity(pk, "2"), entity(pk, "3"))
	}
	for _, tc := range []struct {
		r    store.KeyRange
		want string
	}{
		{store.KeyRange{From: &store.Key{PK: "a", RK: "2"}, To: true, ToPK: "b", ToRK: "2", HasToRK: true}, "a/2 a/3 b/1 b/2"},
		{store.KeyRange{From: &store.Key{PK: "b"}, To: true, ToPK: "b"}, "b/1 b/2 b/3"},
		{store.KeyRange{From: &store.Key{PK: "c", RK: "3"}}, "c/3"},
	} {
		got := scanAll(t, s, "acct", "t", store.EntityQuery{Top: 2, Range: &tc.r})
		if strings.Join(got, " ") != tc.want {
			t.Errorf("range %+v: %v, want %s", tc.r, got, tc.want)
		}
	}
}
