package filtercache

import (
	"errors"
	"unsafe"
)

// Loading tables into the filter cache (filtercache.go).
//
// A table the running process did not write from its creation is read into
// the cache in one snapshot: the tables of a database of moderate size at
// Open (Preload), any other after its first scan that examined many of
// its entities (Load). A scan that finds its table being loaded waits for
// the load instead of reading SQLite beside it: at a million entities a
// scan through SQLite costs about as much as the load, so the first scans
// after a restart read the table from disk once, not once for each of
// them and again for the cache (docs/benchmarks.md, issue 25).
//
// The engine reads the table (a Reader); the cache decides whether to
// load, counts the tree against the budget as it grows, and installs it
// only if no write overtook the snapshot it was read in.

// errLoadRaced ends a load that a write to its table overtook; ErrTooBig
// one of a table larger than the whole cache; ErrNoRoom one the tables
// cached already leave no room for (reserveLoad).
var (
	errLoadRaced = errors.New("filter cache: table written during load")
	ErrTooBig    = errors.New("filter cache: table larger than the cache")
	ErrNoRoom    = errors.New("filter cache: no room for the table")
)

// A Reader reads table tid into l in one snapshot: once the snapshot has
// begun it calls l.Begin with the commits done before it (Committed, read
// before the snapshot began), then l.Add for each entity in key order. An
// error from l ends the read and is returned; so does any error of the
// engine's (a table no longer live, a closing store).
type Reader func(tid int64, l *Loader) error

// Loader is one load's tree as the Reader fills it.
type Loader struct {
	fc       *Cache
	tid      int64
	st       *fcTable
	p1       int64
	begun    bool
	tree     *ctree
	large    map[string]bool
	reserved int64
	step     int64
	n        int
}

// Begin starts the load in a snapshot that began after commit p1; it
// fails if a write to the table has come since the load started.
func (l *Loader) Begin(p1 int64) error {
	fc := l.fc
	fc.mu.RLock()
	raced := fc.tables[l.tid] != l.st || max(l.st.lastWrite, fc.lastAll) > p1
	fc.mu.RUnlock()
	if raced {
		return errLoadRaced
	}
	l.p1, l.begun = p1, true
	l.tree, l.large = newTree(), map[string]bool{} // in key order, as scans read them
	l.step = fc.loadStep()
	return nil
}

// Add puts an entity, its stored keys and properties, into the tree
// (which copies them); ErrTooBig or ErrNoRoom when the cache has no room
// for the tree so far: the engine stops reading, and leaves the table to
// SQLite.
func (l *Loader) Add(pk, rk []byte, ts int64, props []byte) error {
	// The tree counts against the budget as it grows.
	if bytes := l.tree.bytes(); bytes-l.reserved >= l.step || l.n == 0 {
		if err := l.fc.reserveLoad(l.st, bytes); err != nil {
			return err
		}
		l.reserved = bytes
	}
	l.n++
	slim, big, names := slimOf(props, l.large)
	l.tree.ReplaceOrInsert(l.tree.a.put(unsafe.String(unsafe.SliceData(pk), len(pk)), unsafe.String(unsafe.SliceData(rk), len(rk)), slim, ts, big))
	for _, n := range names {
		l.large[n] = true
	}
	return nil
}

// Preload loads tables one after another in the background, as Azurite
// reads its whole database at start-up: the first scan of each then reads
// memory. list gives their ids; it stops once the cache is nine-tenths
// full. StopLoads waits for it.
func (fc *Cache) Preload(list func() ([]int64, error), read Reader) {
	if !fc.On() {
		return
	}
	fc.loads.Add(1)
	go func() {
		defer fc.loads.Done()
		ids, err := list()
		if err != nil {
			return // the first scans load their tables instead
		}
		for _, id := range ids {
			fc.mu.RLock()
			full := fc.total >= fc.budget*9/10
			fc.mu.RUnlock()
			if full {
				return
			}
			if st := fc.startLoad(id); st != nil {
				fc.runLoad(id, st, read)
			}
		}
	}()
}

// Load loads tid in the background, unless it is cached, being loaded,
// too big or the cache is stopping.
func (fc *Cache) Load(tid int64, read Reader) {
	if st := fc.startLoad(tid); st != nil {
		go fc.runLoad(tid, st, read)
	}
}

// StopLoads refuses loads from now on and waits for those under way; the
// engine calls it as it closes, before the connections a Reader reads
// through.
func (fc *Cache) StopLoads() {
	fc.mu.Lock()
	fc.closing = true
	fc.mu.Unlock()
	fc.loads.Wait()
}

// WaitLoads waits for the loads under way (tests, benchmarks).
func (fc *Cache) WaitLoads() { fc.loads.Wait() }

// WaitCompactions waits for the compactions under way (arena.go); the
// engine calls it as it closes, once its writer, which starts them, has
// stopped.
func (fc *Cache) WaitCompactions() { fc.compacts.Wait() }

// startLoad marks tid as being loaded and returns its state, which the
// caller passes to runLoad; or nil if it needs no load. It counts the
// load under fc.mu after reading closing, so that StopLoads, which sets
// closing under the lock, waits for every load that started.
func (fc *Cache) startLoad(tid int64) *fcTable {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if !fc.On() || fc.closing {
		return nil
	}
	st := fc.table(tid)
	if st.master != nil || st.loading || st.tooBig {
		return nil
	}
	st.loading, st.loaded = true, make(chan struct{})
	fc.loads.Add(1)
	return st
}

// runLoad reads the table and installs its tree; scans waiting for it
// (Lookup's wait) go on once it is installed or given up. It returns why
// the load stopped, if it did.
func (fc *Cache) runLoad(tid int64, st *fcTable, read Reader) error {
	defer fc.loads.Done()
	if h := fc.hook().Load; h != nil {
		h(tid)
	}
	l := &Loader{fc: fc, tid: tid, st: st}
	err := read(tid, l)
	if err == nil && !l.begun {
		err = errLoadRaced // the Reader read nothing
	}
	var bytes int64
	if err == nil {
		bytes = l.tree.bytes()
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	// The tree replaces its reservation, if it is installed below.
	fc.total -= st.loadBytes
	st.loadBytes = 0
	// Waiters wake now but read the cache only after the unlock, when
	// the tree is installed.
	st.loading = false
	close(st.loaded)
	if errors.Is(err, ErrTooBig) && fc.tables[tid] == st {
		st.tooBig = true // every scan would read it again, in vain
	}
	// Installed only if nothing wrote the table since the snapshot it
	// was read in (the writer would have applied the change to a tree
	// that did not exist yet), and if it fits.
	if err != nil || fc.tables[tid] != st || max(st.lastWrite, fc.lastAll) > l.p1 || st.master != nil || fc.total+bytes > fc.budget {
		return err
	}
	st.master, st.pub, st.ver, st.bytes, st.large = l.tree, nil, l.p1, bytes, l.large
	fc.total += bytes
	return nil
}
