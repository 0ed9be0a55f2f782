package odata

import (
	"math"
	"testing"

	"github.com/tableemu/tableemu/odata/edm"
)

type props map[string]edm.Value

func (p props) get(name string) (edm.Value, bool) {
	v, ok := p[name]
	return v, ok
}

func mustEval(t *testing.T, filter string, p props) bool {
	t.Helper()
	e, err := ParseFilter(filter)
	if err != nil {
		t.Fatalf("ParseFilter(%q): %v", filter, err)
	}
	return Eval(e, p.get)
}

func dt(t *testing.T, s string) edm.Value {
	t.Helper()
	ticks, err := edm.ParseDateTime(s)
	if err != nil {
		t.Fatal(err)
	}
	return edm.NewDateTime(ticks)
}

func guid(t *testing.T, s string) edm.Value {
	t.Helper()
	g, err := edm.NewGuid(s)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

var allOps = []CompareOp{Eq, Ne, Lt, Le, Gt, Ge}

// TestEvalTypeMatrix compares a property of every type with a literal of
// every type, all holding "3" in their own way, as the CloudStub comparison
// data does (docs/protocol.md 6.3). Same types and the numeric promotions compare
// equal; every other pair is a mismatch, which acts as property < literal.
func TestEvalTypeMatrix(t *testing.T) {
	type sample struct {
		typ    edm.Type
		stored edm.Value
		lit    string
	}
	samples := []sample{
		{edm.String, edm.NewString("3"), "'3'"},
		{edm.Int32, edm.NewInt32(3), "3"},
		{edm.Int64, edm.NewInt64(3), "3L"},
		{edm.Double, edm.NewDouble(3), "3.0"},
		{edm.Boolean, edm.NewBoolean(true), "true"},
		{edm.DateTime, dt(t, "2020-01-22T00:00:00Z"), "datetime'2020-01-22T00:00:00Z'"},
		{edm.Guid, guid(t, "68260b3f-beab-45e2-b900-33e2b442e724"), "guid'68260b3f-beab-45e2-b900-33e2b442e724'"},
		{edm.Binary, edm.NewBinary([]byte{3}), "X'03'"},
	}
	numeric := map[[2]edm.Type]bool{
		{edm.Int64, edm.Int32}:  true,
		{edm.Double, edm.Int32}: true,
		{edm.Double, edm.Int64}: true,
	}
	equal := map[CompareOp]bool{Eq: true, Ne: false, Lt: false, Le: true, Gt: false, Ge: true}
	less := map[CompareOp]bool{Eq: false, Ne: true, Lt: true, Le: true, Gt: false, Ge: false}
	for _, s := range samples {
		for _, l := range samples {
			want, kind := less, "mismatch"
			if s.typ == l.typ || numeric[[2]edm.Type{s.typ, l.typ}] {
				want, kind = equal, "equal"
			}
			for _, op := range allOps {
				f := "P " + op.String() + " " + l.lit
				if got := mustEval(t, f, props{"P": s.stored}); got != want[op] {
					t.Errorf("%s property: %s = %v, want %v (%s)", s.typ, f, got, want[op], kind)
				}
			}
		}
	}
}

func TestEval(t *testing.T) {
	nan := edm.NewDouble(math.NaN())
	tests := []struct {
		name   string
		filter string
		p      props
		want   bool
	}{
		// Boolean literals (docs/protocol.md 0.1); True is a property.
		{"true", "true", props{}, true},
		{"false", "false", props{}, false},
		{"not false", "not false", props{}, true},
		{"true and match", "(true and P eq 1)", props{"P": edm.NewInt32(1)}, true},
		{"true and no match", "(true and P eq 1)", props{"P": edm.NewInt32(2)}, false},
		{"false or match", "false or P eq 1", props{"P": edm.NewInt32(1)}, true},
		{"False property", "True", props{"True": edm.NewBoolean(false)}, false},
		{"True property missing", "True", props{}, false},
		// Same-type ordering.
		{"int32 lt", "P lt 4", props{"P": edm.NewInt32(3)}, true},
		{"int32 gt", "P gt 4", props{"P": edm.NewInt32(3)}, false},
		{"int32 negative", "P gt -4", props{"P": edm.NewInt32(-3)}, true},
		{"int64 big", "P gt 1498179600054L", props{"P": edm.NewInt64(1498179600055)}, true},
		{"double", "P lt 3.5", props{"P": edm.NewDouble(3.25)}, true},
		{"double negative zero", "P eq -0.0", props{"P": edm.NewDouble(0)}, true},
		{"bool false lt true", "P lt true", props{"P": edm.NewBoolean(false)}, true},
		{"bool true gt false", "P gt false", props{"P": edm.NewBoolean(true)}, true},
		{"bool eq", "P eq false", props{"P": edm.NewBoolean(true)}, false},
		{"datetime by instant", "P eq datetime'2020-01-22T02:00:00+02:00'", props{"P": dt(t, "2020-01-22T00:00:00Z")}, true},
		{"datetime lt", "P lt datetime'2021-01-22T00:00:00Z'", props{"P": dt(t, "2020-01-22T00:00:00Z")}, true},
		{"datetime before storable min", "P gt datetime'0001-01-01T00:00:00Z'", props{"P": edm.NewDateTime(edm.MinDateTime)}, true},
		{"datetime before storable min eq", "P eq datetime'1000-01-01T00:00:00Z'", props{"P": edm.NewDateTime(edm.MinDateTime)}, false},
		{"datetime ticks", "P gt datetime'2020-01-22T00:00:00.0000001Z'", props{"P": dt(t, "2020-01-22T00:00:00.0000002Z")}, true},
		{"guid case-insensitive literal", "P eq guid'68260B3F-BEAB-45E2-B900-33E2B442E724'", props{"P": guid(t, "68260b3f-beab-45e2-b900-33e2b442e724")}, true},
		{"guid as string order", "P gt guid'58260b3f-beab-45e2-b900-33e2b442e724'", props{"P": guid(t, "68260b3f-beab-45e2-b900-33e2b442e724")}, true},
		{"guid letters after digits", "P gt guid'98260b3f-beab-45e2-b900-33e2b442e724'", props{"P": guid(t, "a8260b3f-beab-45e2-b900-33e2b442e724")}, true},
		{"binary bytes", "P lt X'04'", props{"P": edm.NewBinary([]byte{3})}, true},
		{"binary prefix first", "P lt X'0301'", props{"P": edm.NewBinary([]byte{3})}, true},
		{"binary empty", "P lt X'00'", props{"P": edm.NewBinary(nil)}, true},
		{"binary high byte", "P gt X'7f'", props{"P": edm.NewBinary([]byte{0x80})}, true},
		// Strings: ordinal UTF-16 (docs/protocol.md 6.3).
		{"string case", "P gt 'B'", props{"P": edm.NewString("b")}, true},
		{"string prefix", "P lt 'bB'", props{"P": edm.NewString("b")}, true},
		{"string eq", "P eq 'b'", props{"P": edm.NewString("b")}, true},
		{"string empty lt", "P lt 'a'", props{"P": edm.NewString("")}, true},
		// U+1F600 is D83D DE00 in UTF-16, below U+E000; Go's byte order
		// (and UTF-8 collation) would put it above.
		{"supplementary below E000", "P lt '\uE000'", props{"P": edm.NewString("😀")}, true},
		{"supplementary below FFFD", "P lt '\uFFFD'", props{"P": edm.NewString("😀")}, true},
		{"supplementary above D7FF", "P gt '\uD7FF'", props{"P": edm.NewString("😀")}, true},
		{"E000 above supplementary", "P gt '😀'", props{"P": edm.NewString("\uE000")}, true},
		{"supplementary after prefix", "P lt 'ab\uE000'", props{"P": edm.NewString("ab😀")}, true},
		{"supplementary eq", "P eq '😀'", props{"P": edm.NewString("😀")}, true},
		// Numeric promotion (docs/protocol.md 6.3).
		{"int64 vs int32 gt", "P ge 12", props{"P": edm.NewInt64(12)}, true},
		{"int64 vs int32 big", "P gt 2147483647", props{"P": edm.NewInt64(1 << 40)}, true},
		{"int64 vs int32 negative", "P lt -5", props{"P": edm.NewInt64(-6)}, true},
		{"double vs int32", "P gt 3", props{"P": edm.NewDouble(3.5)}, true},
		{"double vs int32 eq", "P eq 3", props{"P": edm.NewDouble(3.5)}, false},
		{"double vs int32 negative fraction", "P lt -2", props{"P": edm.NewDouble(-2.5)}, true},
		{"double vs int32 negative fraction gt", "P gt -3", props{"P": edm.NewDouble(-2.5)}, true},
		{"double vs int64", "P lt 4L", props{"P": edm.NewDouble(3)}, true},
		{"double vs int64 exact above 2^53", "P lt 9007199254740993L", props{"P": edm.NewDouble(9007199254740992)}, true},
		{"double vs int64 exact above 2^53 eq", "P eq 9007199254740993L", props{"P": edm.NewDouble(9007199254740992)}, false},
		{"double vs int64 max", "P gt 9223372036854775807L", props{"P": edm.NewDouble(9223372036854775807)}, true},
		{"double vs int64 min", "P eq -9223372036854775808L", props{"P": edm.NewDouble(-9223372036854775808)}, true},
		{"double huge vs int64", "P gt 9223372036854775807L", props{"P": edm.NewDouble(1e300)}, true},
		{"double tiny vs int64", "P lt -9223372036854775808L", props{"P": edm.NewDouble(-1e300)}, true},
		{"int32 vs int64 mismatch", "P eq 3L", props{"P": edm.NewInt32(3)}, false},
		{"int32 vs int64 mismatch lt", "P lt 2L", props{"P": edm.NewInt32(3)}, true},
		{"int32 vs double mismatch", "P ge 1.0", props{"P": edm.NewInt32(3)}, false},
		{"int64 vs double mismatch", "P gt 1.0", props{"P": edm.NewInt64(3)}, false},
		{"int64 vs double mismatch le", "P le 1.0", props{"P": edm.NewInt64(3)}, true},
		// Mismatches act as property < literal, whatever the values.
		{"string vs int32", "PartitionKey eq 1", props{"PartitionKey": edm.NewString("1")}, false},
		{"string vs int32 lt", "PartitionKey lt 0", props{"PartitionKey": edm.NewString("9")}, true},
		{"datetime vs string", "Timestamp gt '2020'", props{"Timestamp": dt(t, "2021-01-01T00:00:00Z")}, false},
		{"bool vs int32 ne", "P ne 1", props{"P": edm.NewBoolean(true)}, true},
		{"not over mismatch", "not (P lt 1)", props{"P": edm.NewBoolean(true)}, false},
		// ±Infinity compare normally; NaN only satisfies ne.
		{"inf gt", "P gt 1.0", props{"P": edm.NewDouble(math.Inf(1))}, true},
		{"inf gt int64", "P gt 9223372036854775807L", props{"P": edm.NewDouble(math.Inf(1))}, true},
		{"inf eq INF", "P eq INF", props{"P": edm.NewDouble(math.Inf(1))}, true},
		{"-inf lt", "P lt -1e308", props{"P": edm.NewDouble(math.Inf(-1))}, true},
		{"-inf lt int32", "P lt -2147483648", props{"P": edm.NewDouble(math.Inf(-1))}, true},
		{"-inf eq -INF", "P eq -INF", props{"P": edm.NewDouble(math.Inf(-1))}, true},
		{"finite lt INF", "P lt INF", props{"P": edm.NewDouble(1e308)}, true},
		{"nan eq", "P eq 1.0", props{"P": nan}, false},
		{"nan ne", "P ne 1.0", props{"P": nan}, true},
		{"nan lt", "P lt 1.0", props{"P": nan}, false},
		{"nan le", "P le 1.0", props{"P": nan}, false},
		{"nan gt", "P gt 1.0", props{"P": nan}, false},
		{"nan ge", "P ge 1.0", props{"P": nan}, false},
		{"nan eq int32", "P eq 1", props{"P": nan}, false},
		{"nan ne int64", "P ne 1L", props{"P": nan}, true},
		{"nan gt int64", "P gt -9223372036854775808L", props{"P": nan}, false},
		{"nan eq NaN", "P eq NaN", props{"P": nan}, false},
		{"nan ne NaN", "P ne NaN", props{"P": nan}, true},
		{"finite eq NaN", "P eq NaN", props{"P": edm.NewDouble(1)}, false},
		{"finite ne NaN", "P ne NaN", props{"P": edm.NewDouble(1)}, true},
		{"finite lt NaN", "P lt NaN", props{"P": edm.NewDouble(1)}, false},
		{"not nan eq", "not (P eq 1.0)", props{"P": nan}, true},
		{"int32 vs NaN is a mismatch", "P lt NaN", props{"P": edm.NewInt32(1)}, true},
		// Missing properties: false for every operator; not flips it.
		{"missing eq", "M eq 1", props{}, false},
		{"missing ne", "M ne 1", props{}, false},
		{"missing lt", "M lt 1", props{}, false},
		{"missing le", "M le 1", props{}, false},
		{"missing gt", "M gt 1", props{}, false},
		{"missing ge", "M ge 1", props{}, false},
		{"missing not eq", "not (M eq 1)", props{}, true},
		{"missing not ne", "not M ne 1", props{}, true},
		{"missing or", "M eq 1 or P eq 1", props{"P": edm.NewInt32(1)}, true},
		{"missing and", "M ne 1 and P eq 1", props{"P": edm.NewInt32(1)}, false},
		// Bare boolean property: P eq true.
		{"bool prop true", "P", props{"P": edm.NewBoolean(true)}, true},
		{"bool prop false", "P", props{"P": edm.NewBoolean(false)}, false},
		{"bool prop missing", "P", props{}, false},
		{"bool prop int", "P", props{"P": edm.NewInt32(1)}, false},
		{"bool prop string", "P", props{"P": edm.NewString("true")}, false},
		{"not bool prop false", "not P", props{"P": edm.NewBoolean(false)}, true},
		{"not bool prop missing", "not P", props{}, true},
		{"not not bool prop", "not not P", props{"P": edm.NewBoolean(true)}, true},
		// Logic, precedence, reversed operands.
		{"or", "a eq 1 or b eq 2", props{"a": edm.NewInt32(0), "b": edm.NewInt32(2)}, true},
		{"and", "a eq 1 and b eq 2", props{"a": edm.NewInt32(0), "b": edm.NewInt32(2)}, false},
		{"precedence", "a eq 1 or b eq 2 and c eq 3", props{"a": edm.NewInt32(1), "b": edm.NewInt32(0), "c": edm.NewInt32(0)}, true},
		{"parens", "(a eq 1 or b eq 2) and c eq 3", props{"a": edm.NewInt32(1), "b": edm.NewInt32(0), "c": edm.NewInt32(0)}, false},
		{"not binds comparison", "not a eq 1 and b eq 2", props{"a": edm.NewInt32(0), "b": edm.NewInt32(2)}, true},
		{"reversed lt true", "7 lt Age", props{"Age": edm.NewInt32(8)}, true},
		{"reversed lt false", "7 lt Age", props{"Age": edm.NewInt32(7)}, false},
		{"reversed ge", "7 ge Age", props{"Age": edm.NewInt32(7)}, true},
		{"reversed mismatch", "7L gt Age", props{"Age": edm.NewInt32(1)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustEval(t, tt.filter, tt.p); got != tt.want {
				t.Errorf("Eval(%q, %v) = %v, want %v", tt.filter, tt.p, got, tt.want)
			}
		})
	}
}

func TestEvalEntity(t *testing.T) {
	ent := &edm.Entity{
		PartitionKey: "p1",
		RowKey:       "r5",
		Timestamp:    dt(t, "2021-09-08T18:58:49.7704959Z").N,
		Properties:   []edm.Property{{Name: "Age", Value: edm.NewInt32(30)}},
	}
	tests := []struct {
		filter string
		want   bool
	}{
		{"PartitionKey eq 'p1' and RowKey ge 'r' and RowKey lt 's'", true},
		{"PartitionKey eq 'p1' and RowKey gt 'r5'", false},
		{"Timestamp gt datetime'2021-09-08T18:58:49.7704958Z'", true},
		{"Timestamp lt datetime'2021-09-08T18:58:49Z'", false},
		{"Age ge 18 and Age lt 65", true},
		{"Name eq 'x'", false},
		{"not (Name eq 'x')", true},
	}
	for _, tt := range tests {
		e, err := ParseFilter(tt.filter)
		if err != nil {
			t.Fatal(err)
		}
		if got := Eval(e, ent.Get); got != tt.want {
			t.Errorf("Eval(%q) = %v, want %v", tt.filter, got, tt.want)
		}
	}
	if !Eval(nil, ent.Get) {
		t.Error("Eval(nil) = false, want true (no filter)")
	}
}

func TestCompareFloatInt(t *testing.T) {
	tests := []struct {
		f    float64
		i    int64
		want int
	}{
		{0, 0, 0},
		{math.Copysign(0, -1), 0, 0},
		{0.5, 0, 1},
		{-0.5, 0, -1},
		{-0.5, -1, 1},
		{1 << 53, 1<<53 + 1, -1},
		{1 << 63, math.MaxInt64, 1},
		{-(1 << 63), math.MinInt64, 0},
		{math.Nextafter(-(1 << 63), 0), math.MinInt64, 1},
		{math.Inf(1), math.MaxInt64, 1},
		{math.Inf(-1), math.MinInt64, -1},
	}
	for _, tt := range tests {
		if got := compareFloatInt(tt.f, tt.i); got != tt.want {
			t.Errorf("compareFloatInt(%v, %d) = %d, want %d", tt.f, tt.i, got, tt.want)
		}
	}
}
