package sqlite

import (
	"context"
	"fmt"
	"testing"

	"github.com/tableemu/tableemu/cmd/tablebench/wireclient"
	"github.com/tableemu/tableemu/odata/edm"
)

// BenchmarkWrite measures one insert per commit of tablebench's entity
// (six properties, one of them 900 bytes), the store's share of an insert
// request, into a table the filter cache holds and into one it does not
// (a budget the table outgrows at once), and into a cached table of a store
// that keeps the creation order (CreationOrder, the cosmos profile's). CPU
// per op is the process's.
//
//	go test ./emulator/store/sqlite -run '^$' -bench Write -benchmem
func BenchmarkWrite(b *testing.B) {
	for _, tc := range []struct {
		name     string
		budget   int64
		creation bool
	}{{"cached", 0, false}, {"uncached", 1 << 10, false}, {"creation-order", 0, true}} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			s, err := openStore(ctx, Options{Dir: b.TempDir(), FilterCache: tc.budget, CreationOrder: tc.creation})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			var tb Table
			if err := s.Update(ctx, func(tx *Tx) (err error) { tb, err = tx.CreateTable("a", "bench"); return err }); err != nil {
				b.Fatal(err)
			}
			e := &edm.Entity{PartitionKey: "p001"}
			wireclient.Measure(b, func(i int) {
				e.RowKey = fmt.Sprintf("r%07d", i)
				e.Properties = append(e.Properties[:0],
					edm.Property{Name: "Name", Value: edm.NewString("name")},
					edm.Property{Name: "Age", Value: edm.NewInt32(int32(i % 100))},
					edm.Property{Name: "Score", Value: edm.NewDouble(float64(i) + .5)},
					edm.Property{Name: "Flag", Value: edm.NewBoolean(i%2 == 0)},
					edm.Property{Name: "Pad", Value: edm.NewString(wireclient.Pad)},
					edm.Property{Name: "Tag", Value: edm.NewString("t1")})
				if err := s.Update(ctx, func(tx *Tx) error { return tx.InsertEntity(tb, e) }); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
