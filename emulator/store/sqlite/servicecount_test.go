package sqlite

import (
	"context"
	"fmt"
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// pageCounts pages through a query with CountScanned and returns, per
// page, the service's count, tableemu's own and the entities returned.
func pageCounts(t *testing.T, s *Store, tb Table, filter string, top int) (pages []string, scanned, read, returned int) {
	t.Helper()
	f, err := odata.ParseFilter(filter)
	if err != nil {
		t.Fatal(err)
	}
	q := EntityQuery{Filter: f, Top: top, CountScanned: true}
	for {
		var page EntityPage
		err := s.View(context.Background(), func(tx *Tx) error {
			var err error
			page, err = tx.QueryEntities(tb, q)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, fmt.Sprintf("scanned=%d read=%d returned=%d index=%t", page.Scanned, page.Read, len(page.Entities), page.Index != ""))
		scanned += page.Scanned
		read += page.Read
		returned += len(page.Entities)
		if page.Next == nil {
			return
		}
		q.Start = page.Next
	}
}

// TestServiceCountWithIndex: a page read through an automatic index
// reports what the service examines for it — every entity of the key range
// the page covers — and, apart, the entities tableemu read. Before and
// after the index the service's counts agree page by page while the scan
// needs one page, and in total when the scan budget splits it; a commit
// is seen by the next count on the same connection.
func TestServiceCountWithIndex(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	var tb Table
	const n = 300
	insert := func(i int) error {
		return s.Update(ctx, func(tx *Tx) error {
			return tx.InsertEntity(tb, &edm.Entity{PartitionKey: fmt.Sprintf("p%d", i%7), RowKey: fmt.Sprintf("r%04d", i),
				Properties: []edm.Property{{Name: "Tag", Value: edm.NewString(fmt.Sprintf("t%d", i%50))}}})
		})
	}
	err := s.Update(ctx, func(tx *Tx) (err error) {
		tb, err = tx.CreateTable("a", "counts")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := insert(i); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { scanBudget = store.ScanBudget }()
	const filter = "Tag eq 't7' and PartitionKey ge 'p1'"
	type run struct {
		pages                   []string
		scanned, read, returned int
	}
	measure := func(top int) (r run) {
		r.pages, r.scanned, r.read, r.returned = pageCounts(t, s, tb, filter, top)
		return r
	}
	inRange := 0 // entities with PartitionKey ge 'p1'
	for i := 0; i < n; i++ {
		if i%7 >= 1 {
			inRange++
		}
	}
	scan := measure(1000)
	budgeted := func() run { scanBudget = 100; defer func() { scanBudget = store.ScanBudget }(); return measure(1000) }()
	if scan.scanned != inRange || scan.read != inRange || len(scan.pages) != 1 || budgeted.scanned != inRange || len(budgeted.pages) < 3 {
		t.Fatalf("scans: %+v, budgeted %+v; want %d scanned", scan, budgeted, inRange)
	}
	f, _ := odata.ParseFilter(filter)
	if err := s.IndexNow(ctx, tb, f); err != nil {
		t.Fatal(err)
	}
	indexed := measure(1000)
	// The index selects exactly the matches in the range.
	if fmt.Sprint(indexed.pages) != fmt.Sprintf("[scanned=%d read=%d returned=%d index=true]", inRange, scan.returned, scan.returned) {
		t.Fatalf("through the index: %+v; the scan: %+v", indexed, scan)
	}
	if budgeted.scanned != indexed.scanned {
		t.Fatalf("budgeted scan pages %v: %d scanned in total, through the index %d", budgeted.pages, budgeted.scanned, indexed.scanned)
	}
	// Short pages: each covers its own key range, and the ranges add up.
	if small := measure(2); small.scanned != inRange || small.returned != scan.returned || len(small.pages) < 2 {
		t.Fatalf("pages of 2: %+v", small)
	}
	// A commit changes the range: the next count sees it (the same
	// connection's cached count is retired).
	for i := 0; i < 3*mappedReaders; i++ {
		if got := measure(1000); got.scanned != inRange {
			t.Fatalf("repeat %d: %+v", i, got)
		}
	}
	if err := insert(n + 2); err != nil { // p1: in range
		t.Fatal(err)
	}
	for i := 0; i < 3*mappedReaders; i++ {
		if got := measure(1000); got.scanned != inRange+1 {
			t.Fatalf("after a commit, repeat %d: %+v, want %d scanned", i, got, inRange+1)
		}
	}
}
