package sqlite

import (
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/tableemu/tableemu/emulator/store"
)

// StoreFault classifies a SQLite error for store.FaultOf by result code,
// never by message text: the data directory is full, read-only, failing,
// or the database file is damaged or locked by another process.
func (e *Error) StoreFault() store.Fault {
	switch e.Code & 0xff {
	case sqlite3.SQLITE_FULL:
		return store.FaultFull
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN:
		return store.FaultReadOnly
	case sqlite3.SQLITE_IOERR:
		return store.FaultIO
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return store.FaultCorrupt
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return store.FaultBusy
	}
	return store.NoFault
}
