package sqlite

import (
	"context"
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/store/storetest"
)

// TestContract runs the store contract suite (store/storetest) on a file
// and in memory.
func TestContract(t *testing.T) {
	for _, mem := range []bool{false, true} {
		name := map[bool]string{false: "file", true: "memory"}[mem]
		t.Run(name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) *store.Store {
				st, err := Open(context.Background(), Options{Dir: t.TempDir(), InMemory: mem})
				if err != nil {
					t.Fatal(err)
				}
				return st
			})
		})
	}
}
