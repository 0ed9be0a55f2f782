package sqlite

import (
	"context"
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/store/storetest"
)

// TestContract runs the store contract suite (store/storetest) on a file
// and in memory, the creation order's on stores opened with CreationOrder,
// and the exact table names' on stores opened with ExactTableNames.
func TestContract(t *testing.T) {
	for _, mem := range []bool{false, true} {
		name := map[bool]string{false: "file", true: "memory"}[mem]
		t.Run(name, func(t *testing.T) {
			open := func(creationOrder bool) storetest.Open {
				return func(t *testing.T) *store.Store {
					st, err := Open(context.Background(), Options{Dir: t.TempDir(), InMemory: mem, CreationOrder: creationOrder})
					if err != nil {
						t.Fatal(err)
					}
					return st
				}
			}
			storetest.Run(t, open(false))
			t.Run("CreationOrder", func(t *testing.T) { storetest.RunCreationOrder(t, open(true)) })
			exact := func(t *testing.T) *store.Store {
				st, err := Open(context.Background(), Options{Dir: t.TempDir(), InMemory: mem, ExactTableNames: true})
				if err != nil {
					t.Fatal(err)
				}
				return st
			}
			var reopen storetest.Reopen
			if !mem {
				dirs := map[*testing.T]string{}
				reopen = func(t *testing.T, exactNames bool) *store.Store {
					if dirs[t] == "" {
						dirs[t] = t.TempDir()
					}
					st, err := Open(context.Background(), Options{Dir: dirs[t], ExactTableNames: exactNames})
					if err != nil {
						t.Fatal(err)
					}
					return st
				}
			}
			t.Run("ExactTableNames", func(t *testing.T) { storetest.RunExactTableNames(t, exact, reopen) })
		})
	}
}
