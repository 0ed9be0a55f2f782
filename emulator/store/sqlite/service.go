package sqlite

import (
	"database/sql"
	"errors"
)

// ServiceProperties returns the Table service properties document of
// account as last stored by SetServiceProperties; ok is false when none was
// ever set, i.e. the account has the defaults (docs/protocol.md 3.5). The store
// keeps the document opaque: the emulator owns its format.
func (tx *Tx) ServiceProperties(account string) (doc string, ok bool, err error) {
	err = tx.queryRow(
		`SELECT xml FROM service_properties WHERE account = ?`, account).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return doc, true, nil
}

// SetServiceProperties stores the service properties document of account,
// replacing the previous one.
func (tx *Tx) SetServiceProperties(account, doc string) error {
	_, err := tx.exec(
		`INSERT INTO service_properties (account, xml) VALUES (?, ?)
		 ON CONFLICT (account) DO UPDATE SET xml = excluded.xml`, account, doc)
	return err
}
