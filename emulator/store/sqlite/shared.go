package sqlite

import "github.com/tableemu/tableemu/emulator/store"

// The contract's types and errors under their short names, so that this
// engine's code reads as it did when it was the whole store.
type (
	Table            = store.Table
	TableQuery       = store.TableQuery
	TablePage        = store.TablePage
	Key              = store.Key
	KeyRange         = store.KeyRange
	EntityQuery      = store.EntityQuery
	EntityPage       = store.EntityPage
	ScanResult       = store.ScanResult
	SignedIdentifier = store.SignedIdentifier
	Snapshot         = store.Snapshot
)

var (
	ErrTableExists      = store.ErrTableExists
	ErrTableNotFound    = store.ErrTableNotFound
	ErrEntityExists     = store.ErrEntityExists
	ErrEntityNotFound   = store.ErrEntityNotFound
	ErrSnapshotNotFound = store.ErrSnapshotNotFound
	ErrClosed           = store.ErrClosed
)

// scanBudget is store.ScanBudget; tests lower it to reach the budget with
// few entities.
var scanBudget = store.ScanBudget

func sortKey(s string) string     { return store.SortKey(s) }
func fromSortKey(s string) string { return store.FromSortKey(s) }
