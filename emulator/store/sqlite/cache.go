package sqlite

import (
	"context"
	"os"

	"github.com/tableemu/tableemu/emulator/store/sqlite/filtercache"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// The engine's side of the filter cache (package filtercache): every
// table's entities in memory, which match scans read instead of SQLite.
// The engine records each write's changes for it (notePut, noteDelete,
// noteTable), numbers and applies them around COMMIT (runGroup), asks it
// for a table's tree when a scan starts (scanEntities), and lends it
// SQLite: the entities of a page with large values (scanCached) and whole
// tables to load (readTable).

// cacheScans lets match scans read the filter cache; tests turn it off
// to compare with the scan through SQLite.
var cacheScans = true

// loadMinRows is how many entities a scan must examine in SQLite before
// the table it read is loaded into the cache.
var loadMinRows = 1000

// notePut, noteDelete and noteTable record a write transaction's changes
// for the filter cache, which applies them once the group commits
// (filtercache.Cache.Put); pk and rk are stored keys.
func (tx *Tx) notePut(tid int64, pk, rk string, ts int64, props []byte) {
	if tx.s.fc.On() {
		if tx.cacheTouched != nil || len(tx.cacheOps) >= maxCacheOps {
			tx.touch(tid)
			return
		}
		tx.cacheOps = append(tx.cacheOps, tx.s.fc.Put(tid, pk, rk, ts, props))
	}
}

func (tx *Tx) noteDelete(tid int64, pk, rk string) {
	if tx.s.fc.On() {
		if tx.cacheTouched != nil || len(tx.cacheOps) >= maxCacheOps {
			tx.touch(tid)
			return
		}
		tx.cacheOps = append(tx.cacheOps, filtercache.Delete(tid, pk, rk))
	}
}

// maxCacheOps bounds the changes a write transaction records for the
// filter cache one by one: each put holds the entity's slim form until
// the commit, so that a transaction writing a whole table (an import,
// emulator/transfer) would hold a copy of it (40 MB live for 100,000
// entities of 1 KiB, half the import's heap). Past the bound, the
// transaction records each table it writes once, as a Touch: the cache
// forgets those tables at the commit and loads them again when a scan
// wants them (load.go), as it does tables it did not hold. A $batch
// writes at most 100 entities: requests never reach it.
const maxCacheOps = 10_000

// touch records a write of tid's entities by a transaction past
// maxCacheOps. The first time, the entity changes recorded so far give
// way to one Touch per table, in place of the table's first change.
func (tx *Tx) touch(tid int64) {
	if tx.cacheTouched == nil {
		tx.cacheTouched = make(map[int64]bool)
		ops := make([]filtercache.Op, 0, 8)
		for _, op := range tx.cacheOps {
			t, entity := op.Entity()
			switch {
			case !entity:
				ops = append(ops, op) // a table created or dropped
			case !tx.cacheTouched[t]:
				tx.cacheTouched[t] = true
				ops = append(ops, filtercache.Touch(t))
			}
		}
		tx.cacheOps = ops
	}
	if !tx.cacheTouched[tid] {
		tx.cacheTouched[tid] = true
		tx.cacheOps = append(tx.cacheOps, filtercache.Touch(tid))
	}
}

// noteTable records a table created (filtercache.Create) or gone
// (filtercache.Drop).
func (tx *Tx) noteTable(op filtercache.Op) {
	if tx.s.fc.On() {
		tx.cacheOps = append(tx.cacheOps, op)
	}
}

// cacheable says whether a filter can be decided on the tree's slim
// entries: it reads no property some entity has a value of too large
// for them.
func cacheable(f odata.Expr, tree filtercache.Tree) bool {
	ok := true
	known := filterNames(f, func(n string) { ok = ok && !tree.Large(n) })
	return ok && known
}

// scanCached is the match scan of plan p (planMatch) over a table's
// cached entities (filtercache.Tree.Scan): pages, continuations and
// counts as the statement would give them. An entity whose large values
// the cache left out is read from SQLite when the page returns it, in
// the transaction's snapshot, which holds the same version.
func (tx *Tx) scanCached(tree filtercache.Tree, t Table, p *plannedQuery, top int, fn func(*edm.Entity) error) (examined, n int, next *Key, err error) {
	// The entities read from SQLite here are scattered over the file, a
	// page each. Through the memory map every such page would stay in the
	// resident set while the map lasts (a million entities' scans held
	// 780 MiB of it: docs/benchmarks.md), where with read() they are the
	// kernel's page cache and 2 MiB of the reader's. SQLite applies
	// mmap_size when the pragma is prepared, to the connection's pager
	// (later pages are read, pages already mapped stay until it remaps),
	// so execScript, which prepares each time, runs it.
	unmapped := false
	defer func() {
		if unmapped {
			if merr := tx.c.execScript(context.Background(), "PRAGMA "+mmapOn); merr != nil && err == nil {
				err = merr
			}
		}
	}()
	big := func(pk, rk string) (props []byte, err error) {
		if tx.c.mapped && !unmapped {
			if err := tx.c.execScript(tx.ctx, "PRAGMA mmap_size = 0"); err != nil {
				return nil, err
			}
			unmapped = true
		}
		err = tx.queryRow(`SELECT props FROM entities WHERE tid = ? AND pk = ? AND rk = ?`, t.ID, pk, rk).Scan(&props)
		return props, err
	}
	return tree.Scan(&filtercache.Scan{Conds: p.bounds.Conds, Match: p.match, Top: top, Budget: scanBudget, Big: big}, fn)
}

// preloadFactor bounds the databases whose tables Open loads: a database
// file of at most this many times the cache's budget. Entries are a third
// to a half of the stored rows' size (values over filtercache.SlimMax
// bytes stay on disk), so such a database mostly fits; a larger one would
// make Open read the disk for tables that do not fit anyway, and their
// first scans load them as before.
const preloadFactor = 4

// preloadOn is for tests: false turns preload off.
var preloadOn = true

// preload loads the tables of a database opened from disk into the
// cache, in the background (filtercache.Cache.Preload). Open calls it
// before returning, so that Close waits for it.
func (s *Store) preload() {
	if !s.fc.On() || s.mem != nil || !preloadOn {
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
	if size > preloadFactor*s.fc.Budget() {
		return
	}
	s.fc.Preload(func() (ids []int64, err error) {
		err = s.view(context.Background(), s.rp, func(tx *Tx) error {
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
		return ids, err
	}, s.readTable)
}

// loadTable loads tid into the cache in the background, unless it is
// cached, being loaded or too big.
func (s *Store) loadTable(tid int64) { s.fc.Load(tid, s.readTable) }

// readTable reads every entity of tid in one snapshot into a load
// (filtercache.Reader).
func (s *Store) readTable(tid int64, l *filtercache.Loader) error {
	// Through a reader without the memory map: a load reads the whole
	// table once, and a map would add every page of it to the resident
	// set (as the kernel's page cache, but counted as the process's).
	return s.view(context.Background(), s.rp, func(tx *Tx) error {
		// The snapshot begins at the first read; the table's last write
		// is read after it (see the top of filtercache.go).
		var n int
		if err := tx.queryRow(`SELECT count(*) FROM tables WHERE id = ? AND account <> ?`, tid, retiredAccount).Scan(&n); err != nil {
			return err
		}
		if err := l.Begin(tx.p1); err != nil {
			return err // written since
		}
		if n == 0 {
			return ErrTableNotFound // not a live table
		}
		rows, err := tx.query(`SELECT pk, rk, ts, props FROM entities WHERE tid = ? ORDER BY pk, rk`, tid)
		if err != nil {
			return err
		}
		defer rows.Close()
		for i := 0; rows.Next(); i++ {
			if i%4096 == 0 && s.closed.Load() {
				return ErrClosed
			}
			if err := l.Add(rows.Bytes(0), rows.Bytes(1), rows.Int64(2), rows.Bytes(3)); err != nil {
				return err // leave it to SQLite
			}
		}
		return rows.Close()
	})
}
