package store

import (
	"errors"
	"strings"

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

// Key addresses an entity; a continuation names the first entity of the
// next page. Seq is the entity's creation sequence, set and read only
// under OrderCreation (0 otherwise).
type Key struct {
	PK, RK string
	Seq    int64
}

// Order is the order of a query's results.
type Order uint8

const (
	// OrderKeys is Table storage's: PartitionKey, then RowKey (UTF-16
	// ordinal; docs/protocol.md 6.3).
	OrderKeys Order = iota
	// OrderCreation is Cosmos DB for Table's (docs/cosmos.md, "order of
	// query results"): PartitionKey, then, within a partition, the order
	// the entities were created, an update keeping an entity's place. It
	// reads the creation sequence that a store opened with its engine's
	// CreationOrder option assigns; entities written without it have
	// sequence 0 and come first in their partition, by RowKey.
	OrderCreation
)

// ErrPageFull, returned by a ScanEntities callback, ends the page before
// the entity it was called with: ScanEntities returns no error and a
// Next that starts at that entity (a page cut at Cosmos DB's response
// size limit, emulator/cosmospaging.go). The callback returns the
// variable itself, never wrapped.
var ErrPageFull = errors.New("store: the page is full")

// EntityQuery selects entities for Query Entities.
type EntityQuery struct {
	Filter odata.Expr // nil: every entity
	Top    int        // page size: 1..1000, or to 1<<31-1 under the cosmos profile (docs/cosmos.md)
	Start  *Key       // continuation: start at this key (inclusive)
	Order  Order      // OrderKeys (the zero value) or OrderCreation
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

// KeyBounds is the primary-key range the filter's top-level conjuncts on
// PartitionKey and RowKey allow. Rows outside it cannot match, so the query
// reads only the range; rows inside it are still checked by odata.Eval, so
// the range may be wider than the filter but never narrower.
//
// Where holds conditions on the columns pk and rk in the SQL both engines
// accept (row-value comparisons included), with ? placeholders; Args are
// the keys in their stored form (SortKey), as strings (and a creation
// sequence, an int64, in a continuation under OrderCreation). Conds holds
// the same conditions for an engine that walks the keys itself (the SQLite
// engine's filter cache), one per element of Where.
type KeyBounds struct {
	Where []string
	Args  []any
	Conds []KeyCond
	Used  int  // conjuncts turned into bounds
	Whole bool // the bounds are the whole filter
	// Rest is the filter's other conjuncts: with the bounds, exactly the
	// filter (a conjunct that became a bound is the bound).
	Rest odata.Expr
}

// KeyCond is one key condition: the row's PartitionKey (Col KeyPK), its
// RowKey (KeyRK) or the pair (KeyPair) compared by Op with PK and RK, in
// their stored form, which orders as the rows do (byte order).
type KeyCond struct {
	Col    KeyCol
	Op     odata.CompareOp
	PK, RK string
}

// KeyCol is what a KeyCond compares.
type KeyCol uint8

const (
	KeyPK KeyCol = iota
	KeyRK
	KeyPair
)

// Compare is the row's side against the condition's: <0, 0 or >0.
func (c KeyCond) Compare(pk, rk string) int {
	switch c.Col {
	case KeyPK:
		return strings.Compare(pk, c.PK)
	case KeyRK:
		return strings.Compare(rk, c.RK)
	}
	if d := strings.Compare(pk, c.PK); d != 0 {
		return d
	}
	return strings.Compare(rk, c.RK)
}

func (b *KeyBounds) add(cond string, kc KeyCond, args ...any) {
	b.Where = append(b.Where, cond)
	b.Args = append(b.Args, args...)
	b.Conds = append(b.Conds, kc)
}

// PlanKeys turns `PartitionKey op 'x'` and, when the PartitionKey is fixed
// by eq, `RowKey op 'y'` conjuncts into SQL range conditions. Only String
// literals bound keys: comparing a key with another type is a type mismatch
// whose result does not depend on the key (docs/protocol.md 6.3).
func PlanKeys(filter odata.Expr) KeyBounds {
	var b KeyBounds
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
			if b.Rest == nil {
				b.Rest = e
			} else {
				b.Rest = &odata.Logical{Op: odata.And, L: b.Rest, R: e}
			}
			continue
		}
		op := map[odata.CompareOp]string{odata.Eq: "=", odata.Gt: ">", odata.Ge: ">=", odata.Lt: "<", odata.Le: "<="}[c.Op]
		kc := KeyCond{Col: KeyPK, Op: c.Op, PK: SortKey(c.Lit.S)}
		if col == "rk" {
			kc = KeyCond{Col: KeyRK, Op: c.Op, RK: kc.PK}
		}
		b.add(col+" "+op+" ?", kc, kc.PK+kc.RK)
		b.Used++
	}
	// Every conjunct became a bound: the range is the whole filter.
	b.Whole = b.Used == len(conj)
	return b
}

// Bounds is the primary-key range of q: its key predicates, continuation
// and SAS range.
func Bounds(q EntityQuery) KeyBounds {
	b := PlanKeys(q.Filter)
	switch {
	case q.Start != nil && q.Order == OrderCreation:
		// The rows from the continuation on in (pk, seq, rk) order, the
		// order a creation-order scan reads. As a KeyCond (which walks
		// keys, never seq) it is the wider pk >= Start.PK.
		pk := SortKey(q.Start.PK)
		b.Where = append(b.Where, "(pk, seq, rk) >= (?, ?, ?)")
		b.Args = append(b.Args, pk, q.Start.Seq, SortKey(q.Start.RK))
		b.Conds = append(b.Conds, KeyCond{Col: KeyPK, Op: odata.Ge, PK: pk})
	case q.Start != nil:
		b.addPair(odata.Ge, q.Start.PK, q.Start.RK)
	}
	if r := q.Range; r != nil {
		if r.From != nil {
			b.addPair(odata.Ge, r.From.PK, r.From.RK)
		}
		switch {
		case r.To && r.HasToRK:
			b.addPair(odata.Le, r.ToPK, r.ToRK)
		case r.To:
			pk := SortKey(r.ToPK)
			b.add("pk <= ?", KeyCond{Col: KeyPK, Op: odata.Le, PK: pk}, pk)
		}
	}
	return b
}

// addPair bounds the (PartitionKey, RowKey) pair, >= or <= the keys given
// in their client form.
func (b *KeyBounds) addPair(op odata.CompareOp, pk, rk string) {
	kc := KeyCond{Col: KeyPair, Op: op, PK: SortKey(pk), RK: SortKey(rk)}
	b.add("(pk, rk) "+map[odata.CompareOp]string{odata.Ge: ">=", odata.Le: "<="}[op]+" (?, ?)", kc, kc.PK, kc.RK)
}

// And renders the bounds as " AND cond AND cond".
func (b KeyBounds) And() string {
	if len(b.Where) == 0 {
		return ""
	}
	return " AND " + strings.Join(b.Where, " AND ")
}
