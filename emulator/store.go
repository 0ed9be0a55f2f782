package emulator

import (
	"context"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/store/postgres"
	"github.com/tableemu/tableemu/emulator/store/sqlite"
)

// openStore opens the engine the configuration names: the SQLite file
// under Location (or in memory) unless Database names a PostgreSQL
// database (docs/postgres.md).
func openStore(cfg Config) (*store.Store, error) {
	if cfg.Database != "" {
		return postgres.Open(context.Background(), postgres.Options{URL: cfg.Database})
	}
	return sqlite.Open(context.Background(), sqlite.Options{Dir: cfg.Location, InMemory: cfg.InMemory, Fsync: cfg.Fsync, NoAutoIndex: cfg.NoAutoIndex})
}
