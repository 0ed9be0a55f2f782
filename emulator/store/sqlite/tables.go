package sqlite

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/store/sqlite/filtercache"
	"github.com/tableemu/tableemu/odata"
)

// CreateTable creates a table; ErrTableExists if one with the same name in
// any case exists (docs/protocol.md 1.4), or under ExactTableNames one of
// the exact name (store.TableKey). The caller validates the name.
func (tx *Tx) CreateTable(account, name string) (Table, error) {
	now := tx.s.nextTimestamp(0)
	var id int64
	var err error
	lower := strings.ToLower(name)
	if tx.s.exactNames && lower != name {
		// A case variant's own key; a table of this exact name that a
		// store without the option created holds the lower-cased one.
		err = tx.queryRow(
			`INSERT INTO tables (account, name, lname, created) SELECT ?, ?, ?, ?
			 WHERE NOT EXISTS (SELECT 1 FROM tables WHERE account = ? AND lname = ? AND name = ?) RETURNING id`,
			account, name, store.TableKey(name, true), now, account, lower, name).Scan(&id)
		if errors.Is(err, errNoRows) {
			return Table{}, ErrTableExists
		}
	} else {
		err = tx.queryRow(
			`INSERT INTO tables (account, name, lname, created) VALUES (?, ?, ?, ?) RETURNING id`,
			account, name, lower, now).Scan(&id)
	}
	if isConstraint(err) {
		return Table{}, ErrTableExists
	}
	if err != nil {
		return Table{}, err
	}
	tx.tablesChanged = true
	tx.noteTable(filtercache.Create(id))
	return Table{ID: id, Account: account, Name: name}, nil
}

// GetTable finds a table by name, in any case, or under ExactTableNames by
// its exact name; ErrTableNotFound if absent.
func (tx *Tx) GetTable(account, name string) (Table, error) {
	key := store.TableKey(name, tx.s.exactNames)
	// A write transaction may use the cache too until it, or a closure
	// before it in its group, changes a table: until then it sees tables
	// as last committed (see tableCache).
	cached := tx.reader || (tx.committedTables && !tx.tablesChanged)
	if cached {
		if t, ok := tx.s.tables.get(account, key, tx.tablesGen); ok && tx.snapshotBefore() {
			return t, nil
		}
	}
	t := Table{Account: account}
	// conn.queryRow directly, so that the arguments do not escape (see
	// Tx.queryRow).
	var err error
	if tx.s.exactNames {
		// The exact name's key, or the lower-cased one of a table a
		// store without the option created: both in the unique index.
		err = tx.c.queryRow(tx.ctx,
			`SELECT id, name, coalesce(base, 0) FROM tables WHERE account = ? AND lname IN (?, ?) AND name = ?`,
			[]any{account, key, strings.ToLower(name), name}, &t.ID, &t.Name, &t.Base)
	} else {
		err = tx.c.queryRow(tx.ctx,
			`SELECT id, name, coalesce(base, 0) FROM tables WHERE account = ? AND lname = ?`,
			[]any{account, key}, &t.ID, &t.Name, &t.Base)
	}
	if errors.Is(err, errNoRows) {
		return Table{}, ErrTableNotFound
	}
	if err == nil && cached {
		tx.s.tables.put(account, key, t, tx.tablesGen)
	}
	return t, err
}

// tableCache remembers the tables requests have looked up: every request
// names its table, and the lookup was a tenth of a point read (and 3% of
// an insert's CPU). An entry holds the generation of table changes its
// reader's snapshot saw, read before the snapshot began. A commit that
// creates or deletes a table advances the generation twice, as a seqlock
// does: to an odd number before its COMMIT and to the next even one after
// it, before its writers are answered (commit.go); either retires every
// entry. A generation read while it is odd is never used nor stored.
//
// A reader may use an entry of the generation it read before BEGIN while
// that is still the current one. But SQLite's snapshot begins at a
// transaction's first read, not at BEGIN, and a reader that takes its
// table from the cache may not have read yet: a commit that changed
// tables could come between the lookup and that read, and the table the
// entry names be gone from the snapshot (a restore racing a query found
// an empty table). So a reader begins its snapshot before it trusts an
// entry, and looks at the generation again (snapshotBefore).
//
// A write transaction uses the cache only while its group of closures has
// changed no table (Tx.committedTables): it must see its own uncommitted
// creates and deletes. Until then it sees the tables as last committed
// (its snapshot begins at BEGIN IMMEDIATE, and no other writer commits),
// and an entry of the current generation describes them; what it reads
// itself it may cache, with the current generation, for the same reason.
type tableCache struct {
	gen atomic.Uint64
	mu  sync.Mutex
	m   map[string]cachedTable // account + "\x00" + store.TableKey
}

type cachedTable struct {
	t   Table
	gen uint64
}

// maxCachedTables bounds the cache; past it, it starts again empty.
const maxCachedTables = 10_000

func (c *tableCache) get(account, lname string, gen uint64) (Table, bool) {
	if gen&1 != 0 {
		return Table{}, false
	}
	c.mu.Lock()
	e, ok := c.m[account+"\x00"+lname]
	c.mu.Unlock()
	if !ok || e.gen != gen || c.gen.Load() != gen {
		return Table{}, false
	}
	return e.t, true
}

// snapshotBefore begins a reader's snapshot, if it has not, and reports
// whether no commit that changed tables has begun since the reader read
// the generation: then the snapshot began before any such commit, and an
// entry of that generation describes it. For a write transaction the
// generation cannot move (tableCache).
func (tx *Tx) snapshotBefore() bool {
	if !tx.reader {
		return true
	}
	if !tx.snapshot {
		// The cheapest read: SQLite takes its read mark (the
		// snapshot) when a statement opens the database, before LIMIT
		// 0 ends it; the first real read would have paid for it.
		if _, err := tx.c.exec(tx.ctx, "SELECT 1 FROM tables LIMIT 0"); err != nil {
			return false // the lookup below meets the error again
		}
		tx.snapshot = true
	}
	return tx.s.tables.gen.Load() == tx.tablesGen
}

func (c *tableCache) put(account, lname string, t Table, gen uint64) {
	if gen&1 != 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedTables {
		c.m = map[string]cachedTable{}
	}
	c.m[account+"\x00"+lname] = cachedTable{t, gen}
}

// DeleteTable deletes a table and all its entities; ErrTableNotFound if
// there is no such table. The table is retired (gc.go): out of reach of
// every request when this transaction commits, its name free at once, and
// its entities deleted by the collector afterwards, so that deleting a
// large table does not hold the writer; a table based on a snapshot is
// parked instead, for a restore to take back.
func (tx *Tx) DeleteTable(account, name string) error {
	t, err := tx.GetTable(account, name)
	if err != nil {
		return err
	}
	return tx.retire([]liveTable{{id: t.ID, base: t.Base}})
}

// QueryTables lists an account's tables ordered by name without regard to
// case, the order lookups and uniqueness use (under ExactTableNames a
// name's case variants follow it: store.TableKey).
func (tx *Tx) QueryTables(account string, q TableQuery) (TablePage, error) {
	var page TablePage
	rows, err := tx.query(
		`SELECT id, name, lname FROM tables WHERE account = ? AND lname >= ? ORDER BY lname`,
		account, q.After)
	if err != nil {
		return page, err
	}
	defer rows.Close()
	for rows.Next() {
		var t Table
		var lname string
		if err := rows.Scan(&t.ID, &t.Name, &lname); err != nil {
			return page, err
		}
		t.Account = account
		if q.Filter != nil && !odata.Eval(q.Filter, store.TableNameProps(t.Name)) {
			continue
		}
		if len(page.Tables) == q.Top {
			page.Next = lname
			break
		}
		page.Tables = append(page.Tables, t)
	}
	return page, rows.Close()
}
