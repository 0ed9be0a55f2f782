package sqlite

import (
	"context"
	"errors"
	"os"
	"unsafe"
)

// Loading tables into the filter cache (filtercache.go).
//
// A table the running process did not write from its creation is read into
// the cache in one snapshot: the tables of a database of moderate size at
// Open (preload), any other after its first scan that examined many of
// its entities. A scan that finds its table being loaded waits for the
// load instead of reading SQLite beside it: at a million entities a scan
// through SQLite costs about as much as the load, so the first scans after
// a restart read the table from disk once, not once for each of them and
// again for the cache (docs/benchmarks.md, issue 25).

// errLoadRaced ends a load that a write to its table overtook; errTooBig
// one of a table larger than the whole cache; errNoRoom one the tables
// cached already leave no room for (reserveLoad).
var (
	errLoadRaced = errors.New("filter cache: table written during load")
	errTooBig    = errors.New("filter cache: table larger than the cache")
	errNoRoom    = errors.New("filter cache: no room for the table")
)

// preloadFactor bounds the databases whose tables Open loads: a database
// file of at most this many times the cache's budget. Entries are a third
// to a half of the stored rows' size (values over slimMax bytes stay on
// disk), so such a database mostly fits; a larger one would make Open read
// the disk for tables that do not fit anyway, and their first scans load
// them as before.
const preloadFactor = 4

// preloadOn and loadHook are for tests: preloadOn false turns preload
// off; loadHook, when set, runs before a load reads its table.
var (
	preloadOn = true
	loadHook  func(tid int64)
)

// preload loads the tables of a database opened from disk, one after
// another, in the background, as Azurite reads its whole database at
// start-up: the first scan of each then reads memory. It stops once the
// cache is nine-tenths full. Open calls it before returning, so that
// Close waits for it.
func (s *Store) preload() {
	fc := &s.fc
	if !fc.on() || s.mem != nil || !preloadOn {
		return
	}
	fi, err := os.Stat(s.path)
	if err != nil {
		return
	}
	size := fi.Size()
	// After a kill the write-ahead log may hold most of the data, not
	// yet copied into the file.
	if wal, err := os.Stat(s.path + "-wal"); err == nil {
		size += wal.Size()
	}
	if size > preloadFactor*fc.budget {
		return
	}
	fc.loads.Add(1)
	go func() {
		defer fc.loads.Done()
		var ids []int64
		err := s.view(context.Background(), s.rp, func(tx *Tx) error {
			rows, err := tx.query(`SELECT id FROM tables WHERE account <> ? ORDER BY id`, retiredAccount)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				ids = append(ids, rows.Int64(0))
			}
			return rows.Close()
		})
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
			if st := s.startLoad(id); st != nil {
				s.runLoad(id, st)
			}
		}
	}()
}

// loadTable loads tid in the background, unless it is cached, being
// loaded, too big or the store is closing.
func (s *Store) loadTable(tid int64) {
	if st := s.startLoad(tid); st != nil {
		go s.runLoad(tid, st)
	}
}

// startLoad marks tid as being loaded and returns its state, which the
// caller passes to runLoad; or nil if it needs no load. It counts the
// load under fc.mu after reading closed, so that Close, which sets closed
// and then passes the lock, waits for every load that started.
func (s *Store) startLoad(tid int64) *fcTable {
	fc := &s.fc
	fc.mu.Lock()
	defer fc.mu.Unlock()
	st := fc.table(tid)
	if st.master != nil || st.loading || st.tooBig || s.closed.Load() {
		return nil
	}
	st.loading, st.loaded = true, make(chan struct{})
	fc.loads.Add(1)
	return st
}

// runLoad reads the table and installs its tree; scans waiting for it
// (lookup's wait) go on once it is installed or given up. It returns why
// the load stopped, if it did (tests).
func (s *Store) runLoad(tid int64, st *fcTable) error {
	fc := &s.fc
	defer fc.loads.Done()
	if loadHook != nil {
		loadHook(tid)
	}
	tree, large, bytes, p1, err := s.readTable(tid, st)
	fc.mu.Lock()
	defer fc.mu.Unlock()
	// The tree replaces its reservation, if it is installed below.
	fc.total -= st.loadBytes
	st.loadBytes = 0
	// Waiters wake now but read the cache only after the unlock, when
	// the tree is installed.
	st.loading = false
	close(st.loaded)
	if errors.Is(err, errTooBig) && fc.tables[tid] == st {
		st.tooBig = true // every scan would read it again, in vain
	}
	// Installed only if nothing wrote the table since the snapshot it
	// was read in (the writer would have applied the change to a tree
	// that did not exist yet), and if it fits.
	if err != nil || fc.tables[tid] != st || max(st.lastWrite, fc.lastAll) > p1 || st.master != nil || fc.total+bytes > fc.budget {
		return err
	}
	st.master, st.pub, st.ver, st.bytes, st.large = tree, nil, p1, bytes, large
	fc.total += bytes
	return nil
}

// readTable reads every entity of tid in one snapshot.
func (s *Store) readTable(tid int64, st *fcTable) (tree *ctree, large map[string]bool, bytes, p1 int64, err error) {
	// Through a reader without the memory map: a load reads the whole
	// table once, and a map would add every page of it to the resident
	// set (as the kernel's page cache, but counted as the process's).
	err = s.view(context.Background(), s.rp, func(tx *Tx) error {
		p1 = tx.p1
		// The snapshot begins at the first read; the table's last write
		// is read after it (see the top of this file).
		var n int
		if err := tx.queryRow(`SELECT count(*) FROM tables WHERE id = ? AND account <> ?`, tid, retiredAccount).Scan(&n); err != nil {
			return err
		}
		s.fc.mu.RLock()
		raced := s.fc.tables[tid] != st || max(st.lastWrite, s.fc.lastAll) > p1
		s.fc.mu.RUnlock()
		if raced || n == 0 { // written since, or not a live table
			return errLoadRaced
		}
		rows, err := tx.query(`SELECT pk, rk, ts, props FROM entities WHERE tid = ? ORDER BY pk, rk`, tid)
		if err != nil {
			return err
		}
		defer rows.Close()
		tree, large = newTree(), map[string]bool{} // in key order, as scans read them
		var reserved int64
		step := s.fc.loadStep()
		for i := 0; rows.Next(); i++ {
			if i%4096 == 0 && s.closed.Load() {
				return ErrClosed
			}
			// The tree counts against the budget as it grows.
			if bytes = tree.bytes(); bytes-reserved >= step || i == 0 {
				if err := s.fc.reserveLoad(st, bytes); err != nil {
					return err // leave it to SQLite
				}
				reserved = bytes
			}
			pk, rk := rows.Bytes(0), rows.Bytes(1) // put copies them
			slim, big, names := slimOf(rows.Bytes(3), large)
			tree.ReplaceOrInsert(tree.a.put(unsafe.String(unsafe.SliceData(pk), len(pk)), unsafe.String(unsafe.SliceData(rk), len(rk)), slim, rows.Int64(2), big))
			for _, n := range names {
				large[n] = true
			}
		}
		bytes = tree.bytes()
		return rows.Close()
	})
	return tree, large, bytes, p1, err
}
