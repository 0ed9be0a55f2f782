package store

import (
	"context"

	"github.com/tableemu/tableemu/odata/edm"
)

// Engine is what a database engine implements to be a store: transactions
// through closures, like bbolt's db.View and db.Update. store/storetest
// holds the behaviour every engine must have.
type Engine interface {
	// View runs fn in a read-only transaction over one consistent
	// snapshot; ViewPoint is View for a closure that reads a few rows.
	View(ctx context.Context, fn func(EngineTx) error) error
	ViewPoint(ctx context.Context, fn func(EngineTx) error) error
	// Update runs fn in a write transaction that commits only if fn
	// returns nil, atomically and isolated from every other transaction
	// (serializable, as the service's single-entity and entity group
	// transactions need). It may run fn again after a conflict the
	// engine resolves by retrying.
	Update(ctx context.Context, fn func(EngineTx) error) error
	Close() error
	Describe() Location
}

// Location says where an engine keeps the data.
type Location struct {
	// Engine is "sqlite" or "postgres".
	Engine string
	// Where is the database file, ":memory:", or for a database server
	// its address and database as user@host:port/db, without a password.
	Where string
	// Shared: other processes may write the same data (see Store.Shared).
	Shared bool
}

// EngineTx is one transaction of an engine, valid only inside its closure.
// Each method is the operation of the same name in the Table service, or
// the part of one that touches storage; docs/protocol.md has their rules.
type EngineTx interface {
	// CreateTable creates a table; ErrTableExists if one with the same
	// name in any case exists (docs/protocol.md 1.4). The caller
	// validates the name.
	CreateTable(account, name string) (Table, error)
	// GetTable finds a table by name, in any case; ErrTableNotFound if
	// absent.
	GetTable(account, name string) (Table, error)
	// DeleteTable deletes a table, its entities and policies at once for
	// every reader; ErrTableNotFound if absent.
	DeleteTable(account, name string) error
	// QueryTables lists an account's tables ordered by lower-cased name.
	QueryTables(account string, q TableQuery) (TablePage, error)

	// GetEntity reads one entity; ErrEntityNotFound if absent. The
	// entity is a new copy, the caller's to change.
	GetEntity(t Table, pk, rk string) (*edm.Entity, error)
	// ReadEntity is GetEntity for a caller that is done with the entity
	// when fn returns (a point read encodes it there): fn is called once
	// with it and its error returned; ErrEntityNotFound, without calling
	// fn, if absent. e, its properties and the strings in them may point
	// into the engine's buffers and are valid only during the call.
	ReadEntity(t Table, pk, rk string, fn func(e *edm.Entity) error) error
	// InsertEntity stores a new entity and sets its Timestamp;
	// ErrEntityExists if the keys are taken. The writes (InsertEntity,
	// PutEntity, LoadEntity) may keep e's key strings after they return
	// (the SQLite engine's filter cache holds them until the commit and
	// then in memory): the caller must not change the memory they are in.
	InsertEntity(t Table, e *edm.Entity) error
	// PutEntity writes e whether or not it exists, replacing every
	// property, and sets its Timestamp later than prev (the Timestamp of
	// the version it replaces, 0 if none), so that every version of an
	// entity has its own ETag.
	PutEntity(t Table, e *edm.Entity, prev int64) error
	// LoadEntity writes e whether or not it exists, replacing every
	// property, with e.Timestamp as given rather than stamped: an import
	// that keeps its source's Timestamps (docs/transfer.md). A later
	// write of the entity passes it as prev, so its next version is
	// still stamped later than the loaded one.
	LoadEntity(t Table, e *edm.Entity) error
	// ShareTimestamp makes the entities this transaction writes from now
	// on take one Timestamp, that of the first: the service gives the
	// writes of one change set one time, where each single request gets
	// its own (docs/protocol.md 7.3).
	ShareTimestamp()
	// DeleteEntity removes an entity; ErrEntityNotFound if absent.
	DeleteEntity(t Table, pk, rk string) error
	// ScanEntities calls fn with each entity of one page of the query,
	// in PartitionKey, RowKey order (UTF-16 ordinal). e and the strings
	// in it may point into the engine's buffers and are valid only
	// during the call.
	ScanEntities(t Table, q EntityQuery, fn func(e *edm.Entity) error) (ScanResult, error)

	// TableACL returns t's stored access policies in the order set.
	TableACL(t Table) ([]SignedIdentifier, error)
	// SetTableACL replaces t's stored access policies.
	SetTableACL(t Table, ids []SignedIdentifier) error
	// AccessPolicy finds policy id of the table named table (any case).
	AccessPolicy(account, table, id string) (SignedIdentifier, bool, error)

	// ServiceProperties returns the account's service properties
	// document as stored; ok is false when none was ever set.
	ServiceProperties(account string) (doc string, ok bool, err error)
	// SetServiceProperties stores the document, replacing the last.
	SetServiceProperties(account, doc string) error

	// Snapshots, resets and restores (docs/isolation.md): each is one
	// transaction, so every reader sees the account before or after.
	Snapshots(account string) ([]Snapshot, error)
	GetSnapshot(account, name string) (Snapshot, error)
	SaveSnapshot(account, name string) (sn Snapshot, replaced bool, err error)
	DeleteSnapshot(account, name string) error
	RestoreSnapshot(account, name string) (Snapshot, error)
	ResetAccount(account string) (tables int, err error)
	ResetAll() (tables int, err error)
}
