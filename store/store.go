// Package store keeps tables and entities in SQLite (modernc.org/sqlite, pure
// Go). Every store operation runs inside a View or Update closure, and each
// closure is one SQLite transaction: a $batch is one Update that calls the
// same primitives as single requests, so it commits or rolls back whole.
//
// The store knows nothing of HTTP or the wire format; it returns the
// sentinel errors below and the caller maps them to Azure error codes.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/tableemu/tableemu/edm"
)

// Sentinel errors. Callers compare with errors.Is.
var (
	ErrTableExists     = errors.New("table already exists")
	ErrTableNotFound   = errors.New("table not found")
	ErrEntityExists    = errors.New("entity already exists")
	ErrEntityNotFound  = errors.New("entity not found")
	ErrBadContinuation = errors.New("continuation token is not valid")
)

// FileName is the database file created under Options.Dir.
const FileName = "tableemu.sqlite"

// Options configure Open.
type Options struct {
	// Dir is the directory holding the database file; created if missing.
	Dir string
	// InMemory keeps everything in memory: nothing is written to disk and
	// everything is lost on Close.
	InMemory bool
	// NoAutoIndex turns automatic property indexes off (autoindex.go).
	NoAutoIndex bool
}

// Store is an open database. It is safe for concurrent use.
type Store struct {
	// w is the single writer connection: SQLite allows one writer at a time,
	// and queueing writers in database/sql is cheaper than SQLITE_BUSY
	// retries. r is a pool of readers; in WAL mode they read a snapshot
	// while the writer commits. In memory mode r == w.
	w, r *sql.DB
	path string

	closed atomic.Bool
	// Update's writer goroutine (commit.go).
	writes     chan *writeReq
	quit       chan struct{}
	writerDone sync.WaitGroup
	// largestGroup is the most closures one commit has carried (tests).
	largestGroup atomic.Int64
	autoIdx      autoIndexes
	wStmts       stmtCache // prepared statements of w (stmts.go)
	rStmts       stmtCache // and of r
	// lastTS makes every Timestamp the store hands out unique and
	// increasing (PROTOCOL.md 5): max(now, last+1) in ticks.
	clockMu sync.Mutex
	lastTS  int64
	now     func() time.Time
}

//go:embed migrations/*.sql
var migrations embed.FS

// Open opens (creating if needed) the database and brings its schema up to
// date. A file that is not a tableemu database, or is damaged, is an error
// that names the file.
func Open(ctx context.Context, opts Options) (*Store, error) {
	s := &Store{now: time.Now, writes: make(chan *writeReq), quit: make(chan struct{})}
	var err error
	if opts.InMemory {
		// A named shared-cache memory database lives as long as one
		// connection is open; one connection serves reads and writes.
		dsn := "file:tableemu-" + uuid.NewString() + "?mode=memory&cache=shared&_pragma=foreign_keys(1)&_txlock=immediate"
		if s.w, err = sql.Open("sqlite", dsn); err != nil {
			return nil, err
		}
		s.w.SetMaxOpenConns(1)
		s.w.SetMaxIdleConns(1)
		s.w.SetConnMaxLifetime(0)
		s.w.SetConnMaxIdleTime(0)
		s.r = s.w
		s.path = ":memory:"
	} else {
		if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("create data directory: %w", err)
		}
		s.path = filepath.Join(opts.Dir, FileName)
		// synchronous=FULL: a commit is fsynced before it is acknowledged,
		// so an acknowledged write survives a killed process and a power
		// cut alike. busy_timeout covers the checkpointer and a second
		// process opening the file.
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(10000)")
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(FULL)")
		q.Add("_pragma", "foreign_keys(1)")
		// Reads through a memory map instead of a read() per page: a scan
		// touches thousands of pages, and SQLite's default 2 MiB page
		// cache would otherwise re-read them with a system call each.
		q.Add("_pragma", "mmap_size(4294967296)")
		q.Set("_txlock", "immediate")
		base := "file:" + (&url.URL{Path: s.path}).EscapedPath()
		if s.w, err = sql.Open("sqlite", base+"?"+q.Encode()); err != nil {
			return nil, err
		}
		s.w.SetMaxOpenConns(1)
		s.w.SetMaxIdleConns(1)
		s.w.SetConnMaxLifetime(0)
		s.w.SetConnMaxIdleTime(0)
		q.Set("_txlock", "deferred")
		q.Add("_pragma", "query_only(1)")
		if s.r, err = sql.Open("sqlite", base+"?"+q.Encode()); err != nil {
			s.w.Close()
			return nil, err
		}
		s.r.SetMaxOpenConns(8)
		s.r.SetMaxIdleConns(8)
	}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open %s: %w", s.path, err)
	}
	if err := s.wStmts.prepare(s.w, true); err != nil {
		s.Close()
		return nil, fmt.Errorf("open %s: %w", s.path, err)
	}
	if err := s.rStmts.prepare(s.r, s.r == s.w); err != nil {
		s.Close()
		return nil, fmt.Errorf("open %s: %w", s.path, err)
	}
	if err := s.autoIdx.load(ctx, s); err != nil {
		s.Close()
		return nil, fmt.Errorf("open %s: %w", s.path, err)
	}
	s.autoIdx.disabled = opts.NoAutoIndex
	s.writerDone.Add(1)
	go s.writer()
	return s, nil
}

// Path is the database file, or ":memory:".
func (s *Store) Path() string { return s.path }

// Close closes the database. Pending closures finish first (database/sql
// waits for connections in use).
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.autoIdx.wg.Wait() // an index being built holds the writer
	close(s.quit)
	s.writerDone.Wait()
	s.wStmts.close()
	s.rStmts.close()
	var errs []error
	if s.r != s.w {
		errs = append(errs, s.r.Close())
	}
	errs = append(errs, s.w.Close())
	return errors.Join(errs...)
}

// migrate applies the embedded migrations newer than the database's
// user_version, each in its own transaction.
func (s *Store) migrate(ctx context.Context) error {
	var version int
	if err := s.w.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return describeOpenError(err)
	}
	// No integrity check here: quick_check reads every page, seconds for a
	// large database, and start-up must stay fast at any size. A file that
	// is not a database fails the user_version read above (SQLITE_NOTADB);
	// damage deeper in is reported by the statement that meets it
	// (SQLITE_CORRUPT), never silently.
	names, err := migrations.ReadDir("migrations")
	if err != nil {
		return err
	}
	sort.Slice(names, func(i, j int) bool { return names[i].Name() < names[j].Name() })
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
		tx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %s: %w", f.Name(), err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", n)); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

func describeOpenError(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB:
			return fmt.Errorf("not a SQLite database (or encrypted): %w", err)
		case sqlite3.SQLITE_CORRUPT:
			return fmt.Errorf("database is damaged: %w", err)
		case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM:
			return fmt.Errorf("cannot open the database file for writing: %w", err)
		}
	}
	return err
}

// Tx is one transaction, valid only inside its closure.
type Tx struct {
	s     *Store
	tx    *sql.Tx
	ctx   context.Context
	stmts *stmtCache
}

// View runs fn in a read-only snapshot transaction.
func (s *Store) View(ctx context.Context, fn func(*Tx) error) error {
	return s.run(ctx, s.r, fn)
}

// (Update, which groups commits, is in commit.go.)

func (s *Store) run(ctx context.Context, db *sql.DB, fn func(*Tx) error) (err error) {
	sqlTx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	tx := &Tx{s: s, tx: sqlTx, ctx: ctx, stmts: &s.rStmts}
	if db == s.w {
		tx.stmts = &s.wStmts
	}
	defer func() {
		if p := recover(); p != nil {
			sqlTx.Rollback()
			panic(p)
		}
	}()
	if err := fn(tx); err != nil {
		sqlTx.Rollback()
		return err
	}
	return sqlTx.Rollback() // read-only: nothing to commit
}

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
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code()
	return c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || c == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}
