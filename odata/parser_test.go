package odata

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu"
)

func TestParseFilter(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string
	}{
		// Strings.
		{"string", "S eq 'abc'", "S eq 'abc'"},
		{"string doubled quote", "S eq 'it''s'", "S eq 'it''s'"},
		{"string only quotes", "S eq ''''''", "S eq ''''''"},
		{"string empty", "S eq ''", "S eq ''"},
		{"string spaces kept", "S eq '  a  b '", "S eq '  a  b '"},
		{"string non-ASCII", "S eq 'ü日本😀'", "S eq 'ü日本😀'"},
		{"string with keywords", "S eq 'a eq 1 or (b'", "S eq 'a eq 1 or (b'"},
		// Int32.
		{"int32", "I eq 123", "I eq 123"},
		{"int32 negative", "I eq -5", "I eq -5"},
		{"int32 max", "I eq 2147483647", "I eq 2147483647"},
		{"int32 min", "I eq -2147483648", "I eq -2147483648"},
		{"int32 leading zeros", "I eq 007", "I eq 7"},
		{"int32 minus zero", "I eq -0", "I eq 0"},
		// Int64.
		{"int64", "L eq 123L", "L eq 123L"},
		{"int64 lower suffix", "L eq 123l", "L eq 123L"},
		{"int64 negative", "L eq -5L", "L eq -5L"},
		{"int64 big", "L eq 1498179600055L", "L eq 1498179600055L"},
		{"int64 max", "L eq 9223372036854775807L", "L eq 9223372036854775807L"},
		{"int64 min", "L eq -9223372036854775808L", "L eq -9223372036854775808L"},
		// Double.
		{"double", "D eq 1.5", "D eq 1.5"},
		{"double integral", "D eq 2.0", "D eq 2.0"},
		{"double exponent", "D eq 1e10", "D eq 10000000000.0"},
		{"double exponent plus", "D eq 1E+10", "D eq 10000000000.0"},
		{"double exponent minus", "D eq 1e-10", "D eq 1E-10"},
		{"double large", "D eq 1e21", "D eq 1E+21"},
		{"double negative", "D eq -1.5", "D eq -1.5"},
		{"double suffix", "D eq 1.5d", "D eq 1.5"},
		{"double suffix upper integral", "D eq 2D", "D eq 2.0"},
		{"double suffix exponent", "D eq 1e3d", "D eq 1000.0"},
		{"double negative zero", "D eq -0.0", "D eq -0.0"},
		{"double underflow", "D eq 1e-400", "D eq 0.0"},
		{"double max", "D eq 1.7976931348623157e308", "D eq 1.7976931348623157E+308"},
		{"double NaN", "D eq NaN", "D eq NaN"},
		{"double INF", "D lt INF", "D lt INF"},
		{"double INF suffix", "D lt INFd", "D lt INF"},
		{"double -INF", "D gt -INF", "D gt -INF"},
		{"double -INF suffix", "D gt -INFD", "D gt -INF"},
		// Boolean.
		{"true", "B eq true", "B eq true"},
		{"false", "B ne false", "B ne false"},
		// DateTime.
		{"datetime", "T eq datetime'2008-07-10T00:00:00Z'", "T eq datetime'2008-07-10T00:00:00Z'"},
		{"datetime fraction", "T ge datetime'2008-07-10T00:00:00.1230000Z'", "T ge datetime'2008-07-10T00:00:00.123Z'"},
		{"datetime nanos truncated", "T ge datetime'2008-07-10T00:00:00.123456789Z'", "T ge datetime'2008-07-10T00:00:00.1234567Z'"},
		{"datetime offset", "T lt datetime'2008-07-10T02:00:00+02:00'", "T lt datetime'2008-07-10T00:00:00Z'"},
		{"datetime no zone", "T lt datetime'2008-07-10T02:00:00'", "T lt datetime'2008-07-10T02:00:00Z'"},
		{"datetime minutes only", "T lt datetime'2008-07-10T02:00Z'", "T lt datetime'2008-07-10T02:00:00Z'"},
		{"datetime min", "T gt datetime'1601-01-01T00:00:00Z'", "T gt datetime'1601-01-01T00:00:00Z'"},
		{"datetime .NET MinValue", "T ge datetime'0001-01-01T00:00:00.0000000Z'", "T ge datetime'1600-12-31T23:59:59.9999999Z'"},
		{"datetime just before min", "T ge datetime'1601-01-01T00:30:00+01:00'", "T ge datetime'1600-12-31T23:59:59.9999999Z'"},
		{"datetime before min reprint", "T ge datetime'1600-12-31T23:59:59.9999999Z'", "T ge datetime'1600-12-31T23:59:59.9999999Z'"},
		{"datetime max", "T le datetime'9999-12-31T23:59:59.9999999Z'", "T le datetime'9999-12-31T23:59:59.9999999Z'"},
		// Guid.
		{"guid", "G eq guid'a455c695-df98-5678-aaaa-81d3367e5a34'", "G eq guid'a455c695-df98-5678-aaaa-81d3367e5a34'"},
		{"guid upper", "G eq guid'A455C695-DF98-5678-AAAA-81D3367E5A34'", "G eq guid'a455c695-df98-5678-aaaa-81d3367e5a34'"},
		// Binary.
		{"binary X", "Bin eq X'0AFF'", "Bin eq X'0aff'"},
		{"binary x", "Bin eq x'0aff'", "Bin eq X'0aff'"},
		{"binary word", "Bin eq binary'00'", "Bin eq X'00'"},
		{"binary empty", "Bin eq X''", "Bin eq X''"},
		// Operators.
		{"ne", "a ne 1", "a ne 1"},
		{"gt", "a gt 1", "a gt 1"},
		{"ge", "a ge 1", "a ge 1"},
		{"lt", "a lt 1", "a lt 1"},
		{"le", "a le 1", "a le 1"},
		// Literal on the left: normalised, operator flipped.
		{"reversed lt", "7 lt Age", "Age gt 7"},
		{"reversed le", "7 le Age", "Age ge 7"},
		{"reversed gt", "7 gt Age", "Age lt 7"},
		{"reversed ge", "7 ge Age", "Age le 7"},
		{"reversed eq", "'x' eq Name", "Name eq 'x'"},
		{"reversed ne", "5L ne A", "A ne 5L"},
		{"reversed datetime", "datetime'2008-07-10T00:00:00Z' lt T", "T gt datetime'2008-07-10T00:00:00Z'"},
		// Precedence and grouping.
		{"and binds tighter", "a eq 1 or b eq 2 and c eq 3", "a eq 1 or b eq 2 and c eq 3"},
		{"and binds tighter left", "a eq 1 and b eq 2 or c eq 3", "a eq 1 and b eq 2 or c eq 3"},
		{"parens or under and", "(a eq 1 or b eq 2) and c eq 3", "(a eq 1 or b eq 2) and c eq 3"},
		{"parens or under and right", "a eq 1 and (b eq 2 or c eq 3)", "a eq 1 and (b eq 2 or c eq 3)"},
		{"redundant parens left or", "(a eq 1 or b eq 2) or c eq 3", "a eq 1 or b eq 2 or c eq 3"},
		{"right nested or kept", "a eq 1 or (b eq 2 or c eq 3)", "a eq 1 or (b eq 2 or c eq 3)"},
		{"right nested and kept", "a eq 1 and (b eq 2 and c eq 3)", "a eq 1 and (b eq 2 and c eq 3)"},
		{"redundant and parens", "(a eq 1) and (b eq 2)", "a eq 1 and b eq 2"},
		{"double parens", "((a eq 1))", "a eq 1"},
		{"and under or right", "a eq 1 or (b eq 2 and c eq 3)", "a eq 1 or b eq 2 and c eq 3"},
		// not.
		{"not parens", "not (a eq 1)", "not a eq 1"},
		{"not bare comparison", "not a eq 1", "not a eq 1"},
		{"not then and", "not a eq 1 and b eq 2", "not a eq 1 and b eq 2"},
		{"not over and", "not (a eq 1 and b eq 2)", "not (a eq 1 and b eq 2)"},
		{"not over or", "not (a eq 1 or b eq 2)", "not (a eq 1 or b eq 2)"},
		{"not not", "not not IsActive", "not not IsActive"},
		{"not reversed", "not (5 lt a)", "not a gt 5"},
		// Boolean literals as conditions (docs/protocol.md 0.1).
		{"true alone", "true", "true"},
		{"false alone", "false", "false"},
		{"false in and", "a eq 1 and false", "a eq 1 and false"},
		{"true in parens with key", "(true and RowKey eq '1')", "true and RowKey eq '1'"},
		{"not false", "not false", "not false"},
		{"true or not true", "true or not (true)", "true or not true"},
		{"capitalised True is a property", "True", "True"},
		{"capitalised FALSE in and", "FALSE and a eq 1", "FALSE and a eq 1"},
		// Bare boolean property.
		{"bool prop", "IsActive", "IsActive"},
		{"bool prop and not", "IsActive and not Deleted", "IsActive and not Deleted"},
		{"bool prop parens", "(IsActive)", "IsActive"},
		// Whitespace.
		{"extra spaces", "  a   eq  1  ", "a eq 1"},
		{"tabs", "a\teq\t1\tand\tb eq 2", "a eq 1 and b eq 2"},
		{"newlines", "a eq 1\r\nand b eq 2", "a eq 1 and b eq 2"},
		{"no space at parens", "(a eq 1)and(b eq 2)", "a eq 1 and b eq 2"},
		{"no space before string", "a eq'x'", "a eq 'x'"},
		// Names.
		{"keyword-like names", "datetime eq 1 and X eq 2 and guid eq 3 and binary eq 4", "datetime eq 1 and X eq 2 and guid eq 3 and binary eq 4"},
		{"upper-case keyword is a name", "AND eq 1 or Not eq 2 or True eq 3", "AND eq 1 or Not eq 2 or True eq 3"},
		{"underscore digits", "_a1_B2 eq 1", "_a1_B2 eq 1"},
		{"unicode name", "Größe eq 1", "Größe eq 1"},
		{"system keys", "PartitionKey eq 'p' and RowKey ge 'a' and RowKey lt 'b'", "PartitionKey eq 'p' and RowKey ge 'a' and RowKey lt 'b'"},
		{"table name", "TableName ge 'a' and TableName lt 'b'", "TableName ge 'a' and TableName lt 'b'"},
		// Empty.
		{"empty", "", "<nil>"},
		{"blank", " \t ", "<nil>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := ParseFilter(tt.input)
			if err != nil {
				t.Fatalf("ParseFilter(%q): %v", tt.input, err)
			}
			got := "<nil>"
			if e != nil {
				got = e.String()
			}
			if got != tt.want {
				t.Fatalf("ParseFilter(%q) = %s, want %s", tt.input, got, tt.want)
			}
			if e == nil {
				return
			}
			// The printed form is a fixed point.
			e2, err := ParseFilter(got)
			if err != nil {
				t.Fatalf("reparse %q: %v", got, err)
			}
			if e2.String() != got {
				t.Fatalf("reparse %q printed %q", got, e2.String())
			}
		})
	}
}

func TestParseFilterTree(t *testing.T) {
	e, err := ParseFilter("a eq 1 or b eq 2 and c eq 3")
	if err != nil {
		t.Fatal(err)
	}
	or, ok := e.(*Logical)
	if !ok || or.Op != Or || or.Pos() != 7 {
		t.Fatalf("root = %#v, want or at 7", e)
	}
	and, ok := or.R.(*Logical)
	if !ok || and.Op != And || and.Pos() != 17 {
		t.Fatalf("right = %#v, want and at 17", or.R)
	}
	c, ok := and.R.(*Compare)
	if !ok || c.Prop != "c" || c.Op != Eq || c.Lit.N != 3 || c.Pos() != 21 {
		t.Fatalf("and.R = %#v", and.R)
	}

	e, err = ParseFilter("not 7 lt Age")
	if err != nil {
		t.Fatal(err)
	}
	n := e.(*Not)
	c = n.X.(*Compare)
	if n.Pos() != 0 || c.Pos() != 4 || c.Op != Gt || c.Prop != "Age" {
		t.Fatalf("got %#v / %#v", n, c)
	}
	b, err := ParseFilter("  Flag")
	if err != nil || b.(*BoolProp).Name != "Flag" || b.Pos() != 2 {
		t.Fatalf("got %#v, %v", b, err)
	}
}

func TestParseFilterErrors(t *testing.T) {
	const (
		bad = tableemu.InvalidInput
		ni  = tableemu.NotImplemented
	)
	tests := []struct {
		name  string
		input string
		code  tableemu.Code
		pos   int
		msg   string // the message, then " " and the hint if any (Error()), starts with this
	}{
		// The service's captured message (docs/protocol.md 6.1), exactly.
		{"captured syntax error", "property1 eq 1'invalid'", bad, 23, "Syntax error at position 23 in 'property1 eq 1'invalid''."},
		{"graph syntax error", "iswhatever 12", bad, 13, "Syntax error at position 13 in 'iswhatever 12'."},
		{"upper AND", "a eq 1 AND b eq 2", bad, 10, "Syntax error at position 10 in"},
		{"upper EQ", "a EQ 1", bad, 4, "Syntax error at position 4"},
		{"OR", "a eq 1 OR b eq 2", bad, 9, "Syntax error at position 9"},
		{"chained comparison", "a eq 1 eq 2", bad, 9, "Syntax error at position 9"},
		{"two comparisons no operator", "a eq 1 b eq 2", bad, 8, "Syntax error at position 8"},
		{"stray close paren", "a eq 1)", bad, 7, "Syntax error at position 7"},
		{"int64 suffix on double", "a eq 1.5L", bad, 9, "Syntax error at position 9"},
		{"datetimeoffset", "a eq datetimeoffset'2020-01-01T00:00:00Z'", bad, 41, "Syntax error at position 41"},
		{"DateTime capitalised", "a eq DateTime'2020-01-01T00:00:00Z'", bad, 35, "Syntax error at position 35"},
		{"missing close paren", "(a eq 1", bad, 7, "')' or operator expected at position 7 in '(a eq 1'."},
		{"junk in parens", "(a eq 1 b)", bad, 8, "')' or operator expected at position 8"},
		{"dangling and", "a eq 1 and", bad, 10, "Expression expected at position 10"},
		{"dangling or", "a eq 1 or ", bad, 10, "Expression expected at position 10"},
		{"double or", "a eq 1 or or b eq 2", bad, 10, "Expression expected at position 10"},
		{"missing right operand", "a eq", bad, 4, "Expression expected at position 4"},
		{"missing left operand", "eq 1", bad, 0, "Expression expected at position 0"},
		{"lone not", "not", bad, 3, "Expression expected at position 3"},
		{"empty parens", "()", bad, 1, "Expression expected at position 1"},
		{"operator as operand", "a eq and", bad, 5, "Expression expected at position 5"},
		{"unterminated string", "a eq 'abc", bad, 5, "There is an unterminated string literal at position 5 in 'a eq 'abc'."},
		{"unterminated escaped", "a eq 'abc''", bad, 5, "There is an unterminated string literal at position 5"},
		{"unterminated datetime", "a eq datetime'2020", bad, 5, "There is an unterminated string literal at position 5"},
		{"invalid char", "a eq @", bad, 5, "Syntax error: character '@' is not valid at position 5 in 'a eq @'."},
		{"invalid char unicode", "a eq ☃", bad, 5, "Syntax error: character '☃' is not valid at position 5"},
		{"operator symbol", "a == 1", bad, 2, "Syntax error: character '=' is not valid at position 2"},
		{"lone minus", "a eq -", bad, 5, "Syntax error: character '-' is not valid at position 5"},
		{"negated property", "a eq -b", bad, 5, "Syntax error: character '-' is not valid at position 5"},
		{"minus INF typo", "a eq -INFx", bad, 5, "Syntax error: character '-' is not valid at position 5"},
		{"plus sign", "a eq +5", bad, 5, "Syntax error: character '+' is not valid"},
		{"int32 overflow", "X eq 1498179600055", bad, 5, "Unrecognized 'Edm.Int32' literal '1498179600055' at '5' in 'X eq 1498179600055'."},
		{"int32 overflow by one", "a eq 2147483648", bad, 5, "Unrecognized 'Edm.Int32' literal '2147483648'"},
		{"int32 underflow by one", "a eq -2147483649", bad, 5, "Unrecognized 'Edm.Int32' literal '-2147483649'"},
		{"int64 overflow", "a eq 9223372036854775808L", bad, 5, "Unrecognized 'Edm.Int64' literal '9223372036854775808L'"},
		{"double overflow", "a eq 1e400", bad, 5, "Unrecognized 'Edm.Double' literal '1e400'"},
		{"double overflow suffix", "a eq -2e308d", bad, 5, "Unrecognized 'Edm.Double' literal '-2e308d'"},
		{"digit after point", "a eq 1.", bad, 7, "Digit expected at position 7"},
		{"digit after point letter", "a eq 1.e5", bad, 7, "Digit expected at position 7"},
		{"digit in exponent", "a eq 1e", bad, 7, "Digit expected at position 7"},
		{"digit in signed exponent", "a eq 1e+", bad, 8, "Digit expected at position 8"},
		{"bad datetime", "a eq datetime'2008-13-01T00:00:00Z'", bad, 5, "Unrecognized 'Edm.DateTime' literal 'datetime'2008-13-01T00:00:00Z''"},
		{"datetime year 0", "a eq datetime'0000-12-31T23:59:59Z'", bad, 5, "Unrecognized 'Edm.DateTime' literal"},
		{"datetime past 9999", "a eq datetime'9999-12-31T23:30:00-01:00'", bad, 5, "Unrecognized 'Edm.DateTime' literal"},
		{"datetime bad day", "a eq datetime'2021-02-30T00:00:00Z'", bad, 5, "Unrecognized 'Edm.DateTime' literal"},
		{"datetime spaces", "a eq datetime' 2008-07-10T00:00:00Z'", bad, 5, "Unrecognized 'Edm.DateTime' literal"},
		{"bad guid", "a eq guid'xyz'", bad, 5, "Unrecognized 'Edm.Guid' literal 'guid'xyz''"},
		{"guid braces", "a eq guid'{a455c695-df98-5678-aaaa-81d3367e5a34}'", bad, 5, "Unrecognized 'Edm.Guid' literal"},
		{"binary odd", "a eq X'0AF'", bad, 5, "Unrecognized 'Edm.Binary' literal 'X'0AF''"},
		{"binary not hex", "a eq binary'GG'", bad, 5, "Unrecognized 'Edm.Binary' literal"},
		{"null right", "a eq null", bad, 5, "One of the request inputs is not valid. the 'null' literal at position 5"},
		{"null left", "null ne a", bad, 0, "One of the request inputs is not valid. the 'null' literal at position 0"},
		{"null alone", "null", bad, 0, "One of the request inputs is not valid. the 'null' literal at position 0"},
		{"literal alone", "'abc'", bad, 0, "Expression of type 'Edm.Boolean' expected at position 0"},
		{"number alone", "a eq 1 and 5", bad, 11, "Expression of type 'Edm.Boolean' expected at position 11"},
		{"invalid utf8", "a eq '\xff'", bad, 6, "Syntax error at position 6 in 'a eq '\uFFFD''. the filter is not valid UTF-8 at position 6."},
		// Unsupported by the service: 501 (docs/protocol.md 6.1).
		{"property vs property", "a eq b", ni, 0, "The requested operation is not implemented on the specified resource."},
		{"property vs capitalised True", "a eq True", ni, 0, "The requested operation is not implemented"},
		{"property vs property nested", "x eq 1 and (PartitionKey lt RowKey)", ni, 12, "The requested operation is not implemented"},
		{"constant vs constant", "1 eq 2", ni, 0, "The requested operation is not implemented"},
		{"constant strings", "'a' eq 'a'", ni, 0, "The requested operation is not implemented"},
		{"true vs false", "true eq false", ni, 0, "The requested operation is not implemented"},
		{"true vs true parens", "(true eq true) and a eq 1", ni, 1, "The requested operation is not implemented"},
		{"bool literals count as comparisons", strings.Repeat("true and ", 15) + "false", bad, 135, "One of the request inputs is not valid. the filter has more than 15 comparisons"},
		// A syntax error anywhere wins over the checks made on a parsed
		// comparison; among those, the first in the text wins.
		{"syntax error after 501", "a eq b and c eq", bad, 15, "Expression expected at position 15"},
		{"syntax error after null", "a eq null)", bad, 10, "Syntax error at position 10"},
		{"literal error after 501", "a eq b or c eq 99999999999", bad, 15, "Unrecognized 'Edm.Int32' literal"},
		{"null before 501", "a eq null or b eq c", bad, 5, "One of the request inputs is not valid. the 'null' literal"},
		{"501 before null", "a eq b or c eq null", ni, 0, "The requested operation is not implemented"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := ParseFilter(tt.input)
			if err == nil {
				t.Fatalf("ParseFilter(%q) = %v, want error", tt.input, e)
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v is not *Error", err, err)
			}
			if pe.Code != tt.code || pe.Pos != tt.pos || !strings.HasPrefix(pe.Error(), tt.msg) {
				t.Fatalf("ParseFilter(%q) error = {%s %d %q}, want {%s %d %q...}",
					tt.input, pe.Code, pe.Pos, pe.Error(), tt.code, tt.pos, tt.msg)
			}
			// The service's sentence alone on the first line, tableemu's
			// hint on the next (docs/protocol.md 8.1).
			want := pe.Message
			if pe.Hint != "" {
				want += tableemu.HintPrefix + pe.Hint
			}
			if strings.Contains(pe.Message, "\n") || strings.Contains(pe.Message, "tableemu") {
				t.Fatalf("Message %q holds more than the service's sentence", pe.Message)
			}
			ae := pe.APIError()
			if ae.Code != tt.code || ae.Message != want {
				t.Fatalf("APIError() = %+v, want the message %q", ae, want)
			}
			wantStatus := 400
			if tt.code == ni {
				wantStatus = 501
			}
			if got := tableemu.From(err); got.Status != wantStatus || got.Code != tt.code {
				t.Fatalf("tableemu.From = %+v, want status %d", got, wantStatus)
			}
		})
	}
}

// TestSyntaxErrorIsTheServicesSentence: the live answer to the filter
// "aaa bbb ccc" is InvalidInput with "Syntax error at position 7 in 'aaa
// bbb ccc'." and nothing more on that line (live-Py
// test_query_invalid_filter): the position is the end of the unexpected
// token "bbb", and what was expected goes to tableemu's hint, on a line of
// its own.
func TestSyntaxErrorIsTheServicesSentence(t *testing.T) {
	_, err := ParseFilter("aaa bbb ccc")
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("got %v, want *Error", err)
	}
	ae := pe.APIError()
	first, hint, ok := strings.Cut(ae.Message, "\n")
	if ae.Code != tableemu.InvalidInput || first != "Syntax error at position 7 in 'aaa bbb ccc'." {
		t.Fatalf("%s %q, want InvalidInput and the first line \"Syntax error at position 7 in 'aaa bbb ccc'.\"", ae.Code, ae.Message)
	}
	if !ok || hint != "tableemu: expected 'and', 'or' or the end of the filter, found 'bbb'." {
		t.Errorf("hint line %q", hint)
	}
}

// comparisons returns n comparisons joined by op.
func comparisons(n int, op string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = "a eq 1"
	}
	return strings.Join(parts, " "+op+" ")
}

func TestComparisonLimit(t *testing.T) {
	for _, op := range []string{"and", "or"} {
		if _, err := ParseFilter(comparisons(MaxComparisons, op)); err != nil {
			t.Errorf("%d comparisons joined by %s: %v", MaxComparisons, op, err)
		}
		f := comparisons(MaxComparisons+1, op)
		_, err := ParseFilter(f)
		var pe *Error
		if !errors.As(err, &pe) || pe.Code != tableemu.InvalidInput || !strings.Contains(pe.Hint, "more than 15 comparisons") {
			t.Fatalf("16 comparisons: %v", err)
		}
		if want := strings.LastIndex(f, "a eq 1"); pe.Pos != want {
			t.Errorf("16th comparison error at %d, want %d", pe.Pos, want)
		}
	}
	// Bare properties and reversed comparisons count too.
	bools := strings.TrimSuffix(strings.Repeat("F or ", MaxComparisons), " or ")
	if _, err := ParseFilter(bools); err != nil {
		t.Errorf("15 bare properties: %v", err)
	}
	if _, err := ParseFilter(bools + " or 1 eq F"); err == nil {
		t.Errorf("16th (reversed) comparison accepted")
	}
	if _, err := ParseFilter(bools + " or G"); err == nil {
		t.Errorf("16th bare property accepted")
	}
}

func TestDepthLimit(t *testing.T) {
	ok := []string{
		strings.Repeat("(", MaxDepth) + "a eq 1" + strings.Repeat(")", MaxDepth),
		strings.Repeat("not ", MaxDepth) + "a eq 1",
		strings.Repeat("not (", MaxDepth/2) + "a eq 1" + strings.Repeat(")", MaxDepth/2),
	}
	for _, f := range ok {
		e, err := ParseFilter(f)
		if err != nil {
			t.Errorf("depth %d: %v", MaxDepth, err)
			continue
		}
		if _, err := ParseFilter(e.String()); err != nil {
			t.Errorf("reparse of %q: %v", e.String(), err)
		}
	}
	bad := []struct {
		input string
		pos   int
	}{
		{strings.Repeat("(", MaxDepth+1) + "a eq 1" + strings.Repeat(")", MaxDepth+1), MaxDepth},
		{strings.Repeat("not ", MaxDepth+1) + "a eq 1", 4 * MaxDepth},
		{strings.Repeat("not (", MaxDepth/2) + "not a eq 1" + strings.Repeat(")", MaxDepth/2), 5 * MaxDepth / 2},
	}
	for _, tt := range bad {
		_, err := ParseFilter(tt.input)
		var pe *Error
		if !errors.As(err, &pe) || pe.Code != tableemu.InvalidInput || pe.Pos != tt.pos ||
			!strings.HasPrefix(pe.Message, "The recursion limit has been exceeded") {
			t.Errorf("depth %d: got %v, want recursion error at %d", MaxDepth+1, err, tt.pos)
		}
	}
}

func TestHugeInput(t *testing.T) {
	const mb = 1 << 20
	tests := []struct {
		name  string
		input string
		ok    bool
	}{
		{"open parens", strings.Repeat("(", mb), false},
		{"nots", strings.Repeat("not ", mb/4), false},
		{"many comparisons", strings.Repeat("a eq 1 or ", mb/10) + "a eq 1", false},
		{"unterminated string", "a eq '" + strings.Repeat("x", mb), false},
		{"long string literal", "a eq '" + strings.Repeat("x''", mb/3) + "'", true},
		{"long name", strings.Repeat("n", mb) + " eq 1", true},
		{"long number", "a eq " + strings.Repeat("0", mb) + "1", true},
		{"spaces", strings.Repeat(" ", mb) + "a eq 1" + strings.Repeat(" ", mb), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Linear time, checked loosely: a megabyte parses in a few
			// milliseconds, a quadratic parser would take hours, and a
			// second was too little under the race detector on a busy
			// 2-CPU machine (1.36 s for "long name").
			start := time.Now()
			e, err := ParseFilter(tt.input)
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
			if tt.ok {
				if err != nil {
					t.Fatal(err)
				}
				if e.String() == "" {
					t.Fatal("empty print")
				}
				return
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want *Error", err)
			}
			if len(pe.Message) > 2*maxEcho+200 {
				t.Errorf("message is %d bytes; the echo of the input should be cut", len(pe.Message))
			}
		})
	}
}

func TestConjuncts(t *testing.T) {
	tests := []struct {
		input string
		want  []string
	}{
		{"", nil},
		{"a eq 1", []string{"a eq 1"}},
		{"a eq 1 and b eq 2 and c eq 3", []string{"a eq 1", "b eq 2", "c eq 3"}},
		{"a eq 1 and (b eq 2 and c eq 3)", []string{"a eq 1", "b eq 2", "c eq 3"}},
		{"a eq 1 and (b eq 2 or c eq 3) and d", []string{"a eq 1", "b eq 2 or c eq 3", "d"}},
		{"a eq 1 or b eq 2 and c eq 3", []string{"a eq 1 or b eq 2 and c eq 3"}},
		{"not (a eq 1 and b eq 2)", []string{"not (a eq 1 and b eq 2)"}},
	}
	for _, tt := range tests {
		e, err := ParseFilter(tt.input)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range Conjuncts(e) {
			got = append(got, c.String())
		}
		if strings.Join(got, " | ") != strings.Join(tt.want, " | ") || len(got) != len(tt.want) {
			t.Errorf("Conjuncts(%q) = %q, want %q", tt.input, got, tt.want)
		}
	}
}

func TestCompareOpFlip(t *testing.T) {
	for _, op := range []CompareOp{Eq, Ne, Gt, Ge, Lt, Le} {
		if op.Flip().Flip() != op {
			t.Errorf("%s flips twice to %s", op, op.Flip().Flip())
		}
	}
}
