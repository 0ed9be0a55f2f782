package postgres

import (
	"errors"
	"sort"

	"github.com/jackc/pgx/v5"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata/edm"
)

// Snapshots (docs/isolation.md): an account's tables, entities, policies
// and service properties copied under a name, and copied back by a
// restore. Each operation is one Update, so every reader, in any process,
// sees the account before or after it, whole. The copies are plain INSERT
// ... SELECT: the SQLite engine's restore that rewrites only what changed
// (and its background collector) is an optimisation this engine does
// without; a reset or restore here costs time in proportion to the data.

// Snapshots lists account's snapshots by name (bytewise, as SQLite's BINARY
// collation: the database's collation is not relied on).
func (tx *Tx) Snapshots(account string) ([]store.Snapshot, error) {
	rows, err := tx.query(`SELECT name, created, tables, entities FROM snapshots WHERE account = $1`, account)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []store.Snapshot{}
	for rows.Next() {
		var sn store.Snapshot
		var tables, entities int64
		if err := rows.Scan(&sn.Name, &sn.Created, &tables, &entities); err != nil {
			return nil, tx.note(err)
		}
		sn.Tables, sn.Entities = int(tables), int(entities)
		out = append(out, sn)
	}
	if err := rows.Err(); err != nil {
		return nil, tx.note(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// GetSnapshot describes one snapshot.
func (tx *Tx) GetSnapshot(account, name string) (store.Snapshot, error) {
	sn, _, _, err := tx.findSnapshot(account, name)
	return sn, err
}

func (tx *Tx) findSnapshot(account, name string) (sn store.Snapshot, id int64, props *string, err error) {
	sn.Name = name
	var tables, entities int64
	err = tx.queryRow(`SELECT id, created, properties, tables, entities FROM snapshots WHERE account = $1 AND name = $2`,
		[]any{account, name}, &id, &sn.Created, &props, &tables, &entities)
	if errors.Is(err, pgx.ErrNoRows) {
		err = store.ErrSnapshotNotFound
	}
	sn.Tables, sn.Entities = int(tables), int(entities)
	return sn, id, props, err
}

// SaveSnapshot saves account's current state as the snapshot name,
// replacing one of that name (replaced is then true).
func (tx *Tx) SaveSnapshot(account, name string) (sn store.Snapshot, replaced bool, err error) {
	switch _, old, _, err := tx.findSnapshot(account, name); {
	case err == nil:
		if err := tx.dropSnapshot(old); err != nil {
			return sn, false, err
		}
		replaced = true
	case !errors.Is(err, store.ErrSnapshotNotFound):
		return sn, false, err
	}
	sn = store.Snapshot{Name: name, Created: edm.TicksFromTime(tx.e.now())}
	doc, ok, err := tx.ServiceProperties(account)
	if err != nil {
		return sn, false, err
	}
	var props *string
	if ok {
		props = &doc
	}
	var sid int64
	if err := tx.queryRow(`INSERT INTO snapshots (account, name, created, properties) VALUES ($1, $2, $3, $4) RETURNING id`,
		[]any{account, name, sn.Created, props}, &sid); err != nil {
		return sn, false, err
	}
	live, err := tx.accountTables(account)
	if err != nil {
		return sn, false, err
	}
	for _, t := range live {
		var stid int64
		if err := tx.queryRow(`INSERT INTO snapshot_tables (sid, name, created) VALUES ($1, $2, $3) RETURNING id`,
			[]any{sid, t.name, t.created}, &stid); err != nil {
			return sn, false, err
		}
		n, err := tx.exec(`INSERT INTO snapshot_entities (stid, pk, rk, ts, props, seq) SELECT $1, pk, rk, ts, props, seq FROM entities WHERE tid = $2`, stid, t.id)
		if err != nil {
			return sn, false, err
		}
		if _, err := tx.exec(`UPDATE snapshot_tables SET entities = $1 WHERE id = $2`, n, stid); err != nil {
			return sn, false, err
		}
		if _, err := tx.exec(`INSERT INTO snapshot_acl (stid, pos, id, start, expiry, permission)
			SELECT $1, pos, id, start, expiry, permission FROM table_acl WHERE tid = $2`, stid, t.id); err != nil {
			return sn, false, err
		}
		sn.Tables++
		sn.Entities += int(n)
	}
	_, err = tx.exec(`UPDATE snapshots SET tables = $1, entities = $2 WHERE id = $3`, sn.Tables, sn.Entities, sid)
	return sn, replaced, err
}

// liveTable is a table of an account, as snapshots read it.
type liveTable struct {
	id, created int64
	name        string
}

func (tx *Tx) accountTables(account string) ([]liveTable, error) {
	rows, err := tx.query(`SELECT id, name, created FROM tables WHERE account = $1 ORDER BY lname`, account)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []liveTable
	for rows.Next() {
		var t liveTable
		if err := rows.Scan(&t.id, &t.name, &t.created); err != nil {
			return nil, tx.note(err)
		}
		out = append(out, t)
	}
	return out, tx.note(rows.Err())
}

// DeleteSnapshot deletes the snapshot name.
func (tx *Tx) DeleteSnapshot(account, name string) error {
	_, id, _, err := tx.findSnapshot(account, name)
	if err != nil {
		return err
	}
	return tx.dropSnapshot(id)
}

func (tx *Tx) dropSnapshot(sid int64) error {
	const tables = `SELECT id FROM snapshot_tables WHERE sid = $1`
	for _, q := range []string{
		`DELETE FROM snapshot_entities WHERE stid IN (` + tables + `)`,
		`DELETE FROM snapshot_acl WHERE stid IN (` + tables + `)`,
		`DELETE FROM snapshot_tables WHERE sid = $1`,
		`DELETE FROM snapshots WHERE id = $1`,
	} {
		if _, err := tx.exec(q, sid); err != nil {
			return err
		}
	}
	return nil
}

// RestoreSnapshot puts account back as the snapshot holds it: exactly its
// tables (names in their case), entities (with their Timestamps, so their
// ETags), policies and service properties. The tables get new ids: a Table
// read before the restore names no table after it.
func (tx *Tx) RestoreSnapshot(account, name string) (store.Snapshot, error) {
	sn, sid, props, err := tx.findSnapshot(account, name)
	if err != nil {
		return sn, err
	}
	if err := tx.dropTables(`account = $1`, account); err != nil {
		return sn, err
	}
	type snapTable struct {
		id, created int64
		name        string
	}
	var snap []snapTable
	rows, err := tx.query(`SELECT id, name, created FROM snapshot_tables WHERE sid = $1 ORDER BY id`, sid)
	if err != nil {
		return sn, err
	}
	for rows.Next() {
		var st snapTable
		if err := rows.Scan(&st.id, &st.name, &st.created); err != nil {
			rows.Close()
			return sn, tx.note(err)
		}
		snap = append(snap, st)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return sn, tx.note(err)
	}
	for _, st := range snap {
		var tid int64
		if err := tx.queryRow(`INSERT INTO tables (account, name, lname, created) VALUES ($1, $2, $3, $4) RETURNING id`,
			[]any{account, st.name, []byte(store.TableKey(st.name, tx.e.exactNames)), st.created}, &tid); err != nil {
			return sn, err
		}
		if _, err := tx.exec(`INSERT INTO entities (tid, pk, rk, ts, props, seq) SELECT $1, pk, rk, ts, props, seq FROM snapshot_entities WHERE stid = $2`, tid, st.id); err != nil {
			return sn, err
		}
		if _, err := tx.exec(`INSERT INTO table_acl (tid, pos, id, start, expiry, permission)
			SELECT $1, pos, id, start, expiry, permission FROM snapshot_acl WHERE stid = $2`, tid, st.id); err != nil {
			return sn, err
		}
	}
	if props != nil {
		err = tx.SetServiceProperties(account, *props)
	} else {
		_, err = tx.exec(`DELETE FROM service_properties WHERE account = $1`, account)
	}
	return sn, err
}

// ResetAccount returns account to the state of a new one (its snapshots
// stay) and says how many tables it removed.
func (tx *Tx) ResetAccount(account string) (int, error) {
	var n int64
	if err := tx.queryRow(`SELECT count(*) FROM tables WHERE account = $1`, []any{account}, &n); err != nil {
		return 0, err
	}
	if err := tx.dropTables(`account = $1`, account); err != nil {
		return 0, err
	}
	_, err := tx.exec(`DELETE FROM service_properties WHERE account = $1`, account)
	return int(n), err
}

// ResetAll is ResetAccount for every account in the database.
func (tx *Tx) ResetAll() (int, error) {
	var n int64
	if err := tx.queryRow(`SELECT count(*) FROM tables`, nil, &n); err != nil {
		return 0, err
	}
	// TRUNCATE would be faster, but takes an ACCESS EXCLUSIVE lock that
	// other instances' readers would queue behind, and is not
	// transactional everywhere (CockroachDB).
	tx.e.tables.clear()
	for _, q := range []string{`DELETE FROM entities`, `DELETE FROM table_acl`, `DELETE FROM tables`, `DELETE FROM service_properties`} {
		if _, err := tx.exec(q); err != nil {
			return 0, err
		}
	}
	return int(n), nil
}
