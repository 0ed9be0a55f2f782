package sqlite

import (
	"context"
	"fmt"
	"testing"

	"github.com/tableemu/tableemu/cmd/tablebench/wireclient"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// BenchmarkCreationOrderScan measures a page of 1,000 entities of one
// partition (of 10,000, written with tablebench's entity), unfiltered and
// with a filter that keeps one in ten, read in key order and in creation
// order from a store opened with CreationOrder: the creation order reads
// entities_by_seq and each entity from the primary key. The filter cache
// is off, so that both read SQLite.
//
//	go test ./emulator/store/sqlite -run '^$' -bench CreationOrderScan -benchmem
func BenchmarkCreationOrderScan(b *testing.B) {
	ctx := context.Background()
	s, err := openStore(ctx, Options{Dir: b.TempDir(), FilterCache: -1, CreationOrder: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var tb Table
	if err := s.Update(ctx, func(tx *Tx) (err error) {
		if tb, err = tx.CreateTable("a", "bench"); err != nil {
			return err
		}
		for i := range 10_000 {
			// Inserted out of key order, as the creation order's case is.
			e := &edm.Entity{PartitionKey: "p001", RowKey: fmt.Sprintf("r%07d", (i*7919)%10_000), Properties: []edm.Property{
				{Name: "Age", Value: edm.NewInt32(int32(i % 100))},
				{Name: "Pad", Value: edm.NewString(wireclient.Pad)},
				{Name: "Tag", Value: edm.NewString(fmt.Sprintf("t%d", i%10))},
			}}
			if err := tx.InsertEntity(tb, e); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	sparse, _ := odata.ParseFilter("PartitionKey eq 'p001' and Tag eq 't3'")
	part, _ := odata.ParseFilter("PartitionKey eq 'p001'")
	for _, f := range []struct {
		name   string
		filter odata.Expr
	}{{"partition", part}, {"filtered", sparse}} {
		for _, o := range []struct {
			name  string
			order store.Order
		}{{"keys", store.OrderKeys}, {"creation", store.OrderCreation}} {
			b.Run(f.name+"/"+o.name, func(b *testing.B) {
				q := EntityQuery{Top: 1000, Filter: f.filter, Order: o.order}
				wireclient.Measure(b, func(int) {
					n := 0
					if err := s.View(ctx, func(tx *Tx) error {
						_, err := tx.ScanEntities(tb, q, func(*edm.Entity) error { n++; return nil })
						return err
					}); err != nil || n != 1000 {
						b.Fatalf("%d entities, %v", n, err)
					}
				})
			})
		}
	}
}
