package sqlite

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/tableemu/tableemu/cmd/tablebench/wireclient"
	"github.com/tableemu/tableemu/emulator/store"
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
	props := benchProps()
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

// BenchmarkCacheGC measures what the filter cache costs the collector: one
// full collection (runtime.GC) with 500,000 entities of tablebench's shape
// cached, the size tablebench's batch table reaches. A collection marks
// every pointer the cache holds; its cost is paid again at every cycle
// that the server's allocation brings on. heap-B/entity is the live heap
// the cache takes per entity.
//
//	go test ./emulator/store/sqlite -run '^$' -bench 'Cache(GC|Compact)'
func BenchmarkCacheGC(b *testing.B) {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heap0 := ms.HeapAlloc
	s := bigCachedTable(b)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heap := float64(ms.HeapAlloc - heap0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runtime.GC()
	}
	b.StopTimer()
	b.ReportMetric(heap/cachedN, "heap-B/entity") // after ResetTimer, which drops metrics
	runtime.KeepAlive(s)
}

// BenchmarkCacheCompact measures the writer's pause when overwrites have
// left a table of 500,000 cached entities more dead bytes than live ones:
// one copy of its live entries into a new arena and tree.
func BenchmarkCacheCompact(b *testing.B) {
	s := bigCachedTable(b)
	t := s.fc.tables[1].master
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if nt := t.compacted(t.a.live, new(atomic.Bool)); nt.Len() != cachedN {
			b.Fatalf("%d entities after compaction, want %d", nt.Len(), cachedN)
		}
	}
}

const cachedN = 500_000

// bigCachedTable is a filter cache holding one table (id 1) of cachedN
// entities of tablebench's shape, written in batches of 100 entities of
// one partition, as tablebench's batch workload writes them.
func bigCachedTable(b *testing.B) *Store {
	props := benchProps()
	s := &Store{}
	s.fc.init(defaultFilterCache)
	const tid = 1
	ops := []cacheOp{{tid: tid, kind: opCreate}}
	s.fc.commit(s.fc.begin(ops, false), ops, false, true)
	tx := &Tx{s: s}
	for i := 0; i < cachedN; i += 100 {
		tx.cacheOps = tx.cacheOps[:0]
		pk := fmt.Sprintf("b%07d", i/100)
		for j := range 100 {
			tx.notePut(tid, pk, fmt.Sprintf("r%07d", j), int64(i+j), props)
		}
		s.fc.commit(s.fc.begin(tx.cacheOps, false), tx.cacheOps, false, true)
	}
	if got := s.fc.tables[tid].master.Len(); got != cachedN {
		b.Fatalf("%d entities cached, want %d", got, cachedN)
	}
	return s
}

// benchProps is tablebench's entity's properties in their stored form.
func benchProps() []byte {
	return store.EncodeProps([]edm.Property{
		{Name: "Name", Value: edm.NewString("name")},
		{Name: "Age", Value: edm.NewInt32(7)},
		{Name: "Score", Value: edm.NewDouble(7.5)},
		{Name: "Flag", Value: edm.NewBoolean(true)},
		{Name: "Pad", Value: edm.NewString(wireclient.Pad)},
		{Name: "Tag", Value: edm.NewString("t1")}})
}
