package filtercache

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// liveHeap is the Go heap that survives a full collection.
func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// budgetSlack is what the live heap may differ by from the cache's count
// besides the cache: the store's own buffers, the node free list.
const budgetSlack = 256 << 10

// TestFilterCacheWithinBudget: what the filter cache holds — measured as
// the live heap — stays within what it counts, and what it counts within
// its budget (4 MiB), while a table is written through in batches, a scan
// is handed its tree at the start of each round, it is overwritten three
// times (each compaction is held once it has made its copy, while the
// writer goes on), and then a second table grows to three times the
// budget. Before the cache dropped the tree it had published at the next
// write, the heap was 1.3 times the count within the first overwrite;
// with that alone, before it counted a compaction's copy, 1.7 times
// during the first compaction.
func TestFilterCacheWithinBudget(t *testing.T) {
	const budget = 4 << 20
	props := benchProps()
	h0 := liveHeap()
	fc := &Cache{}
	fc.Init(budget)
	peak, peakTotal, excess, excessAt := int64(0), int64(0), int64(-1<<62), ""
	check := func(when string) {
		t.Helper()
		h := liveHeap() - h0
		fc.mu.RLock()
		total := fc.total
		fc.mu.RUnlock()
		peak, peakTotal = max(peak, h), max(peakTotal, total)
		if h-total > excess {
			excess, excessAt = h-total, when
		}
		if total > budget {
			t.Fatalf("%s: the cache counts %d bytes, over its budget of %d", when, total, budget)
		}
		if h > total+budgetSlack {
			fc.mu.RLock()
			for tid, st := range fc.tables {
				if st.master != nil {
					t.Logf("table %d: %d entities, %d bytes counted, arena %d (%d live), compacting %v, published %v",
						tid, st.master.Len(), st.bytes, st.master.a.alloc, st.master.a.live, st.compact != nil, st.pub != nil)
				}
			}
			fc.mu.RUnlock()
			t.Fatalf("%s: the live heap is %d bytes; the cache counts %d", when, h, total)
		}
	}
	var ops []Op
	write := func(tid int64, pk string, from, n int) {
		ops = ops[:0]
		for i := from; i < from+n; i++ {
			ops = append(ops, fc.Put(tid, pk, fmt.Sprintf("r%07d", i), int64(i), props))
		}
		fc.Commit(fc.Begin(ops, false), ops, false, true)
	}
	create := func(tid int64) {
		ops := []Op{Create(tid)}
		fc.Commit(fc.Begin(ops, false), ops, false, true)
	}

	// 8,000 entities: small enough that a compaction's copy fits beside
	// the table, large enough that without counting it the heap passes
	// the count.
	const n, batch = 6000, 100
	// A compaction waits, once it has made its copy, until the test has
	// measured the heap, written on (each write recorded for the copy, and
	// copying nodes the compaction's snapshot shares) and measured again.
	held, resume := make(chan struct{}), make(chan struct{})
	fc.SetHooks(&Hooks{Compact: func() { held <- struct{}{}; <-resume }})
	compactions := 0
	hold := func() {
		compactions++
		check(fmt.Sprintf("compaction %d, before it installs its copy", compactions))
		for i := 0; i < n; i += 4 * batch {
			write(1, "p", (i*7)%n, batch)
		}
		check(fmt.Sprintf("compaction %d, after writes beside it", compactions))
		resume <- struct{}{}
	}
	// settle holds the compactions under way, if any, and waits for them.
	settle := func() {
		done := make(chan struct{})
		go func() { fc.compacts.Wait(); close(done) }()
		for {
			select {
			case <-held:
				hold()
			case <-done:
				return
			}
		}
	}
	create(1)
	for round := range 4 {
		for i := 0; i < n; i += batch {
			write(1, "p", i, batch)
			if i == 0 {
				// A scan is handed the tree; no scan comes again this round.
				if tree, _, _ := fc.Lookup(1, fc.Committed()); !tree.Cached() {
					t.Fatalf("round %d: the table is not cached", round)
				}
			}
			if i%(10*batch) == 0 {
				// Once a compaction has installed its copy, the old tree
				// goes with its goroutine.
				settle()
				check(fmt.Sprintf("round %d, %d entities written", round, i+batch))
			}
		}
		settle()
		check(fmt.Sprintf("after round %d", round))
	}
	if compactions == 0 {
		t.Fatal("no compaction ran")
	}
	if _, ok := fc.Keys(1); !ok {
		t.Fatal("the table left the cache: a compaction should fit")
	}
	fc.SetHooks(nil)

	// A table that outgrows the budget leaves it, and the memory with it.
	create(2)
	for i := 0; i < 3*budget/200; i += batch {
		write(2, fmt.Sprintf("q%03d", rand.IntN(100)), i, batch)
		if i%(20*batch) == 0 {
			check(fmt.Sprintf("second table, %d entities", i+batch))
		}
	}
	fc.compacts.Wait()
	check("second table written")
	if _, ok := fc.Keys(2); ok {
		t.Fatal("a table three times the budget is cached")
	}
	t.Logf("%d compactions; peak live heap %.2f MiB, peak count %.2f MiB, budget %.2f MiB; the heap at most %d KiB over the count (%s)",
		compactions, float64(peak)/(1<<20), float64(peakTotal)/(1<<20), float64(budget)/(1<<20), excess>>10, excessAt)
	runtime.KeepAlive(fc)
}

// TestFilterCacheCosts measures what a cached entity costs in the live
// heap, for entryOverhead: tablebench's entity (keys of 12 bytes, slim
// properties of 63) in key order, the shape that leaves every node split
// half full, and at random keys. The count must not be below the heap.
func TestFilterCacheCosts(t *testing.T) {
	props := benchProps()
	const n = 100_000
	for _, tc := range []struct {
		name string
		key  func(i int) (string, string)
	}{
		{"key order", func(i int) (string, string) { return "p001", fmt.Sprintf("r%07d", i) }},
		{"random", func(i int) (string, string) {
			return fmt.Sprintf("p%03d", rand.IntN(100)), fmt.Sprintf("r%07d", rand.IntN(1e7))
		}},
	} {
		h0 := liveHeap()
		fc := &Cache{}
		fc.Init(1 << 40)
		ops := []Op{Create(1)}
		fc.Commit(fc.Begin(ops, false), ops, false, true)
		for i := 0; i < n; i += 100 {
			ops = ops[:0]
			for j := range 100 {
				pk, rk := tc.key(i + j)
				ops = append(ops, fc.Put(1, pk, rk, int64(i+j), props))
			}
			fc.Commit(fc.Begin(ops, false), ops, false, true)
		}
		h := liveHeap() - h0
		st := fc.tables[1]
		m := st.master.Len()
		nodes := float64(h-st.master.a.alloc) / float64(m)
		t.Logf("%s: %d entities: live heap %.1f B each, of which nodes %.1f (entryOverhead %d); counted %.1f",
			tc.name, m, float64(h)/float64(m), nodes, entryOverhead, float64(fc.total)/float64(m))
		if h > fc.total+budgetSlack {
			t.Errorf("%s: the live heap is %d bytes; the cache counts %d", tc.name, h, fc.total)
		}
		runtime.KeepAlive(fc)
	}
	// An empty table, for tableOverhead.
	h0 := liveHeap()
	fc := &Cache{}
	fc.Init(1 << 40)
	const tables = 10_000
	for tid := int64(1); tid <= tables; tid++ {
		ops := []Op{Create(tid)}
		fc.Commit(fc.Begin(ops, false), ops, false, true)
	}
	per := (liveHeap() - h0) / tables
	t.Logf("an empty cached table: %d bytes (tableOverhead %d)", per, tableOverhead)
	if per > tableOverhead {
		t.Errorf("an empty cached table takes %d bytes, over tableOverhead (%d)", per, tableOverhead)
	}
	runtime.KeepAlive(fc)
}

// TestFilterCacheTooBigToCompact: a table whose live entries and nodes
// take more than about a third of the budget is not compacted — the copy
// would not fit beside it — but dropped once its dead bytes take the
// cache past its budget, and then it may be loaded again: its live
// entries fit. Before, it was compacted beside itself, uncounted, and
// then dropped for good as too big.
func TestFilterCacheTooBigToCompact(t *testing.T) {
	const budget = 4 << 20
	props := benchProps()
	fc := &Cache{}
	fc.Init(budget)
	compactions := 0
	fc.SetHooks(&Hooks{Compact: func() { compactions++ }})
	ops := []Op{Create(1)}
	fc.Commit(fc.Begin(ops, false), ops, false, true)
	const n = 12000 // about 2.2 MiB of live entries and nodes
	evicted := false
	for round := 0; round < 6 && !evicted; round++ {
		for i := 0; i < n; i += 100 {
			ops = ops[:0]
			for j := i; j < i+100; j++ {
				ops = append(ops, fc.Put(1, "p", fmt.Sprintf("r%07d", j), int64(j), props))
			}
			fc.Commit(fc.Begin(ops, false), ops, false, true)
			fc.mu.RLock()
			st, total := fc.tables[1], fc.total
			evicted = st.master == nil
			fc.mu.RUnlock()
			if total > budget {
				t.Fatalf("round %d: the cache counts %d bytes, over its budget", round, total)
			}
			if evicted {
				break
			}
		}
	}
	fc.compacts.Wait()
	if !evicted {
		t.Fatal("the table stayed cached through five rounds of overwrites")
	}
	if compactions != 0 {
		t.Fatalf("%d compactions ran; none fits", compactions)
	}
	if _, load, _ := lookupLoad(fc, 1); !load {
		t.Fatal("the table was dropped as too big: its live entries fit")
	}
}

// lookupLoad is lookup's answer for tid now: the tree, whether a scan
// should load the table, whether it waits for a load.
func lookupLoad(fc *Cache, tid int64) (Tree, bool, bool) {
	tree, load, wait := fc.Lookup(tid, fc.Committed())
	return tree, load, wait != nil
}
