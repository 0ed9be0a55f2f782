package edm

import (
	"math"
	"sort"
	"strings"
	"testing"
	"unicode/utf16"
)

// utf16Compare is the reference: .NET's ordinal comparison of the UTF-16
// forms.
func utf16Compare(a, b string) int {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			if ua[i] < ub[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(ua) < len(ub):
		return -1
	case len(ua) > len(ub):
		return 1
	}
	return 0
}

func TestCompareStrings(t *testing.T) {
	const (
		emoji = "\U0001F600" // UTF-16 D83D DE00
		pua   = "\uE000"     // first code point above the surrogates
	)
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"a", "a", 0},
		{"a", "b", -1},
		{"a", "ab", -1},
		{"ab", "a", 1},
		{"B", "a", -1},   // ordinal: upper case first
		{emoji, pua, -1}, // byte order says the opposite (F0 > EE)
		{pua, emoji, 1},  //
		{emoji, "\uFFFF", -1},
		{emoji, "\uFF21", -1}, // fullwidth A
		{emoji, "\uD7FF", 1},  // below the surrogates: ordinary order
		{emoji, "\u00e9", 1},
		{"\U00010000", emoji, -1}, // two supplementary: code point order
		{"x" + emoji + "1", "x" + pua + "0", -1},
		{"x" + emoji, "x" + emoji + "\x00", -1},
		{"\u00e9", "\u00ea", -1}, // share a first byte
		{"\u0800", "\u07ff", 1},
	}
	for _, tt := range tests {
		got := CompareStrings(tt.a, tt.b)
		if got != tt.want {
			t.Errorf("CompareStrings(%+q, %+q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if ref := utf16Compare(tt.a, tt.b); ref != tt.want {
			t.Errorf("reference disagrees for %+q, %+q: %d", tt.a, tt.b, ref)
		}
	}
}

func TestCompareStringsSortsLikeUTF16(t *testing.T) {
	words := []string{"", "a", "A", "z", "\u00ff", "\u0100", "\u07ff", "\u0800", "\ud7ff", "\ue000",
		"\uffff", "\U00010000", "\U0001F600", "\U0010FFFF", "a\U0001F600", "a\uE000", "a\uFFFD", "ab"}
	got := append([]string(nil), words...)
	sort.Slice(got, func(i, j int) bool { return CompareStrings(got[i], got[j]) < 0 })
	want := append([]string(nil), words...)
	sort.Slice(want, func(i, j int) bool { return utf16Compare(want[i], want[j]) < 0 })
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("sorted order differs at %d: %+q vs %+q", i, got, want)
		}
	}
}

func TestCompareStringsInvalidUTF8IsTotal(t *testing.T) {
	a, b := "\xff\x01", "\xfe\x01"
	if CompareStrings(a, b) == 0 || CompareStrings(a, b) != -CompareStrings(b, a) {
		t.Errorf("invalid UTF-8 must still order: %d %d", CompareStrings(a, b), CompareStrings(b, a))
	}
}

func TestUTF16Len(t *testing.T) {
	for s, want := range map[string]int{"": 0, "abc": 3, "\u00e9": 1, "\uffff": 1, "\U0001F600": 2, "a\U0010FFFFb": 4} {
		if got := UTF16Len(s); got != want {
			t.Errorf("UTF16Len(%+q) = %d, want %d", s, got, want)
		}
	}
	// Every position of a non-ASCII character after and inside the runs
	// skipped eight bytes at a time, against len(utf16.Encode(runes)).
	for n := 0; n < 40; n++ {
		for _, c := range []string{"\u00e9", "\U0001F600", "\xff"} {
			for at := 0; at <= n; at++ {
				s := strings.Repeat("a", at) + c + strings.Repeat("b", n-at)
				if got, want := UTF16Len(s), len(utf16.Encode([]rune(s))); got != want {
					t.Fatalf("UTF16Len(%+q) = %d, want %d", s, got, want)
				}
			}
		}
	}
}

func TestCompareValues(t *testing.T) {
	nan := NewDouble(math.NaN())
	tests := []struct {
		a, b Value
		c    int
		ok   bool
	}{
		{NewInt32(1), NewInt32(2), -1, true},
		{NewInt64(math.MaxInt64), NewInt64(math.MinInt64), 1, true},
		{NewInt32(1), NewInt64(1), 0, false},
		{NewBoolean(false), NewBoolean(true), -1, true},
		{NewDouble(1.5), NewDouble(1.5), 0, true},
		{nan, nan, 0, true},
		{nan, NewDouble(math.Inf(-1)), -1, true},
		{NewDouble(math.Inf(1)), nan, 1, true},
		{NewDateTime(MinDateTime), NewDateTime(MaxDateTime), -1, true},
		{NewBinary([]byte{1}), NewBinary([]byte{1, 0}), -1, true},
		{NewBinary(nil), NewBinary([]byte{}), 0, true},
		{NewString("\U0001F600"), NewString("\uE000"), -1, true},
	}
	for _, tt := range tests {
		c, ok := Compare(tt.a, tt.b)
		if c != tt.c || ok != tt.ok {
			t.Errorf("Compare(%v, %v) = %d, %v; want %d, %v", tt.a, tt.b, c, ok, tt.c, tt.ok)
		}
		if Equal(tt.a, tt.b) != (tt.ok && tt.c == 0) {
			t.Errorf("Equal(%v, %v) disagrees with Compare", tt.a, tt.b)
		}
	}
}

func TestTypeNames(t *testing.T) {
	for typ := String; typ <= Binary; typ++ {
		back, ok := ParseType(typ.Name())
		if !ok || back != typ {
			t.Errorf("ParseType(%q) = %v, %v", typ.Name(), back, ok)
		}
	}
	for _, bad := range []string{"", "edm.int32", "Edm.Int16", "Edm.Decimal", "Int32"} {
		if _, ok := ParseType(bad); ok {
			t.Errorf("ParseType(%q) succeeded", bad)
		}
	}
}

func TestValueString(t *testing.T) {
	g, _ := NewGuid("C9DA6455-213D-42C9-9A79-3E9149A57833")
	tests := map[string]Value{
		"'it''s'":                        NewString("it's"),
		"7":                              NewInt32(7),
		"7L":                             NewInt64(7),
		"5.0":                            NewDouble(5),
		"true":                           NewBoolean(true),
		"false":                          NewBoolean(false),
		"X'0aff'":                        NewBinary([]byte{10, 255}),
		"datetime'1601-01-01T00:00:00Z'": NewDateTime(MinDateTime),
		"guid'c9da6455-213d-42c9-9a79-3e9149a57833'": g,
	}
	for want, v := range tests {
		if got := v.String(); got != want {
			t.Errorf("%#v.String() = %q, want %q", v, got, want)
		}
	}
}

func TestEntityGet(t *testing.T) {
	e := Entity{PartitionKey: "p", RowKey: "r", Timestamp: MinDateTime,
		Properties: []Property{{Name: "A", Value: NewInt32(1)}}}
	for name, want := range map[string]Value{
		"PartitionKey": NewString("p"), "RowKey": NewString("r"),
		"Timestamp": NewDateTime(MinDateTime), "A": NewInt32(1),
	} {
		got, ok := e.Get(name)
		if !ok || !Equal(got, want) {
			t.Errorf("Get(%q) = %v, %v", name, got, ok)
		}
	}
	if _, ok := e.Get("B"); ok {
		t.Error("Get of a missing property succeeded")
	}
}
