package emulator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata/edm"
)

// Test isolation (docs/isolation.md): reset an account to the state of a
// freshly started server, save its state as a named snapshot and restore
// it. Each is one store transaction (store/sqlite/gc.go, store/sqlite/snapshot.go), so a
// request running meanwhile sees the account before or after, whole; the
// data, snapshots included, is in the database and nothing of it is kept
// in this process but the service properties cache, which is dropped under
// its lock in the same step (propsCache). The same operations are served
// over HTTP under /_tableemu/accounts/ (isolation_http.go) and run by
// `tableemu reset` and `tableemu snapshot` (cmd/tableemu).

// Errors of the isolation methods; test with errors.Is. Each also carries
// the service error the HTTP endpoints answer with (tableemu.From).
var (
	// ErrUnknownAccount: the server has no such account (AZURITE_ACCOUNTS
	// sets them).
	ErrUnknownAccount = errors.New("unknown account")
	// ErrSnapshotNotFound: the account has no snapshot of that name.
	ErrSnapshotNotFound = errors.New("snapshot not found")
	// ErrInvalidSnapshotName: the name breaks SnapshotNameRule.
	ErrInvalidSnapshotName = errors.New("invalid snapshot name")
)

// SnapshotNameRule is what a snapshot name may be. Names are compared
// exactly (case matters).
const SnapshotNameRule = "1 to 64 characters: letters, digits, '-', '_' and '.', starting with a letter or a digit"

// SnapshotInfo describes a snapshot.
type SnapshotInfo struct {
	Account  string    `json:"account"`
	Name     string    `json:"name"`
	Created  time.Time `json:"created"`
	Tables   int       `json:"tables"`
	Entities int       `json:"entities"`
}

// isolationError is a failure of the isolation methods: a sentinel for
// errors.Is, and the service error for the HTTP answer.
type isolationError struct {
	sentinel error
	e        *tableemu.Error
}

// Error is the message on one line (a hint after a space, not on a line of
// its own: tableemu.Error.Error).
func (e *isolationError) Error() string   { return strings.ReplaceAll(e.e.Message, "\n", " ") }
func (e *isolationError) Unwrap() []error { return []error{e.sentinel, e.e} }

func unknownAccount(account string) error {
	return &isolationError{ErrUnknownAccount, tableemu.New(tableemu.ResourceNotFound).WithHint(
		"this server has no account %q; AZURITE_ACCOUNTS sets the accounts (devstoreaccount1 when it is unset).", account)}
}

func snapshotNotFound(account, name string) error {
	return &isolationError{ErrSnapshotNotFound, tableemu.Newf(tableemu.SnapshotNotFound,
		"Account %s has no snapshot named %q: save it first (tableemu snapshot save %s, or PUT /_tableemu/accounts/%s/snapshots/%s); "+
			"tableemu snapshot list, or GET /_tableemu/accounts/%s/snapshots, lists those it has.",
		account, name, name, account, name, account)}
}

// checkSnapshotName applies SnapshotNameRule.
func checkSnapshotName(name string) error {
	ok := len(name) >= 1 && len(name) <= 64
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		ok = alnum || i > 0 && (c == '-' || c == '_' || c == '.')
	}
	if ok {
		return nil
	}
	return &isolationError{ErrInvalidSnapshotName, tableemu.Newf(tableemu.InvalidSnapshotName,
		"The snapshot name %q is not valid: a snapshot name is %s.", name, SnapshotNameRule)}
}

func (s *Server) checkAccount(account string) error {
	if s.accounts[account] == nil {
		return unknownAccount(account)
	}
	return nil
}

// Reset returns account to the state of a freshly started server: no
// tables, entities or stored access policies, and the default service
// properties (so no CORS rules). Its snapshots stay. A request running
// meanwhile sees the account before or after, never in between.
func (s *Server) Reset(ctx context.Context, account string) error {
	_, err := s.reset(ctx, account)
	return err
}

// reset is Reset, reporting how many tables it removed.
func (s *Server) reset(ctx context.Context, account string) (tables int, err error) {
	if err := s.checkAccount(account); err != nil {
		return 0, err
	}
	err = s.withProps(ctx, account, func() error {
		return s.store.Update(ctx, func(tx *store.Tx) error {
			var err error
			tables, err = tx.ResetAccount(account)
			return err
		})
	})
	return tables, err
}

// ResetAll resets every account the database holds, configured or not, in
// one transaction. Snapshots stay.
func (s *Server) ResetAll(ctx context.Context) error {
	return s.withProps(ctx, "", func() error {
		return s.store.Update(ctx, func(tx *store.Tx) error {
			_, err := tx.ResetAll()
			return err
		})
	})
}

// withProps runs fn, which changes account's stored service properties
// (every account's for ""), holding the properties cache's turn, and drops
// what the cache held: a request that reads the properties meanwhile
// waits (until its deadline), and then reads them from the store as fn
// left them. Waiting for the turn ends with ctx, fn never having run.
func (s *Server) withProps(ctx context.Context, account string, fn func() error) error {
	pc := &s.props
	if err := pc.lock(ctx); err != nil {
		return err
	}
	defer pc.unlock()
	err := fn()
	// Dropped even when fn failed: a failed commit may have gone through.
	pc.mu.Lock()
	if account == "" {
		pc.m = nil
	} else {
		delete(pc.m, account)
	}
	pc.mu.Unlock()
	return err
}

// Snapshot saves account's current state — tables, entities with their
// Timestamps, stored access policies, service properties — under name,
// replacing a snapshot of that name. Snapshots are kept with the data (in
// the database file, or in memory with InMemory) and are not tables: no
// request of the Table API sees them.
func (s *Server) Snapshot(ctx context.Context, account, name string) (SnapshotInfo, error) {
	info, _, err := s.snapshot(ctx, account, name)
	return info, err
}

func (s *Server) snapshot(ctx context.Context, account, name string) (info SnapshotInfo, replaced bool, err error) {
	if err := s.checkAccount(account); err != nil {
		return info, false, err
	}
	if err := checkSnapshotName(name); err != nil {
		return info, false, err
	}
	var sn store.Snapshot
	err = s.store.Update(ctx, func(tx *store.Tx) error {
		var err error
		sn, replaced, err = tx.SaveSnapshot(account, name)
		return err
	})
	return snapshotInfo(account, sn), replaced, storeErr(err)
}

// Restore puts account back exactly as the snapshot name saved it, in one
// transaction: a request running meanwhile sees the account before or
// after, never in between. It rewrites what changed since the snapshot was
// saved or last restored, not the whole snapshot.
func (s *Server) Restore(ctx context.Context, account, name string) (SnapshotInfo, error) {
	if err := s.checkAccount(account); err != nil {
		return SnapshotInfo{}, err
	}
	if err := checkSnapshotName(name); err != nil {
		return SnapshotInfo{}, err
	}
	var sn store.Snapshot
	err := s.withProps(ctx, account, func() error {
		return s.store.Update(ctx, func(tx *store.Tx) error {
			var err error
			sn, err = tx.RestoreSnapshot(account, name)
			return err
		})
	})
	if errors.Is(err, store.ErrSnapshotNotFound) {
		return SnapshotInfo{}, snapshotNotFound(account, name)
	}
	return snapshotInfo(account, sn), storeErr(err)
}

// Snapshots lists account's snapshots by name.
func (s *Server) Snapshots(ctx context.Context, account string) ([]SnapshotInfo, error) {
	if err := s.checkAccount(account); err != nil {
		return nil, err
	}
	var list []store.Snapshot
	err := s.store.View(ctx, func(tx *store.Tx) error {
		var err error
		list, err = tx.Snapshots(account)
		return err
	})
	out := make([]SnapshotInfo, 0, len(list))
	for _, sn := range list {
		out = append(out, snapshotInfo(account, sn))
	}
	return out, storeErr(err)
}

// SnapshotInfo describes one snapshot of account.
func (s *Server) SnapshotInfo(ctx context.Context, account, name string) (SnapshotInfo, error) {
	if err := s.checkAccount(account); err != nil {
		return SnapshotInfo{}, err
	}
	if err := checkSnapshotName(name); err != nil {
		return SnapshotInfo{}, err
	}
	var sn store.Snapshot
	err := s.store.View(ctx, func(tx *store.Tx) error {
		var err error
		sn, err = tx.GetSnapshot(account, name)
		return err
	})
	if errors.Is(err, store.ErrSnapshotNotFound) {
		return SnapshotInfo{}, snapshotNotFound(account, name)
	}
	return snapshotInfo(account, sn), storeErr(err)
}

// DeleteSnapshot deletes account's snapshot name.
func (s *Server) DeleteSnapshot(ctx context.Context, account, name string) error {
	if err := s.checkAccount(account); err != nil {
		return err
	}
	if err := checkSnapshotName(name); err != nil {
		return err
	}
	err := s.store.Update(ctx, func(tx *store.Tx) error { return tx.DeleteSnapshot(account, name) })
	if errors.Is(err, store.ErrSnapshotNotFound) {
		return snapshotNotFound(account, name)
	}
	return storeErr(err)
}

func snapshotInfo(account string, sn store.Snapshot) SnapshotInfo {
	return SnapshotInfo{Account: account, Name: sn.Name, Created: edm.TimeFromTicks(sn.Created).UTC(),
		Tables: sn.Tables, Entities: sn.Entities}
}

// String describes the snapshot in a line, as tableemu snapshot prints it.
func (i SnapshotInfo) String() string {
	return fmt.Sprintf("%s: %d tables, %d entities, saved %s", i.Name, i.Tables, i.Entities, i.Created.Format(time.RFC3339))
}
