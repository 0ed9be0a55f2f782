// Package isolation is tableemu's test isolation (docs/isolation.md):
// reset an account to the state of a freshly started server, save its
// state as a named snapshot and restore it, from Go (this file) and over
// HTTP under /_tableemu/accounts/ (http.go). Each is one store
// transaction (emulator/store/sqlite/gc.go and snapshot.go), so a request
// running meanwhile sees the account before or after, whole; the data,
// snapshots included, is in the database and nothing of it is kept in
// this process but the server's service properties cache, which is
// dropped under its lock in the same step (Config.LockProps). The server
// (package emulator) mounts it and offers the same operations as methods
// of its Server, which `tableemu reset` and `tableemu snapshot`
// (cmd/tableemu) run; this package does not know the server.
package isolation

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/auth"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata/edm"
)

// Config is what the server hands isolation: its store and accounts, and
// the few of its services the operations need.
type Config struct {
	Store    *store.Store
	Accounts map[string]*auth.Account // read only
	// LockProps takes the turn of the server's service properties cache:
	// a request that reads the properties meanwhile waits (until its
	// deadline). Waiting ends with ctx. UnlockProps drops what the cache
	// held for account (every account's for "") and gives the turn back.
	LockProps   func(ctx context.Context) error
	UnlockProps func(account string)
	// StoreError turns a store error into the service's error
	// (tableemu.Error, a timeout's OperationTimedOut among them).
	StoreError func(error) error
	// Authorize decides whether r may reset or snapshot account, the
	// account its URL names (unsigned over loopback for devstoreaccount1
	// with its public key, else Shared Key): nil, or the refusal.
	Authorize func(r *http.Request, account string) error
	// Timeout is how long an HTTP request may take (0: DefaultTimeout;
	// at most MaxTimeout).
	Timeout time.Duration
}

// Isolation runs the operations on one server's store.
type Isolation struct{ cfg Config }

// New returns the isolation operations cfg describes.
func New(cfg Config) *Isolation {
	return &Isolation{cfg}
}

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

func (iso *Isolation) checkAccount(account string) error {
	if iso.cfg.Accounts[account] == nil {
		return unknownAccount(account)
	}
	return nil
}

// withProps runs fn, which changes account's stored service properties
// (every account's for ""), holding the properties cache's turn, so that
// a request reads them as they were or as fn left them. The cache is
// dropped even when fn failed: a failed commit may have gone through.
func (iso *Isolation) withProps(ctx context.Context, account string, fn func() error) error {
	if err := iso.cfg.LockProps(ctx); err != nil {
		return err
	}
	defer iso.cfg.UnlockProps(account)
	return fn()
}

// Reset returns account to the state of a freshly started server: no
// tables, entities or stored access policies, and the default service
// properties (so no CORS rules). Its snapshots stay. A request running
// meanwhile sees the account before or after, never in between. It
// reports how many tables it removed.
func (iso *Isolation) Reset(ctx context.Context, account string) (tables int, err error) {
	if err := iso.checkAccount(account); err != nil {
		return 0, err
	}
	err = iso.withProps(ctx, account, func() error {
		return iso.cfg.Store.Update(ctx, func(tx *store.Tx) error {
			var err error
			tables, err = tx.ResetAccount(account)
			return err
		})
	})
	return tables, err
}

// ResetAll resets every account the database holds, configured or not, in
// one transaction. Snapshots stay.
func (iso *Isolation) ResetAll(ctx context.Context) error {
	return iso.withProps(ctx, "", func() error {
		return iso.cfg.Store.Update(ctx, func(tx *store.Tx) error {
			_, err := tx.ResetAll()
			return err
		})
	})
}

// Snapshot saves account's current state — tables, entities with their
// Timestamps, stored access policies, service properties — under name,
// replacing a snapshot of that name (replaced). Snapshots are kept with
// the data and are not tables: no request of the Table API sees them.
func (iso *Isolation) Snapshot(ctx context.Context, account, name string) (info SnapshotInfo, replaced bool, err error) {
	if err := iso.checkAccount(account); err != nil {
		return info, false, err
	}
	if err := checkSnapshotName(name); err != nil {
		return info, false, err
	}
	var sn store.Snapshot
	err = iso.cfg.Store.Update(ctx, func(tx *store.Tx) error {
		var err error
		sn, replaced, err = tx.SaveSnapshot(account, name)
		return err
	})
	return snapshotInfo(account, sn), replaced, iso.cfg.StoreError(err)
}

// Restore puts account back exactly as the snapshot name saved it, in one
// transaction: a request running meanwhile sees the account before or
// after, never in between. It rewrites what changed since the snapshot was
// saved or last restored, not the whole snapshot.
func (iso *Isolation) Restore(ctx context.Context, account, name string) (SnapshotInfo, error) {
	if err := iso.checkAccount(account); err != nil {
		return SnapshotInfo{}, err
	}
	if err := checkSnapshotName(name); err != nil {
		return SnapshotInfo{}, err
	}
	var sn store.Snapshot
	err := iso.withProps(ctx, account, func() error {
		return iso.cfg.Store.Update(ctx, func(tx *store.Tx) error {
			var err error
			sn, err = tx.RestoreSnapshot(account, name)
			return err
		})
	})
	if errors.Is(err, store.ErrSnapshotNotFound) {
		return SnapshotInfo{}, snapshotNotFound(account, name)
	}
	return snapshotInfo(account, sn), iso.cfg.StoreError(err)
}

// Snapshots lists account's snapshots by name.
func (iso *Isolation) Snapshots(ctx context.Context, account string) ([]SnapshotInfo, error) {
	if err := iso.checkAccount(account); err != nil {
		return nil, err
	}
	var list []store.Snapshot
	err := iso.cfg.Store.View(ctx, func(tx *store.Tx) error {
		var err error
		list, err = tx.Snapshots(account)
		return err
	})
	out := make([]SnapshotInfo, 0, len(list))
	for _, sn := range list {
		out = append(out, snapshotInfo(account, sn))
	}
	return out, iso.cfg.StoreError(err)
}

// Info describes one snapshot of account.
func (iso *Isolation) Info(ctx context.Context, account, name string) (SnapshotInfo, error) {
	if err := iso.checkAccount(account); err != nil {
		return SnapshotInfo{}, err
	}
	if err := checkSnapshotName(name); err != nil {
		return SnapshotInfo{}, err
	}
	var sn store.Snapshot
	err := iso.cfg.Store.View(ctx, func(tx *store.Tx) error {
		var err error
		sn, err = tx.GetSnapshot(account, name)
		return err
	})
	if errors.Is(err, store.ErrSnapshotNotFound) {
		return SnapshotInfo{}, snapshotNotFound(account, name)
	}
	return snapshotInfo(account, sn), iso.cfg.StoreError(err)
}

// DeleteSnapshot deletes account's snapshot name.
func (iso *Isolation) DeleteSnapshot(ctx context.Context, account, name string) error {
	if err := iso.checkAccount(account); err != nil {
		return err
	}
	if err := checkSnapshotName(name); err != nil {
		return err
	}
	err := iso.cfg.Store.Update(ctx, func(tx *store.Tx) error { return tx.DeleteSnapshot(account, name) })
	if errors.Is(err, store.ErrSnapshotNotFound) {
		return snapshotNotFound(account, name)
	}
	return iso.cfg.StoreError(err)
}

func snapshotInfo(account string, sn store.Snapshot) SnapshotInfo {
	return SnapshotInfo{Account: account, Name: sn.Name, Created: edm.TimeFromTicks(sn.Created).UTC(),
		Tables: sn.Tables, Entities: sn.Entities}
}

// String describes the snapshot in a line, as tableemu snapshot prints it.
func (i SnapshotInfo) String() string {
	return fmt.Sprintf("%s: %d tables, %d entities, saved %s", i.Name, i.Tables, i.Entities, i.Created.Format(time.RFC3339))
}
