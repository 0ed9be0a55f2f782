package store

import "errors"

// Fault is the kind of storage failure behind an error, so that the caller
// can tell the client (and the operator) what happened without knowing the
// engine. Engines classify by their own error codes (SQLite's result codes,
// PostgreSQL's SQLSTATE), never by message text.
type Fault int

const (
	NoFault       Fault = iota
	FaultFull           // no space left where the database lives
	FaultReadOnly       // the database file or its directory is not writable
	FaultIO             // the operating system failed a read, write or sync
	FaultCorrupt        // the database file is damaged
	FaultBusy           // another process holds the database file locked
	// FaultUnavailable: the database server cannot be reached, is
	// starting or stopping, or refused the connection for now. The
	// request did not take effect; it may once the server is back.
	FaultUnavailable
)

// Faulter is implemented by engine errors that know their fault.
type Faulter interface {
	StoreFault() Fault
}

// FaultOf returns the storage fault err stems from, or NoFault.
func FaultOf(err error) Fault {
	var f Faulter
	if errors.As(err, &f) {
		return f.StoreFault()
	}
	return NoFault
}
