package emulator

import (
	"context"

	"github.com/tableemu/tableemu/emulator/isolation"
)

// Test isolation (docs/isolation.md) is emulator/isolation: reset an
// account, save and restore snapshots, from Go through the Server's
// methods below and over HTTP under /_tableemu/accounts/, which serveTool
// hands it. The server lends it its store, accounts and error mapping,
// the properties cache's lock (lockProps), and Shared Key verification.

// Errors of the isolation methods; test with errors.Is. Each also carries
// the service error the HTTP endpoints answer with (tableemu.From).
var (
	// ErrUnknownAccount: the server has no such account (AZURITE_ACCOUNTS
	// sets them).
	ErrUnknownAccount = isolation.ErrUnknownAccount
	// ErrSnapshotNotFound: the account has no snapshot of that name.
	ErrSnapshotNotFound = isolation.ErrSnapshotNotFound
	// ErrInvalidSnapshotName: the name breaks SnapshotNameRule.
	ErrInvalidSnapshotName = isolation.ErrInvalidSnapshotName
)

// SnapshotNameRule is what a snapshot name may be. Names are compared
// exactly (case matters).
const SnapshotNameRule = isolation.SnapshotNameRule

// SnapshotInfo describes a snapshot.
type SnapshotInfo = isolation.SnapshotInfo

const (
	// DefaultIsolationTimeout is Config.IsolationTimeout when zero.
	DefaultIsolationTimeout = isolation.DefaultTimeout
	// MaxIsolationTimeout is the most Config.IsolationTimeout can be:
	// a minute below the server's WriteTimeout, time to answer in.
	MaxIsolationTimeout = isolation.MaxTimeout
)

// newIsolation lends the isolation operations what they need of s.
func newIsolation(s *Server) *isolation.Isolation {
	return isolation.New(isolation.Config{
		Store:       s.store,
		Accounts:    s.accounts,
		LockProps:   s.props.lock,
		UnlockProps: s.unlockProps,
		StoreError:  storeErr,
		Authorize: s.authorizeAccount(accountTool{one: "a reset or snapshot", many: "resets and snapshots",
			noSAS: "a SAS grants operations on tables", by: "tableemu reset and the test helpers", doc: "docs/isolation.md"}),
		Timeout: s.cfg.IsolationTimeout,
	})
}

// Reset returns account to the state of a freshly started server: no
// tables, entities or stored access policies, and the default service
// properties (so no CORS rules). Its snapshots stay. A request running
// meanwhile sees the account before or after, never in between.
func (s *Server) Reset(ctx context.Context, account string) error {
	_, err := s.iso.Reset(ctx, account)
	return err
}

// ResetAll resets every account the database holds, configured or not, in
// one transaction. Snapshots stay.
func (s *Server) ResetAll(ctx context.Context) error { return s.iso.ResetAll(ctx) }

// Snapshot saves account's current state — tables, entities with their
// Timestamps, stored access policies, service properties — under name,
// replacing a snapshot of that name. Snapshots are kept with the data (in
// the database file, or in memory with InMemory) and are not tables: no
// request of the Table API sees them.
func (s *Server) Snapshot(ctx context.Context, account, name string) (SnapshotInfo, error) {
	info, _, err := s.iso.Snapshot(ctx, account, name)
	return info, err
}

// Restore puts account back exactly as the snapshot name saved it, in one
// transaction: a request running meanwhile sees the account before or
// after, never in between. It rewrites what changed since the snapshot was
// saved or last restored, not the whole snapshot.
func (s *Server) Restore(ctx context.Context, account, name string) (SnapshotInfo, error) {
	return s.iso.Restore(ctx, account, name)
}

// Snapshots lists account's snapshots by name.
func (s *Server) Snapshots(ctx context.Context, account string) ([]SnapshotInfo, error) {
	return s.iso.Snapshots(ctx, account)
}

// SnapshotInfo describes one snapshot of account.
func (s *Server) SnapshotInfo(ctx context.Context, account, name string) (SnapshotInfo, error) {
	return s.iso.Info(ctx, account, name)
}

// DeleteSnapshot deletes account's snapshot name.
func (s *Server) DeleteSnapshot(ctx context.Context, account, name string) error {
	return s.iso.DeleteSnapshot(ctx, account, name)
}

// unlockProps drops what the properties cache holds for account (every
// account's for ""), whose stored properties a reset or restore changed
// holding the cache's turn (props.lock), and gives the turn back.
func (s *Server) unlockProps(account string) {
	pc := &s.props
	pc.mu.Lock()
	if account == "" {
		pc.m = nil
	} else {
		delete(pc.m, account)
	}
	pc.mu.Unlock()
	pc.unlock()
}
