package transfer

import (
	"context"
	"errors"
	"fmt"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata/edm"
)

// exportPage is how many entities one ScanEntities call of an export
// reads: the service's page.
const exportPage = 1000

// Export writes o.Account's tables to sink, each table from one
// consistent read, its entities streamed page by page (never a whole
// table in memory).
//
// The account's service properties go first (Sink.Properties), then each
// table in the order of Query Tables (lower-cased name) with its stored
// access policies, then its entities in PartitionKey, RowKey order (in
// creation order within a partition under Config.Order), each
// handed to the sink while the scan holds it. A table deleted while the
// export runs is left out. The sink is not closed: its caller does.
func (t *Transfer) Export(ctx context.Context, sink Sink, o Options) (sum Summary, err error) {
	defer func() {
		if a, ok := sink.(Aborter); ok && err != nil {
			a.Abort()
		}
	}()
	account := t.account(o)
	if t.cfg.Accounts[account] == nil {
		return sum, unknownAccount(account)
	}
	if t.cfg.GetProps != nil {
		doc, err := t.cfg.GetProps(ctx, account)
		if err != nil {
			return sum, fmt.Errorf("account %s: service properties: %w", account, err)
		}
		if err := sink.Properties(account, doc); err != nil {
			return sum, err
		}
	}
	names, err := t.tableNames(ctx, account)
	if err != nil {
		return sum, err
	}
	if o.Tables != nil {
		if names, err = onlyNames(names, o.Tables, account, t.cfg.ExactTableNames); err != nil {
			return sum, err
		}
	}
	for _, name := range names {
		n, ok, err := t.exportTable(ctx, account, name, sink, o.Progress)
		if err != nil {
			return sum, err
		}
		if ok {
			sum.Tables++
			sum.Entities += n
		}
	}
	return sum, nil
}

// Aborter is a Sink that can drop what it wrote: Export calls Abort when
// it fails, before it returns, so that the sink's Close keeps nothing of a
// partial export (DirSink then leaves its directory as it was).
type Aborter interface {
	Abort()
}

// tableNames lists account's tables, in one read.
func (t *Transfer) tableNames(ctx context.Context, account string) ([]string, error) {
	var names []string
	err := t.cfg.Store.View(ctx, func(tx *store.Tx) error {
		names = names[:0]
		q := store.TableQuery{Top: 1000}
		for {
			page, err := tx.QueryTables(account, q)
			if err != nil {
				return err
			}
			for _, tb := range page.Tables {
				names = append(names, tb.Name)
			}
			if page.Next == "" {
				return nil
			}
			q.After = page.Next
		}
	})
	return names, t.storeError(err)
}

// onlyNames is names filtered by only (any case; exactly under exact, the
// store's ExactTableNames), in names' order; a name of only the account
// lacks is an error.
func onlyNames(names, only []string, account string, exact bool) ([]string, error) {
	have := make(map[string]bool, len(names))
	for _, n := range names {
		have[store.TableKey(n, exact)] = true
	}
	want := make(map[string]bool, len(only))
	for _, n := range only {
		if !have[store.TableKey(n, exact)] {
			return nil, fail(ErrTableNotFound, tableemu.New(tableemu.TableNotFound).WithHint(
				"account %s has no table %q to export.", account, n))
		}
		want[store.TableKey(n, exact)] = true
	}
	var out []string
	for _, n := range names {
		if want[store.TableKey(n, exact)] {
			out = append(out, n)
		}
	}
	return out, nil
}

// exportTable writes one table, read in one View; ok is false when the
// table was deleted since it was listed.
func (t *Transfer) exportTable(ctx context.Context, account, name string, sink Sink, progress func(Progress)) (n int, ok bool, err error) {
	var sinkErr error
	err = t.cfg.Store.View(ctx, func(tx *store.Tx) error {
		n = 0
		tb, err := tx.GetTable(account, name)
		if err != nil {
			return err
		}
		// Read before the sink hears of the table: an engine may run
		// the closure again until its first statement has read
		// (PostgreSQL's cached tables), never after.
		acl, err := tx.TableACL(tb)
		if err != nil {
			return err
		}
		if err := sink.Table(TableInfo{Account: account, Name: tb.Name, ACL: acl}); err != nil {
			sinkErr = err
			return err
		}
		q := store.EntityQuery{Top: exportPage, Order: t.cfg.Order}
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			res, err := tx.ScanEntities(tb, q, func(e *edm.Entity) error {
				if err := sink.Entity(e); err != nil {
					sinkErr = err
					return err
				}
				n++
				if progress != nil && n%progressEvery == 0 {
					progress(Progress{Account: account, Table: tb.Name, Entities: n})
				}
				return nil
			})
			if err != nil {
				return err
			}
			if res.Next == nil {
				return nil
			}
			q.Start = res.Next
		}
	})
	switch {
	case err == nil:
		if progress != nil {
			progress(Progress{Account: account, Table: name, Entities: n, Done: true})
		}
		return n, true, nil
	case sinkErr != nil && errors.Is(err, sinkErr):
		return n, false, err
	case errors.Is(err, store.ErrTableNotFound):
		return 0, false, nil
	}
	return n, false, t.storeError(err)
}
