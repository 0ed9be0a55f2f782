package postgres

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/jackc/pgx/v5"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// key is a key in its stored form, as a bytea argument: keys in CESU-8 are
// not valid UTF-8, so they never travel as text.
func key(s string) []byte { return []byte(store.SortKey(s)) }

// GetEntity reads one entity.
func (tx *Tx) GetEntity(t store.Table, pk, rk string) (*edm.Entity, error) {
	var ts int64
	var props []byte
	var err error
	if c := tx.check; c != nil && c.ID == t.ID && len(tx.pending) == 0 {
		// The cached table's check and the read in one statement
		// (pending.go): one row always, NULLs when no entity.
		tx.check = nil
		var nts *int64
		err = tx.queryRow(`SELECT c.ok, e.ts, e.props FROM (SELECT 1 / count(*)::int AS ok FROM tables WHERE id = $1) c
			LEFT JOIN entities e ON e.tid = $1 AND e.pk = $2 AND e.rk = $3`,
			[]any{t.ID, key(pk), key(rk)}, nil, &nts, &props)
		if sqlState(err) == "22012" { // division_by_zero: the table is gone
			tx.e.tables.drop(*c)
			tx.stale = true
			return nil, errStale
		}
		if err == nil && nts == nil {
			err = pgx.ErrNoRows
		} else if nts != nil {
			ts = *nts
		}
	} else {
		err = tx.queryRow(`SELECT ts, props FROM entities WHERE tid = $1 AND pk = $2 AND rk = $3`,
			[]any{t.ID, key(pk), key(rk)}, &ts, &props)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrEntityNotFound
	}
	if err != nil {
		return nil, err
	}
	e := &edm.Entity{PartitionKey: pk, RowKey: rk, Timestamp: ts, Properties: make([]edm.Property, 0, 8)}
	if err = store.DecodeEntityProps(e, props, false); err != nil {
		return nil, err
	}
	return e, nil
}

// ReadEntity calls fn with the entity GetEntity reads. pgx hands the row
// over already copied into Go memory, so there is no buffer to save a copy
// of: this is GetEntity under the contract's other shape.
func (tx *Tx) ReadEntity(t store.Table, pk, rk string, fn func(*edm.Entity) error) error {
	e, err := tx.GetEntity(t, pk, rk)
	if err != nil {
		return err
	}
	return fn(e)
}

// ShareTimestamp: the entities written from now on take one Timestamp.
func (tx *Tx) ShareTimestamp() { tx.share = true }

// stamp is the Timestamp of the next entity version written, later than
// prev: a new one, or the transaction's shared one (ShareTimestamp). A
// retried closure runs on a new Tx, so it draws a new one.
func (tx *Tx) stamp(prev int64) int64 {
	if !tx.share {
		return tx.e.nextTimestamp(prev)
	}
	if tx.shared <= prev {
		tx.shared = tx.e.nextTimestamp(prev)
	}
	return tx.shared
}

// InsertEntity stores a new entity and sets its Timestamp;
// store.ErrEntityExists if the keys are taken (without aborting the
// transaction, as a unique violation would).
func (tx *Tx) InsertEntity(t store.Table, e *edm.Entity) error {
	ts := tx.stamp(0)
	if !tx.eager {
		// Sent later, without ON CONFLICT (pending.go).
		w := pendingWrite{tid: t.ID, pk: key(e.PartitionKey), rk: key(e.RowKey), ts: ts, props: store.EncodeEntityProps(e)}
		if tx.pendingAt(w) >= 0 {
			// This transaction wrote the key: it exists.
			return store.ErrEntityExists
		}
		if err := tx.owe(w); err != nil {
			return err
		}
		e.Timestamp = ts
		return nil
	}
	n, err := tx.exec(`INSERT INTO entities (tid, pk, rk, ts, props) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (tid, pk, rk) DO NOTHING`,
		t.ID, key(e.PartitionKey), key(e.RowKey), ts, store.EncodeEntityProps(e))
	if err != nil {
		return err
	}
	if n == 0 {
		return store.ErrEntityExists
	}
	e.Timestamp = ts
	return nil
}

// PutEntity writes e whether or not it exists and sets its Timestamp later
// than prev, the version it replaces: ts = max(now, prev+1), so that each
// version has its own ETag even when another process with a clock behind
// this one wrote prev.
func (tx *Tx) PutEntity(t store.Table, e *edm.Entity, prev int64) error {
	return tx.put(t, e, tx.stamp(prev))
}

// LoadEntity writes e whether or not it exists with e.Timestamp as given
// (an import keeping its source's).
func (tx *Tx) LoadEntity(t store.Table, e *edm.Entity) error {
	return tx.put(t, e, e.Timestamp)
}

func (tx *Tx) put(t store.Table, e *edm.Entity, ts int64) error {
	if !tx.eager {
		w := pendingWrite{upsert: true, tid: t.ID, pk: key(e.PartitionKey), rk: key(e.RowKey), ts: ts, props: store.EncodeEntityProps(e)}
		if i := tx.pendingAt(w); i >= 0 {
			// The last version is the one written, by the insert or
			// upsert already owed.
			tx.pending[i].ts, tx.pending[i].props = w.ts, w.props
		} else if err := tx.owe(w); err != nil {
			return err
		}
		e.Timestamp = ts
		return nil
	}
	_, err := tx.exec(`INSERT INTO entities (tid, pk, rk, ts, props) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (tid, pk, rk) DO UPDATE SET ts = excluded.ts, props = excluded.props`,
		t.ID, key(e.PartitionKey), key(e.RowKey), ts, store.EncodeEntityProps(e))
	if err != nil {
		return err
	}
	e.Timestamp = ts
	return nil
}

// DeleteEntity removes an entity.
func (tx *Tx) DeleteEntity(t store.Table, pk, rk string) error {
	n, err := tx.exec(`DELETE FROM entities WHERE tid = $1 AND pk = $2 AND rk = $3`, t.ID, key(pk), key(rk))
	if err != nil {
		return err
	}
	if n == 0 {
		return store.ErrEntityNotFound
	}
	return nil
}

// scanBudget is store.ScanBudget; tests lower it.
var scanBudget = store.ScanBudget

// scanChunk is how many rows one query of a filtered scan fetches: the
// scan goes on from the last key with another query, so that a sparse
// filter never makes the server send a whole table at once.
var scanChunk = 1000

// ScanEntities calls fn with each entity of one page, in key order. The
// key range of the query (store.Bounds: key comparisons, continuation, SAS
// range) is SQL; the rest of the filter is evaluated in Go with odata.Eval,
// decoding the properties only if it reads one. Every row read counts
// against store.ScanBudget, as in the SQLite engine: a page that examined
// that many stops with a continuation at the next row. e and its strings
// point into pgx's row buffer and are valid only during the call to fn.
func (tx *Tx) ScanEntities(t store.Table, q store.EntityQuery, fn func(e *edm.Entity) error) (store.ScanResult, error) {
	res := store.ScanResult{Scanned: -1, Read: -1, Shape: store.Classify(q.Filter)}
	b := store.Bounds(q)
	rest := b.Rest
	unfiltered := q.Filter == nil || b.Whole
	if unfiltered {
		rest = nil
	}
	where := "tid = $1" + dollars(b.And(), 2)
	args := append(tx.args[:0], t.ID)
	for _, a := range b.Args {
		if s, ok := a.(string); ok {
			a = []byte(s)
		}
		args = append(args, a)
	}
	var after []any // the last key read, once a chunk is done
	var lastPK, lastRK []byte
	var e edm.Entity
	n, examined := 0, 0
	for {
		limit := q.Top + 1
		if !unfiltered {
			// Up to the first row past the budget.
			limit = min(scanChunk, scanBudget+1-examined)
		}
		sql := "SELECT pk, rk, ts, props FROM entities WHERE " + where
		qargs := args
		if after != nil {
			sql += fmt.Sprintf(" AND (pk, rk) > ($%d, $%d)", len(args)+1, len(args)+2)
			qargs = append(qargs, after...)
		}
		sql += fmt.Sprintf(" ORDER BY pk, rk LIMIT $%d", len(qargs)+1)
		qargs = append(qargs, limit)
		rows, err := tx.query(sql, qargs...)
		if err != nil {
			return res, err
		}
		got := 0
		done := false
		for rows.Next() {
			got++
			examined++
			pk, rk, ts, props, err := rawRow(rows)
			if err != nil {
				rows.Close()
				return res, err
			}
			if !unfiltered {
				lastPK, lastRK = append(lastPK[:0], pk...), append(lastRK[:0], rk...)
			}
			if !unfiltered && examined > scanBudget {
				// The first row past the budget: the next page starts
				// here, as the service continues a page cut at its time
				// limit.
				res.Next = &store.Key{PK: store.FromSortKey(string(pk)), RK: store.FromSortKey(string(rk))}
				done = true
				break
			}
			e.PartitionKey, e.RowKey = fromKey(pk), fromKey(rk)
			e.Timestamp = ts
			lazy := store.LazyEntity{E: &e, Props: props, Alias: true}
			if rest != nil && !odata.Eval(rest, lazy.Get) {
				if lazy.Err() != nil {
					rows.Close()
					return res, lazy.Err()
				}
				continue
			}
			if n == q.Top {
				res.Next = &store.Key{PK: strings.Clone(e.PartitionKey), RK: strings.Clone(e.RowKey)}
				done = true
				break
			}
			if err := lazy.Decode(); err != nil {
				rows.Close()
				return res, err
			}
			if err := fn(&e); err != nil {
				rows.Close()
				return res, err
			}
			n++
		}
		if !done {
			// The next chunk starts after the last row read.
			after = []any{lastPK, lastRK}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return res, tx.note(err)
		}
		if done || got < limit || unfiltered {
			break
		}
	}
	// As the SQLite engine counts them: a filtered page, the rows before
	// the continuation; an unfiltered one, the row that became the
	// continuation too.
	res.Scanned = examined
	if res.Next != nil && !unfiltered {
		res.Scanned--
	}
	res.Read = res.Scanned
	tx.args = args[:0]
	return res, nil
}

// rawRow reads the current row of SELECT pk, rk, ts, props in place.
func rawRow(rows pgx.Rows) (pk, rk []byte, ts int64, props []byte, err error) {
	vals, fds := rows.RawValues(), rows.FieldDescriptions()
	if pk, err = byteaCol(vals[0], fds[0].Format); err != nil {
		return
	}
	if rk, err = byteaCol(vals[1], fds[1].Format); err != nil {
		return
	}
	if ts, err = int8Col(vals[2], fds[2].Format); err != nil {
		return
	}
	props, err = byteaCol(vals[3], fds[3].Format)
	return
}

// dollars rewrites the ? placeholders of store.KeyBounds as $first, ...
func dollars(sql string, first int) string {
	if !strings.Contains(sql, "?") {
		return sql
	}
	var b strings.Builder
	for _, c := range []byte(sql) {
		if c == '?' {
			b.WriteString("$" + strconv.Itoa(first))
			first++
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// fromKey is a stored key as the client's string, pointing into the row
// buffer when it needs no conversion.
func fromKey(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return store.FromSortKey(unsafe.String(unsafe.SliceData(b), len(b)))
}

// byteaCol reads a bytea column of a raw row: binary format is the bytes
// (what pgx asks for); text format (the simple protocol) is \x and hex.
func byteaCol(v []byte, format int16) ([]byte, error) {
	if v == nil {
		return nil, errors.New("postgres: NULL in a NOT NULL column")
	}
	if format == pgx.BinaryFormatCode {
		return v, nil
	}
	if len(v) < 2 || v[0] != '\\' || v[1] != 'x' {
		return nil, errors.New("postgres: bytea not in hex form")
	}
	out := make([]byte, hex.DecodedLen(len(v)-2))
	_, err := hex.Decode(out, v[2:])
	return out, err
}

func int8Col(v []byte, format int16) (int64, error) {
	if format == pgx.BinaryFormatCode {
		if len(v) != 8 {
			return 0, errors.New("postgres: bad int8")
		}
		return int64(binary.BigEndian.Uint64(v)), nil
	}
	return strconv.ParseInt(string(v), 10, 64)
}
