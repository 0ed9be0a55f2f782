package sqlite

import (
	"context"
	"fmt"
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/internal/wireclient"
	"github.com/tableemu/tableemu/odata/edm"
)

// BenchmarkWrite measures one insert per commit of tablebench's entity
// (six properties, one of them 900 bytes), the store's share of an insert
// request, into a table the filter cache holds and into one it does not
// (a budget the table outgrows at once). CPU per op is the process's.
//
//	go test ./emulator/store/sqlite -run '^$' -bench Write -benchmem
func BenchmarkWrite(b *testing.B) {
	for _, tc := range []struct {
		name   string
		budget int64
	}{{"cached", 0}, {"uncached", 1 << 10}} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			s, err := openStore(ctx, Options{Dir: b.TempDir(), FilterCache: tc.budget})
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

// BenchmarkCacheBookkeeping measures the filter cache's share of a write
// alone: recording the entity (notePut) and applying it after COMMIT
// (begin, commit), for tablebench's entity, into a table the cache holds
// and into one it does not.
//
//	go test ./emulator/store/sqlite -run '^$' -bench CacheBookkeeping -benchmem
func BenchmarkCacheBookkeeping(b *testing.B) {
	props := store.EncodeProps([]edm.Property{
		{Name: "Name", Value: edm.NewString("name")},
		{Name: "Age", Value: edm.NewInt32(7)},
		{Name: "Score", Value: edm.NewDouble(7.5)},
		{Name: "Flag", Value: edm.NewBoolean(true)},
		{Name: "Pad", Value: edm.NewString(wireclient.Pad)},
		{Name: "Tag", Value: edm.NewString("t1")}})
	keys := make([]string, 1<<16)
	for i := range keys {
		keys[i] = fmt.Sprintf("r%07d", i)
	}
	for _, cached := range []bool{true, false} {
		b.Run(map[bool]string{true: "cached", false: "uncached"}[cached], func(b *testing.B) {
			s := &Store{}
			s.fc.init(defaultFilterCache)
			const tid = 1
			if cached {
				ops := []cacheOp{{tid: tid, kind: opCreate}}
				s.fc.commit(s.fc.begin(ops, false), ops, false, true)
			} else {
				// Known to the cache, not held: as after its first write.
				s.fc.commit(s.fc.begin([]cacheOp{{tid: tid, kind: opDelete}}, false), nil, false, true)
			}
			tx := &Tx{s: s}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				tx.cacheOps = tx.cacheOps[:0]
				tx.notePut(tid, "p001", keys[i%len(keys)], int64(i), props)
				n := s.fc.begin(tx.cacheOps, false)
				s.fc.commit(n, tx.cacheOps, false, true)
			}
		})
	}
}
