package sqlite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/tableemu/tableemu/odata/edm"
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
	s := &Store{}
	s.fc.init(budget)
	peak, peakTotal, excess, excessAt := int64(0), int64(0), int64(-1<<62), ""
	check := func(when string) {
		t.Helper()
		h := liveHeap() - h0
		s.fc.mu.RLock()
		total := s.fc.total
		s.fc.mu.RUnlock()
		peak, peakTotal = max(peak, h), max(peakTotal, total)
		if h-total > excess {
			excess, excessAt = h-total, when
		}
		if total > budget {
			t.Fatalf("%s: the cache counts %d bytes, over its budget of %d", when, total, budget)
		}
		if h > total+budgetSlack {
			s.fc.mu.RLock()
			for tid, st := range s.fc.tables {
				if st.master != nil {
					t.Logf("table %d: %d entities, %d bytes counted, arena %d (%d live), compacting %v, published %v",
						tid, st.master.Len(), st.bytes, st.master.a.alloc, st.master.a.live, st.compact != nil, st.pub != nil)
				}
			}
			s.fc.mu.RUnlock()
			t.Fatalf("%s: the live heap is %d bytes; the cache counts %d", when, h, total)
		}
	}
	tx := &Tx{s: s}
	write := func(tid int64, pk string, from, n int) {
		tx.cacheOps = tx.cacheOps[:0]
		for i := from; i < from+n; i++ {
			tx.notePut(tid, pk, fmt.Sprintf("r%07d", i), int64(i), props)
		}
		s.fc.commit(s.fc.begin(tx.cacheOps, false), tx.cacheOps, false, true)
	}
	create := func(tid int64) {
		ops := []cacheOp{{tid: tid, kind: opCreate}}
		s.fc.commit(s.fc.begin(ops, false), ops, false, true)
	}

	// 8,000 entities: small enough that a compaction's copy fits beside
	// the table, large enough that without counting it the heap passes
	// the count.
	const n, batch = 6000, 100
	// A compaction waits, once it has made its copy, until the test has
	// measured the heap, written on (each write recorded for the copy, and
	// copying nodes the compaction's snapshot shares) and measured again.
	held, resume := make(chan struct{}), make(chan struct{})
	compactHook = func() { held <- struct{}{}; <-resume }
	defer func() { compactHook = nil }()
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
		go func() { s.fc.compacts.Wait(); close(done) }()
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
				if tree, _, _, _ := s.fc.lookup(1, s.fc.committed.Load()); tree == nil {
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
	if _, ok := s.fc.cachedKeys(1); !ok {
		t.Fatal("the table left the cache: a compaction should fit")
	}
	compactHook = nil

	// A table that outgrows the budget leaves it, and the memory with it.
	create(2)
	for i := 0; i < 3*budget/200; i += batch {
		write(2, fmt.Sprintf("q%03d", rand.IntN(100)), i, batch)
		if i%(20*batch) == 0 {
			check(fmt.Sprintf("second table, %d entities", i+batch))
		}
	}
	s.fc.compacts.Wait()
	check("second table written")
	if _, ok := s.fc.cachedKeys(2); ok {
		t.Fatal("a table three times the budget is cached")
	}
	t.Logf("%d compactions; peak live heap %.2f MiB, peak count %.2f MiB, budget %.2f MiB; the heap at most %d KiB over the count (%s)",
		compactions, float64(peak)/(1<<20), float64(peakTotal)/(1<<20), float64(budget)/(1<<20), excess>>10, excessAt)
	runtime.KeepAlive(s)
}

// TestFilterCacheLoadStopsWhenFull: a load counts its tree against the
// budget as it reads, and stops when the tables already cached leave no
// room for it, rather than read the whole table and drop it then.
func TestFilterCacheLoadStopsWhenFull(t *testing.T) {
	ctx := context.Background()
	const budget = 1 << 20
	s, err := openStore(ctx, Options{Dir: t.TempDir(), FilterCache: budget, NoAutoIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fill := func(name string, n int) Table {
		var tb Table
		err := s.Update(ctx, func(tx *Tx) (err error) {
			if tb, err = tx.CreateTable("a", name); err != nil {
				return err
			}
			for i := range n {
				e := &edm.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%05d", i),
					Properties: []edm.Property{{Name: "Tag", Value: edm.NewString(fmt.Sprintf("t%d", i%100))}}}
				if err := tx.InsertEntity(tb, e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return tb
	}
	// Each about 0.7 MiB counted: the second evicts the first.
	first, second := fill("first", 5000), fill("second", 5000)
	if _, ok := s.fc.cachedKeys(first.ID); ok {
		t.Fatal("the first table is still cached")
	}
	s.fc.mu.RLock()
	held := s.fc.total
	s.fc.mu.RUnlock()
	st := s.startLoad(first.ID)
	if st == nil {
		t.Fatal("no load started")
	}
	if err := s.runLoad(first.ID, st); !errors.Is(err, errNoRoom) {
		t.Fatalf("the load ended with %v, want errNoRoom", err)
	}
	s.fc.mu.RLock()
	total, tooBig := s.fc.total, st.tooBig
	s.fc.mu.RUnlock()
	if total != held || tooBig {
		t.Fatalf("after the load the cache counts %d bytes (tooBig %v), want %d as before", total, tooBig, held)
	}
	if _, ok := s.fc.cachedKeys(second.ID); !ok {
		t.Fatal("the second table left the cache")
	}
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
		s := &Store{}
		s.fc.init(1 << 40)
		ops := []cacheOp{{tid: 1, kind: opCreate}}
		s.fc.commit(s.fc.begin(ops, false), ops, false, true)
		tx := &Tx{s: s}
		for i := 0; i < n; i += 100 {
			tx.cacheOps = tx.cacheOps[:0]
			for j := range 100 {
				pk, rk := tc.key(i + j)
				tx.notePut(1, pk, rk, int64(i+j), props)
			}
			s.fc.commit(s.fc.begin(tx.cacheOps, false), tx.cacheOps, false, true)
		}
		h := liveHeap() - h0
		st := s.fc.tables[1]
		m := st.master.Len()
		nodes := float64(h-st.master.a.alloc) / float64(m)
		t.Logf("%s: %d entities: live heap %.1f B each, of which nodes %.1f (entryOverhead %d); counted %.1f",
			tc.name, m, float64(h)/float64(m), nodes, entryOverhead, float64(s.fc.total)/float64(m))
		if h > s.fc.total+budgetSlack {
			t.Errorf("%s: the live heap is %d bytes; the cache counts %d", tc.name, h, s.fc.total)
		}
		runtime.KeepAlive(s)
	}
	// An empty table, for tableOverhead.
	h0 := liveHeap()
	s := &Store{}
	s.fc.init(1 << 40)
	const tables = 10_000
	for tid := int64(1); tid <= tables; tid++ {
		ops := []cacheOp{{tid: tid, kind: opCreate}}
		s.fc.commit(s.fc.begin(ops, false), ops, false, true)
	}
	per := (liveHeap() - h0) / tables
	t.Logf("an empty cached table: %d bytes (tableOverhead %d)", per, tableOverhead)
	if per > tableOverhead {
		t.Errorf("an empty cached table takes %d bytes, over tableOverhead (%d)", per, tableOverhead)
	}
	runtime.KeepAlive(s)
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
	s := &Store{}
	s.fc.init(budget)
	compactions := 0
	compactHook = func() { compactions++ }
	defer func() { compactHook = nil }()
	tx := &Tx{s: s}
	ops := []cacheOp{{tid: 1, kind: opCreate}}
	s.fc.commit(s.fc.begin(ops, false), ops, false, true)
	const n = 12000 // about 2.2 MiB of live entries and nodes
	evicted := false
	for round := 0; round < 6 && !evicted; round++ {
		for i := 0; i < n; i += 100 {
			tx.cacheOps = tx.cacheOps[:0]
			for j := i; j < i+100; j++ {
				tx.notePut(1, "p", fmt.Sprintf("r%07d", j), int64(j), props)
			}
			s.fc.commit(s.fc.begin(tx.cacheOps, false), tx.cacheOps, false, true)
			s.fc.mu.RLock()
			st, total := s.fc.tables[1], s.fc.total
			evicted = st.master == nil
			s.fc.mu.RUnlock()
			if total > budget {
				t.Fatalf("round %d: the cache counts %d bytes, over its budget", round, total)
			}
			if evicted {
				break
			}
		}
	}
	s.fc.compacts.Wait()
	if !evicted {
		t.Fatal("the table stayed cached through five rounds of overwrites")
	}
	if compactions != 0 {
		t.Fatalf("%d compactions ran; none fits", compactions)
	}
	if _, load, _ := lookupLoad(s, 1); !load {
		t.Fatal("the table was dropped as too big: its live entries fit")
	}
}

// lookupLoad is lookup's answer for tid now: the tree, whether a scan
// should load the table, whether it waits for a load.
func lookupLoad(s *Store, tid int64) (*ctree, bool, bool) {
	tree, _, load, wait := s.fc.lookup(tid, s.fc.committed.Load())
	return tree, load, wait != nil
}
