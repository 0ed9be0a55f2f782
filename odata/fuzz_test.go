package odata

import (
	"errors"
	"math"
	"testing"
	"unicode/utf8"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/odata/edm"
)

// FuzzParse checks that ParseFilter never panics, that its errors are
// well-formed, and that every filter that parses prints to a form that
// parses back to a tree printing identically. Eval runs on every tree too.
func FuzzParse(f *testing.F) {
	seeds := []string{
		"",
		"PartitionKey eq 'p1' and RowKey ge 'a' and RowKey lt 'b'",
		"a eq 1 or b eq 2 and c eq 3",
		"(a eq 1 or b eq 2) and not (c eq 3)",
		"not not IsActive",
		"7 lt Age",
		"Name eq 'it''s'",
		"S eq ''''",
		"I eq -2147483648 and L eq -9223372036854775808L",
		"D eq 1.5 or D eq 2.0 or D eq 1E+10 or D eq -1.5d or D eq 1e21",
		"D ne NaN and D lt INF and D gt -INF",
		"T lt datetime'2008-07-10T00:00:00.1234567Z'",
		"T gt datetime'2008-07-10T02:00:00+02:00'",
		"G eq guid'A455C695-DF98-5678-AAAA-81D3367E5A34'",
		"Bin eq X'0AFF' or Bin eq binary'00' or Bin eq x''",
		"B eq true and C ne false",
		"property1 eq 1'invalid'",
		"a eq 1 AND b eq 2",
		"a eq b",
		"1 eq 2",
		"a eq null",
		"X eq 1498179600055",
		"((((a eq 1))))",
		"not a eq 1 and b eq 2",
		"a eq 1 or (b eq 2 or c eq 3)",
		"a\teq\t1",
		"(a eq 1)and(b eq 2)",
		"Größe eq '😀\uE000'",
		"a eq 'unterminated",
		"a eq 1.",
		"-INF lt D",
		"datetime eq 1 and X eq 2",
		"false",
		"(true and RowKey eq '1') or not false",
		"True and true",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseFilter(s)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("ParseFilter(%q): error %T is not *Error", s, err)
			}
			if pe.Code != tableemu.InvalidInput && pe.Code != tableemu.NotImplemented {
				t.Fatalf("ParseFilter(%q): code %s", s, pe.Code)
			}
			if pe.Pos < 0 || pe.Pos > len(s) || pe.Message == "" || !utf8.ValidString(pe.Message) {
				t.Fatalf("ParseFilter(%q): bad error %+v", s, pe)
			}
			return
		}
		if e == nil {
			return
		}
		printed := e.String()
		e2, err := ParseFilter(printed)
		if err != nil {
			t.Fatalf("ParseFilter(%q) printed %q, which does not parse: %v", s, printed, err)
		}
		if again := e2.String(); again != printed {
			t.Fatalf("ParseFilter(%q) printed %q, which reprints as %q", s, printed, again)
		}
		// Eval must not panic, whatever the property types, and must give
		// the same answer on the reparsed tree.
		get := func(name string) (edm.Value, bool) {
			switch len(name) % 5 {
			case 0:
				return edm.Value{}, false
			case 1:
				return edm.NewInt64(int64(len(name))), true
			case 2:
				return edm.NewDouble(math.NaN()), true
			case 3:
				return edm.NewString(name), true
			}
			return edm.NewBoolean(true), true
		}
		if Eval(e, get) != Eval(e2, get) {
			t.Fatalf("Eval differs between %q and its reprint %q", s, printed)
		}
		for _, c := range Conjuncts(e) {
			if c == nil {
				t.Fatalf("nil conjunct in %q", s)
			}
		}
	})
}
