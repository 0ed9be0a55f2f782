package transfer

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"strings"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/wire"
	"github.com/tableemu/tableemu/odata/edm"
)

// progressEvery is how many entities of a table pass between two Progress
// calls.
const progressEvery = 5000

// Import writes the source's tables into the store: each table in one
// transaction, all of it or none (an error names the entity's Where and
// why). A source account with a name goes to the account of that name,
// one without to o.Account.
//
// Every table of the source (or of o.Tables) is checked before anything
// is written: its name and stored access policies by the service's rules,
// and with ModeFail that the account does not have it, so that such a
// refusal leaves the account untouched. An entity the service would
// refuse, or a key twice in one table, is found while its table is
// written and undoes that table only: the tables imported before it stay.
// Service properties are set last, after the account's tables.
func (t *Transfer) Import(ctx context.Context, src Source, o Options) (Summary, error) {
	var sum Summary
	mode := o.Mode
	if mode == "" {
		mode = ModeFail
	}
	if mode != ModeFail && mode != ModeReplace && mode != ModeMerge {
		return sum, fail(ErrInvalidOptions, tableemu.New(tableemu.InvalidInput).WithHint(
			"%q is not an import mode: the modes are fail (the default: refuse a table the account has), replace and merge.", string(mode)))
	}
	accounts, err := src.Accounts()
	if err != nil {
		return sum, err
	}
	type job struct {
		account string
		tables  []*Table
		props   []byte
	}
	var jobs []job
	for _, a := range accounts {
		account := a.Name
		if account == "" {
			account = t.account(o)
		}
		if t.cfg.Accounts[account] == nil {
			return sum, unknownAccount(account)
		}
		tables, err := chooseTables(a.Tables, o.Tables, account, t.cfg.ExactTableNames)
		if err != nil {
			return sum, err
		}
		for _, tb := range tables {
			if err := checkTable(tb); err != nil {
				return sum, err
			}
		}
		jobs = append(jobs, job{account, tables, a.Properties})
	}
	if mode == ModeFail {
		err := t.cfg.Store.View(ctx, func(tx *store.Tx) error {
			for _, j := range jobs {
				for _, tb := range j.tables {
					got, err := tx.GetTable(j.account, tb.Name)
					if err == nil {
						return tableExists(j.account, tb.Name, got.Name)
					}
					if !errors.Is(err, store.ErrTableNotFound) {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return sum, t.storeError(err)
		}
	}
	for _, j := range jobs {
		for _, tb := range j.tables {
			n, err := t.importTable(ctx, j.account, tb, mode, o.Progress)
			if err != nil {
				return sum, err
			}
			sum.Tables++
			sum.Entities += n
		}
		if j.props != nil && t.cfg.SetProps != nil {
			if err := t.cfg.SetProps(ctx, j.account, j.props); err != nil {
				return sum, fmt.Errorf("account %s: service properties: %w", j.account, err)
			}
		}
	}
	return sum, nil
}

// chooseTables is the tables of a source account that only names (any
// case; exactly under exact, the store's ExactTableNames) lets through,
// all when only is nil. A name of only that the source lacks is an error,
// and so are two source tables of one name.
func chooseTables(tables []*Table, only []string, account string, exact bool) ([]*Table, error) {
	seen := make(map[string]string, len(tables))
	for _, tb := range tables {
		l := store.TableKey(tb.Name, exact)
		if first, ok := seen[l]; ok {
			if exact {
				return nil, fail(ErrInvalidTable, tableemu.New(tableemu.TableAlreadyExists).WithHint(
					"the source holds two tables named %q, for account %s: keep one.", first, account))
			}
			return nil, fail(ErrInvalidTable, tableemu.New(tableemu.TableAlreadyExists).WithHint(
				"the source holds two tables named %q and %q, for account %s; table names are the same in any case: keep one.", first, tb.Name, account))
		}
		seen[l] = tb.Name
	}
	if only == nil {
		return tables, nil
	}
	want := make(map[string]bool, len(only))
	for _, n := range only {
		l := store.TableKey(n, exact)
		if _, ok := seen[l]; !ok {
			return nil, fail(ErrTableNotFound, tableemu.New(tableemu.TableNotFound).WithHint(
				"the source has no table %q (for account %s); it has %s.", n, account, tableList(tables)))
		}
		want[l] = true
	}
	var out []*Table
	for _, tb := range tables {
		if want[store.TableKey(tb.Name, exact)] {
			out = append(out, tb)
		}
	}
	return out, nil
}

func tableList(tables []*Table) string {
	if len(tables) == 0 {
		return "none"
	}
	var names []string
	for i, tb := range tables {
		if i == 10 {
			names = append(names, "…")
			break
		}
		names = append(names, tb.Name)
	}
	return strings.Join(names, ", ")
}

// checkTable applies Create Table's rules to the name and Set Table ACL's
// to the policies, with the service's codes.
func checkTable(tb *Table) error {
	if err := wire.ValidateTableName(tb.Name); err != nil {
		return fail(ErrInvalidTable, tableemu.From(err))
	}
	err := wire.ValidateIdentifiers(len(tb.ACL), func(i int) (string, string) { return tb.ACL[i].ID, tb.ACL[i].Permission })
	if err != nil {
		e := tableemu.From(err)
		return fail(ErrInvalidTable, e.WithHint("table %s: its stored access policies break the service's rules (%s): at most %d, each with an Id of at most %d characters and permissions from \"raud\".",
			tb.Name, e.Detail, wire.MaxSignedIdentifiers, wire.MaxIdentifierLength))
	}
	return nil
}

func tableExists(account, name, existing string) error {
	return fail(ErrTableExists, tableemu.New(tableemu.TableAlreadyExists).WithHint(
		"account %s already has table %s, and the import's mode is fail: nothing was imported. Import with mode replace (the source's table replaces it) or merge (the source's entities are written over it).",
		account, existing))
}

// importTable writes one table in one transaction and returns how many
// entities it wrote.
func (t *Transfer) importTable(ctx context.Context, account string, src *Table, mode Mode, progress func(Progress)) (int, error) {
	exact := false
	for {
		n, err := t.writeTable(ctx, account, src, mode, progress, exact)
		var dup *suspectDuplicate
		if !errors.As(err, &dup) {
			return n, err
		}
		// Two keys of one hash: find the first entity of that key.
		if err := findDuplicate(src, dup); err != nil {
			return 0, err
		}
		// None before it: the hashes of two keys met. Again, keeping
		// the keys themselves.
		exact = true
	}
}

func (t *Transfer) writeTable(ctx context.Context, account string, src *Table, mode Mode, progress func(Progress), exact bool) (int, error) {
	var n int
	err := t.cfg.Store.Update(ctx, func(tx *store.Tx) error {
		n = 0
		tb, err := tx.GetTable(account, src.Name)
		exists := err == nil
		if err != nil && !errors.Is(err, store.ErrTableNotFound) {
			return err
		}
		switch {
		case exists && mode == ModeFail:
			// Made since Import looked.
			return tableExists(account, src.Name, tb.Name)
		case exists && mode == ModeReplace:
			if err := tx.DeleteTable(account, tb.Name); err != nil {
				return err
			}
			exists = false
		}
		if !exists {
			if tb, err = tx.CreateTable(account, src.Name); err != nil {
				return err
			}
		}
		if src.ACL != nil {
			if err := tx.SetTableACL(tb, src.ACL); err != nil {
				return err
			}
		}
		if src.Entities == nil {
			return nil // a table without entities
		}
		keys := newKeySet(exact)
		fresh := !exists
		err = src.Entities(func(e Entity) error {
			if n%256 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if err := wire.ValidateEntity(e.Entity); err != nil {
				return entityError(ErrInvalidEntity, err, src.Name, e.Where)
			}
			if e.KeepTimestamp && (e.Timestamp < edm.MinDateTime || e.Timestamp > edm.MaxDateTime) {
				return entityError(ErrInvalidEntity, tableemu.New(tableemu.InvalidInput).WithDetail(
					"its Timestamp (%d ticks) is outside 1601-01-01 to 9999-12-31", e.Timestamp), src.Name, e.Where)
			}
			if keys.add(e.PartitionKey, e.RowKey) {
				return &suspectDuplicate{pk: strings.Clone(e.PartitionKey), rk: strings.Clone(e.RowKey),
					where: strings.Clone(e.Where), table: src.Name, index: n}
			}
			// The store may keep the key strings past the write (the
			// SQLite engine's filter cache holds them until the commit,
			// and then in its tree), while a source's strings are its
			// only during the call (the JSON Lines reader's point into
			// its line buffer, which the next line overwrites).
			e.PartitionKey, e.RowKey = strings.Clone(e.PartitionKey), strings.Clone(e.RowKey)
			if err := write(tx, tb, e, fresh); err != nil {
				return storeFailure{err}
			}
			n++
			if progress != nil && n%progressEvery == 0 {
				// Outside the transaction, but only a report: a
				// closure run again counts from 0 again.
				progress(Progress{Account: account, Table: src.Name, Entities: n})
			}
			return nil
		})
		var dup *suspectDuplicate
		var te *transferError
		var sf storeFailure
		switch {
		case err == nil, errors.As(err, &dup), errors.As(err, &te), errors.Is(err, ctx.Err()):
			return err
		case errors.As(err, &sf):
			return sf.err
		}
		return sourceError{err}
	})
	var dup *suspectDuplicate
	var te *transferError
	var se sourceError
	switch {
	case err == nil:
		if progress != nil {
			progress(Progress{Account: account, Table: src.Name, Entities: n, Done: true})
		}
		return n, nil
	case errors.As(err, &dup), errors.As(err, &te):
		return 0, err
	case errors.As(err, &se):
		// The source's own (a line that is not JSON, a file that cannot
		// be read): a service error names the place already.
		var ae *tableemu.Error
		if errors.As(se.err, &ae) {
			return 0, se.err
		}
		return 0, fmt.Errorf("importing table %s: %w", src.Name, se.err)
	}
	return 0, t.storeError(err)
}

// write writes one entity of a source: with its Timestamp when the source
// keeps it; else stamped as an insert into a table the import created, or
// as Insert Or Replace over the version it replaces.
func write(tx *store.Tx, tb store.Table, e Entity, fresh bool) error {
	switch {
	case e.KeepTimestamp:
		return tx.LoadEntity(tb, e.Entity)
	case fresh:
		// The key set saw every key: an existing one is not possible.
		return tx.InsertEntity(tb, e.Entity)
	}
	prev := int64(0)
	err := tx.ReadEntity(tb, e.PartitionKey, e.RowKey, func(old *edm.Entity) error {
		prev = old.Timestamp
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrEntityNotFound) {
		return err
	}
	return tx.PutEntity(tb, e.Entity, prev)
}

// storeFailure is a store error met while a table's entities were read
// from its source; sourceError the source's own.
type storeFailure struct{ err error }

func (f storeFailure) Error() string { return f.err.Error() }
func (f storeFailure) Unwrap() error { return f.err }

type sourceError struct{ err error }

func (e sourceError) Error() string { return e.err.Error() }
func (e sourceError) Unwrap() error { return e.err }

// account is o.Account, or the server's development account when o
// names none.
func (t *Transfer) account(o Options) string {
	if o.Account == "" {
		return t.cfg.DevAccount
	}
	return o.Account
}

func (t *Transfer) storeError(err error) error {
	if t.cfg.StoreError != nil {
		return t.cfg.StoreError(err)
	}
	return err
}

// A keySet holds the keys of the entities a table's import has written,
// to find one written twice: as 64-bit hashes, 8 bytes a key however long
// (a table of millions of entities is still small beside them), with the
// keys themselves only once two hashes have met (exact).
type keySet struct {
	seed   maphash.Seed
	hashes map[uint64]struct{}
	keys   map[string]struct{}
}

func newKeySet(exact bool) *keySet {
	if exact {
		return &keySet{keys: make(map[string]struct{})}
	}
	return &keySet{seed: maphash.MakeSeed(), hashes: make(map[uint64]struct{})}
}

// add records a key and says whether it may have been recorded before:
// surely when exact, else when its hash was.
func (s *keySet) add(pk, rk string) bool {
	if s.keys != nil {
		k := pk + "\x00" + rk // copied: pk and rk may be the source's buffer
		if _, ok := s.keys[k]; ok {
			return true
		}
		s.keys[k] = struct{}{}
		return false
	}
	var h maphash.Hash
	h.SetSeed(s.seed)
	h.WriteString(pk)
	h.WriteByte(0)
	h.WriteString(rk)
	k := h.Sum64()
	if _, ok := s.hashes[k]; ok {
		return true
	}
	s.hashes[k] = struct{}{}
	return false
}

// suspectDuplicate is the entity at index whose key the key set may have
// seen: the import stops, and findDuplicate reads the source again.
type suspectDuplicate struct {
	pk, rk, where, table string
	index                int
}

func (d *suspectDuplicate) Error() string {
	return fmt.Sprintf("%s: the key (%s, %s) may be a duplicate", d.where, d.pk, d.rk)
}

// errFound stops findDuplicate's read.
var errFound = errors.New("found")

// findDuplicate reads src again for the first entity with d's keys: the
// duplicate error naming both places when it comes before d, nil when d
// is the first (the key set's hashes met).
func findDuplicate(src *Table, d *suspectDuplicate) error {
	if src.Entities == nil {
		return nil
	}
	i := 0
	var first string
	err := src.Entities(func(e Entity) error {
		if i >= d.index {
			return errFound
		}
		i++
		if e.PartitionKey == d.pk && e.RowKey == d.rk {
			first = strings.Clone(e.Where)
			return errFound
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFound) {
		return err
	}
	if first == "" {
		return nil
	}
	return fail(ErrDuplicateKey, tableemu.New(tableemu.InvalidDuplicateRow).WithDetail(
		"%s and %s: PartitionKey %q, RowKey %q", first, d.where, d.pk, d.rk).WithHint(
		"%s and %s hold the same PartitionKey %q and RowKey %q: a table holds one entity per key. Nothing of table %s was imported: keep one of them and import again.",
		first, d.where, clip(d.pk), clip(d.rk), d.table))
}

// clip cuts a key for a message.
func clip(s string) string {
	if len(s) <= 80 {
		return s
	}
	i := 80
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}
