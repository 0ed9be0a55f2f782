package sqlite

import (
	"errors"
	"strings"
	"unsafe"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// QueryEntities returns one page of the entities of t that match q, in
// PartitionKey, RowKey order.
func (tx *Tx) QueryEntities(t Table, q EntityQuery) (EntityPage, error) {
	var page EntityPage
	res, err := tx.scanEntities(t, q, false, func(e *edm.Entity) error {
		c := *e
		c.Properties = append([]edm.Property(nil), e.Properties...) // scanEntities reuses e's
		page.Entities = append(page.Entities, &c)
		return nil
	})
	page.ScanResult = res
	return page, err
}

// ScanEntities is QueryEntities for a caller that handles each entity as
// it is read: fn sees the page's entities in order. To spare a copy of
// every property, e and the strings in it point into SQLite's row buffer
// and are valid only during the call to fn: fn must not keep them.
func (tx *Tx) ScanEntities(t Table, q EntityQuery, fn func(e *edm.Entity) error) (ScanResult, error) {
	return tx.scanEntities(t, q, true, fn)
}

// scanEntities runs the plan of plan.go and applies the residual filter.
func (tx *Tx) scanEntities(t Table, q EntityQuery, alias bool, fn func(e *edm.Entity) error) (ScanResult, error) {
	res := ScanResult{Scanned: -1, Read: -1, Shape: store.Classify(q.Filter)}
	p, err := tx.plan(t, q)
	if err != nil {
		return res, err
	}
	res.Index = p.index
	load := false
	// The filter cache walks keys in key order: creation order (p.seq)
	// reads SQLite.
	if p.match != nil && !p.seq && tx.reader && cacheScans && tx.s.fc.On() {
		// The snapshot begins before the cache is consulted, so that what
		// the scan reads from SQLite is of the cache's version.
		var one int
		if err := tx.queryRow(`SELECT 1 FROM tables WHERE id = ?`, t.ID).Scan(&one); err != nil && !errors.Is(err, errNoRows) {
			return res, err
		}
		tree, ld, wait := tx.s.fc.Lookup(t.ID, tx.p1)
		if wait != nil {
			// Being loaded: one load serves every scan that arrives
			// meanwhile, where scanning SQLite beside it would read the
			// whole table again for each (filtercache/load.go).
			tx.s.cacheWaits.Add(1)
			select {
			case <-wait:
			case <-tx.ctx.Done():
				return res, tx.ctx.Err()
			}
			tree, ld, _ = tx.s.fc.Lookup(t.ID, tx.p1)
		}
		load = ld
		if tree.Cached() && cacheable(p.match, tree) {
			tx.s.cacheHits.Add(1)
			examined, n, next, err := tx.scanCached(tree, t, &p, q.Top, fn)
			if err != nil {
				return res, err
			}
			res.Next = next
			return tx.finishScan(t, p, q, res, examined, n)
		}
	}
	var mf *scanFilter
	if p.match != nil {
		mf = &scanFilter{expr: p.match, budget: scanBudget, pkArg: p.pkArg, rkArg: p.rkArg, tsArg: p.tsArg}
		mf.get = mf.lookup
		scanSlots[p.matchSlot].Store(mf)
		defer scanSlots[p.matchSlot].Store(nil)
	}
	rows, err := tx.query(p.sql, p.args...)
	if err != nil {
		return res, err
	}
	defer rows.Close()
	var e edm.Entity
	n, examined := 0, 0
	for rows.Next() {
		if mf != nil {
			// tableemu_match let through a match, or the first row past
			// the budget: the next page starts there.
			if mf.ended {
				res.Next = p.rowNext(rows)
				break
			}
		} else if p.budgeted {
			examined++
			if examined > scanBudget {
				// The first row past the budget: the next page starts
				// here, as the service continues a page cut at its time limit.
				res.Next = p.rowNext(rows)
				break
			}
			if rows.Int64(4) == 0 {
				continue
			}
		}
		e.PartitionKey, e.RowKey = rowKey(rows, 0, alias), rowKey(rows, 1, alias)
		e.Timestamp = rows.Int64(2)
		lazy := store.LazyEntity{E: &e, Props: rows.Bytes(3), Alias: alias}
		if p.residual != nil && !odata.Eval(p.residual, lazy.Get) {
			if lazy.Err() != nil {
				return res, lazy.Err()
			}
			continue
		}
		if n == q.Top {
			// The continuation outlives the row: copy the keys.
			res.Next = p.nextKey(rows, &e)
			break
		}
		if err := lazy.Decode(); err != nil {
			return res, err
		}
		if err := fn(&e); err != nil {
			if err == store.ErrPageFull {
				res.Next = p.nextKey(rows, &e)
				break
			}
			return res, err
		}
		n++
	}
	if err := rows.Close(); err != nil {
		if mf != nil && mf.err != nil {
			return res, mf.err
		}
		return res, err
	}
	if mf != nil {
		examined = mf.examined
		if load && examined >= loadMinRows {
			tx.s.loadTable(t.ID)
		}
	}
	return tx.finishScan(t, p, q, res, examined, n)
}

// finishScan counts what a page examined, as the service and insights
// count it, and notes a sparse scan for the automatic indexes.
func (tx *Tx) finishScan(t Table, p plannedQuery, q EntityQuery, res ScanResult, examined, n int) (ScanResult, error) {
	switch {
	case p.budgeted:
		// Rows before the continuation, as countScanned counts them.
		res.Scanned = examined
		if res.Next != nil {
			res.Scanned--
		}
		// A filter that keeps examining many entities for few matches
		// asks for an automatic index.
		if len(p.indexable) > 0 && res.Scanned >= autoIndexMinRows && n*20 < res.Scanned {
			tx.s.noteScan(p.indexable)
		}
	case p.unfiltered && res.Next == nil:
		res.Scanned = n
	case p.unfiltered:
		res.Scanned = n + 1 // the row that became the continuation
	case q.CountScanned:
		// Read through an automatic index (every other plan is one of
		// the above).
		if err := tx.countScanned(t, p, &res); err != nil {
			return res, err
		}
		return res, nil
	}
	res.Read = res.Scanned
	return res, nil
}

// rowNext is the current row's keys, as a continuation starting there.
func (p *plannedQuery) rowNext(r *rows) *Key {
	k := &Key{PK: fromSortKey(r.Text(0)), RK: fromSortKey(r.Text(1))}
	if p.seq {
		k.Seq = r.Int64(seqCol)
	}
	return k
}

// nextKey is rowNext for a row read into e: a copy of its keys (e's may
// point into the row buffer).
func (p *plannedQuery) nextKey(r *rows, e *edm.Entity) *Key {
	k := &Key{PK: strings.Clone(e.PartitionKey), RK: strings.Clone(e.RowKey)}
	if p.seq {
		k.Seq = r.Int64(seqCol)
	}
	return k
}

// rowKey is a key column of the current row in its client form, pointing
// into SQLite's row buffer when alias is set.
func rowKey(r *rows, i int, alias bool) string {
	b := r.Bytes(i)
	if alias {
		return fromSortKey(unsafe.String(unsafe.SliceData(b), len(b)))
	}
	return fromSortKey(string(b))
}
