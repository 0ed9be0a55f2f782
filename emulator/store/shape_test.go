package store

import (
	"context"
	"testing"

	"github.com/tableemu/tableemu/odata"
)

// TestClassify covers the query shapes of the design guide, with its own
// examples.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		filter string
		want   Shape
	}{
		{"(PartitionKey eq 'Sales') and (RowKey eq '2')", PointQuery},
		{"PartitionKey eq 'Sales' and RowKey ge 'S' and RowKey lt 'T'", RangeQuery},
		{"PartitionKey eq 'Sales' and RowKey gt 'S'", RangeQuery},
		{"PartitionKey eq 'Sales' and RowKey ge 'S' and LastName eq 'Smith'", RangeQuery},
		{"PartitionKey eq 'Sales' and LastName eq 'Smith'", PartitionScan},
		{"PartitionKey eq 'Sales' and (RowKey eq '121' or RowKey eq '322')", PartitionScan},
		{"PartitionKey eq 'Sales'", PartitionScan},
		{"LastName eq 'Jones'", TableScan},
		{"RowKey eq '2'", TableScan},
		{"PartitionKey eq 'a' or PartitionKey eq 'b'", TableScan},
		{"not (PartitionKey eq 'a')", TableScan},
		{"PartitionKey ne 'a'", TableScan},
		{"PartitionKey ge 'a' and PartitionKey lt 'b'", PartitionRangeScan},
		{"", TableScan},
	} {
		f, err := odata.ParseFilter(tc.filter)
		if err != nil {
			t.Fatal(err)
		}
		if got := Classify(f); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.filter, got, tc.want)
		}
	}
}

// TestScannedCounts: with CountScanned every page reports the rows it
// examined, full pages included.
func TestScannedCounts(t *testing.T) {
	s, tb := openNine(t)
	ctx := context.Background()
	var err error
	for _, tc := range []struct {
		filter    string
		top       int
		scanned   int
		returned  int
		shape     Shape
		continues bool
	}{
		{"PartitionKey eq 'p2' and RowKey eq 'b'", 1000, 1, 1, PointQuery, false},
		{"PartitionKey eq 'p2'", 1000, 3, 3, PartitionScan, false},
		{"RowKey eq 'b'", 1000, 9, 3, TableScan, false},
		{"RowKey eq 'b'", 1, 4, 1, TableScan, true}, // p1a p1b p1c p2a, then the continuation p2b
		{"", 4, 5, 4, TableScan, true},
	} {
		var f odata.Expr
		if tc.filter != "" {
			if f, err = odata.ParseFilter(tc.filter); err != nil {
				t.Fatal(err)
			}
		}
		var page EntityPage
		err = s.View(ctx, func(tx *Tx) error {
			page, err = tx.QueryEntities(tb, EntityQuery{Filter: f, Top: tc.top, CountScanned: true})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if page.Scanned != tc.scanned || len(page.Entities) != tc.returned || page.Shape != tc.shape || (page.Next != nil) != tc.continues {
			t.Errorf("%q top %d: scanned %d returned %d shape %s next %v; want %d %d %s %v",
				tc.filter, tc.top, page.Scanned, len(page.Entities), page.Shape, page.Next, tc.scanned, tc.returned, tc.shape, tc.continues)
		}
	}
}
