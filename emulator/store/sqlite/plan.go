package sqlite

import (
	"math"
	"strconv"
	"strings"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// plannedQuery is the SQL of one page of Query Entities.
type plannedQuery struct {
	sql      string
	args     []any
	residual odata.Expr      // evaluated in Go, if not nil
	bounds   store.KeyBounds // the key range
	// budgeted: a scan of at most ScanBudget rows, each returned with the
	// filter's verdict in its fifth column.
	budgeted bool
	// unfiltered: every row of the key range matches (no filter, or one
	// that is only key bounds), so the page itself bounds the scan.
	unfiltered bool
	index      string // the automatic index used, if any
	indexSQL   string // and the comparison that reads it
	indexArgs  []any
	indexable  []indexable // comparisons an automatic index could serve
	// match is the filter a budgeted scan evaluates in Go
	// (tableemu_match, scanfunc.go) on connection slot matchSlot, with
	// the key and Timestamp columns at these argument positions (0: not
	// passed).
	match               odata.Expr
	matchSlot           int
	pkArg, rkArg, tsArg int
	// seq: the query is in creation order (store.OrderCreation) and
	// every row carries its creation sequence in column seqCol.
	seq bool
}

// seqCol is the column of a row's creation sequence under
// store.OrderCreation.
const seqCol = 5

// plan builds the SQL for one page of q. The key range (store.PlanKeys, the
// continuation, a SAS range) bounds the rows, and rows are read one of two
// ways:
//
//   - a primary-key scan of the range, at most ScanBudget rows (the
//     service's time limit, made deterministic). A filter on user
//     properties is decided by tableemu_match (scanfunc.go), which
//     evaluates it in Go on the stored bytes; one on the keys and
//     Timestamp alone is compiled to SQL (sqlfilter.go);
//   - through an automatic index (autoindex.go) on a property the filter
//     compares with eq, gt or ge, reading only the entities whose property
//     is in range, with the rest of the filter compiled to SQL.
//
// In creation order (store.OrderCreation, the cosmos profile) the scan
// reads entities_by_seq in (pk, seq, rk) order instead of the primary key
// (the index holds the primary key's rk after seq), and the key bounds are
// conditions on its rows (within a partition they are not in key order).
// INDEXED BY keeps SQLite from reading a key range by the primary key and
// sorting it: tableemu_match must see the rows in the page's order to end
// the page at the budget. Automatic indexes, whose matches come out in key
// order, are neither used nor proposed. A store opened without
// CreationOrder has no sequence (every entity's is 0) and maybe no index:
// it answers in key order.
func (tx *Tx) plan(t Table, q EntityQuery) (plannedQuery, error) {
	p := plannedQuery{bounds: store.Bounds(q), seq: q.Order == store.OrderCreation && tx.s.creationOrder}
	if !p.seq && q.Order == store.OrderCreation && q.Start != nil {
		// Key order: the continuation's sequence (0) means nothing.
		q.Order = store.OrderKeys
		p.bounds = store.Bounds(q)
	}
	from, order, cols := " FROM entities", " ORDER BY pk, rk", ""
	if p.seq {
		from, order, cols = " FROM entities INDEXED BY entities_by_seq", " ORDER BY pk, seq, rk", ", seq"
	}
	if p.bounds.Whole {
		// A filter of key comparisons only (a point or range query) is
		// exactly its primary-key range: no filter left to apply.
		q.Filter = nil
	}
	filter, residual := splitFilter(q.Filter)
	p.residual = residual
	if q.Filter != nil && !p.seq {
		p.indexable = indexableConjuncts(t.ID, q.Filter)
	}
	if ix, ok, err := tx.chooseIndex(t, p); err != nil {
		return p, err
	} else if ok && !p.seq {
		// Through the index: the partial index's condition tid = N must be
		// in the query as a literal for SQLite to match it; ids are
		// integers the store assigned, never client text.
		p.index, p.indexSQL, p.indexArgs = ix.key.name(), ix.sql, ix.args
		fsql := filter.sql
		if fsql == "" {
			fsql = "1"
		}
		p.sql = "SELECT pk, rk, ts, props, 1 FROM entities INDEXED BY " + p.index +
			" WHERE tid = " + strconv.FormatInt(t.ID, 10) + " AND " + ix.sql + p.bounds.And() + " AND " + fsql + " ORDER BY pk, rk"
		p.args = append(append(append(p.args, ix.args...), p.bounds.Args...), filter.args...)
		if residual == nil {
			p.sql += " LIMIT ?"
			p.args = append(p.args, q.Top+1)
		}
		return p, nil
	}

	where := from + " WHERE tid = ?" + p.bounds.And() + order + " LIMIT ?"
	keyArgs := append([]any{t.ID}, p.bounds.Args...)
	if q.Filter != nil && matchScans {
		if ok, err := tx.planMatch(&p, keyArgs, from, order, cols); ok || err != nil {
			return p, err
		}
	}
	switch {
	case q.Filter == nil:
		// Every row is a match: the page itself bounds the scan.
		p.sql = "SELECT pk, rk, ts, props, 1" + cols + where
		p.args = append(keyArgs, q.Top+1)
		p.unfiltered = true
	case filter.sql == "":
		// Nothing for SQL: every row goes to odata.Eval.
		p.sql = "SELECT pk, rk, ts, props, 1" + cols + where
		p.args = append(keyArgs, scanBudget+1)
		p.budgeted = true
	default:
		// Every row of the budget comes back with m, the filter's
		// verdict, so that the page knows how many rows it examined and
		// where the budget ran out without scanning them again. (Reading
		// props for the rows that do not match costs almost nothing: the
		// filter has loaded it already.)
		p.sql = "SELECT pk, rk, ts, props, m" + cols + " FROM (SELECT pk, rk, ts, props, " + filter.sql + " AS m" + cols + where + ")"
		p.args = append(append(append([]any{}, filter.args...), keyArgs...), scanBudget+1)
		p.budgeted = true
	}
	return p, nil
}

// matchScans enables planMatch; tests turn it off to compare the two
// ways of running a scan.
var matchScans = true

// planMatch plans a budgeted scan whose filter is decided in Go by
// tableemu_match (scanfunc.go): when the filter, beyond its key bounds,
// reads a property other than the keys and Timestamp. A filter on those
// alone stays in SQL, which compares them without touching props.
func (tx *Tx) planMatch(p *plannedQuery, keyArgs []any, from, order, cols string) (bool, error) {
	rest := p.bounds.Rest
	pk, rk, ts, user := filterRefs(rest)
	if !user {
		return false, nil
	}
	slot, ok, err := matchSlot(tx.c)
	if !ok || err != nil {
		return false, err
	}
	args := "props"
	n := 0
	for _, c := range []struct {
		use bool
		col string
		pos *int
	}{{pk, "pk", &p.pkArg}, {rk, "rk", &p.rkArg}, {ts, "ts", &p.tsArg}} {
		if c.use {
			n++
			args += ", " + c.col
			*c.pos = n
		}
	}
	// The match call comes last in WHERE: SQLite evaluates the terms in
	// order, so it sees only rows inside every bound.
	// In creation order the row carries seq in seqCol (the 1 fills the
	// column other plans give the filter's verdict).
	sel := "SELECT pk, rk, ts, props"
	if cols != "" {
		sel += ", 1" + cols
	}
	p.sql = sel + from + " WHERE tid = ?" + p.bounds.And() +
		" AND " + matchFunc + "(" + args + ")" + order
	p.args = keyArgs
	p.match, p.matchSlot = rest, slot
	p.residual = nil
	p.budgeted = true
	return true, nil
}

// indexUse is a comparison rewritten to match an automatic index.
type indexUse struct {
	key  indexKey
	sql  string
	args []any
}

// indexVisible says whether the automatic index k is in this
// transaction's snapshot. The store lists an index once its builder has
// committed it (autoIndexes.have), but a reader whose snapshot began
// before that commit has the schema of before, and a plan naming the
// index fails there ("no such index", 500 InternalError under load:
// TestIndexBuiltAfterReaderBegan). The schema table is small and in
// memory; the look costs a few microseconds on the indexed path only.
func (tx *Tx) indexVisible(k indexKey) (bool, error) {
	var one int
	err := tx.queryRow("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", k.name()).Scan(&one)
	if err == errNoRows {
		return false, nil
	}
	return err == nil, err
}

// chooseIndex picks an automatic index for the page, if one serves: an
// eq comparison first (its matches come out of the index already in key
// order), else a gt or ge comparison that selects few enough entities for
// sorting them to beat a scan.
func (tx *Tx) chooseIndex(t Table, p plannedQuery) (indexUse, bool, error) {
	var ranges []indexUse
	for _, c := range p.indexable {
		if !tx.s.autoIdx.has(c.key) {
			continue
		}
		if ok, err := tx.indexVisible(c.key); err != nil {
			return indexUse{}, false, err
		} else if !ok {
			continue
		}
		u := indexUse{key: c.key}
		expr := indexExpr(c.cmp.Prop, c.types)
		hasDouble := c.types[len(c.types)-1] == edm.Double
		switch {
		case c.cmp.Op == odata.Eq:
			u.sql, u.args = expr+" = ?", []any{sqlValue(c.cmp.Lit)}
			return u, true, nil
		case hasDouble && c.cmp.Lit.T != edm.Double:
			// An integer literal against integers and Doubles: SQLite
			// compares INTEGER with REAL exactly, so the literal itself is
			// the bound; the upper bound +Inf excludes NaN, stored as text.
			u.args = []any{c.cmp.Lit.N, math.Inf(1)}
			if c.cmp.Op == odata.Gt {
				u.sql = expr + " > ? AND " + expr + " <= ?"
			} else {
				u.sql = expr + " BETWEEN ? AND ?"
			}
		case hasDouble:
			// A Double literal against Doubles only: as in term
			// (sqlfilter.go), BETWEEN the smallest Double in range and +Inf.
			if c.cmp.Op == odata.Gt && math.IsInf(c.cmp.Lit.F, 1) {
				continue // nothing is above +Inf; the scan answers at once
			}
			u.sql = expr + " BETWEEN ? AND ?"
			u.args = []any{doubleAtLeast(c.cmp.Lit, c.cmp.Op == odata.Gt), math.Inf(1)}
		default:
			u.sql, u.args = expr+sqlOps[c.cmp.Op]+"?", []any{sqlValue(c.cmp.Lit)}
		}
		ranges = append(ranges, u)
	}
	for _, u := range ranges {
		var n int
		args := append(append([]any{}, u.args...), p.bounds.Args...)
		args = append(args, rangeIndexMax+1)
		err := tx.queryRow("SELECT count(*) FROM (SELECT 1 FROM entities INDEXED BY "+u.key.name()+
			" WHERE tid = "+strconv.FormatInt(t.ID, 10)+" AND "+u.sql+p.bounds.And()+" LIMIT ?)", args...).Scan(&n)
		if err != nil {
			return u, false, err
		}
		if n <= rangeIndexMax {
			return u, true, nil
		}
	}
	return indexUse{}, false, nil
}

// splitFilter compiles the filter to SQL. When part of it cannot be
// compiled, the compilable top-level conjuncts still go to SQL (they are
// implied by the filter, so they only pre-filter) and the whole filter is
// returned as the residual for odata.Eval.
func splitFilter(f odata.Expr) (sqlExpr, odata.Expr) {
	if f == nil {
		return sqlExpr{}, nil
	}
	if c, ok := compileFilter(f); ok {
		return c, nil
	}
	var parts []string
	var args []any
	for _, conj := range odata.Conjuncts(f) {
		if c, ok := compileFilter(conj); ok {
			parts = append(parts, c.sql)
			args = append(args, c.args...)
		}
	}
	return sqlExpr{sql: strings.Join(parts, " AND "), args: args}, f
}
