package postgres

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// openNine: one table of nine entities, PartitionKeys p1-p3, each with
// RowKeys a-c, N = 0..8.
func openNine(t *testing.T) (*store.Store, store.Table) {
	t.Helper()
	s := open(t)
	var tb store.Table
	update(t, s, func(tx *store.Tx) error {
		var err error
		if tb, err = tx.CreateTable("a", "t"); err != nil {
			return err
		}
		i := 0
		for _, pk := range []string{"p1", "p2", "p3"} {
			for _, rk := range []string{"a", "b", "c"} {
				if err := tx.InsertEntity(tb, entity(pk, rk, i)); err != nil {
					return err
				}
				i++
			}
		}
		return nil
	})
	return s, tb
}

func TestQueryShapes(t *testing.T) {
	s, tb := openNine(t)
	for _, tc := range []struct {
		filter string
		shape  store.Shape
		found  int
	}{
		{"PartitionKey eq 'p2' and RowKey eq 'b'", store.PointQuery, 1},
		{"PartitionKey eq 'p2' and RowKey ge 'b'", store.RangeQuery, 2},
		{"PartitionKey eq 'p2' and RowKey ge 'a' and RowKey lt 'c'", store.RangeQuery, 2},
		{"PartitionKey eq 'p2'", store.PartitionScan, 3},
		{"PartitionKey eq 'p2' and Name eq 'x'", store.PartitionScan, 0},
		{"PartitionKey eq 'p2' and N ge 4", store.PartitionScan, 2},
		{"PartitionKey ge 'p2'", store.PartitionRangeScan, 6},
		{"PartitionKey gt 'p1' and PartitionKey lt 'p3'", store.PartitionRangeScan, 3},
		{"RowKey eq 'b'", store.TableScan, 3},
		{"PartitionKey eq 5", store.TableScan, 0},
		{"PartitionKey eq 'p1' or RowKey eq 'c'", store.TableScan, 5},
		{"PartitionKey eq 'p2' and RowKey ge '\uE000'", store.RangeQuery, 0},
		{"Timestamp gt datetime'2000-01-01T00:00:00Z' and N lt 2", store.TableScan, 2},
		{"not (N eq 3)", store.TableScan, 8},
	} {
		f, err := odata.ParseFilter(tc.filter)
		if err != nil {
			t.Fatal(err)
		}
		var page store.EntityPage
		view(t, s, func(tx *store.Tx) error {
			page, err = tx.QueryEntities(tb, store.EntityQuery{Filter: f, Top: 1000})
			return err
		})
		if len(page.Entities) != tc.found || page.Shape != tc.shape || page.Next != nil {
			t.Errorf("%s: %d entities, shape %s, next %v; want %d, %s", tc.filter, len(page.Entities), page.Shape, page.Next, tc.found, tc.shape)
		}
		if page.Scanned < len(page.Entities) || page.Read != page.Scanned {
			t.Errorf("%s: scanned %d, read %d", tc.filter, page.Scanned, page.Read)
		}
	}
	// A SAS key range: (p1,c) .. the whole of p2; and one ending at (p3,a).
	for _, tc := range []struct {
		r    store.KeyRange
		want string
	}{
		{store.KeyRange{From: &store.Key{PK: "p1", RK: "c"}, To: true, ToPK: "p2"}, "p1/c p2/a p2/b p2/c"},
		{store.KeyRange{From: &store.Key{PK: "p2", RK: "c"}, To: true, ToPK: "p3", ToRK: "a", HasToRK: true}, "p2/c p3/a"},
	} {
		var page store.EntityPage
		view(t, s, func(tx *store.Tx) error {
			var err error
			page, err = tx.QueryEntities(tb, store.EntityQuery{Top: 1000, Range: &tc.r})
			return err
		})
		if got := strings.Join(keysOf(page.Entities), " "); got != tc.want {
			t.Errorf("range %+v: %s, want %s", tc.r, got, tc.want)
		}
	}
}

// TestContinuation: Top pages, Next naming the first entity of the next
// page, and Scanned counted as the SQLite engine counts it.
func TestContinuation(t *testing.T) {
	s, tb := openNine(t)
	var page store.EntityPage
	view(t, s, func(tx *store.Tx) error {
		var err error
		page, err = tx.QueryEntities(tb, store.EntityQuery{Top: 4})
		return err
	})
	if got := strings.Join(keysOf(page.Entities), " "); got != "p1/a p1/b p1/c p2/a" || page.Next == nil || *page.Next != (store.Key{PK: "p2", RK: "b"}) {
		t.Fatalf("first page %s, next %v", got, page.Next)
	}
	if page.Scanned != 5 {
		t.Errorf("unfiltered page scanned %d, want 5 (the continuation's row too)", page.Scanned)
	}
	f, _ := odata.ParseFilter("N ge 2")
	view(t, s, func(tx *store.Tx) error {
		var err error
		page, err = tx.QueryEntities(tb, store.EntityQuery{Top: 2, Filter: f, Start: &store.Key{PK: "p1", RK: "b"}})
		return err
	})
	if got := strings.Join(keysOf(page.Entities), " "); got != "p1/c p2/a" || page.Next == nil || *page.Next != (store.Key{PK: "p2", RK: "b"}) {
		t.Fatalf("filtered page from p1/b: %s, next %v", got, page.Next)
	}
	if page.Scanned != 3 {
		t.Errorf("filtered page scanned %d, want 3 (p1/b, p1/c, p2/a)", page.Scanned)
	}
	if got := queryAll(t, s, tb, store.EntityQuery{Top: 2, Filter: f}); len(got) != 7 {
		t.Errorf("all pages: %v", got)
	}
}

// TestScanBudget: a filter that matches little stops after ScanBudget rows
// with a continuation, possibly with an empty page; following them finds
// every match. Small chunks make the scan cross chunk boundaries.
func TestScanBudget(t *testing.T) {
	defer func(b, c int) { scanBudget, scanChunk = b, c }(scanBudget, scanChunk)
	scanBudget, scanChunk = 10, 3
	s := open(t)
	var tb store.Table
	update(t, s, func(tx *store.Tx) error {
		var err error
		if tb, err = tx.CreateTable("a", "t"); err != nil {
			return err
		}
		for i := range 45 {
			if err := tx.InsertEntity(tb, entity("p", fmt.Sprintf("%03d", i), i)); err != nil {
				return err
			}
		}
		return nil
	})
	f, _ := odata.ParseFilter("N eq 3 or N eq 25 or N eq 26 or N eq 44")
	q := store.EntityQuery{Filter: f, Top: 1000}
	var got []string
	var scanned []int
	for range 10 {
		var page store.EntityPage
		view(t, s, func(tx *store.Tx) error { var err error; page, err = tx.QueryEntities(tb, q); return err })
		got = append(got, keysOf(page.Entities)...)
		scanned = append(scanned, page.Scanned)
		if page.Next == nil {
			break
		}
		q.Start = page.Next
	}
	if strings.Join(got, " ") != "p/003 p/025 p/026 p/044" {
		t.Errorf("matches %v", got)
	}
	if fmt.Sprint(scanned) != "[10 10 10 10 5]" {
		t.Errorf("pages scanned %v, want [10 10 10 10 5]", scanned)
	}
	// Top cuts a page before the budget does.
	f, _ = odata.ParseFilter("N ge 0")
	var page store.EntityPage
	view(t, s, func(tx *store.Tx) error {
		var err error
		page, err = tx.QueryEntities(tb, store.EntityQuery{Filter: f, Top: 4})
		return err
	})
	if len(page.Entities) != 4 || page.Next == nil || page.Next.RK != "004" || page.Scanned != 4 {
		t.Errorf("top 4: %d entities, next %v, scanned %d", len(page.Entities), page.Next, page.Scanned)
	}
}

// TestScanAliases: ScanEntities hands over entities that may share
// buffers; QueryEntities' copies stay intact after the transaction.
func TestScanAliases(t *testing.T) {
	s := open(t)
	var tb store.Table
	update(t, s, func(tx *store.Tx) error {
		var err error
		if tb, err = tx.CreateTable("a", "t"); err != nil {
			return err
		}
		for i := range 30 {
			e := &edm.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%02d", i), Properties: []edm.Property{
				{Name: "S", Value: edm.NewString(strings.Repeat(fmt.Sprint(i%10), 50))},
			}}
			if err := tx.InsertEntity(tb, e); err != nil {
				return err
			}
		}
		return nil
	})
	f, _ := odata.ParseFilter("S ne 'x'")
	var page store.EntityPage
	view(t, s, func(tx *store.Tx) error {
		var err error
		page, err = tx.QueryEntities(tb, store.EntityQuery{Filter: f, Top: 1000})
		return err
	})
	for i, e := range page.Entities {
		if e.RowKey != fmt.Sprintf("r%02d", i) || e.Properties[0].Value.S != strings.Repeat(fmt.Sprint(i%10), 50) {
			t.Fatalf("entity %d changed after the scan: %s %q", i, e.RowKey, e.Properties[0].Value.S)
		}
	}
}

func mustFilter(t testing.TB, s string) odata.Expr {
	t.Helper()
	f, err := odata.ParseFilter(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
