package postgres

import (
	"context"
	"net/url"
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/store/postgres/pgtest"
	"github.com/tableemu/tableemu/emulator/store/storetest"
)

// TestContract runs the store contract suite (store/storetest), each test
// on a database of its own: with pgx's default protocol (prepared
// statements, binary results), and with the simple protocol that a
// transaction-pooling proxy such as PgBouncer needs
// (default_query_exec_mode=simple_protocol: text results, arguments
// quoted by pgx); the creation order's on stores opened with
// CreationOrder, and the exact table names' on stores opened with
// ExactTableNames.
func TestContract(t *testing.T) {
	for _, mode := range []string{"", "simple_protocol"} {
		name := map[string]string{"": "prepared", "simple_protocol": "simple"}[mode]
		t.Run(name, func(t *testing.T) {
			dial := func(t *testing.T, base string, creationOrder, exactNames bool) *store.Store {
				u, err := url.Parse(base)
				if err != nil {
					t.Fatal(err)
				}
				if mode != "" {
					q := u.Query()
					q.Set("default_query_exec_mode", mode)
					u.RawQuery = q.Encode()
				}
				s, err := Open(context.Background(), Options{URL: u.String(), CreationOrder: creationOrder, ExactTableNames: exactNames})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
			open := func(creationOrder bool) storetest.Open {
				return func(t *testing.T) *store.Store { return dial(t, pgtest.URL(t), creationOrder, false) }
			}
			exact := func(t *testing.T) *store.Store { return dial(t, pgtest.URL(t), false, true) }
			dbs := map[*testing.T]string{}
			reopen := func(t *testing.T, exactNames bool) *store.Store {
				if dbs[t] == "" {
					dbs[t] = pgtest.URL(t)
				}
				return dial(t, dbs[t], false, exactNames)
			}
			storetest.Run(t, open(false))
			t.Run("CreationOrder", func(t *testing.T) { storetest.RunCreationOrder(t, open(true)) })
			t.Run("ExactTableNames", func(t *testing.T) { storetest.RunExactTableNames(t, exact, reopen) })
		})
	}
}
