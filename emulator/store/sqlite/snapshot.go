package sqlite

import (
	"database/sql"
	"errors"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata/edm"
)

// Snapshots: an account's tables, entities, stored access policies and
// service properties saved under a name, and put back by a restore in one
// transaction (docs/isolation.md). They are rows of their own tables
// (0003_snapshots.sql), beside the data and never among an account's
// tables, so they survive a restart with the database and nothing the
// account can see counts them.
//
// A restore costs what changed since, not what the snapshot holds. A table
// saved into a snapshot, or restored from one, keeps that snapshot table as
// its base, and from then on each entity write to it records its keys in
// entity_changes (noteChange). Restoring the same snapshot then rewrites
// only those keys: each is deleted, and put back from the snapshot if it
// was there. The usual test — load fixtures, snapshot, and before each test
// restore — pays for the entities the previous test wrote, not for the
// fixtures. Tables deleted since, or retired by a reset, were parked
// (gc.go) and are taken back the same way. Tables the snapshot lacks are
// retired; tables it has with no copy left (after switching from another
// snapshot), or rewritten more than half, are copied whole.

// noteChange records, for a table with a base, that the entity pk/rk was
// written, so that a restore from the base rewrites it.
func (tx *Tx) noteChange(t Table, pk, rk string) error {
	if t.Base == 0 {
		return nil
	}
	_, err := tx.exec(`INSERT OR IGNORE INTO entity_changes (tid, pk, rk) VALUES (?, ?, ?)`, t.ID, sortKey(pk), sortKey(rk))
	return err
}

// Snapshots lists account's snapshots by name.
func (tx *Tx) Snapshots(account string) ([]Snapshot, error) {
	rows, err := tx.query(`SELECT name, created, tables, entities FROM snapshots WHERE account = ? ORDER BY name`, account)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Snapshot{}
	for rows.Next() {
		var sn Snapshot
		if err := rows.Scan(&sn.Name, &sn.Created, &sn.Tables, &sn.Entities); err != nil {
			return nil, err
		}
		out = append(out, sn)
	}
	return out, rows.Close()
}

// GetSnapshot describes one snapshot; ErrSnapshotNotFound if absent.
func (tx *Tx) GetSnapshot(account, name string) (Snapshot, error) {
	sn, _, _, err := tx.findSnapshot(account, name)
	return sn, err
}

func (tx *Tx) findSnapshot(account, name string) (sn Snapshot, id int64, props sql.NullString, err error) {
	sn.Name = name
	err = tx.queryRow(`SELECT id, created, properties, tables, entities FROM snapshots WHERE account = ? AND name = ?`,
		account, name).Scan(&id, &sn.Created, &props, &sn.Tables, &sn.Entities)
	if errors.Is(err, errNoRows) {
		err = ErrSnapshotNotFound
	}
	return sn, id, props, err
}

// liveTable is a table of an account, as snapshots read it.
type liveTable struct {
	id, created, base int64
	name              string
}

func (tx *Tx) accountTables(account string) ([]liveTable, error) {
	return tx.tablesWhere(`account = ?`, account)
}

// tablesWhere lists the tables whose rows match the condition.
func (tx *Tx) tablesWhere(cond string, args ...any) ([]liveTable, error) {
	rows, err := tx.query(`SELECT id, name, created, coalesce(base, 0) FROM tables WHERE `+cond+` ORDER BY lname`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []liveTable
	for rows.Next() {
		var t liveTable
		if err := rows.Scan(&t.id, &t.name, &t.created, &t.base); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Close()
}

// SaveSnapshot saves account's current state as the snapshot name,
// replacing one of that name (replaced is then true). The caller
// validates the name.
func (tx *Tx) SaveSnapshot(account, name string) (sn Snapshot, replaced bool, err error) {
	switch _, old, _, err := tx.findSnapshot(account, name); {
	case err == nil:
		if err := tx.dropSnapshot(old); err != nil {
			return sn, false, err
		}
		replaced = true
	case !errors.Is(err, ErrSnapshotNotFound):
		return sn, false, err
	}
	sn = Snapshot{Name: name, Created: edm.TicksFromTime(tx.s.now())}
	doc, ok, err := tx.ServiceProperties(account)
	if err != nil {
		return sn, false, err
	}
	var sid int64
	err = tx.queryRow(`INSERT INTO snapshots (account, name, created, properties) VALUES (?, ?, ?, ?) RETURNING id`,
		account, name, sn.Created, nullIf(!ok, doc)).Scan(&sid)
	if err != nil {
		return sn, false, err
	}
	live, err := tx.accountTables(account)
	if err != nil {
		return sn, false, err
	}
	for _, t := range live {
		var stid int64
		err := tx.queryRow(`INSERT INTO snapshot_tables (sid, name, created) VALUES (?, ?, ?) RETURNING id`,
			sid, t.name, t.created).Scan(&stid)
		if err != nil {
			return sn, false, err
		}
		n, err := tx.exec(`INSERT INTO snapshot_entities (stid, pk, rk, ts, props, seq) SELECT ?, pk, rk, ts, props, seq FROM entities WHERE tid = ?`, stid, t.id)
		if err != nil {
			return sn, false, err
		}
		if _, err := tx.exec(`UPDATE snapshot_tables SET entities = ? WHERE id = ?`, n, stid); err != nil {
			return sn, false, err
		}
		if _, err := tx.exec(`INSERT INTO snapshot_acl (stid, pos, id, start, expiry, permission)
			SELECT ?, pos, id, start, expiry, permission FROM table_acl WHERE tid = ?`, stid, t.id); err != nil {
			return sn, false, err
		}
		// The table now equals its new base exactly.
		if t.base != 0 {
			if _, err := tx.exec(`DELETE FROM entity_changes WHERE tid = ?`, t.id); err != nil {
				return sn, false, err
			}
		}
		if _, err := tx.exec(`UPDATE tables SET base = ? WHERE id = ?`, stid, t.id); err != nil {
			return sn, false, err
		}
		sn.Tables++
		sn.Entities += int(n)
	}
	if _, err := tx.exec(`UPDATE snapshots SET tables = ?, entities = ? WHERE id = ?`, sn.Tables, sn.Entities, sid); err != nil {
		return sn, false, err
	}
	// Cached Tables carry their base.
	tx.tablesChanged = true
	return sn, replaced, tx.dropParked(account, sid)
}

func nullIf(null bool, s string) any {
	if null {
		return nil
	}
	return s
}

// DeleteSnapshot deletes the snapshot name; ErrSnapshotNotFound if absent.
func (tx *Tx) DeleteSnapshot(account, name string) error {
	_, id, _, err := tx.findSnapshot(account, name)
	if err != nil {
		return err
	}
	return tx.dropSnapshot(id)
}

// dropSnapshot deletes snapshot sid: its tables become garbage (gc.go),
// and the live tables based on them stop recording their writes.
func (tx *Tx) dropSnapshot(sid int64) error {
	// Its parked tables become garbage: their indexes go first, so that
	// the collector does not update them for every row it deletes.
	parked, err := tx.tablesWhere(`account = ? AND base IN (SELECT id FROM snapshot_tables WHERE sid = ?)`, retiredAccount, sid)
	if err != nil {
		return err
	}
	for _, t := range parked {
		if err := tx.dropIndexes(t.id); err != nil {
			return err
		}
	}
	const based = `SELECT id FROM tables WHERE base IN (SELECT id FROM snapshot_tables WHERE sid = ?)`
	for _, q := range []string{
		`DELETE FROM entity_changes WHERE tid IN (` + based + `)`,
		`UPDATE tables SET base = NULL WHERE id IN (` + based + `)`,
		`UPDATE snapshot_tables SET sid = NULL WHERE sid = ?`,
		`DELETE FROM snapshots WHERE id = ?`,
	} {
		if _, err := tx.exec(q, sid); err != nil {
			return err
		}
	}
	tx.tablesChanged, tx.garbage = true, true
	return nil
}

// snapTable is a table of a snapshot.
type snapTable struct {
	id, created int64
	name        string
	entities    int
}

// RestoreSnapshot puts account back as the snapshot name holds it:
// exactly its tables (with their names' case), entities (with their
// Timestamps, so their ETags), stored access policies and service
// properties. ErrSnapshotNotFound if there is no such snapshot. The
// caller runs it in an Update, which makes it atomic: a reader sees the
// account as it was before or after, whole.
func (tx *Tx) RestoreSnapshot(account, name string) (Snapshot, error) {
	sn, sid, props, err := tx.findSnapshot(account, name)
	if err != nil {
		return sn, err
	}
	tx.cacheAll = true // tables come back in bulk: the filter cache starts again
	var snap []snapTable
	byID := map[int64]snapTable{}
	rows, err := tx.query(`SELECT id, name, created, entities FROM snapshot_tables WHERE sid = ? ORDER BY id`, sid)
	if err != nil {
		return sn, err
	}
	for rows.Next() {
		var st snapTable
		if err := rows.Scan(&st.id, &st.name, &st.created, &st.entities); err != nil {
			rows.Close()
			return sn, err
		}
		snap = append(snap, st)
		byID[st.id] = st
	}
	if err := rows.Close(); err != nil {
		return sn, err
	}
	// The account's tables, then the parked tables based on this snapshot
	// (at most one per snapshot table, gc.go): each one based on a table
	// of the snapshot has its changes undone and is kept (taken back if
	// parked); the others in place are retired, parked only if based on
	// this snapshot.
	live, err := tx.accountTables(account)
	if err != nil {
		return sn, err
	}
	parked, err := tx.tablesWhere(`account = ? AND base IN (SELECT id FROM snapshot_tables WHERE sid = ?)`, retiredAccount, sid)
	if err != nil {
		return sn, err
	}
	kept := map[int64]int64{} // snapshot table → the table restored in place
	var retired []liveTable
	var revived []snapTable // parked tables to take back, by their base
	for i, t := range append(live, parked...) {
		isLive := i < len(live)
		if st, ok := byID[t.base]; ok && kept[st.id] == 0 {
			undone, err := tx.undoChanges(t.id, st)
			if err != nil {
				return sn, err
			}
			if undone {
				kept[st.id] = t.id
				if !isLive {
					revived = append(revived, st)
				}
				continue
			}
			// Rewritten too much to patch: it is copied whole below,
			// and this one is garbage.
			if err := tx.unbase(t.id); err != nil {
				return sn, err
			}
			t.base = 0
		}
		if !isLive {
			if t.base == 0 {
				if err := tx.retire([]liveTable{t}); err != nil { // already retired: this drops its indexes
					return sn, err
				}
			}
			continue
		}
		if _, ok := byID[t.base]; !ok && t.base != 0 {
			// Based on another snapshot: garbage, not parked (only
			// the snapshot restored now keeps parked copies).
			if err := tx.unbase(t.id); err != nil {
				return sn, err
			}
			t.base = 0
		}
		retired = append(retired, t)
	}
	if err := tx.dropParked(account, sid); err != nil {
		return sn, err
	}
	if err := tx.retire(retired); err != nil {
		return sn, err
	}
	// Once the names are free.
	for _, st := range revived {
		if _, err := tx.exec(`UPDATE tables SET account = ?, name = ?, lname = ? WHERE id = ?`, account, st.name, store.TableKey(st.name, tx.s.exactNames), kept[st.id]); err != nil {
			return sn, err
		}
	}
	for _, st := range snap {
		tid := kept[st.id]
		if tid == 0 {
			err := tx.queryRow(`INSERT INTO tables (account, name, lname, created, base) VALUES (?, ?, ?, ?, ?) RETURNING id`,
				account, st.name, store.TableKey(st.name, tx.s.exactNames), st.created, st.id).Scan(&tid)
			if err != nil {
				return sn, err
			}
			if _, err := tx.exec(`INSERT INTO entities (tid, pk, rk, ts, props, seq) SELECT ?, pk, rk, ts, props, seq FROM snapshot_entities WHERE stid = ?`, tid, st.id); err != nil {
				return sn, err
			}
		} else if _, err := tx.exec(`DELETE FROM table_acl WHERE tid = ?`, tid); err != nil {
			return sn, err
		}
		if _, err := tx.exec(`INSERT INTO table_acl (tid, pos, id, start, expiry, permission)
			SELECT ?, pos, id, start, expiry, permission FROM snapshot_acl WHERE stid = ?`, tid, st.id); err != nil {
			return sn, err
		}
	}
	if props.Valid {
		err = tx.SetServiceProperties(account, props.String)
	} else {
		_, err = tx.exec(`DELETE FROM service_properties WHERE account = ?`, account)
	}
	tx.tablesChanged = true
	return sn, err
}

// dropParked makes garbage of the account's parked tables based on
// another snapshot than keep: an account keeps parked copies of the one
// snapshot it was last saved into or restored from (gc.go).
func (tx *Tx) dropParked(account string, keep int64) error {
	parked, err := tx.tablesWhere(`account = ? AND base IN (SELECT t.id FROM snapshot_tables t JOIN snapshots s ON s.id = t.sid
		WHERE s.account = ? AND s.id <> ?)`, retiredAccount, account, keep)
	if err != nil {
		return err
	}
	for _, t := range parked {
		if err := tx.unbase(t.id); err != nil {
			return err
		}
		t.base = 0
		if err := tx.retire([]liveTable{t}); err != nil { // already retired: this drops its indexes
			return err
		}
	}
	return nil
}

// unbase makes table tid descend from no snapshot: its writes are no
// longer recorded, and, retired, it is garbage.
func (tx *Tx) unbase(tid int64) error {
	if _, err := tx.exec(`DELETE FROM entity_changes WHERE tid = ?`, tid); err != nil {
		return err
	}
	_, err := tx.exec(`UPDATE tables SET base = NULL WHERE id = ?`, tid)
	return err
}

// undoChanges puts back, in the live table tid based on st, the entities
// written since it last equalled st: undone is false, with nothing done,
// when more than half of st's entities would be rewritten, since copying
// the table whole is then cheaper.
func (tx *Tx) undoChanges(tid int64, st snapTable) (undone bool, err error) {
	var n int
	if err := tx.queryRow(`SELECT count(*) FROM entity_changes WHERE tid = ?`, tid).Scan(&n); err != nil {
		return false, err
	}
	if n > st.entities/2 {
		return false, nil
	}
	if n == 0 {
		return true, nil
	}
	// CROSS JOIN keeps SQLite from reading the snapshot table whole and
	// looking each of its entities up in the changes: it steps through
	// the changes and looks each up in the snapshot.
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`DELETE FROM entities WHERE tid = ? AND (pk, rk) IN (SELECT pk, rk FROM entity_changes WHERE tid = ?)`, []any{tid, tid}},
		{`INSERT INTO entities (tid, pk, rk, ts, props, seq)
			SELECT ?, s.pk, s.rk, s.ts, s.props, s.seq FROM entity_changes c CROSS JOIN snapshot_entities s
			ON s.stid = ? AND s.pk = c.pk AND s.rk = c.rk WHERE c.tid = ?`, []any{tid, st.id, tid}},
		{`DELETE FROM entity_changes WHERE tid = ?`, []any{tid}},
	} {
		if _, err := tx.exec(q.sql, q.args...); err != nil {
			return false, err
		}
	}
	return true, nil
}
