package store

import (
	"database/sql"
	"sync"
)

// Prepared statements for the store's fixed SQL. Preparing a statement is a
// fair share of a small write's cost (about 28% of a 100-entity batch), so
// the statements every entity operation runs are prepared once per pool,
// when the store opens, and reused in each transaction; database/sql keeps
// one prepared copy per connection. (They cannot be prepared lazily: the
// writer pool has one connection, held by the transaction that would need
// them.) Query plans vary with the filter and are prepared per query.
const (
	sqlGetEntity    = `SELECT ts, props FROM entities WHERE tid = ? AND pk = ? AND rk = ?`
	sqlInsertEntity = `INSERT INTO entities (tid, pk, rk, ts, props) VALUES (?, ?, ?, ?, ?)`
	sqlPutEntity    = `INSERT INTO entities (tid, pk, rk, ts, props) VALUES (?, ?, ?, ?, ?)
		 ON CONFLICT (tid, pk, rk) DO UPDATE SET ts = excluded.ts, props = excluded.props`
	sqlDeleteEntity = `DELETE FROM entities WHERE tid = ? AND pk = ? AND rk = ?`
	sqlGetTable     = `SELECT id, name FROM tables WHERE account = ? AND lname = ?`
)

var preparedSQL = []string{sqlGetEntity, sqlInsertEntity, sqlPutEntity, sqlDeleteEntity, sqlGetTable}

type stmtCache struct {
	m sync.Map // SQL text -> *sql.Stmt
}

// prepare prepares the fixed statements on db. A read-only pool cannot
// prepare writes, so only what it can run is kept.
func (c *stmtCache) prepare(db *sql.DB, writable bool) error {
	for _, q := range preparedSQL {
		if !writable && q != sqlGetEntity && q != sqlGetTable {
			continue
		}
		st, err := db.Prepare(q)
		if err != nil {
			return err
		}
		c.m.Store(q, st)
	}
	return nil
}

func (c *stmtCache) get(query string) (*sql.Stmt, bool) {
	st, ok := c.m.Load(query)
	if !ok {
		return nil, false
	}
	return st.(*sql.Stmt), true
}

func (c *stmtCache) close() {
	c.m.Range(func(_, v any) bool { v.(*sql.Stmt).Close(); return true })
}

// exec runs SQL, through its prepared statement if it has one.
func (tx *Tx) exec(query string, args ...any) (sql.Result, error) {
	st, ok := tx.stmts.get(query)
	if !ok {
		return tx.tx.ExecContext(tx.ctx, query, args...)
	}
	return tx.tx.StmtContext(tx.ctx, st).ExecContext(tx.ctx, args...)
}

// queryRow runs SQL returning one row, through its prepared statement if
// it has one.
func (tx *Tx) queryRow(query string, args ...any) *sql.Row {
	st, ok := tx.stmts.get(query)
	if !ok {
		return tx.tx.QueryRowContext(tx.ctx, query, args...)
	}
	return tx.tx.StmtContext(tx.ctx, st).QueryRowContext(tx.ctx, args...)
}
