package sqlite

import (
	"context"
	"testing"

	"github.com/tableemu/tableemu/odata"
)

// BenchmarkPlan measures building a page's SQL: key range, compiled filter
// and the index choice (no automatic index exists here).
func BenchmarkPlan(b *testing.B) {
	s, err := openStore(context.Background(), Options{InMemory: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	f, err := odata.ParseFilter("PartitionKey eq 'orders-2024' and RowKey ge 'A' and RowKey lt 'B' and (Status eq 'open' or Total gt 99.5) and not (Priority lt 3L)")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	err = s.View(context.Background(), func(tx *Tx) error {
		for i := 0; i < b.N; i++ {
			if _, err := tx.plan(Table{ID: 1}, EntityQuery{Filter: f, Top: 1000}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
