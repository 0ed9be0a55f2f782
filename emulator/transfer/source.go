package transfer

import (
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata/edm"
)

// What an import reads and an export writes. Every format is a Source
// (what an import reads: a directory of JSON Lines files, Storage
// Explorer's CSV, an Azurite data directory, another Table endpoint) or a
// Sink (what an export writes), so that each format is one file of this
// package and the store is written and read in one place (transfer.go).

// Account is one account of a source: its tables and, when the source
// has them, its service properties.
type Account struct {
	// Name is the account the source holds the tables under ("" when the
	// source does not say: a directory of fixtures; the importer's
	// account is taken).
	Name string
	// Properties is the account's service properties as the body of Set
	// Table Service Properties (docs/protocol.md 3.5), nil when the source
	// has none: the target's are left as they are.
	Properties []byte
	Tables     []*Table
}

// Table is one table of a source. Its name and policies are read when the
// source is opened; its entities only when Entities is called.
type Table struct {
	Name string
	// ACL is the table's stored access policies in order; nil when the
	// source has none (a merge then keeps the target's).
	ACL []store.SignedIdentifier
	// Entities calls fn with each entity of the table in the source's
	// order and stops at fn's first error, which it returns, or at the
	// source's own. It may be called more than once and must give the
	// same entities each time: a store transaction that is retried
	// (PostgreSQL after a serialization conflict) reads them again.
	// e.Entity is fn's only during the call.
	Entities func(fn func(e Entity) error) error
}

// Entity is one entity read from a source.
type Entity struct {
	*edm.Entity
	// Where says where the entity was read, for the errors an import
	// names it in: "orders.jsonl:12", "sample.csv:3", "azurite: account
	// devstoreaccount1, table orders, entity (p1, r1)".
	Where string
	// KeepTimestamp says the Timestamp is the source's and is kept
	// (Entity.Timestamp, in ticks); otherwise the store stamps the entity
	// as it writes it, as an insert does.
	KeepTimestamp bool
}

// Source is what an import reads.
type Source interface {
	// Accounts reads the source's accounts, tables and policies; a table's
	// entities are read when its Entities is called. A source of one
	// account (every one but Azurite's) returns one.
	Accounts() ([]Account, error)
	// Close releases what the source holds (files, connections).
	Close() error
}

// TableInfo is a table as an export hands it to a sink.
type TableInfo struct {
	Account string
	Name    string
	ACL     []store.SignedIdentifier
}

// Sink is what an export writes: each table in turn, in the order of
// Query Tables, its entities in PartitionKey, RowKey order.
type Sink interface {
	// Properties is called once, before the first table, with the
	// account's service properties (the Get Table Service Properties body);
	// a format with no place for them ignores them.
	Properties(account string, doc []byte) error
	// Table starts a table; the entities that follow are its.
	Table(t TableInfo) error
	// Entity writes one entity of the current table; e is the sink's only
	// during the call.
	Entity(e *edm.Entity) error
	// Close ends the last table and the export; an export that failed
	// still calls it, after which the sink may hold part of the data.
	Close() error
}
