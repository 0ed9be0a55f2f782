package sqlite

import (
	"math"
	"strings"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// Filters are compiled to SQL over the stored JSONB (props.go) so that
// SQLite rejects non-matching rows without their properties ever being
// decoded: on pages read through an automatic index, for filters on the
// keys and Timestamp alone, and where a scan cannot call tableemu_match
// (scanfunc.go, which decides other scans in Go). Each compiled comparison is a strict 0/1 expression (never NULL),
// so not, and, or keep two-valued logic, and its meaning is exactly
// odata.Eval's (docs/protocol.md 6.3); the differential test in
// sqlfilter_test.go holds the two together.
//
// A comparison on a user property P with a literal of type L reads the keys
// of the stored types L compares with (odata's promotions: an Int32
// literal meets Int32, Int64 and Double properties; an Int64 literal Int64
// and Double; any other literal only its own type):
//
//	COALESCE(json_extract(props,'$."P$i"') > ?, json_extract(props,'$."P$l"') > ?, …, fallback)
//
// A property has one type, so at most one extraction is non-NULL, and for
// the common case — every entity stores P with the literal's type — one
// json_extract decides the row. The fallback covers an entity without a
// comparable P: 0 when P is missing, and the type-mismatch result
// (odata.mismatch: ne, lt and le are true) when P exists with another type.
//
// The only comparisons not compiled are string range comparisons whose
// literal holds a character at or above U+E000: SQLite orders text by UTF-8
// bytes, the service by UTF-16 code units, and the two differ only there
// (edm.CompareStrings). Such a filter is evaluated by odata.Eval in Go.

// sqlExpr is a compiled filter: SQL text with ? placeholders and its args.
type sqlExpr struct {
	sql  string
	args []any
}

// compileFilter compiles e, or reports false if some part of it cannot be.
func compileFilter(e odata.Expr) (sqlExpr, bool) {
	var c compiler
	c.b.Grow(128)
	if !c.expr(e) {
		return sqlExpr{}, false
	}
	return sqlExpr{sql: c.b.String(), args: c.args}, true
}

type compiler struct {
	b    strings.Builder
	args []any
}

func (c *compiler) arg(v any) {
	c.b.WriteByte('?')
	c.args = append(c.args, v)
}

func (c *compiler) expr(e odata.Expr) bool {
	switch n := e.(type) {
	case *odata.Logical:
		op := " AND "
		if n.Op == odata.Or {
			op = " OR "
		}
		c.b.WriteByte('(')
		ok := c.expr(n.L)
		c.b.WriteString(op)
		ok = ok && c.expr(n.R)
		c.b.WriteByte(')')
		return ok
	case *odata.Not:
		c.b.WriteString("(NOT ")
		ok := c.expr(n.X)
		c.b.WriteByte(')')
		return ok
	case *odata.BoolProp:
		// A bare property means Prop eq true (odata.evalBoolProp).
		return c.compare(&odata.Compare{Op: odata.Eq, Prop: n.Name, Lit: edm.NewBoolean(true)})
	case *odata.Compare:
		return c.compare(n)
	case *odata.BoolLit:
		// $filter=false, (true and RowKey eq '1'): a constant, 0 or 1 like
		// every compiled condition (docs/protocol.md 0.1).
		c.bool(n.Value)
		return true
	}
	return false
}

var sqlOps = map[odata.CompareOp]string{odata.Eq: " = ", odata.Ne: " <> ", odata.Gt: " > ", odata.Ge: " >= ", odata.Lt: " < ", odata.Le: " <= "}

// mismatchResult mirrors odata's mismatch rule: comparing a property with
// a literal of a type it does not compare with behaves as "less than"
// (docs/protocol.md 6.3).
func mismatchResult(op odata.CompareOp) bool {
	return op == odata.Ne || op == odata.Lt || op == odata.Le
}

func (c *compiler) bool(v bool) {
	if v {
		c.b.WriteByte('1')
	} else {
		c.b.WriteByte('0')
	}
}

// utf8OrderSafe reports whether comparing any string with lit by UTF-8
// bytes orders it as UTF-16 code units do: true unless lit holds a code
// point at or above U+E000 (see the package comment above).
func utf8OrderSafe(lit string) bool {
	for i := 0; i < len(lit); i++ {
		// U+E000 is EE 80 80 in UTF-8; every lead byte from 0xEE up starts
		// a code point >= U+E000.
		if lit[i] >= 0xEE {
			return false
		}
	}
	return true
}

func (c *compiler) compare(n *odata.Compare) bool {
	lit := n.Lit
	switch n.Prop {
	case "PartitionKey", "RowKey":
		col := "pk"
		if n.Prop == "RowKey" {
			col = "rk"
		}
		if lit.T != edm.String {
			c.bool(mismatchResult(n.Op)) // the keys always exist, as Strings
			return true
		}
		c.b.WriteString("(" + col + sqlOps[n.Op])
		c.arg(sortKey(lit.S))
		c.b.WriteByte(')')
		return true
	case "Timestamp":
		if lit.T != edm.DateTime {
			c.bool(mismatchResult(n.Op))
			return true
		}
		c.b.WriteString("(ts" + sqlOps[n.Op])
		c.arg(lit.N)
		c.b.WriteByte(')')
		return true
	}
	if lit.T == edm.String && n.Op != odata.Eq && n.Op != odata.Ne && !utf8OrderSafe(lit.S) {
		return false // keys are stored in UTF-16 order; values are not
	}
	if lit.T == edm.Double && math.IsNaN(lit.F) {
		// NaN literal: unordered with every Double, so only ne holds; a
		// property of another type is a mismatch.
		c.b.WriteString("(CASE WHEN ")
		c.extract(n.Prop, edm.Double)
		c.b.WriteString(" IS NOT NULL THEN ")
		c.bool(n.Op == odata.Ne)
		c.b.WriteString(" ELSE ")
		c.fallback(n.Prop, n.Op, []edm.Type{edm.Double})
		c.b.WriteString(" END)")
		return true
	}
	types := comparableTypes(lit.T)
	c.b.WriteString("COALESCE(")
	for _, t := range types {
		c.term(n.Prop, t, n.Op, lit)
		c.b.WriteString(", ")
	}
	c.fallback(n.Prop, n.Op, types)
	c.b.WriteByte(')')
	return true
}

// comparableTypes are the stored types a literal of type lit compares
// with (odata.order's promotions).
func comparableTypes(lit edm.Type) []edm.Type {
	switch lit {
	case edm.Int32:
		return []edm.Type{edm.Int32, edm.Int64, edm.Double}
	case edm.Int64:
		return []edm.Type{edm.Int64, edm.Double}
	}
	return []edm.Type{lit}
}

func (c *compiler) extract(prop string, t edm.Type) {
	c.b.WriteString("json_extract(props, ")
	c.arg(`$."` + store.PropKey(prop, t) + `"`)
	c.b.WriteByte(')')
}

// term compares the stored key prop$t with lit; NULL when the key is
// absent.
func (c *compiler) term(prop string, t edm.Type, op odata.CompareOp, lit edm.Value) {
	v := sqlValue(lit)
	if t == edm.Double && (op == odata.Gt || op == odata.Ge) {
		// NaN is stored as the text 'NaN', and SQLite orders text above
		// every number, so x > v would hold for it. BETWEEN reads x once
		// and excludes it: x >= lo AND x <= +Inf. For gt, lo is the
		// smallest Double above the literal.
		if op == odata.Gt && lit.T == edm.Double && math.IsInf(lit.F, 1) {
			// Nothing is above +Inf; still NULL when the key is absent.
			c.b.WriteString("(CASE WHEN ")
			c.extract(prop, t)
			c.b.WriteString(" IS NOT NULL THEN 0 END)")
			return
		}
		lo := doubleAtLeast(lit, op == odata.Gt)
		c.b.WriteByte('(')
		c.extract(prop, t)
		c.b.WriteString(" BETWEEN ")
		c.arg(lo)
		c.b.WriteString(" AND ")
		c.arg(math.Inf(1))
		c.b.WriteByte(')')
		return
	}
	c.b.WriteByte('(')
	c.extract(prop, t)
	c.b.WriteString(sqlOps[op])
	c.arg(v)
	c.b.WriteByte(')')
}

// doubleAtLeast is the smallest Double x with x >= lit, or x > lit when
// strict, for a numeric literal. float64(N) rounds to the nearest Double,
// so an integer literal's bound is stepped to the correct side of N.
func doubleAtLeast(lit edm.Value, strict bool) float64 {
	if lit.T == edm.Double {
		if strict {
			return math.Nextafter(lit.F, math.Inf(1))
		}
		return lit.F
	}
	f := float64(lit.N)
	if cmpFloatInt(f, lit.N) < 0 {
		f = math.Nextafter(f, math.Inf(1))
	}
	if strict && cmpFloatInt(f, lit.N) == 0 {
		f = math.Nextafter(f, math.Inf(1))
	}
	return f
}

// cmpFloatInt compares f with i exactly (as SQLite and odata do).
func cmpFloatInt(f float64, i int64) int {
	switch {
	case f >= 1<<63:
		return 1
	case f < -(1 << 63):
		return -1
	}
	t := math.Trunc(f)
	switch ti := int64(t); {
	case ti < i:
		return -1
	case ti > i:
		return 1
	case f < t:
		return -1
	case f > t:
		return 1
	}
	return 0
}

// fallback is the result for an entity with no comparable P: 0 when P is
// missing, the mismatch result when it exists with another type.
func (c *compiler) fallback(prop string, op odata.CompareOp, comparable []edm.Type) {
	if !mismatchResult(op) {
		c.b.WriteByte('0')
		return
	}
	c.b.WriteByte('(')
	first := true
	for t := edm.String; t <= edm.Binary; t++ {
		skip := false
		for _, ct := range comparable {
			skip = skip || ct == t
		}
		if skip {
			continue
		}
		if !first {
			c.b.WriteString(" OR ")
		}
		first = false
		c.extract(prop, t)
		c.b.WriteString(" IS NOT NULL")
	}
	c.b.WriteByte(')')
}

// sqlValue is a literal as the SQL value its stored form compares with.
func sqlValue(v edm.Value) any {
	switch v.T {
	case edm.String, edm.Guid:
		return v.S
	case edm.Double:
		return v.F
	case edm.Binary:
		return store.HexString(v.B)
	}
	return v.N // Int32, Int64, DateTime ticks, Boolean 0/1
}
