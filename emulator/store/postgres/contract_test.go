package postgres

import (
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/store/storetest"
	"github.com/tableemu/tableemu/internal/pgtest"
)

// TestContract runs the store contract suite (store/storetest), each test
// on a database of its own.
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) *store.Store {
		url := pgtest.URL(t)
		return openURL(t, url)
	})
}
