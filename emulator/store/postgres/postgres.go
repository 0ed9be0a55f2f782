// Package postgres is the store engine on a PostgreSQL server (and servers
// that speak its protocol and SQL: CockroachDB, YugabyteDB), through pgx.
// Several tableemu processes may share one database: every guarantee the
// service gives is a property of the database's transactions, never of
// memory in one process (tx.go says why snapshot isolation is enough).
//
// The schema (migrations/) mirrors the SQLite engine's: keys are bytea in
// the CESU-8 form of store.SortKey, so that the primary key orders entities
// as the service does; properties are bytea in store.EncodeProps's form,
// decoded and filtered in Go with odata.Eval, as the SQLite engine does for
// the part of a filter it does not compile.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata/edm"
)

// Options configure Open.
type Options struct {
	// URL is the database's: postgres://user:password@host:port/database,
	// with pgx's parameters (sslmode, connect_timeout, pool_max_conns,
	// application_name, search_path, ...). The database must exist; Open
	// creates tableemu's tables in it.
	URL string
	// CreationOrder keeps the creation order of entities, for queries in
	// store.OrderCreation (the cosmos profile, docs/cosmos.md): an insert,
	// or an upsert that inserts, takes the next value of entity_seq, and
	// Open creates the index entities_by_seq if missing. Without it, as
	// under Table storage, writes cost what they did before the sequence
	// existed and leave it 0 (migrations/0002_creation_order.sql).
	CreationOrder bool
	// ExactTableNames tells table names apart by case, as Cosmos DB for
	// Table does (the cosmos profile, docs/cosmos.md, "table names"):
	// "Orders" and "orders" are two tables, and a name finds only the
	// table of that exact name (store.TableKey). Without it, as under
	// Table storage, one table answers a name in any case, with the
	// statements it always had.
	ExactTableNames bool
}

// defaultMaxConns is the pool size unless the URL sets pool_max_conns:
// pgxpool's default (4 on a small machine) would queue concurrent requests
// behind each other's round trips.
const defaultMaxConns = 16

// engine is the store.Engine.
type engine struct {
	pool   *pgxpool.Pool
	where  string
	closed atomic.Bool
	// lastTS makes the Timestamps this process hands out increasing;
	// across processes PutEntity's prev keeps an entity's own increasing.
	clockMu sync.Mutex
	lastTS  int64
	now     func() time.Time
	// sweep cancels and sweepDone waits for the start-up sweep (sweep).
	// tables caches GetTable's answers (pending.go).
	tables    tableCache
	sweep     context.CancelFunc
	sweepDone chan struct{}
	// creationOrder is Options.CreationOrder (entities.go).
	creationOrder bool
	// exactNames is Options.ExactTableNames (tables.go).
	exactNames bool
}

//go:embed migrations/*.sql
var migrations embed.FS

// Open connects to the database, creates or updates tableemu's tables in
// it, and returns the store. Its errors name the server (user@host:port/db)
// and what to check, never the password.
func Open(ctx context.Context, opts Options) (*store.Store, error) {
	e, err := openEngine(ctx, opts)
	if err != nil {
		return nil, err
	}
	return store.New(e), nil
}

func openEngine(ctx context.Context, opts Options) (*engine, error) {
	cfg, err := pgxpool.ParseConfig(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("the PostgreSQL URL is not valid (%s): write it as postgres://user:password@host:5432/database", redact(err, opts.URL))
	}
	if !hasParam(opts.URL, "pool_max_conns") {
		cfg.MaxConns = defaultMaxConns
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	configureDial(cfg) // dead connections are found and dropped (dial.go)
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "tableemu"
	}
	c := cfg.ConnConfig
	e := &engine{where: fmt.Sprintf("%s@%s/%s", c.User, hostPort(c.Host, c.Port), c.Database), now: time.Now, creationOrder: opts.CreationOrder,
		exactNames: opts.ExactTableNames, tables: tableCache{exact: opts.ExactTableNames}}
	if e.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, fmt.Errorf("PostgreSQL at %s: %s", e.where, redact(err, opts.URL))
	}
	if err := e.pool.Ping(ctx); err != nil {
		e.pool.Close()
		return nil, e.openError(err, opts.URL)
	}
	if err := e.migrate(ctx); err != nil {
		e.pool.Close()
		return nil, fmt.Errorf("PostgreSQL at %s: creating tableemu's tables: %s", e.where, redact(err, opts.URL))
	}
	if e.creationOrder {
		// Another process may create it at the same moment.
		if err := retryRace(ctx, func() error {
			_, err := e.pool.Exec(ctx, `CREATE INDEX IF NOT EXISTS entities_by_seq ON entities (tid, pk, seq, rk)`)
			return err
		}); err != nil {
			e.pool.Close()
			return nil, fmt.Errorf("PostgreSQL at %s: creating the index entities_by_seq: %s", e.where, redact(err, opts.URL))
		}
	}
	sctx, cancel := context.WithCancel(context.Background())
	e.sweep, e.sweepDone = cancel, make(chan struct{})
	go e.sweepOrphans(sctx)
	return e, nil
}

// openError says what failed when connecting and what to check.
func (e *engine) openError(err error, rawURL string) error {
	msg := redact(err, rawURL)
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "28P01", "28000":
			return fmt.Errorf("PostgreSQL at %s refused the login (%s): check the user and password in the URL", e.where, msg)
		case "3D000":
			return fmt.Errorf("PostgreSQL at %s has no such database (%s): create it (createdb) or name an existing one in the URL", e.where, msg)
		case "42501":
			return fmt.Errorf("PostgreSQL at %s: permission denied (%s): grant the user CONNECT and CREATE on the database", e.where, msg)
		}
	}
	return fmt.Errorf("cannot reach PostgreSQL at %s (%s): check that the server runs, listens on that address and accepts connections from here", e.where, msg)
}

// redact returns err's message without the password of rawURL, should pgx
// have quoted the connection string.
func redact(err error, rawURL string) string {
	msg := err.Error()
	if u, perr := url.Parse(rawURL); perr == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
			if esc := url.QueryEscape(pw); esc != pw {
				msg = strings.ReplaceAll(msg, esc, "xxxxx")
			}
		}
	}
	if u, perr := url.Parse(rawURL); perr == nil {
		if pw := u.Query().Get("password"); pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	if strings.Contains(msg, rawURL) && rawURL != "" {
		msg = strings.ReplaceAll(msg, rawURL, "<the URL>")
	}
	// pgx lists each address it tried on a line of its own; an error is
	// one line of the log.
	return strings.Join(strings.Fields(msg), " ")
}

func hasParam(rawURL, name string) bool {
	u, err := url.Parse(rawURL)
	return err == nil && u.Query().Has(name)
}

func hostPort(host string, port uint16) string {
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "/") {
		host = "[" + host + "]" // IPv6
	}
	return host + ":" + strconv.Itoa(int(port))
}

func (e *engine) Describe() store.Location {
	return store.Location{Engine: "postgres", Where: e.where, Shared: true}
}

// Close closes the pool; it waits for the connections in use to be
// returned, so pending closures finish first.
func (e *engine) Close() error {
	if e.closed.Swap(true) {
		return nil
	}
	if e.sweep != nil {
		e.sweep()
		<-e.sweepDone
	}
	e.pool.Close()
	return nil
}

// nextTimestamp returns a Timestamp (ticks) later than prev and than
// every Timestamp this process handed out, close to the wall clock.
func (e *engine) nextTimestamp(prev int64) int64 {
	e.clockMu.Lock()
	defer e.clockMu.Unlock()
	ts := edm.TicksFromTime(e.now())
	ts = max(ts, e.lastTS+1, prev+1)
	e.lastTS = ts
	return ts
}

// migrate applies the embedded migrations the database lacks. Several
// processes may start on one empty database at once, and no advisory lock
// is relied on: each migration's DDL and its row in schema_migrations
// commit in one transaction, the row's primary key lets only one such
// transaction commit, and a process whose transaction failed because
// another got there first (a unique violation on the catalog or on
// schema_migrations, a duplicate table, a serialization failure) reads
// schema_migrations again and finds it applied.
func (e *engine) migrate(ctx context.Context) error {
	err := retryRace(ctx, func() error {
		_, err := e.pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version bigint NOT NULL PRIMARY KEY,
			name    text   NOT NULL,
			applied bigint NOT NULL)`)
		return err
	})
	if err != nil {
		return err
	}
	names, err := migrations.ReadDir("migrations")
	if err != nil {
		return err
	}
	sort.Slice(names, func(i, j int) bool { return names[i].Name() < names[j].Name() })
	var newest int64
	if err := e.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&newest); err != nil {
		return err
	}
	if newest > int64(len(names)) {
		return fmt.Errorf("the database is at schema %d, from a newer tableemu (this one knows schema %d): use that version or a later one", newest, len(names))
	}
	for _, f := range names {
		n, err := strconv.Atoi(strings.SplitN(f.Name(), "_", 2)[0])
		if err != nil {
			return fmt.Errorf("migration %s: bad name", f.Name())
		}
		body, err := migrations.ReadFile("migrations/" + f.Name())
		if err != nil {
			return err
		}
		err = retryRace(ctx, func() error {
			return pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
				var done bool
				if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)`, n).Scan(&done); err != nil || done {
					return err
				}
				// No arguments: pgx sends the script with the simple
				// protocol, which runs several statements.
				if _, err := tx.Exec(ctx, string(body)); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied) VALUES ($1, $2, $3)`,
					n, f.Name(), edm.TicksFromTime(time.Now()))
				return err
			})
		})
		if err != nil {
			return fmt.Errorf("migration %s: %w", f.Name(), err)
		}
	}
	return nil
}

// retryRace runs fn until it succeeds or fails otherwise than by losing a
// race with another process doing the same DDL.
func retryRace(ctx context.Context, fn func() error) error {
	for try := 1; ; try++ {
		err := fn()
		if err == nil || try == 20 || !lostRace(err) {
			return err
		}
		if err := sleep(ctx, backoff(try)); err != nil {
			return err
		}
	}
}

func lostRace(err error) bool {
	switch sqlState(err) {
	case "23505", // unique_violation (a catalog row, or schema_migrations')
		"42P07", // duplicate_table
		"42710", // duplicate_object
		"40001", // serialization_failure
		"40P01": // deadlock_detected
		return true
	}
	return false
}

// sweepOrphans deletes, in the background after start-up, rows whose
// table no longer exists: what an entity write or Set Table ACL that
// committed while a Delete Table, reset or restore removed its table
// leaves behind (tx.go). Nothing can read them (table ids are never
// reused), so this only gives the space back; each statement is its own
// snapshot, in which a table and its rows appear together. Errors are left
// for the next start.
func (e *engine) sweepOrphans(ctx context.Context) {
	defer close(e.sweepDone)
	for _, q := range []string{
		`DELETE FROM entities WHERE NOT EXISTS (SELECT 1 FROM tables WHERE tables.id = entities.tid)`,
		`DELETE FROM table_acl WHERE NOT EXISTS (SELECT 1 FROM tables WHERE tables.id = table_acl.tid)`,
	} {
		if _, err := e.pool.Exec(ctx, q); err != nil {
			return
		}
	}
}
