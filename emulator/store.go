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
// database (docs/postgres.md). Under the cosmos profile the store keeps
// the entities' creation order, in which Cosmos DB for Table answers
// queries (docs/cosmos.md, "order of query results"), and tells table
// names apart by case, as Cosmos DB does (docs/cosmos.md, "table
// names"); Table storage's profile pays for neither.
func openStore(cfg Config) (*store.Store, error) {
	if cfg.Database != "" {
		return postgres.Open(context.Background(), postgres.Options{URL: cfg.Database, CreationOrder: cfg.Cosmos(), ExactTableNames: cfg.Cosmos()})
	}
	cache := cacheBudget(cfg)
	if cache == 0 {
		cache = -1
	}
	return sqlite.Open(context.Background(), sqlite.Options{Dir: cfg.Location, InMemory: cfg.InMemory, Fsync: cfg.Fsync,
		NoAutoIndex: cfg.NoAutoIndex, FilterCache: cache, CreationOrder: cfg.Cosmos(), ExactTableNames: cfg.Cosmos()})
}

// cacheBudget is the SQLite store's filter cache budget in bytes, 0 for
// none. The cosmos profile has none: its queries read in creation order
// (store.OrderCreation), and the cache holds tables in key order for the
// scans of Table storage's, so it would only cost memory, the start-up's
// reads and every write's copy.
func cacheBudget(cfg Config) int64 {
	if cfg.Database != "" || cfg.CacheSize < 0 || cfg.Cosmos() {
		return 0
	}
	return int64(cmp.Or(cfg.CacheSize, DefaultCacheSize)) << 20
}

// Memory (docs/command-line.md, "Memory"). The filter cache counts what
// it holds against its budget and evicts before it passes it
// (emulator/store/sqlite/filtercache/budget.go). Besides it the process holds
// the rest of the Go heap (requests, buffers), the collector's headroom,
// SQLite's page caches (C memory: 16 MB for the writer, 2 MB for each
// reader) and the runtime's own: MemoryAllowance bounds them together,
// as measured in docs/benchmarks.md ("Memory").
const MemoryAllowance = 256 << 20

// goAllowance is the Go heap's room above the cache's budget under the
// memory limit: what requests hold, and the headroom that spares the
// collector from running at every few megabytes allocated once the cache
// is full.
const goAllowance = 128 << 20

// MemoryLimit is the Go memory limit (runtime/debug.SetMemoryLimit) for
// a process serving cfg: the cache's budget plus goAllowance, so that the
// collector runs before the heap doubles what is live (GOGC's default);
// 0 (no limit) when there is no cache, whose heap stays small.
func MemoryLimit(cfg Config) int64 {
	if b := cacheBudget(cfg); b > 0 {
		return b + goAllowance
	}
	return 0
}
