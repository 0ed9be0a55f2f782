package postgres

import (
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata"
)

// CreateTable creates a table; store.ErrTableExists if one with the same
// name in any case exists (docs/protocol.md 1.4), or under ExactTableNames
// one of the exact name (store.TableKey). ON CONFLICT DO NOTHING rather
// than catching the unique violation: an error would abort the
// transaction, and a $batch-like caller may go on after ErrTableExists.
func (tx *Tx) CreateTable(account, name string) (store.Table, error) {
	var id int64
	var err error
	lower := strings.ToLower(name)
	if tx.e.exactNames && lower != name {
		// A case variant's own key; a table of this exact name that a
		// store without the option created holds the lower-cased one.
		err = tx.queryRow(
			`INSERT INTO tables (account, name, lname, created) SELECT $1::text, $2::text, $3::bytea, $4::bigint
			 WHERE NOT EXISTS (SELECT 1 FROM tables WHERE account = $1 AND lname = $5 AND name = $2)
			 ON CONFLICT (account, lname) DO NOTHING RETURNING id`,
			[]any{account, name, []byte(store.TableKey(name, true)), tx.e.nextTimestamp(0), []byte(lower)}, &id)
	} else {
		err = tx.queryRow(
			`INSERT INTO tables (account, name, lname, created) VALUES ($1, $2, $3, $4)
			 ON CONFLICT (account, lname) DO NOTHING RETURNING id`,
			[]any{account, name, []byte(lower), tx.e.nextTimestamp(0)}, &id)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Table{}, store.ErrTableExists
	}
	if err != nil {
		return store.Table{}, err
	}
	return store.Table{ID: id, Account: account, Name: name}, nil
}

// GetTable finds a table by name, in any case, or under ExactTableNames by
// its exact name.
func (tx *Tx) GetTable(account, name string) (store.Table, error) {
	if tx.check == nil {
		if t, ok := tx.e.tables.get(account, name); ok {
			// Checked with the next statement (pending.go).
			tx.check = &t
			return t, nil
		}
	}
	t := store.Table{Account: account}
	var err error
	if tx.e.exactNames {
		// The exact name's key, or the lower-cased one of a table a
		// store without the option created: both in the unique index.
		err = tx.queryRow(`SELECT id, name FROM tables WHERE account = $1 AND lname IN ($2, $3) AND name = $4`,
			[]any{account, []byte(store.TableKey(name, true)), []byte(strings.ToLower(name)), name}, &t.ID, &t.Name)
	} else {
		err = tx.queryRow(`SELECT id, name FROM tables WHERE account = $1 AND lname = $2`,
			[]any{account, []byte(strings.ToLower(name))}, &t.ID, &t.Name)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Table{}, store.ErrTableNotFound
	}
	if err == nil {
		tx.e.tables.put(t)
	}
	return t, err
}

// DeleteTable deletes a table with its entities and policies, in this
// transaction: a reader sees the table whole or not at all.
func (tx *Tx) DeleteTable(account, name string) error {
	t, err := tx.GetTable(account, name)
	if err != nil {
		return err
	}
	return tx.dropTables(`id = $1`, t.ID)
}

// dropTables deletes the tables matching cond (on tables' columns), their
// entities and policies.
func (tx *Tx) dropTables(cond string, args ...any) error {
	tx.e.tables.clear()
	sub := `SELECT id FROM tables WHERE ` + cond
	for _, q := range []string{
		`DELETE FROM entities WHERE tid IN (` + sub + `)`,
		`DELETE FROM table_acl WHERE tid IN (` + sub + `)`,
		`DELETE FROM tables WHERE ` + cond,
	} {
		if _, err := tx.exec(q, args...); err != nil {
			return err
		}
	}
	return nil
}

// tableChunk is how many tables one query of QueryTables reads when a
// filter may skip some.
const tableChunk = 1000

// QueryTables lists an account's tables ordered by lower-cased name (bytes),
// the order lookups and uniqueness use; the filter is evaluated in Go.
func (tx *Tx) QueryTables(account string, q store.TableQuery) (store.TablePage, error) {
	var page store.TablePage
	after := []byte(q.After)
	op := ">="
	for {
		limit := tableChunk
		if q.Filter == nil {
			limit = q.Top + 1
		}
		rows, err := tx.query(`SELECT id, name, lname FROM tables WHERE account = $1 AND lname `+op+` $2 ORDER BY lname LIMIT $3`,
			account, after, limit)
		if err != nil {
			return page, err
		}
		n := 0
		var lname []byte
		for rows.Next() {
			n++
			t := store.Table{Account: account}
			if err := rows.Scan(&t.ID, &t.Name, &lname); err != nil {
				rows.Close()
				return page, tx.note(err)
			}
			if q.Filter != nil && !odata.Eval(q.Filter, store.TableNameProps(t.Name)) {
				continue
			}
			if len(page.Tables) == q.Top {
				page.Next = string(lname)
				rows.Close()
				return page, nil
			}
			page.Tables = append(page.Tables, t)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return page, tx.note(err)
		}
		if n < limit {
			return page, nil
		}
		after, op = lname, ">"
	}
}

// ServiceProperties returns the account's service properties document as
// stored; ok is false when none was ever set.
func (tx *Tx) ServiceProperties(account string) (doc string, ok bool, err error) {
	err = tx.queryRow(`SELECT xml FROM service_properties WHERE account = $1`, []any{account}, &doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return doc, true, nil
}

// SetServiceProperties stores the document, replacing the last.
func (tx *Tx) SetServiceProperties(account, doc string) error {
	_, err := tx.exec(`INSERT INTO service_properties (account, xml) VALUES ($1, $2)
		ON CONFLICT (account) DO UPDATE SET xml = excluded.xml`, account, doc)
	return err
}

// TableACL returns t's stored access policies in the order set.
func (tx *Tx) TableACL(t store.Table) ([]store.SignedIdentifier, error) {
	rows, err := tx.query(`SELECT id, start, expiry, permission FROM table_acl WHERE tid = $1 ORDER BY pos`, t.ID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.SignedIdentifier
	for rows.Next() {
		si, err := scanIdentifier(rows)
		if err != nil {
			return nil, tx.note(err)
		}
		out = append(out, si)
	}
	return out, tx.note(rows.Err())
}

// SetTableACL replaces t's stored access policies (the caller validates
// them).
func (tx *Tx) SetTableACL(t store.Table, ids []store.SignedIdentifier) error {
	if _, err := tx.exec(`DELETE FROM table_acl WHERE tid = $1`, t.ID); err != nil {
		return err
	}
	for i, si := range ids {
		_, err := tx.exec(`INSERT INTO table_acl (tid, pos, id, start, expiry, permission) VALUES ($1, $2, $3, $4, $5, $6)`,
			t.ID, i, si.ID, nullTime(si.Start), nullTime(si.Expiry), nullString(si.Permission))
		if err != nil {
			return err
		}
	}
	return nil
}

// AccessPolicy finds policy id of the table named table (any case); ok is
// false when there is no such table or policy. Under ExactTableNames,
// where names differing in case are tables of their own, the table of the
// exact name comes first, then its case variants by name
// (store.TableKeyRange; docs/cosmos.md).
func (tx *Tx) AccessPolicy(account, table, id string) (store.SignedIdentifier, bool, error) {
	var rows pgx.Rows
	var err error
	if tx.e.exactNames {
		lo, hi := store.TableKeyRange(table)
		rows, err = tx.query(`SELECT a.id, a.start, a.expiry, a.permission FROM table_acl a JOIN tables t ON t.id = a.tid
			WHERE t.account = $1 AND t.lname >= $2 AND t.lname < $3 AND a.id = $4 ORDER BY t.name <> $5, t.lname, a.pos LIMIT 1`,
			account, []byte(lo), []byte(hi), id, table)
	} else {
		rows, err = tx.query(`SELECT a.id, a.start, a.expiry, a.permission FROM table_acl a JOIN tables t ON t.id = a.tid
			WHERE t.account = $1 AND t.lname = $2 AND a.id = $3 ORDER BY a.pos LIMIT 1`,
			account, []byte(strings.ToLower(table)), id)
	}
	if err != nil {
		return store.SignedIdentifier{}, false, err
	}
	defer rows.Close()
	if !rows.Next() {
		return store.SignedIdentifier{}, false, tx.note(rows.Err())
	}
	si, err := scanIdentifier(rows)
	if err != nil {
		return store.SignedIdentifier{}, false, tx.note(err)
	}
	return si, true, nil
}

func scanIdentifier(rows pgx.Rows) (store.SignedIdentifier, error) {
	var si store.SignedIdentifier
	var start, expiry, perm *string
	if err := rows.Scan(&si.ID, &start, &expiry, &perm); err != nil {
		return si, err
	}
	var err error
	if si.Start, err = parseTime(start); err != nil {
		return si, err
	}
	if si.Expiry, err = parseTime(expiry); err != nil {
		return si, err
	}
	if perm != nil {
		si.Permission = *perm
	}
	return si, nil
}

func nullTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(store.ACLTime)
	return &s
}

func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func parseTime(s *string) (time.Time, error) {
	if s == nil {
		return time.Time{}, nil
	}
	return time.Parse(store.ACLTime, *s)
}
