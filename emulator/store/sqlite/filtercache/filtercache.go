// Package filtercache is the SQLite engine's filter cache: every table's
// entities, in key order, in memory.
//
// A filter on a property no automatic index serves is answered by a scan
// of the key range (the engine's plan.go), and through SQLite a scan
// costs about 0.5 µs per entity however the filter is evaluated: stepping
// the B-tree and copying each row out of its pages (docs/benchmarks.md,
// "First scans").
// Azurite keeps its entities as objects in memory and reads one property
// of each for about a quarter of that. So the engine keeps a second copy
// of each table, in memory: per table a B-tree ordered as the primary key,
// holding each entity's keys, Timestamp and stored properties without
// their values over SlimMax bytes (store.SlimProps; how they are laid out:
// arena.go), which a filter reads with store.LookupProp as the engine's
// tableemu_match does. A scan walks it instead of SQLite (scan.go); the
// engine reads from SQLite only the entities with large values that its
// page returns, and a filter on a property that has large values scans
// SQLite.
//
// It is written through: each committed write applies its changes to the
// table's tree, so a table created by this process is cached from its
// first entity; a table that existed at Open, or that a restore brought
// back, is read into memory in the background (load.go). It is bounded
// by the engine's Options.FilterCache bytes; past it, the tables used
// least recently leave it (their scans go back to SQLite).
//
// The engine calls the cache with plain values — table ids, stored keys
// and properties, commit numbers — and lends it what it needs of SQLite
// as functions (a Reader for loads, Scan.Big for large values): the cache
// does not import the engine.
//
// Exactness: a scan must see the table as its transaction's snapshot
// does. Commits are numbered; before COMMIT the writer records, for each
// table the group wrote, that commit's number (lastWrite), and after
// COMMIT it applies the changes to the table's tree (which then holds
// every write up to that commit: ver) and advances committed. A reader
// reads committed (p1) before its snapshot begins, so its snapshot holds
// at least commits 1..p1; a later commit that wrote the table has recorded
// its number before it could enter any snapshot. So when the table's
// lastWrite, read once the snapshot has begun, is at most p1 and at most
// ver, nothing after the tree's state has written the table: the tree is
// the table as the snapshot sees it, and the scan reads a copy-on-write
// clone of it. Otherwise the scan reads SQLite, as before. Bulk changes
// (a snapshot restore) advance lastAll, which stands for every table's
// lastWrite, and empty the cache.
package filtercache

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tableemu/tableemu/emulator/store"
)

// DefaultBudget is the engine's Options.FilterCache when zero.
const DefaultBudget = 512 << 20

// Cache is the filter cache of one store. Its zero value is off; Init
// turns it on.
type Cache struct {
	budget    int64 // bytes; 0: off
	committed atomic.Int64
	mu        sync.RWMutex
	tables    map[int64]*fcTable
	lastAll   int64 // under mu
	total     int64 // bytes held by every tree, under mu
	closing   bool  // under mu: StopLoads was called
	loads     sync.WaitGroup
	compacts  sync.WaitGroup // compactions under way (arena.go)
	installed atomic.Int64   // compactions that replaced a tree (Stats)
	epoch     time.Time
	hooks     atomic.Pointer[Hooks]
}

// Hooks are for tests.
type Hooks struct {
	// Load runs before a load reads its table.
	Load func(tid int64)
	// Compact runs before a compaction installs its copy.
	Compact func()
	// CompactEarly compacts a table once its dead bytes outweigh its
	// live ones, however small it is (arena.go's compactSlack).
	CompactEarly bool
}

// SetHooks sets the hooks; nil clears them.
func (fc *Cache) SetHooks(h *Hooks) { fc.hooks.Store(h) }

func (fc *Cache) hook() *Hooks {
	if h := fc.hooks.Load(); h != nil {
		return h
	}
	return &noHooks
}

var noHooks Hooks

// fcTable is one table's state. Fields are under Cache.mu.
type fcTable struct {
	lastWrite int64
	master    *ctree // the writer's; nil: not cached
	ver       int64  // master holds every write up to commit ver
	// pub is a clone of master as of commit pubVer, read by scans. It is
	// made when a scan needs it (Lookup), not at every commit: a clone
	// shares master's nodes until master changes them, when they are
	// copied, so writes with no scan in between copy nothing.
	pub    *ctree
	pubVer int64
	bytes  int64 // master.bytes(), as fc.total counts it
	// compBytes is what a compaction under way holds besides master, as
	// fc.total counts it (budget.go); loadBytes, a load under way,
	// which runLoad releases (not forget: the load still holds it).
	compBytes, loadBytes int64
	// large names every property some entity of master has a value of
	// left out of its slim form; a filter reading one of them scans
	// SQLite. Replaced, never changed, so that a scan may keep it.
	large map[string]bool
	// loading: a load of the table is under way (load.go); loaded
	// is closed when it ends.
	loading bool
	loaded  chan struct{}
	// compact: master's entries are being copied into a new arena
	// (arena.go); it holds the changes made to master since.
	compact *compaction
	// tooBig: the table alone outgrew the budget; it is not loaded again.
	tooBig  bool
	lastUse atomic.Int64 // when a scan or a write last used it, since epoch
}

// SlimMax is the largest value a slim entry keeps: a key, a name, a
// number or a GUID fit; a serialized document does not.
const SlimMax = 64

// Init turns the cache on with a budget in bytes; 0 or less leaves it off.
func (fc *Cache) Init(budget int64) {
	fc.budget, fc.tables, fc.epoch = max(budget, 0), map[int64]*fcTable{}, time.Now()
}

// On says whether the cache is on: when it is off, the engine records no
// changes for it and scans read SQLite.
func (fc *Cache) On() bool { return fc.budget > 0 }

// Budget is the cache's bound in bytes; 0 when it is off.
func (fc *Cache) Budget() int64 { return fc.budget }

// Committed is the number of the last commit applied (Commit). A reader
// reads it before its snapshot begins (p1, as Lookup and Loader.Begin
// take it).
func (fc *Cache) Committed() int64 { return fc.committed.Load() }

// Op is one change a write transaction made, applied after COMMIT (Put,
// Delete, Create, Drop): for a put, the entity (its keys as the write
// gave them, which the cache copies then) and the properties left out of
// its slim form.
type Op struct {
	tid    int64
	kind   opKind
	pk, rk string
	slim   []byte
	ts     int64
	big    bool
	large  []string
	// known: the table's large when the put was recorded, whose names
	// large leaves out; commit puts them back should the table's tree
	// have been replaced meanwhile (forgotten, then loaded).
	known map[string]bool
}

type opKind uint8

const (
	opPut opKind = iota
	opDelete
	opCreate // a new, empty table
	opDrop   // the table left the account
	// opTouch: an entity of a table the cache did not hold was written;
	// the op carries no entity (Put).
	opTouch
)

// slimOf returns the slim form of stored properties and the names of
// the properties it left out, except those known already holds (a
// table's large, which is never changed): a write of tablebench's entity
// allocated the name of its long property and a slice for it every time.
// Properties that are not well formed are kept whole: a filter reading
// them fails as it would through SQLite.
func slimOf(props []byte, known map[string]bool) (slim []byte, big bool, large []string) {
	slim, big, err := store.SlimProps(props, SlimMax, func(name []byte) {
		if !known[string(name)] {
			large = append(large, string(name))
		}
	})
	if err != nil {
		return props, false, nil
	}
	return slim, big, large
}

// Put, Delete, Create and Drop record a write transaction's changes, as
// the engine makes them; the engine calls them only when the cache is on.
//
// Put makes the slim form of the entity only for a table the cache
// may hold when the commit applies it (holds); for any other — over the
// budget, evicted, after a restore, never scanned — it records the write
// as opTouch, which Begin still counts as the table's last write, so that
// a load that raced it is discarded. Should the table's tree be installed
// between the two anyway (a load that read the table before this write
// and installed it before Begin), Commit finds an opTouch for a cached
// table and forgets its tree: the write is not in it.
//
// pk, rk and props are the stored forms, which the op refers to until
// Commit copies what the cache keeps.
func (fc *Cache) Put(tid int64, pk, rk string, ts int64, props []byte) Op {
	held, known := fc.holds(tid)
	if !held {
		return Op{tid: tid, kind: opTouch}
	}
	slim, big, large := slimOf(props, known)
	return Op{tid: tid, kind: opPut, pk: pk, rk: rk, slim: slim, ts: ts, big: big, large: large, known: known}
}

// holds reports whether tid's tree may be there when a write made now
// commits: it is cached, being loaded, or unknown to the cache (a table
// created in the writer's current group is cached from its commit on);
// and the names its tree has large values of.
func (fc *Cache) holds(tid int64) (bool, map[string]bool) {
	fc.mu.RLock()
	defer fc.mu.RUnlock()
	st := fc.tables[tid]
	if st == nil {
		return true, nil
	}
	return st.master != nil || st.loading, st.large
}

// Touch records writes of tid's entities that the transaction does not
// record one by one (the engine bounds how many changes a transaction
// records): Begin counts it as the table's last write, and Commit forgets
// the table's tree, which a later scan loads again, as for the opTouch of
// a Put to a table the cache did not hold.
func Touch(tid int64) Op { return Op{tid: tid, kind: opTouch} }

// Entity reports whether op records a write of an entity (Put, Delete,
// Touch) rather than of a table (Create, Drop), and its table.
func (op Op) Entity() (tid int64, ok bool) {
	return op.tid, op.kind == opPut || op.kind == opDelete || op.kind == opTouch
}

// Delete records the delete of an entity, by its stored keys.
func Delete(tid int64, pk, rk string) Op { return Op{tid: tid, kind: opDelete, pk: pk, rk: rk} }

// Create records a new, empty table: cached from its commit on.
func Create(tid int64) Op { return Op{tid: tid, kind: opCreate} }

// Drop records that a table left its account.
func Drop(tid int64) Op { return Op{tid: tid, kind: opDrop} }

// Begin numbers the commit about to be made and records it as the last
// write of every table ops touch (and of all, for a bulk change, such as
// a snapshot restore); the writer calls it before COMMIT.
func (fc *Cache) Begin(ops []Op, all bool) int64 {
	n := fc.committed.Load() + 1
	if !fc.On() || (len(ops) == 0 && !all) {
		return n
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if all {
		fc.lastAll = n
	}
	for _, op := range ops {
		fc.table(op.tid).lastWrite = n
	}
	return n
}

// table returns tid's state, adding it; under mu.
func (fc *Cache) table(tid int64) *fcTable {
	st := fc.tables[tid]
	if st == nil {
		st = &fcTable{}
		fc.tables[tid] = st
	}
	return st
}

// Commit applies commit n's changes after COMMIT (ok) or, when COMMIT
// failed, forgets the tables it touched, whose state is now unknown. The
// writer calls it for every Begin, ops and all as they were.
func (fc *Cache) Commit(n int64, ops []Op, all, ok bool) {
	defer fc.committed.Store(n)
	if !fc.On() || (len(ops) == 0 && !all) {
		return
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if all || !ok {
		for tid, st := range fc.tables {
			if all || slices.ContainsFunc(ops, func(op Op) bool { return op.tid == tid }) {
				fc.forget(st)
			}
		}
		if !ok {
			return
		}
		if all {
			// lastAll now stands for every table's last write.
			clear(fc.tables)
		}
	}
	var touched []*fcTable
	for _, op := range ops {
		st := fc.table(op.tid)
		switch op.kind {
		case opCreate:
			fc.forget(st)
			st.master, st.tooBig = newTree(), false
		case opDrop:
			// Its lastWrite may go too: a table that comes back under
			// the same id starts with opCreate or is loaded after this
			// commit.
			fc.forget(st)
			delete(fc.tables, op.tid)
			continue
		}
		if st.master == nil {
			continue
		}
		if op.kind == opTouch {
			// Installed since Put, without this write: see Put.
			fc.forget(st)
			continue
		}
		if op.kind == opPut {
			st.addLarge(op.large)
			st.keepLarge(op.known)
		}
		st.master.apply(op)
		if st.compact != nil {
			rec := st.compact.note(op)
			st.compBytes += rec
			fc.total += rec
		}
		if !slices.Contains(touched, st) {
			touched = append(touched, st)
		}
	}
	now := int64(time.Since(fc.epoch))
	for _, st := range touched {
		if st.master == nil {
			continue
		}
		if st.compact == nil && st.master.a.wasteful(fc.hook().CompactEarly) && fc.compactionFits(st) {
			fc.startCompaction(st)
		}
		b := st.master.bytes()
		fc.total += b - st.bytes
		st.bytes = b
		st.ver = n
		st.lastUse.Store(now)
		// A tree published before this commit is never handed out again
		// (Lookup gives only the current version), and it would keep the
		// nodes this commit's writes copied: as many as the tree has,
		// after enough writes (budget.go).
		st.pub = nil
	}
	fc.evict()
}

// forget drops a table's trees, and its compaction; under mu.
func (fc *Cache) forget(st *fcTable) {
	if st.compact != nil {
		st.compact.dropped.Store(true)
	}
	fc.total -= st.bytes + st.compBytes
	st.master, st.pub, st.bytes, st.compBytes, st.large, st.compact = nil, nil, 0, 0, nil, nil
}

// addLarge adds names to st.large, replacing the map; under mu.
func (st *fcTable) addLarge(names []string) {
	for i, n := range names {
		if !st.large[n] {
			m := make(map[string]bool, len(st.large)+len(names))
			for k := range st.large {
				m[k] = true
			}
			for _, n := range names[i:] {
				m[n] = true
			}
			st.large = m
			return
		}
	}
}

// keepLarge adds to st.large the names of known it lacks: a superset of
// the names only sends more scans to SQLite. Under mu.
func (st *fcTable) keepLarge(known map[string]bool) {
	var missing []string
	for n := range known {
		if !st.large[n] {
			missing = append(missing, n)
		}
	}
	st.addLarge(missing)
}

// evict drops the tables used least recently (the largest first among
// equals) until the cache is within 90% of its
// budget; under mu.
func (fc *Cache) evict() {
	if fc.total <= fc.budget {
		return
	}
	var cached []*fcTable
	for _, st := range fc.tables {
		if st.master != nil {
			cached = append(cached, st)
		}
	}
	slices.SortFunc(cached, func(a, b *fcTable) int {
		if d := a.lastUse.Load() - b.lastUse.Load(); d != 0 {
			return int(min(max(d, -1), 1))
		}
		return int(min(max(b.bytes-a.bytes, -1), 1))
	})
	for _, st := range cached {
		if fc.total <= fc.budget*9/10 {
			break
		}
		// Too big to load again if its live entries alone would not
		// stay: a table forgotten for its dead bytes is loaded without
		// them.
		st.tooBig = treeBytes(st.master.a.live, st.master.Len()) > fc.budget*9/10
		fc.forget(st)
	}
}

// Tree is a table's cached entities as one scan reads them (Lookup): a
// copy-on-write clone that later commits do not change. Its zero value
// holds no table.
type Tree struct {
	t     *ctree
	large map[string]bool
}

// Cached says whether t holds a table.
func (t Tree) Cached() bool { return t.t != nil }

// Large says whether some entity of the table has a value of property
// name too large for its slim form: a filter that reads name cannot be
// decided on the cache and scans SQLite.
func (t Tree) Large(name string) bool { return t.large[name] }

// Lookup returns the tree a scan of tid in a snapshot that began after
// commit p1 (Committed) may read, or none; load says the table is not
// cached and could be loaded (Load); wait, that it is being loaded, and
// is closed when the load ends.
func (fc *Cache) Lookup(tid, p1 int64) (tree Tree, load bool, wait <-chan struct{}) {
	if !fc.On() {
		return Tree{}, false, nil
	}
	fc.mu.RLock()
	st := fc.tables[tid]
	switch {
	case st == nil:
		fc.mu.RUnlock()
		return Tree{}, true, nil
	case st.master == nil && st.loading:
		defer fc.mu.RUnlock()
		return Tree{}, false, st.loaded
	case st.master == nil:
		fc.mu.RUnlock()
		return Tree{}, !st.tooBig, nil
	}
	if last := max(st.lastWrite, fc.lastAll); last > p1 || last > st.ver {
		fc.mu.RUnlock()
		return Tree{}, false, nil // written since: the writer is about to apply it
	}
	st.lastUse.Store(int64(time.Since(fc.epoch)))
	if st.pub != nil && st.pubVer == st.ver {
		defer fc.mu.RUnlock()
		return Tree{st.pub, st.large}, false, nil
	}
	// Publish: cloning changes master, so it takes the lock the writer
	// changes master under. Nothing can have written the table since the
	// check above: a commit that did would have a lastWrite above p1.
	fc.mu.RUnlock()
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if st.master == nil || fc.tables[tid] != st {
		return Tree{}, false, nil // dropped meanwhile
	}
	if last := max(st.lastWrite, fc.lastAll); last > p1 || last > st.ver {
		return Tree{}, false, nil
	}
	if st.pub == nil || st.pubVer != st.ver {
		st.pub, st.pubVer = st.master.clone(), st.ver
	}
	return Tree{st.pub, st.large}, false, nil
}

// Forget drops tid's tree, as eviction does: its scans read SQLite until
// it is loaded again (tests).
func (fc *Cache) Forget(tid int64) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if st := fc.tables[tid]; st != nil {
		fc.forget(st)
	}
}

// Stats is what the cache holds, and what it has done.
type Stats struct {
	Bytes       int64 // counted against the budget (budget.go)
	Tables      int   // tables cached
	Compactions int64 // compactions that replaced a table's tree (arena.go)
}

// Stats reports what the cache holds now.
func (fc *Cache) Stats() Stats {
	fc.mu.RLock()
	defer fc.mu.RUnlock()
	s := Stats{Bytes: fc.total, Compactions: fc.installed.Load()}
	for _, st := range fc.tables {
		if st.master != nil {
			s.Tables++
		}
	}
	return s
}

// Check verifies the cache's count of its bytes (budget.go): each cached
// table's against its tree, and the total against the tables', with no
// load under way (a dropped table's load is counted until it ends).
func (fc *Cache) Check() error {
	fc.mu.RLock()
	defer fc.mu.RUnlock()
	var sum int64
	for tid, st := range fc.tables {
		if st.master != nil && st.bytes != st.master.bytes() {
			return fmt.Errorf("filter cache: table %d counts %d bytes, its tree holds %d", tid, st.bytes, st.master.bytes())
		}
		sum += st.bytes + st.compBytes + st.loadBytes
	}
	if sum != fc.total {
		return fmt.Errorf("filter cache: %d bytes counted in all, the tables count %d", fc.total, sum)
	}
	if fc.total > fc.budget {
		return fmt.Errorf("filter cache: %d bytes counted, over the budget of %d", fc.total, fc.budget)
	}
	return nil
}

// Keys renders a table's cached keys, stored form, as "pk|rk;" each in
// key order (tests compare it with SQLite's); false if it is not cached.
func (fc *Cache) Keys(tid int64) (string, bool) {
	fc.mu.RLock()
	defer fc.mu.RUnlock()
	st := fc.tables[tid]
	if st == nil || st.master == nil {
		return "", false
	}
	var b strings.Builder
	v := st.master.a.view()
	st.master.Ascend(func(e centry) bool {
		b.WriteString(v.pk(e) + "|" + v.rk(e) + ";")
		return true
	})
	return b.String(), true
}
