package postgres

import (
	"bytes"
	"encoding/binary"
	"errors"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tableemu/tableemu/emulator/store"
)

// Fewer round trips per request, with the same results.
//
// On a small machine, much of a request's cost on PostgreSQL is per
// statement and per round trip (each wakes the server and tableemu up
// once), more than per row. A transaction therefore owes statements and
// sends them together with the next one it must wait for:
//
//   - BEGIN goes with the first statement (tx.go);
//   - a table GetTable found in the process's cache is not looked up: the
//     cache hands out the Table, and a check that its id still exists in
//     the transaction's snapshot goes with the next statement. The check
//     fails the statement (division by zero) when the table is gone, so
//     that nothing sent after it in the same batch, COMMIT included, runs;
//     the closure then runs again from a cache without that table, and
//     reads the table as GetTable always did. Until then it has been given
//     nothing but the Table (the check goes with its first statement), and
//     Update's closures may run again by contract; the few View closures
//     that look a table up only keep what they read in variables they set
//     again;
//   - InsertEntity and PutEntity are deferred: each returns at once, and
//     the writes go, as few multi-row statements as possible, with the
//     next statement or with COMMIT. PutEntity cannot fail but for a
//     conflict, which makes the closure run again anyway. InsertEntity can
//     (ErrEntityExists), so a deferred insert has no ON CONFLICT clause: an
//     existing key fails the statement, and again aborts what follows. The
//     closure then runs again in eager mode, where every write is sent when
//     called, as before, and the insert that meets the key returns
//     ErrEntityExists to its caller, at its place in a $batch. A closure
//     that fails while it still owes writes is run again eagerly too, as
//     one of the writes it was told succeeded might have failed first. A
//     key the closure already owes a write of exists: InsertEntity says so
//     at once, and PutEntity replaces the owed row.
//
// A closure that reads nothing (an insert into a cached table, a $batch of
// inserts) sends its check and writes without BEGIN and COMMIT: statements
// sent up to one Sync (extended protocol), or in one query string (simple
// protocol), are one implicit transaction, which PostgreSQL commits whole
// or rolls back whole. It runs at the server's default isolation (READ
// COMMITTED) rather than REPEATABLE READ, which changes nothing for
// statements that read only the table's row: an insert of a key that a
// concurrent transaction took still fails on the primary key, an upsert
// still writes the latest version, and a table deleted concurrently is
// the case tx.go describes.
//
// A $batch of 100 inserts is thus two round trips (BEGIN with the table
// lookup, then one INSERT of 100 rows with COMMIT), or one when the table
// is cached, where it was 102; a single insert is one, where it was three.

// maxRedo bounds the runs again after a stale cached table or a failed
// deferred write; each is followed by a run that does neither the same way.
const maxRedo = 3

// pendingWrite is a deferred InsertEntity (upsert false) or PutEntity.
type pendingWrite struct {
	upsert bool
	tid    int64
	pk, rk []byte
	ts     int64
	props  []byte
}

// owed says what a batch sends before the statement it is for.
type owed int

const (
	owedBegin owed = iota
	owedCheck
	owedWrites
	owedSpec
)

// errStale is the error of a statement whose batch found a cached table
// gone; the closure runs again whatever it makes of it.
var errStale = errors.New("postgres: a cached table was deleted; the transaction runs again")

// errRedo is the error of a statement whose batch held a deferred write
// that failed; the closure runs again, eagerly.
var errRedo = errors.New("postgres: a deferred write failed; the transaction runs again")

// pendingAt is the index of the owed write of w's key, or -1. A $batch
// owes at most 100: a linear search costs less than a map.
func (tx *Tx) pendingAt(w pendingWrite) int {
	for i := range tx.pending {
		p := &tx.pending[i]
		if p.tid == w.tid && bytes.Equal(p.rk, w.rk) && bytes.Equal(p.pk, w.pk) {
			return i
		}
	}
	return -1
}

// maxPending bounds the writes a transaction owes: the one that would be
// owed past it sends them all at once (tx.flush). A $batch never comes
// near it; an import writes a whole table in one transaction
// (emulator/transfer), where pendingAt's search and the owed rows' memory
// would grow with the table.
const maxPending = 1000

// owe defers w, sending what is owed when that reaches maxPending. A
// deferred write that fails makes the closure run again eagerly, as at
// COMMIT (errRedo).
func (tx *Tx) owe(w pendingWrite) error {
	tx.pending = append(tx.pending, w)
	if len(tx.pending) < maxPending {
		return nil
	}
	return tx.flush()
}

// owes says whether a statement must go in a batch with what is owed.
func (tx *Tx) owes() bool {
	return !tx.begun || tx.check != nil || len(tx.pending) > 0
}

// send sends what the transaction owes and then sql (if not empty), in one
// batch, and returns the results positioned at sql's. The caller closes
// them.
func (tx *Tx) send(sql string, args []any) (pgx.BatchResults, error) {
	var b pgx.Batch
	var kinds [8]owed
	what := kinds[:0]
	if !tx.begun && !tx.implicit {
		b.Queue(tx.begin)
		what = append(what, owedBegin)
		if tx.spec != nil {
			b.Queue(tx.spec.sql, tx.spec.args...)
			what = append(what, owedSpec)
		}
	}
	if tx.check != nil {
		b.Queue(`SELECT 1 / count(*)::int FROM tables WHERE id = $1`, tx.check.ID)
		what = append(what, owedCheck)
	}
	for i := 0; i < len(tx.pending); {
		j := i + 1
		for j < len(tx.pending) && tx.pending[j].upsert == tx.pending[i].upsert {
			j++
		}
		queueWrites(&b, tx.pending[i:j], tx.e.creationOrder)
		what = append(what, owedWrites)
		i = j
	}
	if sql != "" {
		b.Queue(sql, args...)
	}
	br := tx.conn.SendBatch(tx.ctx, &b)
	for k, w := range what {
		if w == owedSpec {
			same, err := tx.spec.same(br)
			if err == nil && !same {
				// What the closure read is not in this snapshot.
				br.Close()
				tx.stale = true
				return nil, errStale
			}
			if err == nil {
				continue
			}
			br.Close()
			if sqlState(err) == "22012" { // its table's check: the table is gone
				tx.stale = true
				return nil, errStale
			}
			return nil, tx.note(err)
		}
		_, err := br.Exec()
		if err == nil {
			switch w {
			case owedBegin:
				tx.begun = true
			case owedCheck:
				tx.check = nil
			case owedWrites:
			}
			continue
		}
		br.Close()
		var pe *pgconn.PgError
		switch {
		case w == owedCheck && errors.As(err, &pe) && pe.Code == "22012": // division_by_zero
			tx.e.tables.drop(*tx.check)
			tx.stale = true
			return nil, errStale
		case w == owedWrites && errors.As(err, &pe) && (!isSerialization(err) || pe.Code == "23505"):
			// An existing key (23505), the same key twice in one
			// statement (21000), or anything else the eager statements
			// would meet one by one.
			tx.redo = true
			return nil, errRedo
		}
		err = tx.note(err)
		if k > 0 {
			// Past the batch's first statement: not known to have
			// changed nothing.
			tx.lostAtBegin = false
		}
		return nil, err
	}
	tx.pending = tx.pending[:0]
	return br, nil
}

// flush sends what is owed, with nothing after it.
func (tx *Tx) flush() error {
	br, err := tx.send("", nil)
	if err != nil {
		return err
	}
	return tx.note(br.Close())
}

// The entity INSERTs. Under the engine's CreationOrder each new row takes
// the next value of entity_seq (migrations/0002_creation_order.sql); a
// multi-row insert calls nextval as unnest returns its rows, in the order
// of the arrays, which is the order the writes were made (a change set's
// order). Without it the statements are those of before the sequence and
// the column keeps its default, 0.
const (
	insertOne     = `INSERT INTO entities (tid, pk, rk, ts, props) VALUES ($1, $2, $3, $4, $5)`
	insertOneSeq  = `INSERT INTO entities (tid, pk, rk, ts, props, seq) VALUES ($1, $2, $3, $4, $5, nextval('entity_seq'))`
	unnestRows    = ` FROM unnest($1::bigint[], $2::bytea[], $3::bytea[], $4::bigint[], $5::bytea[]) AS u (tid, pk, rk, ts, props)`
	insertMany    = `INSERT INTO entities (tid, pk, rk, ts, props) SELECT u.tid, u.pk, u.rk, u.ts, u.props` + unnestRows
	insertManySeq = `INSERT INTO entities (tid, pk, rk, ts, props, seq) SELECT u.tid, u.pk, u.rk, u.ts, u.props, nextval('entity_seq')` + unnestRows
	upsertTail    = ` ON CONFLICT (tid, pk, rk) DO UPDATE SET ts = excluded.ts, props = excluded.props`
)

// insertSQL is the INSERT of one row (many: of the unnest arrays), with
// the creation sequence when seq.
func insertSQL(seq, many bool) string {
	switch {
	case seq && many:
		return insertManySeq
	case seq:
		return insertOneSeq
	case many:
		return insertMany
	}
	return insertOne
}

// queueWrites queues ws, all inserts or all upserts, as one statement;
// seq is the engine's CreationOrder.
func queueWrites(b *pgx.Batch, ws []pendingWrite, seq bool) {
	tail := ""
	if ws[0].upsert {
		tail = upsertTail
	}
	if len(ws) == 1 {
		w := ws[0]
		b.Queue(insertSQL(seq, false)+tail, w.tid, w.pk, w.rk, w.ts, w.props)
		return
	}
	tids, tss := make([]int64, len(ws)), make([]int64, len(ws))
	pks, rks, props := make([][]byte, len(ws)), make([][]byte, len(ws)), make([][]byte, len(ws))
	for i, w := range ws {
		tids[i], pks[i], rks[i], tss[i], props[i] = w.tid, w.pk, w.rk, w.ts, w.props
	}
	b.Queue(insertSQL(seq, true)+tail, tids, pks, rks, tss, props)
}

// tableCache maps an account and table key (store.TableKey) to the Table
// GetTable last found, in this process. An entry is only a guess, checked
// in each transaction that uses it (above).
type tableCache struct {
	exact bool // Options.ExactTableNames
	mu    sync.RWMutex
	m     map[string]store.Table
}

// maxCachedTables bounds the cache: past it, it starts again empty.
const maxCachedTables = 10000

// cacheKey is account and store.TableKey(name): the engine's option
// decides, and one engine has one.
func (c *tableCache) cacheKey(account, name string) string {
	return account + "\x00" + store.TableKey(name, c.exact)
}

func (c *tableCache) get(account, name string) (store.Table, bool) {
	c.mu.RLock()
	t, ok := c.m[c.cacheKey(account, name)]
	c.mu.RUnlock()
	return t, ok
}

func (c *tableCache) put(t store.Table) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedTables {
		c.m = make(map[string]store.Table)
	}
	c.m[c.cacheKey(t.Account, t.Name)] = t
	c.mu.Unlock()
}

func (c *tableCache) drop(t store.Table) {
	c.mu.Lock()
	if c.m[c.cacheKey(t.Account, t.Name)].ID == t.ID {
		delete(c.m, c.cacheKey(t.Account, t.Name))
	}
	c.mu.Unlock()
}

// clear empties the cache: tables were deleted.
func (c *tableCache) clear() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}

// A ViewPoint's first statement goes alone, without BEGIN: a point read
// from a cached table is one statement (GetEntity's, with the table's
// check), and one statement reads one snapshot, so that it needs neither
// BEGIN nor COMMIT: one round trip instead of two. Should the closure send
// another, its transaction begins then, with the first statement sent
// again ahead of it in the same batch: if its rows are the same, the
// closure read nothing that the transaction's snapshot does not hold, and
// it goes on; otherwise it runs again (it has been given only what it
// read, as with a stale table).
type speculated struct {
	sql    string
	args   []any
	fp     []byte // the row's raw values, each after its length
	hadRow bool
}

// speculate runs a ViewPoint's first statement alone (queryRow's).
func (tx *Tx) speculate(sql string, args []any, dest []any) error {
	rows, err := tx.conn.Query(tx.ctx, sql, args...)
	if err != nil {
		return err
	}
	sp := &speculated{sql: sql, args: args}
	if rows.Next() {
		sp.hadRow = true
		sp.fp = fingerprint(sp.fp, rows.RawValues())
		if err = rows.Scan(dest...); err != nil {
			rows.Close()
			return err
		}
	}
	rows.Close()
	if err = rows.Err(); err != nil {
		return err
	}
	tx.spec = sp
	if !sp.hadRow {
		return pgx.ErrNoRows
	}
	return nil
}

func fingerprint(fp []byte, vals [][]byte) []byte {
	for _, v := range vals {
		if v == nil {
			fp = binary.AppendVarint(fp, -1)
			continue
		}
		fp = binary.AppendVarint(fp, int64(len(v)))
		fp = append(fp, v...)
	}
	return fp
}

// same reads the statement sent again and says whether its row is the
// one the closure was given.
func (sp *speculated) same(br pgx.BatchResults) (bool, error) {
	rows, err := br.Query()
	if err != nil {
		return false, err
	}
	var fp []byte
	had := rows.Next()
	if had {
		fp = fingerprint(nil, rows.RawValues())
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, err
	}
	return had == sp.hadRow && bytes.Equal(fp, sp.fp), nil
}
