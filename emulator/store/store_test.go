package store

import (
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/tableemu/tableemu/odata/edm"
)

func TestSortKeyOrdersLikeUTF16(t *testing.T) {
	keys := []string{"", "a", "z", "é", "\uD7FF", "😀", "😀a", "𝄞", "\uE000", "\uFF21", "\uFFFF", "a😀", "a\uFFFF"}
	byStored := append([]string(nil), keys...)
	sort.Slice(byStored, func(i, j int) bool { return SortKey(byStored[i]) < SortKey(byStored[j]) })
	byUTF16 := append([]string(nil), keys...)
	sort.Slice(byUTF16, func(i, j int) bool { return edm.CompareStrings(byUTF16[i], byUTF16[j]) < 0 })
	if strings.Join(byStored, "|") != strings.Join(byUTF16, "|") {
		t.Fatalf("stored order %q\nUTF-16 order %q", byStored, byUTF16)
	}
	for _, k := range keys {
		if got := FromSortKey(SortKey(k)); got != k {
			t.Fatalf("round trip %q -> %q", k, got)
		}
	}
	if SortKey("plain ascii") != "plain ascii" {
		t.Fatal("ASCII keys must be stored as is")
	}
}

func TestPropsRoundTrip(t *testing.T) {
	props := []edm.Property{
		{Name: "S", Value: edm.NewString("quote \" backslash \\ nl \n ctrl \x01 😀")},
		{Name: "E", Value: edm.NewString("")},
		{Name: "I", Value: edm.NewInt32(math.MinInt32)},
		{Name: "L", Value: edm.NewInt64(math.MaxInt64)},
		{Name: "Lmin", Value: edm.NewInt64(math.MinInt64)},
		{Name: "D", Value: edm.NewDouble(0.1)},
		{Name: "Dneg0", Value: edm.NewDouble(math.Copysign(0, -1))},
		{Name: "Dmax", Value: edm.NewDouble(math.MaxFloat64)},
		{Name: "Dmin", Value: edm.NewDouble(math.SmallestNonzeroFloat64)},
		{Name: "Inf", Value: edm.NewDouble(math.Inf(1))},
		{Name: "NInf", Value: edm.NewDouble(math.Inf(-1))},
		{Name: "NaN", Value: edm.NewDouble(math.NaN())},
		{Name: "T", Value: edm.NewBoolean(true)},
		{Name: "F", Value: edm.NewBoolean(false)},
		{Name: "DT", Value: edm.NewDateTime(edm.MaxDateTime)},
		{Name: "G", Value: edm.Value{T: edm.Guid, S: "c9da6455-213d-42c9-9a79-3e9149a57833"}},
		{Name: "B", Value: edm.NewBinary([]byte{0, 0xff, 0x10})},
		{Name: "B0", Value: edm.NewBinary([]byte{})},
	}
	got, err := DecodeProps(EncodeProps(props))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(props) {
		t.Fatalf("%d props back, want %d", len(got), len(props))
	}
	for i := range props {
		a, b := props[i], got[i]
		same := a.Name == b.Name && edm.Equal(a.Value, b.Value)
		if a.Value.T == edm.Double {
			same = a.Name == b.Name && b.Value.T == edm.Double &&
				(math.Float64bits(a.Value.F) == math.Float64bits(b.Value.F) || (math.IsNaN(a.Value.F) && math.IsNaN(b.Value.F)))
		}
		if !same {
			t.Errorf("%s: %#v came back as %#v", a.Name, a.Value, b.Value)
		}
	}
	for _, bad := range [][]byte{nil, []byte(`{"x":1}`), EncodeProps(props)[:10], {0x0b}} {
		if _, err := DecodeProps(bad); err == nil {
			t.Fatalf("malformed props %x accepted", bad)
		}
	}
}

// TestPlainStrings checks that strings JSON carries as they are are stored
// as JSONB TEXT and that the streaming reader says so (edm.Property.Plain),
// while a string that needs escaping, and every copied entity, says
// nothing.
func TestPlainStrings(t *testing.T) {
	props := []edm.Property{
		{Name: "P", Value: edm.NewString("plain é " + strings.Repeat("x", 40))},
		{Name: "Q", Value: edm.NewString(`needs "escaping"`)},
		{Name: "C", Value: edm.NewString("tab\t")},
		{Name: "G", Value: edm.Value{T: edm.Guid, S: "c9da6455-213d-42c9-9a79-3e9149a57833"}},
		{Name: "I", Value: edm.NewInt32(1)},
	}
	blob := EncodeProps(props)
	for _, alias := range []bool{true, false} {
		got, err := DecodePropsInto(nil, blob, alias)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range got {
			want := alias && (p.Name == "P" || p.Name == "G")
			if p.Plain != want {
				t.Errorf("alias %v: %s.Plain = %v, want %v", alias, p.Name, p.Plain, want)
			}
			if p.Value.S != props[i].Value.S {
				t.Errorf("alias %v: %s = %q, want %q", alias, p.Name, p.Value.S, props[i].Value.S)
			}
		}
	}
}
