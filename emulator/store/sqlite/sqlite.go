package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"reflect"
	"strings"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/tableemu/tableemu/odata/edm"
)

// SQLite is used through its C API (modernc.org/sqlite/lib, SQLite
// translated to Go) rather than through database/sql. A page of 1000
// entities read through database/sql cost about three times what the same
// rows cost here: the driver opens every connection SQLITE_OPEN_FULLMUTEX,
// so each column read takes a mutex; it copies every blob into a new Go
// slice; and database/sql adds its own locking and conversions per row.
// The store already gives each connection to one goroutine at a time (one
// writer, a pool of readers), so it opens them SQLITE_OPEN_NOMUTEX and
// reads columns in place.

// Error is a failed SQLite call: its extended result code and message.
type Error struct {
	Code int // extended result code; Code&0xff is the primary code
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("sqlite: %s (%d)", e.Msg, e.Code) }

// errNoRows is what a one-row query that found nothing returns.
var errNoRows = sql.ErrNoRows

// maxCachedStmts bounds a connection's prepared statements: query SQL
// varies with the filter's shape, so the cache cannot grow with it forever.
const maxCachedStmts = 256

// conn is one SQLite connection. It is not safe for concurrent use: the
// store hands it to one goroutine at a time (pool).
type conn struct {
	tls   *libc.TLS
	db    uintptr
	stmts map[string]uintptr
	// scratch is C memory that arguments are copied through before they
	// are bound, so that SQLite never holds a pointer to Go memory.
	scratch    uintptr
	scratchCap int
	// tx is the transaction of the closure that holds the connection
	// (view, runGroup), and ent the entity ReadEntity hands out, with its
	// property slice: both live as long as the connection, since each was
	// an allocation of every request, and neither outlives its closure.
	tx  Tx
	ent *edm.Entity
	// propMem is the memory the writer encodes written properties into
	// (Tx.encodeProps), reused by each group of writes: an encoded
	// object lives until its group commits (SQLite copies what it binds,
	// the filter cache copies what it keeps), and was a tenth of an
	// insert's allocations and a fifth of a batch's.
	propMem []byte
	// mapped: the connection reads the database through a memory map
	// (Store.r), which a scan answered from the filter cache turns off
	// while it reads entities from SQLite (Tx.scanCached).
	mapped bool
	// cacheMax, for a reader, is the most its page cache may keep between
	// transactions, in bytes (trimCache); 0 for the writer. status is C
	// memory for sqlite3_db_status' two results.
	cacheMax int64
	status   uintptr
}

// openConn opens path (a file name, or ":memory:") and runs the pragmas.
func openConn(path string, flags int32, pragmas []string) (*conn, error) {
	c := &conn{tls: libc.NewTLS(), stmts: map[string]uintptr{}}
	name, err := libc.CString(path)
	if err != nil {
		c.tls.Close()
		return nil, err
	}
	pdb := libc.Xmalloc(c.tls, 8)
	rc := sqlite3.Xsqlite3_open_v2(c.tls, name, pdb, flags|sqlite3.SQLITE_OPEN_NOMUTEX, 0)
	c.db = *(*uintptr)(cptr(pdb))
	libc.Xfree(c.tls, pdb)
	libc.Xfree(c.tls, name)
	if rc != sqlite3.SQLITE_OK {
		err := c.err(rc)
		c.close()
		return nil, err
	}
	// SQLITE_OPEN_READWRITE opens a file the operating system will not let
	// this process write read-only, and says nothing: every write would
	// then fail, the first one long after the start. Refuse it here,
	// before the pragmas create -wal and -shm files beside it
	// (sqlite3_db_readonly, https://sqlite.org/c3ref/db_readonly.html;
	// a null name is the main database).
	if flags&sqlite3.SQLITE_OPEN_READWRITE != 0 && sqlite3.Xsqlite3_db_readonly(c.tls, c.db, 0) == 1 {
		c.close()
		return nil, &Error{Code: sqlite3.SQLITE_READONLY, Msg: "the database file is read-only for this user"}
	}
	sqlite3.Xsqlite3_extended_result_codes(c.tls, c.db, 1)
	// Query planner stability: plans do not depend on bound values. Without
	// it SQLite re-prepares a cached statement whenever the value bound to
	// LIMIT changes, which cost a fifth of a 1000-entity page.
	va := libc.Xmalloc(c.tls, 16)
	sqlite3.Xsqlite3_db_config(c.tls, c.db, sqlite3.SQLITE_DBCONFIG_ENABLE_QPSG, libc.VaList(va, int32(1), uintptr(0)))
	libc.Xfree(c.tls, va)
	for _, p := range pragmas {
		if _, err := c.exec(context.Background(), "PRAGMA "+p); err != nil {
			c.close()
			return nil, err
		}
	}
	return c, nil
}

// trimCache empties a reader's page cache if it keeps more than cacheMax.
//
// modernc.org/sqlite builds SQLite with SQLITE_ENABLE_MEMORY_MANAGEMENT,
// under which the page caches of all connections draw on one pool
// (pcache1.c: separateCache is 0), bounded by the sum of their cache_size.
// A connection at its own cache_size takes the least recently used page of
// any connection, so a reader that reads many pages (a scan, a filter
// cache load, point reads while writes come) grows past its own bound with
// the writer's pages, and keeps them, idle in its pool, once its
// transaction ends. The pool is then full while the writer is below its
// cache_size, and SQLite frees every page the writer releases instead of
// keeping it (pcache1Unpin): each write reads its path from the root again.
// In a probe, transactions of 100 inserts went from 26 to 438 reads each;
// tablebench's batches after its point reads cost up to 28% more CPU
// (docs/benchmarks.md, "the page cache the readers kept"). Resetting a
// reader's cache between transactions gives the pages back; under writes
// a reader empties its cache at its next transaction anyway (its snapshot
// is new).
func (c *conn) trimCache() {
	if c.cacheMax > 0 && c.cacheUsed() > c.cacheMax {
		// The main database (a null name); a no-op inside a transaction.
		sqlite3.Xsqlite3_file_control(c.tls, c.db, 0, sqlite3.SQLITE_FCNTL_RESET_CACHE, 0)
	}
}

// cacheUsed is the memory of the connection's page cache in bytes.
func (c *conn) cacheUsed() int64 { return c.dbStatus(sqlite3.SQLITE_DBSTATUS_CACHE_USED) }

// dbStatus is the current value of one of sqlite3_db_status' counters,
// or 0 if SQLite cannot say.
func (c *conn) dbStatus(op int32) int64 {
	if c.status == 0 {
		if c.status = libc.Xmalloc(c.tls, 8); c.status == 0 {
			return 0
		}
	}
	if sqlite3.Xsqlite3_db_status(c.tls, c.db, op, c.status, c.status+4, 0) != sqlite3.SQLITE_OK {
		return 0
	}
	return int64(*(*int32)(cptr(c.status)))
}

func (c *conn) close() {
	for _, st := range c.stmts {
		sqlite3.Xsqlite3_finalize(c.tls, st)
	}
	c.stmts = nil
	if c.db != 0 {
		sqlite3.Xsqlite3_close_v2(c.tls, c.db)
		c.db = 0
	}
	if c.scratch != 0 {
		libc.Xfree(c.tls, c.scratch)
		c.scratch = 0
	}
	if c.status != 0 {
		libc.Xfree(c.tls, c.status)
		c.status = 0
	}
	c.tls.Close()
}

// err describes result code rc with the connection's last message.
func (c *conn) err(rc int32) error {
	code := int(rc)
	msg := libc.GoString(sqlite3.Xsqlite3_errstr(c.tls, rc))
	if c.db != 0 {
		if ext := sqlite3.Xsqlite3_extended_errcode(c.tls, c.db); ext&0xff == rc&0xff {
			code = int(ext)
			msg = libc.GoString(sqlite3.Xsqlite3_errmsg(c.tls, c.db))
		}
	}
	return &Error{Code: code, Msg: msg}
}

// prepare returns the statement for q, prepared once per connection. A
// statement still being stepped (a query nested in another's loop) is not
// shared: the caller gets a fresh one and owns it (own is true).
func (c *conn) prepare(q string) (st uintptr, own bool, err error) {
	if st, ok := c.stmts[q]; ok {
		if sqlite3.Xsqlite3_stmt_busy(c.tls, st) == 0 {
			return st, false, nil
		}
		own = true
	}
	z, err := libc.CString(q)
	if err != nil {
		return 0, false, err
	}
	defer libc.Xfree(c.tls, z)
	p := libc.Xmalloc(c.tls, 8)
	defer libc.Xfree(c.tls, p)
	if rc := sqlite3.Xsqlite3_prepare_v3(c.tls, c.db, z, -1, sqlite3.SQLITE_PREPARE_PERSISTENT, p, 0); rc != sqlite3.SQLITE_OK {
		return 0, false, c.err(rc)
	}
	st = *(*uintptr)(cptr(p))
	if st == 0 {
		return 0, false, fmt.Errorf("sqlite: empty statement %q", strings.Clone(q))
	}
	if !own {
		if len(c.stmts) >= maxCachedStmts {
			for k, old := range c.stmts {
				if sqlite3.Xsqlite3_stmt_busy(c.tls, old) == 0 {
					sqlite3.Xsqlite3_finalize(c.tls, old)
					delete(c.stmts, k)
				}
			}
		}
		// A copy for the key, so that q does not escape: queryRow's
		// arguments travel with it and would escape too.
		c.stmts[strings.Clone(q)] = st
	}
	return st, own, nil
}

// cbytes copies b into the scratch buffer and returns its C address. A
// non-zero address even for an empty b: SQLite binds a null pointer as
// NULL, not as an empty string.
func (c *conn) cbytes(b string) uintptr {
	if len(b) >= c.scratchCap {
		if c.scratch != 0 {
			libc.Xfree(c.tls, c.scratch)
		}
		c.scratchCap = max(2*len(b), 256)
		c.scratch = libc.Xmalloc(c.tls, uint64(c.scratchCap))
	}
	copy(unsafe.Slice((*byte)(cptr(c.scratch)), c.scratchCap), b)
	return c.scratch
}

func (c *conn) bind(st uintptr, args []any) error {
	for i, a := range args {
		n := int32(i + 1)
		var rc int32
		switch v := a.(type) {
		case nil:
			rc = sqlite3.Xsqlite3_bind_null(c.tls, st, n)
		case int64:
			rc = sqlite3.Xsqlite3_bind_int64(c.tls, st, n, v)
		case int:
			rc = sqlite3.Xsqlite3_bind_int64(c.tls, st, n, int64(v))
		case bool:
			var i int64
			if v {
				i = 1
			}
			rc = sqlite3.Xsqlite3_bind_int64(c.tls, st, n, i)
		case float64:
			rc = sqlite3.Xsqlite3_bind_double(c.tls, st, n, v)
		case string:
			if len(v) > math.MaxInt32 {
				return fmt.Errorf("sqlite: argument %d too long", n)
			}
			rc = sqlite3.Xsqlite3_bind_text(c.tls, st, n, c.cbytes(v), int32(len(v)), sqlite3.SQLITE_TRANSIENT)
		case []byte:
			if len(v) > math.MaxInt32 {
				return fmt.Errorf("sqlite: argument %d too long", n)
			}
			rc = sqlite3.Xsqlite3_bind_blob(c.tls, st, n, c.cbytes(unsafe.String(unsafe.SliceData(v), len(v))), int32(len(v)), sqlite3.SQLITE_TRANSIENT)
		default:
			// The type alone: formatting a itself would make every
			// argument escape, an allocation per value bound.
			return fmt.Errorf("sqlite: cannot bind %s", reflect.TypeOf(a))
		}
		if rc != sqlite3.SQLITE_OK {
			return c.err(rc)
		}
	}
	return nil
}

// query starts q; the caller steps the rows and must Close them.
func (c *conn) query(ctx context.Context, q string, args ...any) (*rows, error) {
	r := &rows{}
	if err := c.open(r, ctx, q, args); err != nil {
		return nil, err
	}
	return r, nil
}

// open starts q in r, which the caller steps and must Close. exec, queryRow
// and point reads keep r on their stack: a query's rows were an allocation
// of their own, three per point read with its BEGIN and ROLLBACK.
func (c *conn) open(r *rows, ctx context.Context, q string, args []any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	st, own, err := c.prepare(q)
	if err != nil {
		return err
	}
	*r = rows{c: c, st: st, own: own}
	if n := int(sqlite3.Xsqlite3_bind_parameter_count(c.tls, st)); n != len(args) {
		r.Close()
		return fmt.Errorf("sqlite: %d arguments for %d parameters in %q", len(args), n, strings.Clone(q))
	}
	if err := c.bind(st, args); err != nil {
		r.Close()
		return err
	}
	return nil
}

// exec runs q to completion and returns how many rows it changed.
func (c *conn) exec(ctx context.Context, q string, args ...any) (int64, error) {
	var r rows
	if err := c.open(&r, ctx, q, args); err != nil {
		return 0, err
	}
	for r.Next() {
	}
	if err := r.Close(); err != nil {
		return 0, err
	}
	return sqlite3.Xsqlite3_changes64(c.tls, c.db), nil
}

// execScript runs one or more statements separated by semicolons, with
// no arguments (migrations).
func (c *conn) execScript(ctx context.Context, script string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	z, err := libc.CString(script)
	if err != nil {
		return err
	}
	defer libc.Xfree(c.tls, z)
	if rc := sqlite3.Xsqlite3_exec(c.tls, c.db, z, 0, 0, 0); rc != sqlite3.SQLITE_OK {
		return c.err(rc)
	}
	return nil
}

// queryRow runs q and scans its first row into dest; errNoRows if none.
func (c *conn) queryRow(ctx context.Context, q string, args []any, dest ...any) error {
	var r rows
	if err := c.open(&r, ctx, q, args); err != nil {
		return err
	}
	if !r.Next() {
		if err := r.Close(); err != nil {
			return err
		}
		return errNoRows
	}
	err := r.Scan(dest...)
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	return err
}

// rows steps a statement.
type rows struct {
	c    *conn
	st   uintptr
	own  bool // finalize on Close instead of keeping it cached
	done bool
	err  error
}

// Next steps to the next row: false at the end or on an error (Close
// returns it).
func (r *rows) Next() bool {
	if r.done {
		return false
	}
	switch rc := sqlite3.Xsqlite3_step(r.c.tls, r.st); rc {
	case sqlite3.SQLITE_ROW:
		return true
	case sqlite3.SQLITE_DONE:
	default:
		r.err = r.c.err(rc)
	}
	r.done = true
	return false
}

// Int64 is column i of the current row as an integer.
func (r *rows) Int64(i int) int64 { return sqlite3.Xsqlite3_column_int64(r.c.tls, r.st, int32(i)) }

// Bytes is column i of the current row in SQLite's memory: valid only until
// the next call to Next or Close. Text comes back as its UTF-8 bytes.
func (r *rows) Bytes(i int) []byte {
	p := sqlite3.Xsqlite3_column_blob(r.c.tls, r.st, int32(i))
	n := sqlite3.Xsqlite3_column_bytes(r.c.tls, r.st, int32(i))
	if p == 0 || n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(cptr(p)), n)
}

// Text is column i of the current row as a Go string (a copy).
func (r *rows) Text(i int) string { return string(r.Bytes(i)) }

// Null reports whether column i of the current row is NULL.
func (r *rows) Null(i int) bool {
	return sqlite3.Xsqlite3_column_type(r.c.tls, r.st, int32(i)) == sqlite3.SQLITE_NULL
}

// Scan copies the current row's columns into dest: *int64, *int, *string,
// *[]byte (a copy), *sql.NullString or *any.
func (r *rows) Scan(dest ...any) error {
	for i, d := range dest {
		switch p := d.(type) {
		case *int64:
			*p = r.Int64(i)
		case *int:
			*p = int(r.Int64(i))
		case *string:
			*p = r.Text(i)
		case *[]byte:
			*p = append([]byte(nil), r.Bytes(i)...)
		case *sql.NullString:
			*p = sql.NullString{String: r.Text(i), Valid: !r.Null(i)}
		case *any:
			switch sqlite3.Xsqlite3_column_type(r.c.tls, r.st, int32(i)) {
			case sqlite3.SQLITE_INTEGER:
				*p = r.Int64(i)
			case sqlite3.SQLITE_FLOAT:
				*p = sqlite3.Xsqlite3_column_double(r.c.tls, r.st, int32(i))
			case sqlite3.SQLITE_TEXT:
				*p = r.Text(i)
			case sqlite3.SQLITE_BLOB:
				*p = append([]byte{}, r.Bytes(i)...)
			default:
				*p = nil
			}
		default:
			return fmt.Errorf("sqlite: cannot scan into %s", reflect.TypeOf(d))
		}
	}
	return nil
}

// Close ends the statement and returns the error that ended it, if any.
func (r *rows) Close() error {
	if r.st == 0 {
		return r.err
	}
	if r.own {
		sqlite3.Xsqlite3_finalize(r.c.tls, r.st)
	} else {
		rc := sqlite3.Xsqlite3_reset(r.c.tls, r.st)
		if r.err == nil && rc != sqlite3.SQLITE_OK && !r.done {
			r.err = r.c.err(rc)
		}
		sqlite3.Xsqlite3_clear_bindings(r.c.tls, r.st)
	}
	r.st = 0
	return r.err
}

// cptr turns an address in SQLite's memory, which the Go collector does not
// manage, into a pointer. (Reading the integer's bits as a pointer instead
// of converting it says so to go vet.)
func cptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// pool lends connections to one goroutine at a time, opening up to max of
// them on demand.
type pool struct {
	idle chan *conn
	open func() (*conn, error)
	sem  chan struct{} // one token per connection that may still be opened
}

func newPool(max int, open func() (*conn, error)) *pool {
	p := &pool{idle: make(chan *conn, max), open: open, sem: make(chan struct{}, max)}
	for range max {
		p.sem <- struct{}{}
	}
	return p
}

func (p *pool) get() (*conn, error) { return p.getCtx(context.Background()) }

// getCtx is get that gives up when ctx ends: a reader waiting for one of
// the pool's connections, all busy with scans, stops at its deadline.
func (p *pool) getCtx(ctx context.Context) (*conn, error) {
	select {
	case c := <-p.idle:
		return c, nil
	default:
	}
	// Done only now, once a wait is likely: a request's context makes
	// its timer on first use (emulator/deadline.go).
	select {
	case c := <-p.idle:
		return c, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-p.sem:
		c, err := p.open()
		if err != nil {
			p.sem <- struct{}{}
			return nil, err
		}
		return c, nil
	}
}

func (p *pool) put(c *conn) { p.idle <- c }

// closeAll closes every connection the pool opened, waiting for those in
// use to be returned.
func (p *pool) closeAll() {
	for range cap(p.sem) {
		select {
		case <-p.sem: // never opened
		case c := <-p.idle:
			c.close()
		}
	}
}
