package store

import (
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
