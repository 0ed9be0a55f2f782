package emulator

import (
	"cmp"
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
	cache := int64(cmp.Or(cfg.CacheSize, DefaultCacheSize)) << 20
	if cfg.CacheSize < 0 {
		cache = -1
	}
	return sqlite.Open(context.Background(), sqlite.Options{Dir: cfg.Location, InMemory: cfg.InMemory, Fsync: cfg.Fsync,
		NoAutoIndex: cfg.NoAutoIndex, FilterCache: cache})
}
