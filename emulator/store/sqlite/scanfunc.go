package sqlite

import (
	"errors"
	"sync"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// Scans decide their filter in Go, on the stored bytes.
//
// A scan examines every entity of its key range, and the filter compiled
// to SQL (sqlfilter.go) cost about 0.75 µs per entity of 1 KiB there:
// SQLite copies the props column once for the result and once for each
// json_extract, then walks the JSONB and builds SQL values to compare. A
// scan instead calls tableemu_match(props[, pk][, rk][, ts]), a SQL
// function implemented here that evaluates the filter with odata.Eval
// itself, reading property values straight from the stored JSONB (one
// copy of props, no SQL values; a property is found by its key's name and
// decoded only when the filter asks for it). So a scan applies the
// reference semantics, not a translation of them; sqlfilter_test.go's
// differential test holds both paths to odata.Eval.
//
// The function is called once per row of the key range, in key order,
// inside the statement: rows that do not match never come back to Go. It
// also counts what the page examined and ends the page at the scan budget,
// by letting the first row past it through as the continuation.
//
// A statement finds its filter through a slot: each connection registers
// the function with its own slot number as user data (SQLite's memory may
// not hold Go pointers), and a scan puts its scanFilter in the slot while
// it steps. A connection lends itself to one goroutine at a time (pool),
// and a scan is never nested in another on the same connection, so a slot
// holds at most one filter.

// matchFunc is the SQL name of the scan filter function.
const matchFunc = "tableemu_match"

// scanFilter is one scan's filter and its count of rows examined.
type scanFilter struct {
	expr     odata.Expr
	budget   int
	examined int
	// ended: the row just let through is the first past the budget (the
	// page's continuation), not a match.
	ended bool
	err   error
	// pkArg, rkArg, tsArg are the positions of the key and Timestamp
	// columns among the function's arguments; 0 when not passed (props is
	// always argument 0).
	pkArg, rkArg, tsArg int
	// The current row, valid during one call.
	args []uintptr
	tls  *libc.TLS
	get  func(string) (edm.Value, bool) // f.lookup, bound once
}

// maxScanSlots bounds the connections that can run Go-filtered scans at
// once; past it a scan falls back to the filter compiled to SQL.
const maxScanSlots = 4096

var scanSlots [maxScanSlots]atomic.Pointer[scanFilter]

var scanReg struct {
	mu   sync.Mutex
	byDB map[uintptr]int // connection handle -> slot
	dbOf [maxScanSlots]uintptr
	free []int
	next int
}

var (
	matchName   = mustCString(matchFunc)
	matchErrMsg = mustCString(matchFunc + ": no scan on this connection, or stored properties are malformed")
)

func mustCString(s string) uintptr {
	p, err := libc.CString(s)
	if err != nil {
		panic(err)
	}
	return p
}

// cfunc converts a Go function declared at top level to the pointer the
// SQLite C API takes (modernc.org/sqlite calls it back through the same
// representation, https://golang.org/s/go11func).
func cfunc[T any](f T) uintptr {
	return *(*uintptr)(unsafe.Pointer(&struct{ f T }{f}))
}

// matchSlot returns c's slot, registering tableemu_match on c the first
// time; false when every slot is taken.
func matchSlot(c *conn) (int, bool, error) {
	scanReg.mu.Lock()
	slot, ok := scanReg.byDB[c.db]
	if !ok {
		switch {
		case len(scanReg.free) > 0:
			slot = scanReg.free[len(scanReg.free)-1]
			scanReg.free = scanReg.free[:len(scanReg.free)-1]
		case scanReg.next < maxScanSlots:
			slot = scanReg.next
			scanReg.next++
		default:
			scanReg.mu.Unlock()
			return 0, false, nil
		}
	}
	scanReg.mu.Unlock()
	if ok {
		return slot, true, nil
	}
	// Not SQLITE_DETERMINISTIC: the function counts the rows it sees, so
	// SQLite must call it exactly once per row. DIRECTONLY: never from
	// the schema (an index or a view). If registering fails, SQLite calls
	// matchDestroy, which frees the slot (so the lock is not held here).
	rc := sqlite3.Xsqlite3_create_function_v2(c.tls, c.db, matchName, -1,
		sqlite3.SQLITE_UTF8|sqlite3.SQLITE_DIRECTONLY, uintptr(slot),
		cfunc(matchCall), 0, 0, cfunc(matchDestroy))
	if rc != sqlite3.SQLITE_OK {
		return 0, false, c.err(rc)
	}
	scanReg.mu.Lock()
	defer scanReg.mu.Unlock()
	if scanReg.byDB == nil {
		scanReg.byDB = map[uintptr]int{}
	}
	scanReg.byDB[c.db] = slot
	scanReg.dbOf[slot] = c.db
	return slot, true, nil
}

// matchDestroy frees a slot when its connection closes (SQLite calls it
// with the user data given at registration).
func matchDestroy(tls *libc.TLS, p uintptr) {
	slot := int(p)
	scanReg.mu.Lock()
	defer scanReg.mu.Unlock()
	if db := scanReg.dbOf[slot]; db != 0 {
		delete(scanReg.byDB, db)
	}
	scanReg.dbOf[slot] = 0
	scanSlots[slot].Store(nil)
	rangeCounts[slot].m = nil
	scanReg.free = append(scanReg.free, slot)
}

// matchCall is tableemu_match: 1 for a row that matches or that is the
// first past the budget, else 0.
func matchCall(tls *libc.TLS, ctx uintptr, argc int32, argv uintptr) {
	f := scanSlots[int(sqlite3.Xsqlite3_user_data(tls, ctx))].Load()
	if f == nil || f.err != nil || argc < 1 {
		sqlite3.Xsqlite3_result_error(tls, ctx, matchErrMsg, -1)
		return
	}
	f.examined++
	if f.examined > f.budget {
		f.ended = true
		sqlite3.Xsqlite3_result_int(tls, ctx, 1)
		return
	}
	f.tls, f.args = tls, unsafe.Slice((*uintptr)(cptr(argv)), argc)
	ok := odata.Eval(f.expr, f.get)
	f.args = nil
	if f.err != nil {
		sqlite3.Xsqlite3_result_error(tls, ctx, matchErrMsg, -1)
		return
	}
	if ok {
		sqlite3.Xsqlite3_result_int(tls, ctx, 1)
	} else {
		sqlite3.Xsqlite3_result_int(tls, ctx, 0)
	}
}

// arg is the current row's argument i as bytes in SQLite's memory.
func (f *scanFilter) arg(i int) []byte {
	v := f.args[i]
	p := sqlite3.Xsqlite3_value_blob(f.tls, v)
	n := sqlite3.Xsqlite3_value_bytes(f.tls, v)
	if p == 0 || n <= 0 {
		return nil
	}
	return unsafe.Slice((*byte)(cptr(p)), n)
}

var errNoArg = errors.New("store: tableemu_match lacks a column the filter reads")

// lookup is the property getter odata.Eval calls for the current row.
// Values point into SQLite's memory and live only during the call.
func (f *scanFilter) lookup(name string) (edm.Value, bool) {
	switch name {
	case "PartitionKey", "RowKey":
		i := f.pkArg
		if name == "RowKey" {
			i = f.rkArg
		}
		if i == 0 {
			f.err = errNoArg
			return edm.Value{}, false
		}
		b := f.arg(i)
		return edm.NewString(fromSortKey(unsafe.String(unsafe.SliceData(b), len(b)))), true
	case "Timestamp":
		if f.tsArg == 0 {
			f.err = errNoArg
			return edm.Value{}, false
		}
		return edm.NewDateTime(sqlite3.Xsqlite3_value_int64(f.tls, f.args[f.tsArg])), true
	}
	v, ok, err := store.LookupProp(f.arg(0), name)
	if err != nil {
		f.err = err
		return edm.Value{}, false
	}
	return v, ok
}

// filterRefs reports which columns besides props a filter reads. Node
// types it does not know read everything (a conservative answer).
func filterRefs(e odata.Expr) (pk, rk, ts, user bool) {
	known := filterNames(e, func(n string) {
		switch n {
		case "PartitionKey":
			pk = true
		case "RowKey":
			rk = true
		case "Timestamp":
			ts = true
		default:
			user = true
		}
	})
	if !known {
		pk, rk, ts, user = true, true, true, true
	}
	return
}

// filterNames calls name with each property a filter reads; false when
// the filter holds a node type it does not know, which may read anything.
func filterNames(e odata.Expr, name func(string)) bool {
	switch n := e.(type) {
	case nil, *odata.BoolLit:
		return true
	case *odata.Logical:
		return filterNames(n.L, name) && filterNames(n.R, name)
	case *odata.Not:
		return filterNames(n.X, name)
	case *odata.Compare:
		name(n.Prop)
	case *odata.BoolProp:
		name(n.Name)
	default:
		return false
	}
	return true
}
