// Package sqlite is the embedded store engine: tables and entities in one
// SQLite file (modernc.org/sqlite, pure Go, so the binary stays static).
// Every store operation runs inside a View or Update closure, and each
// closure is one SQLite transaction (Update groups the closures waiting at
// one moment into one commit, each in its own savepoint: commit.go).
// Open returns it as a *store.Store, the contract the emulator calls.
//
// A query's path, file by file: engine.go (the contract's calls onto this
// engine) → store.go (View and Update, the readers and the writer) →
// query.go (QueryEntities) → plan.go (which path: a primary-key range,
// an automatic index of autoindex.go, or a match scan of scanfunc.go),
// with sqlfilter.go compiling the filter to SQL and servicecount.go
// counting what the service would have read → sqlite.go (SQLite's C API,
// the statements). A write: entities.go or tables.go, acl.go, service.go,
// snapshot.go inside Update, then commit.go (group commit) and cache.go
// (the filter cache written through). Around them: errclass.go (faults),
// gc.go (retired tables), lock*.go (the data directory's lock),
// memory*.go (--inMemoryPersistence), shared.go (the contract's names).
package sqlite

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/store/sqlite/filtercache"
	"github.com/tableemu/tableemu/odata/edm"
)

// FileName is the database file created under Options.Dir.
const FileName = "tableemu.sqlite"

// Options configure Open.
type Options struct {
	// Dir is the directory holding the database file; created if missing.
	Dir string
	// InMemory keeps everything in memory: the database lives in a private
	// directory on a memory file system (memory.go), removed on Close.
	InMemory bool
	// Fsync makes every commit wait until the operating system reports the
	// write on stable storage (synchronous=FULL), so an acknowledged write
	// survives a power cut or an operating-system crash. Without it a
	// commit is written to the WAL before it is acknowledged but not
	// fsynced (synchronous=NORMAL): it survives any death of the process,
	// and after a power cut the database is consistent but may lack the
	// last commits. See docs/durability.md.
	Fsync bool
	// NoAutoIndex turns automatic property indexes off (autoindex.go).
	NoAutoIndex bool
	// FilterCache bounds, in bytes, the in-memory copy of the tables that
	// scans read (package filtercache); 0 means 512 MiB, a negative value
	// turns it off.
	FilterCache int64
	// CreationOrder keeps the creation order of entities, for queries
	// in store.OrderCreation (the cosmos profile, docs/cosmos.md): an
	// insert, or an upsert that inserts, takes its partition's next
	// creation sequence, read from the index entities_by_seq, which Open
	// creates if missing. Without it, as under Table storage, writes
	// cost what they did before the sequence existed (docs/benchmarks.md,
	// "Creation order") and leave it 0 (0004_creation_order.sql).
	CreationOrder bool
	// ExactTableNames tells table names apart by case, as Cosmos DB for
	// Table does (the cosmos profile, docs/cosmos.md, "table names"):
	// "Orders" and "orders" are two tables, and a name finds only the
	// table of that exact name (store.TableKey). Without it, as under
	// Table storage, one table answers a name in any case, with the
	// statements it always had.
	ExactTableNames bool
}

// Store is an open database. It is safe for concurrent use.
type Store struct {
	// w lends the single writer connection: SQLite allows one writer at a
	// time, and queueing writers here is cheaper than SQLITE_BUSY retries.
	// r and rp lend readers; in WAL mode they read a snapshot while the
	// writer commits. r's connections read through a memory map, which
	// suits scans; rp's read with pread, which suits closures that read a
	// few rows (ViewPoint): after every commit SQLite unmaps and remaps a
	// reader's map at its next transaction, which cost a point read more
	// than the read itself. The writer reads with pread too (Open).
	w, r, rp *pool
	path     string
	// mem is the private directory of an in-memory store (memory.go).
	mem *memoryDir
	// lastCommit is when the writer was last used, as time since epoch
	// (monotonic); ViewPoint reads it.
	epoch       time.Time
	lastCommit  atomic.Int64
	quietPeriod time.Duration
	lock        *dirLock // the data directory's (lock.go); nil in memory

	closed atomic.Bool
	// Update's writer goroutine (commit.go).
	writes     chan *writeReq
	quit       chan struct{}
	writerDone sync.WaitGroup
	// largestGroup is the most closures one commit has carried (tests).
	largestGroup atomic.Int64
	autoIdx      autoIndexes
	// creationOrder is Options.CreationOrder (entities.go).
	creationOrder bool
	// exactNames is Options.ExactTableNames (tables.go).
	exactNames bool
	tables     tableCache
	fc         filtercache.Cache // cache.go
	gc         collector         // deletes what resets and restores retire (gc.go)

	// cacheHits counts the pages answered from the filter cache,
	// cacheWaits the scans that waited for a load (tests).
	cacheHits, cacheWaits atomic.Int64
	// lastTS makes every Timestamp the store hands out unique and
	// increasing (docs/protocol.md 5): max(now, last+1) in ticks.
	clockMu sync.Mutex
	lastTS  int64
	now     func() time.Time
}

//go:embed migrations/*.sql
var migrations embed.FS

// maxReaders is how many read transactions of each kind (View, ViewPoint)
// run at once.
const maxReaders = 8

// mappedReaders is how many View transactions run at once: twice the
// processors, at least 4. Scans are CPU-bound, so more would only queue
// inside the runtime; and each mapped connection maps the pages it reads
// afresh, so that the resident set counts a page once per connection that
// read it.
var mappedReaders = max(4, 2*runtime.GOMAXPROCS(0))

// Open opens (creating if needed) the database and brings its schema up to
// date. A file that is not a tableemu database, or is damaged, is an error
// that names the file.
func Open(ctx context.Context, opts Options) (*store.Store, error) {
	s, err := openStore(ctx, opts)
	if err != nil {
		return nil, err
	}
	return store.New(engine{s}), nil
}

func openStore(ctx context.Context, opts Options) (*Store, error) {
	s := &Store{now: time.Now, writes: make(chan *writeReq), quit: make(chan struct{}), epoch: time.Now(), quietPeriod: defaultQuietPeriod}
	switch {
	case opts.InMemory:
		m, err := newMemoryDir()
		if err != nil {
			return nil, fmt.Errorf("in-memory database: %w", err)
		}
		if m == nil {
			s.openPrivateMemory()
		} else {
			// A memory file system has nothing to sync to.
			s.mem = m
			s.openPools(m.dir, "OFF", true)
		}
	default:
		if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
			return nil, &DirError{Dir: opts.Dir, Err: fmt.Errorf("cannot create data directory %s: %w", opts.Dir, err)}
		}
		var err error
		if s.lock, err = lockDir(opts.Dir); err != nil { // before the database is touched
			return nil, err
		}
		// Durability (docs/durability.md). In WAL mode SQLite appends
		// each commit to the WAL with write() before COMMIT returns, so
		// once the operating system holds it a killed process loses
		// nothing; FULL adds an fsync of the WAL to every commit, which
		// is what a power cut or a kernel crash needs, and costs most of
		// a single write's time on disk. NORMAL still fsyncs at
		// checkpoints, so the database stays consistent after a power
		// cut, missing at most the last commits.
		sync := "NORMAL"
		if opts.Fsync {
			sync = "FULL"
		}
		s.openPools(opts.Dir, sync, false)
	}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		err = fmt.Errorf("open %s: %w", s.path, err)
		if store.FaultOf(err) == store.FaultReadOnly && !opts.InMemory {
			// The file, or its -wal or -shm beside it, is not writable.
			err = &DirError{Dir: opts.Dir, File: s.path, Err: err}
		}
		return nil, err
	}
	s.exactNames = opts.ExactTableNames
	if opts.CreationOrder {
		s.creationOrder = true
		if err := s.withWriter(func(c *conn) error { return c.execScript(ctx, createSeqIndex) }); err != nil {
			s.Close()
			return nil, fmt.Errorf("open %s: %w", s.path, err)
		}
	}
	if err := s.autoIdx.load(ctx, s); err != nil {
		s.Close()
		return nil, fmt.Errorf("open %s: %w", s.path, err)
	}
	s.autoIdx.disabled = opts.NoAutoIndex
	switch {
	case opts.FilterCache == 0:
		s.fc.Init(filtercache.DefaultBudget)
	case opts.FilterCache > 0:
		s.fc.Init(opts.FilterCache)
	}
	s.writerDone.Add(1)
	go s.writer()
	s.startCollector()
	s.preload()
	return s, nil
}

// openPools prepares the writer and reader pools of the database in dir,
// each connection with synchronous=sync; connections open on first use.
// On a memory file system (inMemory) the writer's page cache too keeps
// SQLite's default 2 MiB: a cache there only duplicates pages that a pread
// copies from memory anyway, and the store's memory is the data plus what
// it holds besides.
func (s *Store) openPools(dir, sync string, inMemory bool) {
	// The page caches keep SQLite's default 2 MiB except the writer's on
	// disk. Tried and measured against it (docs/benchmarks.md, "Tried and not kept"): 8 MiB
	// per mapped reader, and checkpointing every 10,000 pages instead of
	// 1,000 — pages in the WAL are read with pread and copied into the
	// readers' caches, so both took private memory from 32–40 to 90–103
	// MiB, and the larger WAL slowed merges (109 -> 147 us of CPU) more
	// than it sped inserts.
	writerCache := "cache_size = -16000"
	if inMemory {
		writerCache = "cache_size = -2000"
	}
	const rw = sqlite3.SQLITE_OPEN_READWRITE | sqlite3.SQLITE_OPEN_CREATE
	s.path = filepath.Join(dir, FileName)
	// busy_timeout covers the checkpointer and a second process opening
	// the file. Scans read through a memory map instead of a read() per
	// page: a scan touches thousands of pages, and SQLite's default 2 MiB
	// page cache would otherwise re-read them with a system call each
	// (but see rp).
	pragmas := []string{"busy_timeout = 10000", "journal_mode = WAL", "synchronous = " + sync, "foreign_keys = 1"}
	mapped := slices.Concat(pragmas, []string{mmapOn})
	// The writer reads with pread into its own page cache, which its
	// commits do not invalidate: it touches few pages (the right edge of
	// the b-tree, the entities it rewrites), and a map of the file only
	// added every page a bulk load touched to the resident set.
	s.w = newPool(1, func() (*conn, error) {
		return openConn(s.path, rw, slices.Concat(pragmas, []string{writerCache}))
	})
	s.r = newPool(mappedReaders, func() (*conn, error) {
		c, err := openConn(s.path, sqlite3.SQLITE_OPEN_READWRITE, slices.Concat(mapped, []string{"query_only = 1"}))
		if c != nil {
			c.mapped, c.cacheMax = true, readerCacheMax
		}
		return c, err
	})
	s.rp = newPool(maxReaders, func() (*conn, error) {
		c, err := openConn(s.path, sqlite3.SQLITE_OPEN_READWRITE, slices.Concat(pragmas, []string{"query_only = 1"}))
		if c != nil {
			c.cacheMax = readerCacheMax
		}
		return c, err
	})
}

// readerCacheMax bounds what a reader's page cache keeps between
// transactions (conn.trimCache): SQLite's default cache_size of 2,000 KiB,
// which counts page bytes only, plus a tenth for the headers that
// sqlite3_db_status counts too.
const readerCacheMax = 2000 << 10 * 11 / 10

// mmapOn maps 2 GiB less 64 KiB of the file: SQLite clamps larger sizes
// to its SQLITE_MAX_MMAP_SIZE; pages past it are read with pread.
const mmapOn = "mmap_size = 2147418112"

// Path is the database file, or ":memory:" in memory mode.
func (s *Store) Path() string {
	if s.mem != nil {
		return ":memory:"
	}
	return s.path
}

// Close closes the database. Pending closures finish first: the writer
// stops after its group, and each reader is closed once it is returned.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.autoIdx.wg.Wait() // an index being built holds the writer
	// A load reads through a pool closed below.
	s.fc.StopLoads()
	s.stopCollector() // it writes through Update too
	close(s.quit)
	s.writerDone.Wait()
	s.fc.WaitCompactions() // the writer starts them
	pools := []*pool{s.w}
	if s.r != s.w {
		pools = append(pools, s.r, s.rp)
	}
	for _, p := range pools {
		p.closeAll()
	}
	s.lock.release() // last: the next holder may open the file at once
	if s.mem != nil {
		return s.mem.remove()
	}
	return nil
}

// withWriter lends fn the writer connection.
func (s *Store) withWriter(fn func(*conn) error) error {
	c, err := s.w.get()
	if err != nil {
		return err
	}
	defer func() {
		// Whatever fn did may have committed: point reads keep off the
		// mapped readers for a while (ViewPoint).
		s.lastCommit.Store(int64(time.Since(s.epoch)))
		s.w.put(c)
	}()
	return fn(c)
}

// migrate applies the embedded migrations newer than the database's
// user_version, each in its own transaction.
func (s *Store) migrate(ctx context.Context) error {
	// Opening the writer runs pragmas that read the file: a file that is
	// not a database fails there or at the user_version read.
	return describeOpenError(s.withWriter(func(c *conn) error {
		var version int
		if err := c.queryRow(ctx, "PRAGMA user_version", nil, &version); err != nil {
			return err
		}
		// A write transaction begun and rolled back writes nothing, but
		// fails with SQLITE_READONLY where a write would: a -wal or -shm
		// file this user may not write (left by a process run as another
		// user) makes SQLite open the database read-only without an error
		// (openConn catches the database file itself). Found here, the
		// start fails; otherwise the first write would, long after.
		if err := c.execScript(ctx, "BEGIN IMMEDIATE;\nROLLBACK;"); err != nil {
			return err
		}
		// No integrity check here: quick_check reads every page, seconds
		// for a large database, and start-up must stay fast at any size.
		// A file that is not a database fails the user_version read above
		// (SQLITE_NOTADB); damage deeper in is reported by the statement
		// that meets it (SQLITE_CORRUPT), never silently.
		names, err := migrations.ReadDir("migrations")
		if err != nil {
			return err
		}
		sort.Slice(names, func(i, j int) bool { return names[i].Name() < names[j].Name() })
		if version > len(names) { // numbered 1..len(names) (migrate_test.go)
			return fmt.Errorf("the database is at schema %d, from a newer tableemu (this one knows schema %d): use that version or a later one", version, len(names))
		}
		for _, f := range names {
			n, err := strconv.Atoi(strings.SplitN(f.Name(), "_", 2)[0])
			if err != nil {
				return fmt.Errorf("migration %s: bad name", f.Name())
			}
			if n <= version {
				continue
			}
			body, err := migrations.ReadFile("migrations/" + f.Name())
			if err != nil {
				return err
			}
			if err := c.execScript(ctx, "BEGIN IMMEDIATE;\n"+string(body)+
				fmt.Sprintf(";\nPRAGMA user_version = %d;\nCOMMIT;", n)); err != nil {
				c.execScript(ctx, "ROLLBACK")
				return fmt.Errorf("migration %s: %w", f.Name(), err)
			}
		}
		return nil
	}))
}

func describeOpenError(err error) error {
	var se *Error
	if errors.As(err, &se) {
		switch se.Code & 0xff {
		case sqlite3.SQLITE_NOTADB:
			return fmt.Errorf("not a SQLite database (or encrypted): %w", err)
		case sqlite3.SQLITE_CORRUPT:
			return fmt.Errorf("database is damaged: %w", err)
		case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM:
			return fmt.Errorf("cannot write the database file or its -wal and -shm files: %w", err)
		}
	}
	return err
}

// Tx is one transaction, valid only inside its closure.
type Tx struct {
	s   *Store
	c   *conn
	ctx context.Context
	// share: the entities written take one Timestamp, shared, once the
	// first has it (ShareTimestamp).
	share  bool
	shared int64
	// reader: a View transaction, which may use the table cache;
	// tablesGen is the cache generation read before its snapshot began.
	reader    bool
	tablesGen uint64
	// snapshot: this reader's snapshot has begun (tableCache).
	snapshot bool
	// tablesChanged: this write transaction created or deleted a table.
	tablesChanged bool
	// committedTables: this write transaction, until it changes one,
	// sees the tables as last committed (no closure before it in its
	// group changed them), so it may use the table cache; tablesGen is
	// then the current generation.
	committedTables bool
	// garbage: this write transaction retired tables or snapshots, whose
	// rows the collector deletes once it commits (gc.go).
	garbage bool
	// The filter cache (cache.go): a write transaction's changes, and
	// whether it changed tables in bulk; for a reader, the commits done
	// before its snapshot began.
	cacheOps []filtercache.Op
	cacheAll bool
	p1       int64
	// cacheTouched: the tables this transaction wrote past maxCacheOps
	// changes, recorded as one Touch each (cache.go); nil until then.
	cacheTouched map[int64]bool
}

// exec runs SQL and returns how many rows it changed.
func (tx *Tx) exec(query string, args ...any) (int64, error) {
	return tx.c.exec(tx.ctx, query, args...)
}

// query starts SQL returning rows; the caller must Close them.
func (tx *Tx) query(query string, args ...any) (*rows, error) {
	return tx.c.query(tx.ctx, query, args...)
}

// queryRow runs SQL for one row, read by the result's Scan.
func (tx *Tx) queryRow(query string, args ...any) row {
	return row{tx, query, args}
}

type row struct {
	tx    *Tx
	query string
	args  []any
}

// Scan reads the first row into dest; errNoRows if there is none.
func (r row) Scan(dest ...any) error {
	return r.tx.c.queryRow(r.tx.ctx, r.query, r.args, dest...)
}

// View runs fn in a read-only snapshot transaction.
func (s *Store) View(ctx context.Context, fn func(*Tx) error) error {
	return s.view(ctx, s.r, fn)
}

// ViewPoint is View for a closure that reads a handful of rows (a point
// read, a table or policy lookup). While the store is being written it
// runs on a reader without the memory map (see Store.rp); once no commit
// has come for quietPeriod, on a mapped one, which reads a page without
// a system call: with ten million entities the b-tree's pages no longer fit
// a reader's page cache, and a point read cost 248 µs of CPU through pread
// against 159 µs mapped in one run (docs/benchmarks.md, "Tried and not kept"); 59 against
// 56 µs over ten thousand. Each mapped reader still remaps once after
// each commit it sees, which a rare write can afford.
func (s *Store) ViewPoint(ctx context.Context, fn func(*Tx) error) error {
	if s.sinceCommit() > s.quietPeriod {
		return s.view(ctx, s.r, fn)
	}
	return s.view(ctx, s.rp, fn)
}

// defaultQuietPeriod is how long after the last commit ViewPoint turns to
// mapped readers. Remapping costs a reader about 115 µs, a mapped point
// read saves 10–80 µs: at less than a commit a second the map wins.
const defaultQuietPeriod = time.Second

// sinceCommit is the time since the writer last committed (or since Open).
func (s *Store) sinceCommit() time.Duration {
	return time.Since(s.epoch) - time.Duration(s.lastCommit.Load())
}

func (s *Store) view(ctx context.Context, p *pool, fn func(*Tx) error) error {
	if s.closed.Load() {
		return ErrClosed
	}
	c, err := p.getCtx(ctx)
	if err != nil {
		return err
	}
	defer p.put(c)
	gen := s.tables.gen.Load() // before the snapshot: see tableCache
	p1 := s.fc.Committed()     // likewise: see filtercache/filtercache.go
	if _, err := c.exec(ctx, "BEGIN"); err != nil {
		return err
	}
	// Read-only: ROLLBACK ends the snapshot whatever fn did, and runs
	// even if fn panics, so the connection goes back to the pool clean,
	// without more pages than its own share (trimCache).
	defer func() {
		c.exec(context.Background(), "ROLLBACK")
		c.trimCache()
	}()
	return c.run(Tx{s: s, c: c, ctx: ctx, reader: true, tablesGen: gen, p1: p1}, fn)
}

// run calls fn with t as the transaction, kept in the connection rather
// than allocated: a Tx is valid only inside its closure.
func (c *conn) run(t Tx, fn func(*Tx) error) error {
	c.tx = t
	defer func() { c.tx = Tx{} }() // drop the closure's context
	return fn(&c.tx)
}

// (Update, which groups commits, is in commit.go.)

// nextTimestamp returns a Timestamp (ticks) later than prev and than every
// Timestamp this store has handed out, close to the wall clock.
func (s *Store) nextTimestamp(prev int64) int64 {
	s.clockMu.Lock()
	defer s.clockMu.Unlock()
	ts := edm.TicksFromTime(s.now())
	if ts <= s.lastTS {
		ts = s.lastTS + 1
	}
	if ts <= prev {
		ts = prev + 1
	}
	s.lastTS = ts
	return ts
}

// isConstraint reports whether err is a SQLite UNIQUE or PRIMARY KEY
// violation, recognised by extended result code, never by message text.
func isConstraint(err error) bool {
	var se *Error
	if !errors.As(err, &se) {
		return false
	}
	return se.Code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || se.Code == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}
