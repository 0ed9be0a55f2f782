package store

import (
	"database/sql"
	"errors"
	"strings"

	"github.com/tableemu/tableemu/edm"
	"github.com/tableemu/tableemu/odata"
)

// ScanBudget is how many rows one page of Query Entities may examine. A
// sparse filter over a large table then returns a short (even empty) page
// with a continuation, as the service does when it hits its time limit
// (PROTOCOL.md 6.6); counting rows instead of time keeps pages
// deterministic. It is far above the 1000-entity page size, so pages of
// ordinary queries are never cut short.
const ScanBudget = 50_000

// Key addresses an entity; a continuation names the first entity of the
// next page.
type Key struct{ PK, RK string }

// EntityQuery selects entities for Query Entities.
type EntityQuery struct {
	Filter odata.Expr // nil: every entity
	Top    int        // page size, 1..1000
	Start  *Key       // continuation: start at this key (inclusive)
	Range  *KeyRange  // nil: the whole table
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
	Next     *Key
}

// keyBounds is the primary-key range the filter's top-level conjuncts on
// PartitionKey and RowKey allow. Rows outside it cannot match, so the query
// reads only the range; rows inside it are still checked by odata.Eval, so
// the range may be wider than the filter but never narrower.
type keyBounds struct {
	where []string
	args  []any
}

func (b *keyBounds) add(cond string, args ...any) {
	b.where = append(b.where, cond)
	b.args = append(b.args, args...)
}

// planKeys turns `PartitionKey op 'x'` and, when the PartitionKey is fixed
// by eq, `RowKey op 'y'` conjuncts into SQL range conditions. Only String
// literals bound keys: comparing a key with another type is a type mismatch
// whose result does not depend on the key (PROTOCOL.md 6.3).
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
		if !ok || c.Lit.T != edm.String || c.Op == odata.Ne {
			continue
		}
		var col string
		switch {
		case c.Prop == "PartitionKey":
			col = "pk"
		case c.Prop == "RowKey" && pkFixed:
			col = "rk"
		default:
			continue
		}
		op := map[odata.CompareOp]string{odata.Eq: "=", odata.Gt: ">", odata.Ge: ">=", odata.Lt: "<", odata.Le: "<="}[c.Op]
		b.add(col+" "+op+" ?", sortKey(c.Lit.S))
	}
	return b
}

// QueryEntities returns one page of the entities of t that match q, in
// PartitionKey, RowKey order.
//
// The key range (planKeys, the continuation, a SAS range) bounds an index
// scan of at most ScanBudget rows; the filter, compiled to SQL
// (compileFilter), rejects rows inside SQLite. A filter that cannot be
// compiled whole is checked by odata.Eval in Go, after SQL has applied its
// compilable top-level conjuncts. When a page comes back short, one more
// key-only step finds whether the budget cut the scan, and if so where the
// next page starts.
func (tx *Tx) QueryEntities(t Table, q EntityQuery) (EntityPage, error) {
	var page EntityPage
	next, err := tx.scanEntities(t, q, false, func(e *edm.Entity) error {
		c := *e
		c.Properties = append([]edm.Property(nil), e.Properties...) // scanEntities reuses e's
		page.Entities = append(page.Entities, &c)
		return nil
	})
	page.Next = next
	return page, err
}

// ScanEntities is QueryEntities for a caller that handles each entity as
// it is read: fn sees the page's entities in order, and returns the
// continuation. To spare a copy of every property, e and the strings in it
// point into SQLite's row buffer and are valid only during the call to fn:
// fn must not keep them.
func (tx *Tx) ScanEntities(t Table, q EntityQuery, fn func(e *edm.Entity) error) (*Key, error) {
	return tx.scanEntities(t, q, true, fn)
}

func (tx *Tx) scanEntities(t Table, q EntityQuery, alias bool, fn func(e *edm.Entity) error) (*Key, error) {
	p := planQuery(t, q)
	rows, err := tx.tx.QueryContext(tx.ctx, p.sql, p.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var next *Key
	var e edm.Entity
	var pk, rk string
	var props sql.RawBytes
	n := 0
	for rows.Next() {
		if err := rows.Scan(&pk, &rk, &e.Timestamp, &props); err != nil {
			return nil, err
		}
		e.PartitionKey, e.RowKey = fromSortKey(pk), fromSortKey(rk)
		lazy := lazyEntity{e: &e, props: props, alias: alias}
		if p.residual != nil && !odata.Eval(p.residual, lazy.get) {
			if lazy.err != nil {
				return nil, lazy.err
			}
			continue
		}
		if n == q.Top {
			next = &Key{e.PartitionKey, e.RowKey}
			break
		}
		if err := lazy.decode(); err != nil {
			return nil, err
		}
		if err := fn(&e); err != nil {
			return nil, err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	if next == nil && q.Filter != nil {
		// A short page: either the key range ended, or the scan budget
		// did. The row just past the budget, if there is one, is where the
		// next page starts.
		b := p.bounds
		args := append(append([]any{t.ID}, b.args...), ScanBudget)
		err := tx.tx.QueryRowContext(tx.ctx,
			"SELECT pk, rk FROM entities WHERE tid = ?"+strings.Join(append([]string{""}, b.where...), " AND ")+
				" ORDER BY pk, rk LIMIT 1 OFFSET ?", args...).Scan(&pk, &rk)
		switch {
		case err == nil:
			next = &Key{fromSortKey(pk), fromSortKey(rk)}
		case !errors.Is(err, sql.ErrNoRows):
			return nil, err
		}
	}
	return next, nil
}

// plannedQuery is the SQL of one page of Query Entities.
type plannedQuery struct {
	sql      string
	args     []any
	residual odata.Expr // evaluated in Go, if not nil
	bounds   keyBounds  // the key range, for the budget check
}

// planQuery builds the SQL for q: a primary-key range scan bounded by the
// scan budget, with the compiled filter applied to it.
func planQuery(t Table, q EntityQuery) plannedQuery {
	b := planKeys(q.Filter)
	if q.Start != nil {
		b.add("(pk, rk) >= (?, ?)", sortKey(q.Start.PK), sortKey(q.Start.RK))
	}
	if r := q.Range; r != nil {
		if r.From != nil {
			b.add("(pk, rk) >= (?, ?)", sortKey(r.From.PK), sortKey(r.From.RK))
		}
		switch {
		case r.To && r.HasToRK:
			b.add("(pk, rk) <= (?, ?)", sortKey(r.ToPK), sortKey(r.ToRK))
		case r.To:
			b.add("pk <= ?", sortKey(r.ToPK))
		}
	}
	scan := "SELECT pk, rk, ts, props FROM entities WHERE tid = ?"
	for _, w := range b.where {
		scan += " AND " + w
	}
	scan += " ORDER BY pk, rk"
	args := append([]any{t.ID}, b.args...)

	filter, residual := splitFilter(q.Filter)
	var query string
	switch {
	case q.Filter == nil:
		// Every row is a match: the page itself bounds the scan.
		query = scan + " LIMIT ?"
		args = append(args, q.Top+1)
	case filter.sql == "":
		query = scan + " LIMIT ?"
		args = append(args, ScanBudget)
	default:
		query = "SELECT pk, rk, ts, props FROM (" + scan + " LIMIT ?) WHERE " + filter.sql
		args = append(append(args, ScanBudget), filter.args...)
		if residual == nil {
			query += " LIMIT ?"
			args = append(args, q.Top+1)
		}
	}
	return plannedQuery{sql: query, args: args, residual: residual, bounds: b}
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
