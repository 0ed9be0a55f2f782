package odata

import (
	"cmp"
	"math"

	"github.com/tableemu/tableemu/odata/edm"
)

// Eval reports whether an entity matches e. get returns a property's stored
// value, or false when the entity lacks it; system properties (PartitionKey,
// RowKey, Timestamp) are looked up through it like any other, as
// edm.Entity.Get does. A nil e (no filter) matches everything.
//
// Eval is the reference semantics of a filter (docs/protocol.md 6.3). Whatever
// the store compiles to SQL must agree with it.
func Eval(e Expr, get func(name string) (edm.Value, bool)) bool {
	switch n := e.(type) {
	case nil:
		return true
	case *Logical:
		if n.Op == And {
			return Eval(n.L, get) && Eval(n.R, get)
		}
		return Eval(n.L, get) || Eval(n.R, get)
	case *Not:
		// A missing or mismatched property has already decided the
		// comparison's truth; not simply negates it (docs/protocol.md 6.3).
		return !Eval(n.X, get)
	case *Compare:
		v, ok := get(n.Prop)
		if !ok {
			return false // missing: false for every operator, ne included
		}
		return compareValue(v, n.Op, n.Lit)
	case *BoolProp:
		v, ok := get(n.Name)
		return evalBoolProp(v, ok)
	case *BoolLit:
		return n.Value
	}
	return false
}

// evalBoolProp is the meaning of a property standing alone as a condition
// ($filter=IsActive). It is read as IsActive eq true: a Boolean property
// that holds true matches; false, a missing property and any other type
// (a mismatch, which makes eq false) do not.
//
// This is a design choice (docs/protocol.md 6.3, 12): the one third-party test of
// a bare property saw the live service return no entities at all. Should
// that be confirmed, return false here.
func evalBoolProp(v edm.Value, ok bool) bool {
	if !ok {
		return false
	}
	return compareValue(v, Eq, edm.NewBoolean(true))
}

// compareValue applies "stored op literal".
func compareValue(stored edm.Value, op CompareOp, lit edm.Value) bool {
	c, r := order(stored, lit)
	switch r {
	case mismatched:
		return mismatch(op)
	case unordered:
		// NaN, as in IEEE 754 and .NET: every comparison is false
		// except ne. ±Infinity compare normally.
		return op == Ne
	}
	switch op {
	case Eq:
		return c == 0
	case Ne:
		return c != 0
	case Gt:
		return c > 0
	case Ge:
		return c >= 0
	case Lt:
		return c < 0
	case Le:
		return c <= 0
	}
	return false
}

// mismatch is the result of comparing a property with a literal of a type
// it cannot be compared with. Per docs/protocol.md 6.3 the service behaves as if
// the property were less than the literal: eq false, ne true, lt true,
// le true, gt false, ge false. That evidence is third-party (consistent
// across every type pair in both CloudStub suites, but not seen on the
// wire), so it lives in this one function.
func mismatch(op CompareOp) bool {
	return op == Ne || op == Lt || op == Le
}

type relation uint8

const (
	ordered    relation = iota // c is meaningful
	unordered                  // a NaN is involved
	mismatched                 // the types do not compare
)

// order compares a stored value with a literal. Same types use
// edm.Compare (ordinal UTF-16 strings, false before true, instants,
// canonical Guid strings, bytes). Across types, the numeric promotions of
// docs/protocol.md 6.3 depend on the stored type:
//
//	stored Int64,  literal Int32          numeric
//	stored Double, literal Int32 or Int64 numeric
//	stored Int32,  literal Int64          mismatch
//	stored Int32,  literal Double         mismatch
//	stored Int64,  literal Double         mismatch
//
// Int32 against Double is a mismatch because the CloudStub comparison data
// (TableQueryComparisonTestData, Int32Prop 3 against 3D) gives eq false,
// ne true, lt true, like every other mismatch. Everything else across
// types is a mismatch too.
func order(stored, lit edm.Value) (int, relation) {
	if stored.T == lit.T {
		if stored.T == edm.Double && (math.IsNaN(stored.F) || math.IsNaN(lit.F)) {
			return 0, unordered
		}
		c, _ := edm.Compare(stored, lit)
		return c, ordered
	}
	switch {
	case stored.T == edm.Int64 && lit.T == edm.Int32:
		return cmp.Compare(stored.N, lit.N), ordered
	case stored.T == edm.Double && (lit.T == edm.Int32 || lit.T == edm.Int64):
		if math.IsNaN(stored.F) {
			return 0, unordered
		}
		return compareFloatInt(stored.F, lit.N), ordered
	}
	return 0, mismatched
}

// compareFloatInt compares f with i exactly. Converting i to float64 (as
// .NET's implicit conversion would) rounds above 2^53 and can call unequal
// values equal; SQLite compares INTEGER with REAL exactly, and the store's
// SQL and Eval must agree. The two only differ beyond 2^53.
func compareFloatInt(f float64, i int64) int {
	switch {
	case f >= 1<<63: // also +Inf
		return 1
	case f < -(1 << 63): // also -Inf
		return -1
	}
	t := math.Trunc(f)
	if c := cmp.Compare(int64(t), i); c != 0 {
		return c
	}
	return cmp.Compare(f, t) // the fraction decides
}
