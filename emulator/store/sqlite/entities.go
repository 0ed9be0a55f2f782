package sqlite

import (
	"errors"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata/edm"
)

// getEntitySQL reads one entity's row.
const getEntitySQL = `SELECT ts, props FROM entities WHERE tid = ? AND pk = ? AND rk = ?`

// GetEntity reads one entity; ErrEntityNotFound if absent.
func (tx *Tx) GetEntity(t Table, pk, rk string) (*edm.Entity, error) {
	var ts int64
	var props []byte
	// conn.queryRow directly: through tx.queryRow the arguments escape
	// (see Tx.queryRow), three allocations.
	err := tx.c.queryRow(tx.ctx, getEntitySQL, []any{t.ID, sortKey(pk), sortKey(rk)}, &ts, &props)
	if errors.Is(err, errNoRows) {
		return nil, ErrEntityNotFound
	}
	if err != nil {
		return nil, err
	}
	e := &edm.Entity{PartitionKey: pk, RowKey: rk, Timestamp: ts, Properties: make([]edm.Property, 0, 8)}
	// Scan copied the row into props, which nothing else holds or
	// changes: the entity's strings may point into it rather than be
	// copied again (a point read's largest allocation).
	if err = store.DecodeEntityProps(e, props, true); err != nil {
		return nil, err
	}
	return e, nil
}

// ReadEntity calls fn with one entity; ErrEntityNotFound, without calling
// fn, if absent. The row is not copied: e's strings point into SQLite's
// row buffer, and e and its property slice are the connection's, reused
// by the next ReadEntity on it, so fn must not keep any of them. GetEntity
// copies the row (1 KB for tablebench's entities) and allocates the
// entity and its properties, which were two thirds of what a point read
// allocated besides net/http's share.
func (tx *Tx) ReadEntity(t Table, pk, rk string, fn func(*edm.Entity) error) error {
	c := tx.c
	var r rows
	if err := c.open(&r, tx.ctx, getEntitySQL, []any{t.ID, sortKey(pk), sortKey(rk)}); err != nil {
		return err
	}
	defer r.Close()
	if !r.Next() {
		if err := r.Close(); err != nil {
			return err
		}
		return ErrEntityNotFound
	}
	// Take the connection's entity; a ReadEntity called from fn finds
	// none and makes its own.
	e := c.ent
	c.ent = nil
	if e == nil {
		e = &edm.Entity{Properties: make([]edm.Property, 0, 8)}
	}
	defer func() {
		clear(e.Properties) // nothing the next reader may not own
		*e = edm.Entity{Properties: e.Properties[:0]}
		c.ent = e
	}()
	e.PartitionKey, e.RowKey, e.Timestamp = pk, rk, r.Int64(0)
	if err := store.DecodeEntityProps(e, r.Bytes(1), true); err != nil {
		return err
	}
	return fn(e)
}

// propChunk is the size of the writer's memory for encoded properties:
// room for a batch of 100 entities of 1 KiB. An entity larger than an
// eighth of it takes its own allocation.
const propChunk = 256 << 10

// encodeProps encodes e's properties, and where its keys stand
// (store.EncodeEntityProps), into the writer's reused memory
// (conn.propMem), which runGroup hands out again to the next group: the
// object must not outlive the group's commit.
func (tx *Tx) encodeProps(e *edm.Entity) []byte {
	n := store.EntityPropsBound(e)
	if n > propChunk/8 {
		return store.EncodeEntityPropsInto(make([]byte, 0, n), e)
	}
	m := tx.c.propMem
	if cap(m)-len(m) < n {
		m = make([]byte, 0, propChunk)
	}
	tx.c.propMem = m[:len(m)+n]
	return store.EncodeEntityPropsInto(m[len(m):len(m)+n:len(m)+n], e)
}

// ShareTimestamp: the entities written from now on take one Timestamp.
func (tx *Tx) ShareTimestamp() { tx.share = true }

// stamp is the Timestamp of the next entity version written, later than
// prev: a new one, or the transaction's shared one (ShareTimestamp), which
// is later than every version written before the transaction began.
func (tx *Tx) stamp(prev int64) int64 {
	if !tx.share {
		return tx.s.nextTimestamp(prev)
	}
	if tx.shared <= prev {
		tx.shared = tx.s.nextTimestamp(prev)
	}
	return tx.shared
}

// InsertEntity stores a new entity and sets its Timestamp;
// ErrEntityExists if the keys are taken.
func (tx *Tx) InsertEntity(t Table, e *edm.Entity) error {
	ts := tx.stamp(0)
	pk, rk, props := sortKey(e.PartitionKey), sortKey(e.RowKey), tx.encodeProps(e)
	_, err := tx.exec(
		`INSERT INTO entities (tid, pk, rk, ts, props) VALUES (?, ?, ?, ?, ?)`,
		t.ID, pk, rk, ts, props)
	if isConstraint(err) {
		return ErrEntityExists
	}
	if err != nil {
		return err
	}
	e.Timestamp = ts
	tx.notePut(t.ID, pk, rk, ts, props)
	return tx.noteChange(t, e.PartitionKey, e.RowKey)
}

// PutEntity writes e whether or not it exists (replacing every property)
// and sets its Timestamp later than prev, the Timestamp of the version it
// replaces (0 if none), so that each version of an entity has its own ETag.
func (tx *Tx) PutEntity(t Table, e *edm.Entity, prev int64) error {
	return tx.put(t, e, tx.stamp(prev))
}

// LoadEntity writes e whether or not it exists with e.Timestamp as given
// (an import keeping its source's).
func (tx *Tx) LoadEntity(t Table, e *edm.Entity) error {
	return tx.put(t, e, e.Timestamp)
}

func (tx *Tx) put(t Table, e *edm.Entity, ts int64) error {
	pk, rk, props := sortKey(e.PartitionKey), sortKey(e.RowKey), tx.encodeProps(e)
	_, err := tx.exec(
		`INSERT INTO entities (tid, pk, rk, ts, props) VALUES (?, ?, ?, ?, ?)
		 ON CONFLICT (tid, pk, rk) DO UPDATE SET ts = excluded.ts, props = excluded.props`,
		t.ID, pk, rk, ts, props)
	if err != nil {
		return err
	}
	e.Timestamp = ts
	tx.notePut(t.ID, pk, rk, ts, props)
	return tx.noteChange(t, e.PartitionKey, e.RowKey)
}

// DeleteEntity removes an entity; ErrEntityNotFound if absent.
func (tx *Tx) DeleteEntity(t Table, pk, rk string) error {
	spk, srk := sortKey(pk), sortKey(rk)
	n, err := tx.exec(
		`DELETE FROM entities WHERE tid = ? AND pk = ? AND rk = ?`,
		t.ID, spk, srk)
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrEntityNotFound
	}
	tx.noteDelete(t.ID, spk, srk)
	return tx.noteChange(t, pk, rk)
}
