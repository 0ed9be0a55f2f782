package filtercache

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/tableemu/tableemu/cmd/tablebench/wireclient"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata/edm"
)

// BenchmarkCacheBookkeeping measures the filter cache's share of a write
// alone: recording the entity (notePut) and applying it after COMMIT
// (begin, commit), for tablebench's entity, into a table the cache holds
// and into one it does not.
//
//	go test ./emulator/store/sqlite/filtercache -run '^$' -bench CacheBookkeeping -benchmem
func BenchmarkCacheBookkeeping(b *testing.B) {
	props := benchProps()
	keys := make([]string, 1<<16)
	for i := range keys {
		keys[i] = fmt.Sprintf("r%07d", i)
	}
	for _, cached := range []bool{true, false} {
		b.Run(map[bool]string{true: "cached", false: "uncached"}[cached], func(b *testing.B) {
			fc := &Cache{}
			fc.Init(DefaultBudget)
			const tid = 1
			if cached {
				ops := []Op{Create(tid)}
				fc.Commit(fc.Begin(ops, false), ops, false, true)
			} else {
				// Known to the cache, not held: as after its first write.
				fc.Commit(fc.Begin([]Op{Delete(tid, "", "")}, false), nil, false, true)
			}
			var ops []Op
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ops = append(ops[:0], fc.Put(tid, "p001", keys[i%len(keys)], int64(i), props))
				n := fc.Begin(ops, false)
				fc.Commit(n, ops, false, true)
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
//	go test ./emulator/store/sqlite/filtercache -run '^$' -bench 'Cache(GC|Compact)'
func BenchmarkCacheGC(b *testing.B) {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heap0 := ms.HeapAlloc
	fc := bigCachedTable(b)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heap := float64(ms.HeapAlloc - heap0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runtime.GC()
	}
	b.StopTimer()
	b.ReportMetric(heap/cachedN, "heap-B/entity") // after ResetTimer, which drops metrics
	runtime.KeepAlive(fc)
}

// BenchmarkCacheCompact measures the writer's pause when overwrites have
// left a table of 500,000 cached entities more dead bytes than live ones:
// one copy of its live entries into a new arena and tree.
func BenchmarkCacheCompact(b *testing.B) {
	fc := bigCachedTable(b)
	t := fc.tables[1].master
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
func bigCachedTable(b *testing.B) *Cache {
	props := benchProps()
	fc := &Cache{}
	fc.Init(DefaultBudget)
	const tid = 1
	ops := []Op{Create(tid)}
	fc.Commit(fc.Begin(ops, false), ops, false, true)
	for i := 0; i < cachedN; i += 100 {
		ops = ops[:0]
		pk := fmt.Sprintf("b%07d", i/100)
		for j := range 100 {
			ops = append(ops, fc.Put(tid, pk, fmt.Sprintf("r%07d", j), int64(i+j), props))
		}
		fc.Commit(fc.Begin(ops, false), ops, false, true)
	}
	if got := fc.tables[tid].master.Len(); got != cachedN {
		b.Fatalf("%d entities cached, want %d", got, cachedN)
	}
	return fc
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
