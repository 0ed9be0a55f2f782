// Package transfer is tableemu's data in and out (docs/transfer.md):
// import an account's tables from files or another endpoint and export
// them to files, from Go (this file) and over HTTP under
// /_tableemu/accounts/ (http.go). Import (import.go) writes each table
// of a Source in one store transaction, all of it or none; Export
// (export.go) reads each table in one consistent read and hands its
// entities to a Sink as it scans them. The formats are Sources and Sinks,
// one file each: JSON Lines (jsonl.go), Storage Explorer's CSV (csv.go),
// Azurite's data directory (azurite.go), another Table endpoint
// (endpoint.go).
package transfer

import (
	"context"
	"net/http"
	"time"

	"github.com/tableemu/tableemu/auth"
	"github.com/tableemu/tableemu/emulator/store"
)

// Config is what the server hands transfer, as it hands isolation its
// own (emulator/isolation.Config).
type Config struct {
	Store      *store.Store
	Accounts   map[string]*auth.Account // read only
	DevAccount string
	// GetProps returns account's service properties as the Get Table
	// Service Properties body; SetProps validates doc (a Set Table
	// Service Properties body) and stores it as that operation does,
	// refreshing the server's cache.
	GetProps func(ctx context.Context, account string) ([]byte, error)
	SetProps func(ctx context.Context, account string, doc []byte) error
	// StoreError turns a store error into the service's error.
	StoreError func(error) error
	// Authorize decides whether r may export or import account's data,
	// as isolation.Config.Authorize decides for resets and snapshots.
	Authorize func(r *http.Request, account string) error
	// Timeout is how long an HTTP request may take (0: the default).
	Timeout time.Duration
	// Order is the order an export writes each table's entities in: the
	// order the server answers queries in (store.OrderCreation under the
	// cosmos profile), which an import into a server of the same profile
	// keeps, as it writes them in the order read.
	Order store.Order
	// ExactTableNames: the store tells table names apart by case (the
	// cosmos profile; store.TableKey, docs/cosmos.md "table names"), so
	// an import may bring "Orders" beside "orders", and Options.Tables
	// names tables exactly.
	ExactTableNames bool
}

// Transfer runs imports and exports on one server's store.
type Transfer struct{ cfg Config }

// New returns the transfer operations cfg describes.
func New(cfg Config) *Transfer { return &Transfer{cfg} }

// Mode says what an import does with a table the account already has.
type Mode string

const (
	// ModeFail refuses the table (409 TableAlreadyExists); nothing of it
	// is written. The default.
	ModeFail Mode = "fail"
	// ModeReplace deletes the table, its entities and policies, and
	// creates it again with the source's.
	ModeReplace Mode = "replace"
	// ModeMerge keeps the table and its other entities and writes the
	// source's over those with the same keys (Insert Or Replace); the
	// source's policies, when it has any, replace the table's.
	ModeMerge Mode = "merge"
)

// Options choose what an import or export touches and how.
type Options struct {
	// Account is where a source account with no name goes, and what an
	// export reads ("": Config.DevAccount).
	Account string
	// Tables limits the work to these tables (any case); nil: all.
	Tables []string
	// Mode is an import's rule for existing tables ("": ModeFail).
	Mode Mode
	// Progress, when set, hears how far a table has come: every few
	// thousand entities, and once with Done when it ends.
	Progress func(Progress)
}

// Progress is how far one table has come.
type Progress struct {
	Account, Table string
	Entities       int
	Done           bool
}

// Summary says what an import or export did.
type Summary struct {
	Tables, Entities int
}
