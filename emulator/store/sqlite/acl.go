package sqlite

import (
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/tableemu/tableemu/emulator/store"
)

// TableACL returns the stored access policies of t in the order they were
// set; none is an empty list.
func (tx *Tx) TableACL(t Table) ([]SignedIdentifier, error) {
	rows, err := tx.query(
		`SELECT id, start, expiry, permission FROM table_acl WHERE tid = ? ORDER BY pos`, t.ID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SignedIdentifier
	for rows.Next() {
		si, err := scanIdentifier(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, si)
	}
	return out, rows.Close()
}

// SetTableACL replaces the stored access policies of t with ids (none
// clears them), as Set Table ACL replaces the whole list (docs/protocol.md 3.4).
// The caller validates the list.
func (tx *Tx) SetTableACL(t Table, ids []SignedIdentifier) error {
	if _, err := tx.exec(`DELETE FROM table_acl WHERE tid = ?`, t.ID); err != nil {
		return err
	}
	for i, si := range ids {
		_, err := tx.exec(
			`INSERT INTO table_acl (tid, pos, id, start, expiry, permission) VALUES (?, ?, ?, ?, ?, ?)`,
			t.ID, i, si.ID, nullTime(si.Start), nullTime(si.Expiry), nullString(si.Permission))
		if err != nil {
			return err
		}
	}
	return nil
}

// AccessPolicy finds the stored access policy id on the table named table
// (in any case: a SAS's tn may have been lower-cased by the client) of
// account. Identifiers compare exactly. ok is false when there is no such
// table or policy. Under ExactTableNames, where names differing in case
// are tables of their own, the table of the exact name comes first, then
// its case variants by name (store.TableKeyRange; docs/cosmos.md).
func (tx *Tx) AccessPolicy(account, table, id string) (si SignedIdentifier, ok bool, err error) {
	var row scanner
	if tx.s.exactNames {
		lo, hi := store.TableKeyRange(table)
		row = tx.queryRow(
			`SELECT a.id, a.start, a.expiry, a.permission FROM table_acl a JOIN tables t ON t.id = a.tid
			 WHERE t.account = ? AND t.lname >= ? AND t.lname < ? AND a.id = ? ORDER BY t.name <> ?, t.lname, a.pos LIMIT 1`,
			account, lo, hi, id, table)
	} else {
		row = tx.queryRow(
			`SELECT a.id, a.start, a.expiry, a.permission FROM table_acl a JOIN tables t ON t.id = a.tid
			 WHERE t.account = ? AND t.lname = ? AND a.id = ? ORDER BY a.pos LIMIT 1`,
			account, strings.ToLower(table), id)
	}
	si, err = scanIdentifier(row)
	if errors.Is(err, sql.ErrNoRows) {
		return SignedIdentifier{}, false, nil
	}
	if err != nil {
		return SignedIdentifier{}, false, err
	}
	return si, true, nil
}

type scanner interface{ Scan(dest ...any) error }

func scanIdentifier(r scanner) (SignedIdentifier, error) {
	var si SignedIdentifier
	var start, expiry, perm sql.NullString
	if err := r.Scan(&si.ID, &start, &expiry, &perm); err != nil {
		return si, err
	}
	var err error
	if si.Start, err = parseStoredTime(start); err != nil {
		return si, err
	}
	if si.Expiry, err = parseStoredTime(expiry); err != nil {
		return si, err
	}
	si.Permission = perm.String
	return si, nil
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(store.ACLTime)
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func parseStoredTime(v sql.NullString) (time.Time, error) {
	if !v.Valid {
		return time.Time{}, nil
	}
	return time.Parse(store.ACLTime, v.String)
}
