package filtercache

import (
	"encoding/binary"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/google/btree"
)

// The filter cache's storage: a table's cached entities are entries of a
// B-tree (ctree) whose bytes — keys and slim properties — lie in the
// chunks of an arena.
//
// Entries are values in the tree's nodes, and the bytes of entries written
// together (a batch, a load) lie together in a chunk, so that a scan walks
// contiguous memory: entries allocated one by one among the other
// allocations of their requests cost a scan twice the time
// (BenchmarkFirstScan, docs/benchmarks.md).
//
// An entry holds no pointer: it names its bytes by chunk and offset. So
// the tree's nodes hold plain values, which the collector does not scan;
// it follows one pointer per chunk instead of one per entity. With
// 500,000 entities cached, a collection marked 500,000 pointers more and
// took five times as long (BenchmarkCacheGC; docs/benchmarks.md, "the
// cache's entries without pointers").
//
// What the collector no longer does, the arena does: the bytes of an entry
// that was replaced or deleted stay in their chunk. When they outweigh the
// live ones, the live entries are copied into a new arena and tree
// (compaction, below); trees of the old one that scans still read keep the
// old arena, and with it their chunks, alive.
//
// Concurrency: one goroutine adds to an arena — the load or compaction
// that fills a new one, then, once its tree is installed under the filter
// cache's lock, the writer — always past every byte an entry already uses,
// and before the entry enters a tree. A scan reads a tree published to it
// under that lock, so the bytes of every entry it meets were written
// before it began. The chunk list is replaced, never changed below its
// length, so a reader may load it once per scan.

// centry is one cached entity: where its stored keys and slim properties
// (store.SlimProps) lie in the arena, which is all a filter reads; big
// says some values were left out of slim, so that the entity itself comes
// from SQLite when a page returns it.
type centry struct {
	c, off        uint32 // chunk (or probeBase + a probe's id), offset in it
	npk, nrk, nsl uint32
	big           bool
	ts            int64
	// k0 and k1 are the first 8 bytes of pk and rk, zero-padded, so that
	// comparing keys (a walk from a key compares it with entries at every
	// level of the tree) rarely reads the keys' bytes.
	k0, k1 uint64
}

// btreeDegree keeps nodes small: each commit copies the nodes on the path
// to every entity it changes (copy on write).
const btreeDegree = 16

// ctree is one table's tree and the arena its entries' bytes are in.
type ctree struct {
	*btree.BTreeG[centry]
	a *arena
}

func newTree() *ctree {
	a := &arena{}
	return &ctree{btree.NewWithFreeListG(btreeDegree, a.less, nodeFreeList), a}
}

// nodeFreeList keeps nodes that trees dropped, for reuse: one for every
// tree, not btree's default of one per tree, so that the nodes it keeps
// (up to 32 of about 1.9 KiB each) do not add up with the number of
// cached tables. It is safe for concurrent use.
var nodeFreeList = btree.NewFreeListG[centry](btree.DefaultFreeListSize)

// clone is a copy-on-write copy of t, for scans; its entries' bytes stay
// where they are.
func (t *ctree) clone() *ctree { return &ctree{t.Clone(), t.a} }

// compacted copies t's entries, in key order, into a new tree and arena,
// leaving behind the bytes of entries replaced or deleted; live is the
// bytes they take. A compaction calls it on a clone while the writer goes
// on adding to t's arena, so it reads no field of the arena the writer
// changes: live is read under the cache's lock, the chunks as a scan does.
// It gives up (nil) once dropped is set, checked every few thousand
// entities.
func (t *ctree) compacted(live int64, dropped *atomic.Bool) *ctree {
	nt := newTree()
	nt.a.want = live
	v := t.a.view()
	i := 0
	t.Ascend(func(e centry) bool {
		if i++; i%4096 == 0 && dropped.Load() {
			nt = nil
			return false
		}
		nt.ReplaceOrInsert(nt.a.put(v.pk(e), v.rk(e), bytesOf(v.slim(e)), e.ts, e.big))
		return true
	})
	return nt
}

// apply makes a put or a delete in t: the writer in master, a compaction
// in its copy.
func (t *ctree) apply(op Op) {
	switch op.kind {
	case opPut:
		if old, ok := t.ReplaceOrInsert(t.a.put(op.pk, op.rk, op.slim, op.ts, op.big)); ok {
			t.a.drop(old)
		}
	case opDelete:
		p := keyProbe(op.pk, op.rk)
		if old, ok := t.Delete(p); ok {
			t.a.drop(old)
		}
		releaseProbe(p)
	}
}

// A compaction copies a table's live entries into a new tree and arena
// on a goroutine of its own: at 500,000 entities the copy takes about
// half a second (BenchmarkCacheCompact), which the writer, and scans
// waiting for the cache's lock, would otherwise wait. It copies a clone
// of master; the writer goes on changing master and records each change
// here too, and the compaction applies them to its copy before it
// replaces master with it. A table forgotten meanwhile (dropped, evicted,
// recreated) drops its compaction (forget), and the copy is discarded.
type compaction struct {
	ops []Op
	// dropped: the table was forgotten; the copy stops, so that the
	// memory it holds, no longer counted, goes at once.
	dropped atomic.Bool
	// copies counts the bytes of the nodes the writer may have copied
	// from those the compaction's snapshot shares, at most copyMax: the
	// snapshot keeps the old ones until the copy is done (budget.go).
	copies, copyMax, path int64
}

// note records a change the writer applied to master, and returns the
// bytes the record takes; under fc.mu. The op's strings and slim are the
// write's, reused once its group ends: they are copied, into one
// allocation.
func (c *compaction) note(op Op) int64 {
	if op.kind != opPut && op.kind != opDelete {
		return 0
	}
	copied := min(c.path, c.copyMax-c.copies)
	c.copies += copied
	b := make([]byte, 0, len(op.pk)+len(op.rk)+len(op.slim))
	b = append(append(append(b, op.pk...), op.rk...), op.slim...)
	pk, rk, slim := b[:len(op.pk)], b[len(op.pk):len(op.pk)+len(op.rk)], b[len(op.pk)+len(op.rk):]
	c.ops = append(c.ops, Op{kind: op.kind, pk: unsafe.String(unsafe.SliceData(pk), len(pk)),
		rk: unsafe.String(unsafe.SliceData(rk), len(rk)), slim: slim, ts: op.ts, big: op.big})
	return int64(cap(b)) + int64(unsafe.Sizeof(op)) + copied
}

// startCompaction starts compacting st's master; under fc.mu. The copy
// it will make counts against the budget from now on (budget.go):
// the caller's evict makes room for it, or drops the table if it cannot.
func (fc *Cache) startCompaction(st *fcTable) {
	snap, live := st.master.clone(), st.master.a.live
	c := &compaction{copyMax: int64(snap.Len()) * entryOverhead, path: pathBytes(snap.Len())}
	st.compact = c
	st.compBytes = treeBytes(live, snap.Len())
	fc.total += st.compBytes
	fc.compacts.Add(1)
	go func() {
		defer fc.compacts.Done()
		nt := snap.compacted(live, &c.dropped)
		if h := fc.hook().Compact; h != nil {
			h()
		}
		fc.mu.Lock()
		defer fc.mu.Unlock()
		if st.compact != c || nt == nil {
			return
		}
		for _, op := range c.ops {
			nt.apply(op)
		}
		// Scans of trees published before keep the old arena; the
		// published tree goes, so that the table keeps only the new one.
		st.master, st.compact, st.pub = nt, nil, nil
		b := nt.bytes()
		fc.total += b - st.bytes - st.compBytes
		st.bytes, st.compBytes = b, 0
		fc.installed.Add(1)
		fc.evict()
	}()
}

// bytes is what the tree holds, for the cache's budget: its chunks, dead
// bytes included, and its nodes (budget.go).
func (t *ctree) bytes() int64 { return treeBytes(t.a.alloc, t.Len()) }

// arena holds the bytes of a tree's entries, in chunks of at most
// maxChunk bytes (a larger entry gets a chunk of its own).
type arena struct {
	chunks atomic.Pointer[[][]byte]
	// Only the goroutine that adds to the arena (see Concurrency above)
	// uses the rest: the last chunk, free from used on; the bytes of every
	// chunk (alloc), those handed to entries (handed), and those of the
	// entries its master tree holds (live); want, the bytes still to
	// come in a bulk copy, so that its chunks are no larger than needed.
	last         []byte
	lastC        uint32
	used         int
	alloc        int64
	handed, live int64
	want         int64
}

const (
	minChunk = 512
	maxChunk = 64 << 10
)

// put copies an entity's stored keys and slim properties into the arena.
func (a *arena) put(pk, rk string, slim []byte, ts int64, big bool) centry {
	n := len(pk) + len(rk) + len(slim)
	if len(a.last)-a.used < n {
		a.grow(n)
	}
	b := a.last[a.used : a.used+n : a.used+n]
	copy(b[copy(b, pk):], rk)
	copy(b[len(pk)+len(rk):], slim)
	e := centry{c: a.lastC, off: uint32(a.used), npk: uint32(len(pk)), nrk: uint32(len(rk)), nsl: uint32(len(slim)),
		big: big, ts: ts, k0: prefix8(pk), k1: prefix8(rk)}
	a.used += n
	a.handed += int64(n)
	a.live += int64(n)
	if a.want > 0 {
		a.want -= int64(n)
	}
	return e
}

// grow starts a chunk with room for n bytes: twice the last one (a small
// table takes little), at most maxChunk, and no more than a bulk copy
// still needs.
func (a *arena) grow(n int) {
	size := min(max(2*len(a.last), minChunk), maxChunk)
	if a.want > 0 {
		size = int(min(int64(size), a.want))
	}
	size = max(size, n)
	var cs [][]byte
	if p := a.chunks.Load(); p != nil {
		cs = *p
	}
	cs = append(cs, make([]byte, size))
	a.chunks.Store(&cs)
	a.last, a.lastC, a.used = cs[len(cs)-1], uint32(len(cs)-1), 0
	a.alloc += int64(size)
}

// drop records that the master tree no longer holds e.
func (a *arena) drop(e centry) { a.live -= int64(e.npk + e.nrk + e.nsl) }

// wasteful says the bytes of entries the master tree no longer holds
// outweigh the live ones (and compactSlack, unless early: tests'
// Hooks.CompactEarly): time to compact.
func (a *arena) wasteful(early bool) bool {
	slack := compactSlack
	if early {
		slack = 0
	}
	return a.handed-a.live > a.live+slack
}

// compactSlack keeps small tables from compacting at every write.
const compactSlack int64 = maxChunk

// view is the arena's chunks as a reader loads them: every entry of a tree
// it was given is in them.
type view [][]byte

func (a *arena) view() view {
	if p := a.chunks.Load(); p != nil {
		return *p
	}
	return nil
}

// The accessors index the chunk (bounds-checked) only for a non-empty
// part: an empty entry may name no chunk at all.
func (v view) pk(e centry) string { return v.part(e, e.off, e.npk) }
func (v view) rk(e centry) string { return v.part(e, e.off+e.npk, e.nrk) }
func (v view) slim(e centry) string {
	return v.part(e, e.off+e.npk+e.nrk, e.nsl)
}

func (v view) part(e centry, off, n uint32) string {
	if n == 0 {
		return ""
	}
	b := v[e.c][off : off+n]
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// less orders entries as the primary key does: by PartitionKey, then
// RowKey, bytewise. Prefixes that differ decide as the whole keys would;
// equal ones decide for keys of at most 8 bytes by length (the shorter is
// a prefix of the longer); otherwise the keys' bytes are compared.
func (a *arena) less(x, y centry) bool {
	if x.k0 != y.k0 {
		return x.k0 < y.k0
	}
	if x.npk > 8 || y.npk > 8 {
		if d := strings.Compare(a.key(x, false), a.key(y, false)); d != 0 {
			return d < 0
		}
	} else if x.npk != y.npk {
		return x.npk < y.npk
	}
	if x.k1 != y.k1 {
		return x.k1 < y.k1
	}
	if x.nrk > 8 || y.nrk > 8 {
		return strings.Compare(a.key(x, true), a.key(y, true)) < 0
	}
	return x.nrk < y.nrk
}

// key is e's PartitionKey or RowKey, from the arena or from its probe.
func (a *arena) key(e centry, rk bool) string {
	if e.c >= probeBase {
		p, _ := probes.Load(e.c)
		k := p.(*probeKey)
		if rk {
			return k.rk
		}
		return k.pk
	}
	if rk {
		return a.view().rk(e)
	}
	return a.view().pk(e)
}

// A probe is an entry that stands for a key in a tree's comparisons (a
// scan's start, the key a write deletes), whose bytes are in no arena:
// its chunk number is probeBase plus an id under which probes holds them
// until release. Comparisons read them only when 8-byte prefixes tie.
type probeKey struct{ pk, rk string }

const probeBase = 1 << 31

var (
	probes  sync.Map // uint32 → *probeKey
	probeID atomic.Uint32
)

// keyProbe returns the probe of (pk, rk), stored keys; release it when
// the tree calls that compare it are over.
func keyProbe(pk, rk string) centry {
	id := probeBase | probeID.Add(1)&(probeBase-1)
	probes.Store(id, &probeKey{pk, rk})
	return centry{c: id, npk: uint32(len(pk)), nrk: uint32(len(rk)), k0: prefix8(pk), k1: prefix8(rk)}
}

func releaseProbe(e centry) { probes.Delete(e.c) }

func prefix8(s string) uint64 {
	var b [8]byte
	copy(b[:], s)
	return binary.BigEndian.Uint64(b[:])
}
