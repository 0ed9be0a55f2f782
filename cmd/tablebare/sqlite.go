package main

import (
	"fmt"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// A minimal use of SQLite's C API (modernc.org/sqlite/lib), the same
// library and the same access pattern as tableemu's store: connections
// opened SQLITE_OPEN_NOMUTEX and lent to one goroutine at a time,
// statements prepared once per connection, columns read in place,
// arguments copied through C memory. Nothing here is tableemu's code, so
// the reference does not inherit its costs.

type db struct {
	tls     *libc.TLS
	h       uintptr
	stmts   map[string]uintptr
	scratch uintptr // C memory arguments are copied into before binding
	cap     int
	status  uintptr // C memory for sqlite3_db_status' two results
}

func openDB(path string, pragmas ...string) (*db, error) {
	d := &db{tls: libc.NewTLS(), stmts: map[string]uintptr{}}
	name, err := libc.CString(path)
	if err != nil {
		return nil, err
	}
	defer libc.Xfree(d.tls, name)
	p := libc.Xmalloc(d.tls, 8)
	defer libc.Xfree(d.tls, p)
	flags := int32(sqlite3.SQLITE_OPEN_READWRITE | sqlite3.SQLITE_OPEN_CREATE | sqlite3.SQLITE_OPEN_NOMUTEX)
	rc := sqlite3.Xsqlite3_open_v2(d.tls, name, p, flags, 0)
	d.h = *(*uintptr)(cptr(p))
	if rc != sqlite3.SQLITE_OK {
		return nil, d.err(rc)
	}
	for _, pr := range pragmas {
		if err := d.exec("PRAGMA " + pr); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func (d *db) err(rc int32) error {
	return fmt.Errorf("sqlite %d: %s", rc, libc.GoString(sqlite3.Xsqlite3_errmsg(d.tls, d.h)))
}

// stmt is a prepared statement in use; reset it when done.
type stmt struct {
	d  *db
	st uintptr
}

// prepare returns q's cached statement with args bound.
func (d *db) prepare(q string, args ...any) (stmt, error) {
	st, ok := d.stmts[q]
	if !ok {
		z, err := libc.CString(q)
		if err != nil {
			return stmt{}, err
		}
		p := libc.Xmalloc(d.tls, 8)
		rc := sqlite3.Xsqlite3_prepare_v3(d.tls, d.h, z, -1, sqlite3.SQLITE_PREPARE_PERSISTENT, p, 0)
		st = *(*uintptr)(cptr(p))
		libc.Xfree(d.tls, p)
		libc.Xfree(d.tls, z)
		if rc != sqlite3.SQLITE_OK {
			return stmt{}, d.err(rc)
		}
		d.stmts[q] = st
	}
	// Every argument is copied into one scratch buffer first (SQLite
	// copies it again, SQLITE_TRANSIENT), so SQLite never reads Go memory.
	for i, a := range args {
		n := int32(i + 1)
		var rc int32
		switch v := a.(type) {
		case int64:
			rc = sqlite3.Xsqlite3_bind_int64(d.tls, st, n, v)
		case string:
			rc = sqlite3.Xsqlite3_bind_text(d.tls, st, n, d.c(v), int32(len(v)), sqlite3.SQLITE_TRANSIENT)
		case []byte:
			rc = sqlite3.Xsqlite3_bind_text(d.tls, st, n, d.c(unsafe.String(unsafe.SliceData(v), len(v))), int32(len(v)), sqlite3.SQLITE_TRANSIENT)
		default:
			return stmt{}, fmt.Errorf("cannot bind %T", a)
		}
		if rc != sqlite3.SQLITE_OK {
			return stmt{}, d.err(rc)
		}
	}
	return stmt{d, st}, nil
}

func (d *db) c(s string) uintptr {
	if len(s) >= d.cap {
		if d.scratch != 0 {
			libc.Xfree(d.tls, d.scratch)
		}
		d.cap = max(2*len(s), 4096)
		d.scratch = libc.Xmalloc(d.tls, uint64(d.cap))
	}
	copy(unsafe.Slice((*byte)(cptr(d.scratch)), d.cap), s)
	return d.scratch
}

// step advances: true on a row, false at the end; an error otherwise.
func (s stmt) step() (bool, error) {
	switch rc := sqlite3.Xsqlite3_step(s.d.tls, s.st); rc {
	case sqlite3.SQLITE_ROW:
		return true, nil
	case sqlite3.SQLITE_DONE:
		return false, nil
	default:
		return false, s.d.err(rc)
	}
}

func (s stmt) reset() { sqlite3.Xsqlite3_reset(s.d.tls, s.st) }

func (s stmt) int(i int32) int64 { return sqlite3.Xsqlite3_column_int64(s.d.tls, s.st, i) }

// bytes is column i in SQLite's memory, valid until the next step or reset.
func (s stmt) bytes(i int32) []byte {
	p := sqlite3.Xsqlite3_column_blob(s.d.tls, s.st, i)
	n := sqlite3.Xsqlite3_column_bytes(s.d.tls, s.st, i)
	if p == 0 || n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(cptr(p)), n)
}

// run executes q to the end and returns the rows it changed.
func (d *db) run(q string, args ...any) (int64, error) {
	s, err := d.prepare(q, args...)
	if err != nil {
		return 0, err
	}
	defer s.reset()
	for {
		more, err := s.step()
		if err != nil {
			return 0, err
		}
		if !more {
			return sqlite3.Xsqlite3_changes64(d.tls, d.h), nil
		}
	}
}

func (d *db) exec(q string) error {
	_, err := d.run(q)
	return err
}

// pool lends connections one goroutine at a time.
type pool chan *db

func newPool(n int, open func() (*db, error)) (pool, error) {
	p := make(pool, n)
	for range n {
		d, err := open()
		if err != nil {
			return nil, err
		}
		p <- d
	}
	return p, nil
}

// put returns a reader to the pool with no more cached pages than about
// SQLite's default cache_size (2,000 KiB; 2.25 MiB with page headers).
// modernc.org/sqlite builds SQLite with SQLITE_ENABLE_MEMORY_MANAGEMENT:
// all connections' page caches share one pool (pcache1.c), a connection at
// its cache_size takes any other's least recently used page, and a reader
// that keeps what it took leaves the writer below its own cache_size with
// every page it releases freed at once (pcache1Unpin), so that every write
// reads its b-tree path again. A reset cache gives the pages back.
func (p pool) put(d *db) {
	if d.status == 0 {
		d.status = libc.Xmalloc(d.tls, 8)
	}
	if d.status != 0 && sqlite3.Xsqlite3_db_status(d.tls, d.h, sqlite3.SQLITE_DBSTATUS_CACHE_USED, d.status, d.status+4, 0) == sqlite3.SQLITE_OK &&
		*(*int32)(cptr(d.status)) > 9<<18 {
		sqlite3.Xsqlite3_file_control(d.tls, d.h, 0, sqlite3.SQLITE_FCNTL_RESET_CACHE, 0)
	}
	p <- d
}

// cptr turns an address in SQLite's memory into a pointer (read through
// memory, as go vet asks of integers that are C addresses).
func cptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }
