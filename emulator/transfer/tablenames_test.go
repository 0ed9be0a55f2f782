package transfer

import (
	"slices"
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/store/postgres"
	"github.com/tableemu/tableemu/emulator/store/postgres/pgtest"
	"github.com/tableemu/tableemu/emulator/store/sqlite"
)

// TestTransferExactTableNames: with the store's ExactTableNames (the
// cosmos profile, docs/cosmos.md "table names") an import brings "Orders"
// beside "orders", each with its entities, and an export's table list
// names tables exactly; without it, storage's, the same source is refused
// (TableAlreadyExists: one table per name in any case).
func TestTransferExactTableNames(t *testing.T) {
	for _, e := range []struct {
		name string
		open func(t *testing.T, exact bool) *store.Store
	}{
		{"sqlite", func(t *testing.T, exact bool) *store.Store {
			st, err := sqlite.Open(ctx, sqlite.Options{Dir: t.TempDir(), ExactTableNames: exact})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}},
		{"postgres", func(t *testing.T, exact bool) *store.Store {
			st, err := postgres.Open(ctx, postgres.Options{URL: pgtest.URL(t), ExactTableNames: exact})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}},
	} {
		t.Run(e.name, func(t *testing.T) {
			src := func() *memSource {
				return &memSource{[]Account{{Tables: []*Table{
					memTable("Orders", nil, ent("Orders", "p", "upper")),
					memTable("orders", nil, ent("orders", "p", "lower")),
				}}}}
			}
			tr := newTransfer(e.open(t, true))
			tr.cfg.ExactTableNames = true
			if _, err := tr.Import(ctx, src(), Options{Account: "a1"}); err != nil {
				t.Fatal(err)
			}
			got := export(t, tr, "a1", "orders").lines
			if want := []string{"table a1 orders []", "entity p lower"}; !slices.Equal(got, want) {
				t.Errorf("export of orders: %q, want %q", got, want)
			}
			if got := export(t, tr, "a1").lines; len(got) != 4 {
				t.Errorf("export of both: %q, want two tables of one entity each", got)
			}

			plain := newTransfer(e.open(t, false))
			_, err := plain.Import(ctx, src(), Options{Account: "a1"})
			wantCode(t, err, ErrInvalidTable, "TableAlreadyExists", "same in any case")
		})
	}
}
