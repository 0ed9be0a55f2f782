package store

import (
	"errors"

	sqlite3 "modernc.org/sqlite/lib"
)

// Fault is the kind of storage failure behind an error, so that the caller
// can tell the client (and the operator) what happened without knowing
// SQLite: the data directory is full, read-only, failing, or the database
// file is damaged. Classified by SQLite result code, never by message text.
type Fault int

const (
	NoFault       Fault = iota
	FaultFull           // SQLITE_FULL: no space left where the database lives
	FaultReadOnly       // SQLITE_READONLY, SQLITE_PERM, SQLITE_CANTOPEN: the file or directory is not writable
	FaultIO             // SQLITE_IOERR: the operating system failed a read, write or sync
	FaultCorrupt        // SQLITE_CORRUPT, SQLITE_NOTADB: the database file is damaged
	FaultBusy           // SQLITE_BUSY, SQLITE_LOCKED: another process holds the database
)

// FaultOf returns the storage fault err stems from, or NoFault.
func FaultOf(err error) Fault {
	var se *Error
	if !errors.As(err, &se) {
		return NoFault
	}
	switch se.Code & 0xff {
	case sqlite3.SQLITE_FULL:
		return FaultFull
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN:
		return FaultReadOnly
	case sqlite3.SQLITE_IOERR:
		return FaultIO
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return FaultCorrupt
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return FaultBusy
	}
	return NoFault
}
