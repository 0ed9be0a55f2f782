package store

import (
	"strings"
	"unsafe"

	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// ScanBudget is how many rows one page of Query Entities may examine. A
// sparse filter over a large table then returns a short (even empty) page
// with a continuation, as the service does when it hits its time limit
// (docs/protocol.md 6.6); counting rows instead of time keeps pages
// deterministic. It is far above the 1000-entity page size, so pages of
// ordinary queries are never cut short.
const ScanBudget = 50_000

// scanBudget is ScanBudget; tests lower it to reach the budget with few
// entities.
var scanBudget = ScanBudget

// Key addresses an entity; a continuation names the first entity of the
// next page.
type Key struct{ PK, RK string }

// EntityQuery selects entities for Query Entities.
type EntityQuery struct {
	Filter odata.Expr // nil: every entity
	Top    int        // page size, 1..1000
	Start  *Key       // continuation: start at this key (inclusive)
	Range  *KeyRange  // nil: the whole table
	// CountScanned asks for ScanResult.Scanned on every page, at the cost
	// of a count over the rows the page examined (design insight).
	CountScanned bool
}

// KeyRange restricts a query to an interval of (PartitionKey, RowKey): a
// SAS key range. From is inclusive; the upper bound is (ToPK, ToRK)
// inclusive, or every RowKey of ToPK when HasToRK is false.
type KeyRange struct {
	From    *Key
	To      bool
	ToPK    string
	ToRK    string
	HasToRK bool
}

// EntityPage is one page of results; Next is nil on the last page.
type EntityPage struct {
	Entities []*edm.Entity
	ScanResult
}

// ScanResult says how a page was read.
type ScanResult struct {
	// Next is where the next page starts; nil on the last page.
	Next *Key
	// Scanned is how many entities the service examines for this page:
	// those of the key range the page covers, as a scan without tableemu's
	// automatic indexes reads them (servicecount.go). Counted whenever the
	// page was a scan (then it is free) and, for a page read through an
	// automatic index, on request (CountScanned); -1 when not counted.
	Scanned int
	// Read is how many entities tableemu itself examined: Scanned, or
	// through an automatic index only the entities the index selected;
	// -1 when not counted.
	Read int
	// Index names the automatic index the page was read through, if any.
	Index string
	// Shape is how the service would run the query (shape.go).
	Shape Shape
}

// keyBounds is the primary-key range the filter's top-level conjuncts on
// PartitionKey and RowKey allow. Rows outside it cannot match, so the query
// reads only the range; rows inside it are still checked by odata.Eval, so
// the range may be wider than the filter but never narrower.
type keyBounds struct {
	where []string
	args  []any
	used  int  // conjuncts turned into bounds
	whole bool // the bounds are the whole filter
	// rest is the filter's other conjuncts: with the bounds, exactly the
	// filter (a conjunct that became a bound is the bound).
	rest odata.Expr
}

func (b *keyBounds) add(cond string, args ...any) {
	b.where = append(b.where, cond)
	b.args = append(b.args, args...)
}

// planKeys turns `PartitionKey op 'x'` and, when the PartitionKey is fixed
// by eq, `RowKey op 'y'` conjuncts into SQL range conditions. Only String
// literals bound keys: comparing a key with another type is a type mismatch
// whose result does not depend on the key (docs/protocol.md 6.3).
func planKeys(filter odata.Expr) keyBounds {
	var b keyBounds
	if filter == nil {
		return b
	}
	conj := odata.Conjuncts(filter)
	pkFixed := false
	for _, e := range conj {
		if c, ok := e.(*odata.Compare); ok && c.Prop == "PartitionKey" && c.Op == odata.Eq && c.Lit.T == edm.String {
			pkFixed = true
		}
	}
	for _, e := range conj {
		c, ok := e.(*odata.Compare)
		var col string
		switch {
		case !ok || c.Lit.T != edm.String || c.Op == odata.Ne:
		case c.Prop == "PartitionKey":
			col = "pk"
		case c.Prop == "RowKey" && pkFixed:
			col = "rk"
		}
		if col == "" {
			if b.rest == nil {
				b.rest = e
			} else {
				b.rest = &odata.Logical{Op: odata.And, L: b.rest, R: e}
			}
			continue
		}
		op := map[odata.CompareOp]string{odata.Eq: "=", odata.Gt: ">", odata.Ge: ">=", odata.Lt: "<", odata.Le: "<="}[c.Op]
		b.add(col+" "+op+" ?", sortKey(c.Lit.S))
		b.used++
	}
	// Every conjunct became a bound: the range is the whole filter.
	b.whole = b.used == len(conj)
	return b
}

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
	res := ScanResult{Scanned: -1, Read: -1, Shape: Classify(q.Filter)}
	p, err := tx.plan(t, q)
	if err != nil {
		return res, err
	}
	res.Index = p.index
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
				res.Next = &Key{fromSortKey(rows.Text(0)), fromSortKey(rows.Text(1))}
				break
			}
		} else if p.budgeted {
			examined++
			if examined > scanBudget {
				// The first row past the budget: the next page starts
				// here, as the service continues a page cut at its time limit.
				res.Next = &Key{fromSortKey(rows.Text(0)), fromSortKey(rows.Text(1))}
				break
			}
			if rows.Int64(4) == 0 {
				continue
			}
		}
		e.PartitionKey, e.RowKey = rowKey(rows, 0, alias), rowKey(rows, 1, alias)
		e.Timestamp = rows.Int64(2)
		lazy := lazyEntity{e: &e, props: rows.Bytes(3), alias: alias}
		if p.residual != nil && !odata.Eval(p.residual, lazy.get) {
			if lazy.err != nil {
				return res, lazy.err
			}
			continue
		}
		if n == q.Top {
			// The continuation outlives the row: copy the keys.
			res.Next = &Key{strings.Clone(e.PartitionKey), strings.Clone(e.RowKey)}
			break
		}
		if err := lazy.decode(); err != nil {
			return res, err
		}
		if err := fn(&e); err != nil {
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
	}
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

// rowKey is a key column of the current row in its client form, pointing
// into SQLite's row buffer when alias is set.
func rowKey(r *rows, i int, alias bool) string {
	b := r.Bytes(i)
	if alias {
		return fromSortKey(unsafe.String(unsafe.SliceData(b), len(b)))
	}
	return fromSortKey(string(b))
}

// lazyEntity decodes the stored properties only when the filter asks for a
// property other than the keys and Timestamp.
type lazyEntity struct {
	e       *edm.Entity
	props   []byte // valid only while its row is current
	alias   bool   // strings may point into props
	decoded bool
	err     error
}

func (l *lazyEntity) decode() error {
	if !l.decoded {
		l.decoded = true
		l.e.Properties, l.err = decodePropsInto(l.e.Properties[:0], l.props, l.alias)
	}
	return l.err
}

func (l *lazyEntity) get(name string) (edm.Value, bool) {
	switch name {
	case "PartitionKey", "RowKey", "Timestamp":
	default:
		if l.decode() != nil {
			return edm.Value{}, false
		}
	}
	return l.e.Get(name)
}
