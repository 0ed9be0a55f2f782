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
	p := planQuery(t, q)
	query, args, residual, b := p.sql, p.args, p.residual, p.bounds
	rows, err := tx.tx.QueryContext(tx.ctx, query, args...)
	if err != nil {
		return page, err
	}
	defer rows.Close()
	for rows.Next() {
		var pk, rk string
		var props sql.RawBytes
		var ts int64
		if err := rows.Scan(&pk, &rk, &ts, &props); err != nil {
			return page, err
		}
		e := &edm.Entity{PartitionKey: fromSortKey(pk), RowKey: fromSortKey(rk), Timestamp: ts}
		lazy := lazyEntity{e: e, props: props}
		if residual != nil && !odata.Eval(residual, lazy.get) {
			if lazy.err != nil {
				return page, lazy.err
			}
			continue
		}
		if len(page.Entities) == q.Top {
			page.Next = &Key{e.PartitionKey, e.RowKey}
			break
		}
		if err := lazy.decode(); err != nil {
			return page, err
		}
		page.Entities = append(page.Entities, e)
	}
	if err := rows.Err(); err != nil {
		return page, err
	}
	rows.Close()
	if page.Next == nil && q.Filter != nil {
		// A short page: either the key range ended, or the scan budget
		// did. The row just past the budget, if there is one, is where the
		// next page starts.
		boundArgs := append(append([]any{t.ID}, b.args...), ScanBudget)
		var pk, rk string
		err := tx.tx.QueryRowContext(tx.ctx,
			"SELECT pk, rk FROM entities WHERE tid = ?"+strings.Join(append([]string{""}, b.where...), " AND ")+
				" ORDER BY pk, rk LIMIT 1 OFFSET ?", boundArgs...).Scan(&pk, &rk)
		switch {
		case err == nil:
			page.Next = &Key{fromSortKey(pk), fromSortKey(rk)}
		case !errors.Is(err, sql.ErrNoRows):
			return page, err
		}
	}
	return page, nil
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
	decoded bool
	err     error
}

func (l *lazyEntity) decode() error {
	if !l.decoded {
		l.decoded = true
		l.e.Properties, l.err = decodeProps(l.props)
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
