package odata

import (
	"math"
	"strings"

	"github.com/tableemu/tableemu/odata/edm"
)

// Expr is a parsed $filter. The set of node types is closed: *Logical, *Not,
// *Compare, *BoolProp and *BoolLit. Consumers (Eval, the SQL planner) switch on them
// and may rely on there being no others.
type Expr interface {
	// Pos is the byte offset in the filter where the node's text begins
	// (for *Logical, where its operator keyword is).
	Pos() int
	// String prints the canonical form: the property always on the left,
	// single spaces, literals in the form edm.Value.String gives (except
	// the special Doubles, below), and parentheses only where the tree
	// needs them. It parses back to a tree that prints identically.
	String() string
	exprNode()
}

// LogicalOp is and / or.
type LogicalOp uint8

const (
	And LogicalOp = iota + 1
	Or
)

func (o LogicalOp) String() string {
	if o == Or {
		return "or"
	}
	return "and"
}

// CompareOp is one of the six comparison operators.
type CompareOp uint8

const (
	Eq CompareOp = iota + 1
	Ne
	Gt
	Ge
	Lt
	Le
)

var cmpNames = [...]string{Eq: "eq", Ne: "ne", Gt: "gt", Ge: "ge", Lt: "lt", Le: "le"}

func (o CompareOp) String() string {
	if o >= Eq && o <= Le {
		return cmpNames[o]
	}
	return "?"
}

// Flip returns the operator that keeps the meaning when the operands swap
// sides: 7 lt Age is Age gt 7.
func (o CompareOp) Flip() CompareOp {
	switch o {
	case Gt:
		return Lt
	case Ge:
		return Le
	case Lt:
		return Gt
	case Le:
		return Ge
	}
	return o
}

// Logical is L and R, or L or R. Chains are left-associative:
// a or b or c is (a or b) or c.
type Logical struct {
	Op     LogicalOp
	L, R   Expr
	Offset int
}

// Not negates X.
type Not struct {
	X      Expr
	Offset int
}

// Compare is Prop Op Lit. A filter written with the literal first
// (7 lt Age) is stored normalised, with the operator flipped (Age gt 7), and
// prints that way: the printed form is canonical rather than a copy of the
// input (docs/protocol.md 0.1 allows the literal on either side).
type Compare struct {
	Op     CompareOp
	Prop   string
	Lit    edm.Value
	Offset int
}

// BoolProp is a property name standing alone as a condition
// ($filter=IsActive). Eval reads it as IsActive eq true; see evalBoolProp.
type BoolProp struct {
	Name   string
	Offset int
}

// BoolLit is the literal true or false standing alone as a condition
// ($filter=false, (true and RowKey eq '1')). SDK query builders emit them,
// a .NET LINQ predicate with a constant for one, so the service accepts
// them (docs/protocol.md 0.1). Only the lower-case keywords are literals:
// True is a property name.
type BoolLit struct {
	Value  bool
	Offset int
}

func (n *Logical) Pos() int  { return n.Offset }
func (n *Not) Pos() int      { return n.Offset }
func (n *Compare) Pos() int  { return n.Offset }
func (n *BoolProp) Pos() int { return n.Offset }
func (n *BoolLit) Pos() int  { return n.Offset }

func (*Logical) exprNode()  {}
func (*Not) exprNode()      {}
func (*Compare) exprNode()  {}
func (*BoolProp) exprNode() {}
func (*BoolLit) exprNode()  {}

func (n *Logical) String() string  { return format(n) }
func (n *Not) String() string      { return format(n) }
func (n *Compare) String() string  { return format(n) }
func (n *BoolProp) String() string { return format(n) }
func (n *BoolLit) String() string  { return format(n) }

// Precedence levels, loosest first, matching the grammar in parser.go.
const (
	precOr = iota + 1
	precAnd
	precNot
	precPrimary
)

func prec(e Expr) int {
	switch n := e.(type) {
	case *Logical:
		if n.Op == Or {
			return precOr
		}
		return precAnd
	case *Not:
		return precNot
	}
	return precPrimary
}

func format(e Expr) string {
	var b strings.Builder
	writeExpr(&b, e, 0)
	return b.String()
}

// writeExpr prints e, parenthesised when its precedence is below min.
// The right operand of and/or asks for one level more than the operator
// itself, because chains associate to the left: the tree a or (b or c)
// must keep its parentheses to parse back the same. The operand of not is
// printed bare when it is a comparison (not Age eq 5): in the grammar of
// docs/protocol.md 6.1, not applies to the whole comparison, and adding
// parentheses would make the printed form nest deeper than the input, which
// could cross MaxDepth.
func writeExpr(b *strings.Builder, e Expr, min int) {
	p := prec(e)
	if p < min {
		b.WriteByte('(')
		defer b.WriteByte(')')
	}
	switch n := e.(type) {
	case *Logical:
		writeExpr(b, n.L, p)
		b.WriteByte(' ')
		b.WriteString(n.Op.String())
		b.WriteByte(' ')
		writeExpr(b, n.R, p+1)
	case *Not:
		b.WriteString("not ")
		writeExpr(b, n.X, precNot)
	case *Compare:
		b.WriteString(n.Prop)
		b.WriteByte(' ')
		b.WriteString(n.Op.String())
		b.WriteByte(' ')
		b.WriteString(formatLiteral(n.Lit))
	case *BoolProp:
		b.WriteString(n.Name)
	case *BoolLit:
		if n.Value {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case nil:
		// Only reachable for a hand-built tree with a nil child.
		b.WriteString("<nil>")
	}
}

// formatLiteral prints v in $filter literal syntax. edm.Value.String already
// does, except for the special Doubles, which it writes as the JSON strings
// "NaN" and "Infinity"; here they take their OData literal names, which the
// lexer accepts (see keywords).
func formatLiteral(v edm.Value) string {
	if v.T == edm.Double {
		switch {
		case math.IsNaN(v.F):
			return "NaN"
		case math.IsInf(v.F, 1):
			return "INF"
		case math.IsInf(v.F, -1):
			return "-INF"
		}
	}
	return v.String()
}

// Conjuncts flattens the top-level chain of and: for a and (b or c) and d it
// returns [a, b or c, d]. A planner can turn the conjuncts it understands
// (key ranges) into index predicates and leave the rest to Eval. A nil
// filter has no conjuncts.
func Conjuncts(e Expr) []Expr {
	if e == nil {
		return nil
	}
	var out []Expr
	var walk func(Expr)
	walk = func(e Expr) {
		if l, ok := e.(*Logical); ok && l.Op == And {
			walk(l.L)
			walk(l.R)
			return
		}
		out = append(out, e)
	}
	walk(e)
	return out
}
