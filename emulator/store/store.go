// Package store is the storage contract the emulator calls, and what of
// storage does not depend on the database engine. Every store operation
// runs inside a View or Update closure, and each closure is one
// transaction of the engine: a $batch is one Update that calls the same
// primitives as single requests, so it commits or rolls back whole.
//
// Engines live beneath it, one folder each: store/sqlite (the embedded
// default, modernc.org/sqlite) and store/postgres (PostgreSQL and the
// engines that speak its protocol, through pgx). Each implements Engine
// and EngineTx (engine.go); store.New wraps one in the Store the emulator
// holds. store/storetest is the behavioural test suite every engine
// passes.
//
// What is shared here: the contract's types (Table, EntityQuery, Key,
// ScanResult, SignedIdentifier, Snapshot), its sentinel errors and storage
// faults, the stored form of keys (SortKey: Azure's UTF-16 ordinal order as
// byte order) and of properties (EncodeProps), the key range of a query
// (Bounds), query shapes (Classify) and the rules a filter compiled to SQL
// must keep to agree with odata.Eval (filter.go).
//
// The store knows nothing of HTTP or the wire format; it returns the
// sentinel errors below and the caller maps them to Azure error codes.
package store

import (
	"context"
	"errors"

	"github.com/tableemu/tableemu/odata/edm"
)

// Sentinel errors. Callers compare with errors.Is.
var (
	ErrTableExists     = errors.New("table already exists")
	ErrTableNotFound   = errors.New("table not found")
	ErrEntityExists    = errors.New("entity already exists")
	ErrEntityNotFound  = errors.New("entity not found")
	ErrBadContinuation = errors.New("continuation token is not valid")
	// ErrClosed is returned by View and Update after Close.
	ErrClosed = errors.New("store is closed")
)

// Store is an open store of one engine. It is safe for concurrent use.
type Store struct {
	e Engine
}

// New wraps an engine. Engines' Open functions call it.
func New(e Engine) *Store { return &Store{e: e} }

// Tx is one transaction, valid only inside its closure. Its methods are
// the engine's (EngineTx), plus QueryEntities.
type Tx struct {
	EngineTx
}

// View runs fn in a read-only transaction that sees one consistent
// snapshot of the data.
func (s *Store) View(ctx context.Context, fn func(*Tx) error) error {
	return s.e.View(ctx, func(t EngineTx) error { return fn(&Tx{t}) })
}

// ViewPoint is View for a closure that reads a handful of rows (a point
// read, a table or policy lookup); an engine may serve it differently.
func (s *Store) ViewPoint(ctx context.Context, fn func(*Tx) error) error {
	return s.e.ViewPoint(ctx, func(t EngineTx) error { return fn(&Tx{t}) })
}

// Update runs fn in a write transaction: if fn returns nil its changes
// commit before Update returns, otherwise nothing it did stays. An engine
// may run fn more than once (PostgreSQL retries a transaction that lost a
// serialization conflict), so fn must not have effects outside the
// transaction other than setting its caller's variables. fn must not call
// Update or View.
//
// The work runs under ctx: when ctx ends (a request's deadline), Update
// returns its error (errors.Is context.DeadlineExceeded) instead of
// waiting on, and fn's statements fail. Either all of fn's changes
// committed or none did; which one is known unless ctx ended while the
// commit was on its way to an external database, whose answer is then
// lost — the write may or may not have been applied, as a write the
// Table service answers OperationTimedOut (docs/durability.md).
func (s *Store) Update(ctx context.Context, fn func(*Tx) error) error {
	return s.e.Update(ctx, func(t EngineTx) error { return fn(&Tx{t}) })
}

// Close closes the store. Pending closures finish first.
func (s *Store) Close() error { return s.e.Close() }

// Describe says where the data lives, for the start line: a file, memory,
// or a database server (never with a password).
func (s *Store) Describe() Location { return s.e.Describe() }

// Shared reports whether other processes may write the same data (an
// external database): then nothing read from the store may be kept in
// memory for more than a second (docs/postgres.md).
func (s *Store) Shared() bool { return s.e.Describe().Shared }

// Announce records the port this store's server listens on, where the
// engine has a use for it (SQLite names the holder of a data directory).
func (s *Store) Announce(port int) error {
	if a, ok := s.e.(interface{ Announce(int) error }); ok {
		return a.Announce(port)
	}
	return nil
}

// CollectGarbage deletes now what resets, restores and deleted tables
// left for the background collector, for tests and benchmarks.
func (s *Store) CollectGarbage(ctx context.Context) error {
	if g, ok := s.e.(interface{ CollectGarbage(context.Context) error }); ok {
		return g.CollectGarbage(ctx)
	}
	return nil
}

// Engine returns the engine, for its own tests.
func (s *Store) Engine() Engine { return s.e }

// QueryEntities returns one page of the entities of t that match q, in
// PartitionKey, RowKey order: ScanEntities, with each entity copied.
func (tx *Tx) QueryEntities(t Table, q EntityQuery) (EntityPage, error) {
	var page EntityPage
	res, err := tx.ScanEntities(t, q, func(e *edm.Entity) error {
		c := *e
		c.PartitionKey, c.RowKey = cloneString(e.PartitionKey), cloneString(e.RowKey)
		c.Properties = make([]edm.Property, len(e.Properties))
		for i, p := range e.Properties {
			p.Name = cloneString(p.Name)
			p.Value.S = cloneString(p.Value.S)
			p.Value.B = append([]byte(nil), p.Value.B...)
			p.Plain = false
			c.Properties[i] = p
		}
		page.Entities = append(page.Entities, &c)
		return nil
	})
	page.ScanResult = res
	return page, err
}

// cloneString copies s, which may point into an engine's row buffer.
func cloneString(s string) string {
	if s == "" {
		return ""
	}
	return string([]byte(s))
}
