package store

import (
	"errors"
	"time"

	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// Table is a table of one account.
type Table struct {
	ID      int64
	Account string
	Name    string // the case used at creation
	// Base belongs to the engine: the snapshot table the entities descend
	// from (0: none), while which entity writes record their keys so that
	// a restore rewrites only those. A Table passed to a write must come
	// from that write's transaction; callers pass it back unchanged.
	Base int64
}

// TableQuery selects tables for Query Tables.
type TableQuery struct {
	Filter odata.Expr // nil: all tables; the only property is TableName
	Top    int        // page size, 1..1000
	After  string     // continuation: start at this lower-cased name (inclusive)
}

// TablePage is one page of Query Tables. Next is the continuation (the
// lower-cased name the next page starts at), "" on the last page.
type TablePage struct {
	Tables []Table
	Next   string
}

// SignedIdentifier is one stored access policy of a table (docs/protocol.md
// 3.4). A zero Start or Expiry, or an empty Permission, means the policy
// leaves that field to the SAS that names it.
type SignedIdentifier struct {
	ID         string
	Start      time.Time
	Expiry     time.Time
	Permission string
}

// ACLTime is how engines store policy times: RFC 3339 in UTC with
// nanoseconds, which sorts and round-trips every time the service accepts.
const ACLTime = time.RFC3339Nano

// ErrSnapshotNotFound is returned for a snapshot name the account does not
// have.
var ErrSnapshotNotFound = errors.New("snapshot not found")

// Snapshot describes a saved snapshot.
type Snapshot struct {
	Name     string
	Created  int64 // ticks (edm.TicksFromTime)
	Tables   int
	Entities int
}

// TableNameProps is the property getter odata.Eval reads a Query Tables
// filter with: a table's only property is TableName.
func TableNameProps(name string) func(string) (edm.Value, bool) {
	return func(p string) (edm.Value, bool) {
		if p == "TableName" {
			return edm.NewString(name), true
		}
		return edm.Value{}, false
	}
}
