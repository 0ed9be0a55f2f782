package sqlite

import (
	"context"
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata"
)

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
		shape     store.Shape
		continues bool
	}{
		{"PartitionKey eq 'p2' and RowKey eq 'b'", 1000, 1, 1, store.PointQuery, false},
		{"PartitionKey eq 'p2'", 1000, 3, 3, store.PartitionScan, false},
		{"RowKey eq 'b'", 1000, 9, 3, store.TableScan, false},
		{"RowKey eq 'b'", 1, 4, 1, store.TableScan, true}, // p1a p1b p1c p2a, then the continuation p2b
		{"", 4, 5, 4, store.TableScan, true},
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
