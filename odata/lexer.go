package odata

import (
	"encoding/hex"
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tableemu/tableemu/odata/edm"
)

// tokKind is the kind of a $filter token.
type tokKind uint8

const (
	tEOF     tokKind = iota
	tLParen          // (
	tRParen          // )
	tIdent           // property name
	tLiteral         // any typed constant; token.val holds it
	tNull            // null: lexed so the parser can refuse it by name
	tAnd             // and
	tOr              // or
	tNot             // not
	tCmp             // eq ne gt ge lt le; token.op holds it
)

// token is one lexeme. pos and end delimit its source text, src[pos:end].
type token struct {
	kind tokKind
	pos  int
	end  int
	text string    // the source text
	val  edm.Value // tLiteral
	op   CompareOp // tCmp
}

// describe names a token for "Expected ..., found ..." hints.
func (t token) describe() string {
	if t.kind == tEOF {
		return "the end of the filter"
	}
	return "'" + echo(t.text) + "'"
}

// keywords are lower-case and case-sensitive on the service: "All parts of
// the filter string are case-sensitive" (docs/protocol.md 6.1), so "AND" is a
// property name here and then a syntax error.
var keywords = map[string]token{
	"and":   {kind: tAnd},
	"or":    {kind: tOr},
	"not":   {kind: tNot},
	"eq":    {kind: tCmp, op: Eq},
	"ne":    {kind: tCmp, op: Ne},
	"gt":    {kind: tCmp, op: Gt},
	"ge":    {kind: tCmp, op: Ge},
	"lt":    {kind: tCmp, op: Lt},
	"le":    {kind: tCmp, op: Le},
	"null":  {kind: tNull},
	"true":  {kind: tLiteral, val: edm.NewBoolean(true)},
	"false": {kind: tLiteral, val: edm.NewBoolean(false)},
	// OData v3 spells the special Doubles INF and NaN, with the optional
	// Double suffix. They give NaN and ±Infinity a literal form, so every
	// Double prints and re-parses; the price is that a property called INF
	// or NaN cannot be named in a filter, as with the OData library.
	"INF":  {kind: tLiteral, val: edm.NewDouble(math.Inf(1))},
	"INFd": {kind: tLiteral, val: edm.NewDouble(math.Inf(1))},
	"INFD": {kind: tLiteral, val: edm.NewDouble(math.Inf(1))},
	"NaN":  {kind: tLiteral, val: edm.NewDouble(math.NaN())},
	"NaNd": {kind: tLiteral, val: edm.NewDouble(math.NaN())},
	"NaND": {kind: tLiteral, val: edm.NewDouble(math.NaN())},
}

// lexer produces tokens on demand, so a huge input that is wrong early is
// refused without being scanned to the end.
type lexer struct {
	src string
	i   int
}

// isSpace reports filter whitespace. The service's examples use single
// spaces; tabs and line breaks are tolerated too, as the OData library does.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// isIdentStart and isIdentPart follow C# identifier rules, which property
// names follow (docs/protocol.md 10: "C#-identifier-like"): a letter or '_', then
// letters, digits, connectors, combining and formatting marks. The ASCII
// subset is [A-Za-z_][A-Za-z0-9_]*; non-ASCII letters are accepted so that a
// property the service lets a client store can also be filtered on.
func isIdentStart(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || ('A' <= r && r <= 'Z') || ('a' <= r && r <= 'z')
	}
	return unicode.In(r, unicode.L, unicode.Nl)
}

func isIdentPart(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || ('A' <= r && r <= 'Z') || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9')
	}
	return unicode.In(r, unicode.L, unicode.Nl, unicode.Nd, unicode.Pc, unicode.Mn, unicode.Mc, unicode.Cf)
}

// isName reports whether s is a whole property name.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == utf8.RuneError {
			return false
		}
		if i == 0 && !isIdentStart(r) || i > 0 && !isIdentPart(r) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// next returns the next token, or an error for text that is no token.
func (l *lexer) next() (token, *Error) {
	s := l.src
	for l.i < len(s) && isSpace(s[l.i]) {
		l.i++
	}
	start := l.i
	if start == len(s) {
		return token{kind: tEOF, pos: start, end: start}, nil
	}
	c := s[start]
	switch {
	case c == '(':
		l.i++
		return l.tok(tLParen, start), nil
	case c == ')':
		l.i++
		return l.tok(tRParen, start), nil
	case c == '\'':
		str, err := l.quoted(start, start)
		if err != nil {
			return token{}, err
		}
		t := l.tok(tLiteral, start)
		t.val = edm.NewString(str)
		return t, nil
	case isDigit(c):
		return l.number(start)
	case c == '-':
		if start+1 < len(s) && isDigit(s[start+1]) {
			return l.number(start)
		}
		// "-INF" is the only other thing a minus may start; the OData
		// negation operator is not part of the service's subset.
		l.i++
		name := l.ident()
		if t, ok := keywords[name]; ok && t.kind == tLiteral && t.val.T == edm.Double && math.IsInf(t.val.F, 1) {
			t = l.tok(tLiteral, start)
			t.val = edm.NewDouble(math.Inf(-1))
			return t, nil
		}
		return token{}, invalidCharError(s, start, '-')
	}
	r, _ := utf8.DecodeRuneInString(s[start:])
	if !isIdentStart(r) {
		return token{}, invalidCharError(s, start, r)
	}
	name := l.ident()
	if l.i < len(s) && s[l.i] == '\'' {
		switch name {
		case "datetime", "guid", "binary", "X", "x":
			return l.typed(start, name)
		}
	}
	if kw, ok := keywords[name]; ok {
		t := l.tok(kw.kind, start)
		t.val, t.op = kw.val, kw.op
		return t, nil
	}
	return l.tok(tIdent, start), nil
}

func (l *lexer) tok(k tokKind, start int) token {
	return token{kind: k, pos: start, end: l.i, text: l.src[start:l.i]}
}

// ident consumes identifier characters from l.i and returns them.
func (l *lexer) ident() string {
	start := l.i
	for l.i < len(l.src) {
		r, n := utf8.DecodeRuneInString(l.src[l.i:])
		if l.i == start && !isIdentStart(r) || l.i > start && !isIdentPart(r) {
			break
		}
		l.i += n
	}
	return l.src[start:l.i]
}

// quoted reads a quoted string whose opening quote is at q, with two quotes
// standing for one (docs/protocol.md 6.2). tokStart is where the whole literal
// begins (before a datetime/guid/X prefix), reported if it never ends.
func (l *lexer) quoted(tokStart, q int) (string, *Error) {
	s := l.src
	var b strings.Builder
	from := q + 1
	for i := from; ; {
		j := strings.IndexByte(s[i:], '\'')
		if j < 0 {
			return "", unterminatedError(s, tokStart)
		}
		i += j
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteString(s[from : i+1])
			i += 2
			from = i
			continue
		}
		l.i = i + 1
		if b.Len() == 0 {
			return s[from:i], nil
		}
		b.WriteString(s[from:i])
		return b.String(), nil
	}
}

// typed reads datetime'…', guid'…', binary'…' and X'…'. l.i is at the quote.
func (l *lexer) typed(start int, prefix string) (token, *Error) {
	body, err := l.quoted(start, l.i)
	if err != nil {
		return token{}, err
	}
	t := l.tok(tLiteral, start)
	switch prefix {
	case "datetime":
		ticks, err := parseDateTimeLiteral(body)
		if err != nil {
			return token{}, literalError(l.src, start, edm.DateTime.Name(), t.text)
		}
		t.val = edm.NewDateTime(ticks)
	case "guid":
		g, err := edm.NewGuid(body)
		if err != nil {
			return token{}, literalError(l.src, start, edm.Guid.Name(), t.text)
		}
		t.val = g
	default: // binary, X, x: an even number of hex digits
		b, err := hex.DecodeString(body)
		if err != nil {
			return token{}, literalError(l.src, start, edm.Binary.Name(), t.text)
		}
		t.val = edm.NewBinary(b)
	}
	return t, nil
}

// number reads the numeric literals of docs/protocol.md 6.2:
//
//	int32  := "-"? digit+
//	int64  := "-"? digit+ ("L" | "l")
//	double := "-"? digit+ ("." digit+)? (("e" | "E") ("+" | "-")? digit+)? ("d" | "D")?
//
// where a double needs a fraction, an exponent or the suffix. Anything that
// follows (such as the "L" of "1.5L") is the next token, as in the OData
// lexer, and the parser refuses it.
func (l *lexer) number(start int) (token, *Error) {
	s := l.src
	i := start
	if s[i] == '-' {
		i++
	}
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	double := false
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || !isDigit(s[i]) {
			return token{}, digitExpectedError(s, i)
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		double = true
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || !isDigit(s[i]) {
			return token{}, digitExpectedError(s, i)
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		double = true
	}
	digits := s[start:i]
	typ := edm.Int32
	switch {
	case i < len(s) && (s[i] == 'd' || s[i] == 'D'):
		i++
		typ = edm.Double
	case double:
		typ = edm.Double
	case i < len(s) && (s[i] == 'L' || s[i] == 'l'):
		i++
		typ = edm.Int64
	}
	l.i = i
	t := l.tok(tLiteral, start)
	switch typ {
	case edm.Int32:
		n, err := strconv.ParseInt(digits, 10, 32)
		if err != nil {
			return token{}, literalError(s, start, typ.Name(), t.text)
		}
		t.val = edm.NewInt32(int32(n))
	case edm.Int64:
		n, err := strconv.ParseInt(digits, 10, 64)
		if err != nil {
			return token{}, literalError(s, start, typ.Name(), t.text)
		}
		t.val = edm.NewInt64(n)
	default:
		f, err := edm.ParseDouble(digits)
		if err != nil { // overflow, such as 1e400
			return token{}, literalError(s, start, typ.Name(), t.text)
		}
		t.val = edm.NewDouble(f)
	}
	return t, nil
}

// beforeMinDateTime stands for every instant earlier than the service can
// store: one tick before 1601-01-01T00:00:00Z.
const beforeMinDateTime = edm.MinDateTime - 1

// parseDateTimeLiteral is edm.ParseDateTime, except that a valid date
// before 1601 (the first storable DateTime, docs/protocol.md 10) is accepted and
// becomes beforeMinDateTime. .NET clients write DateTimeOffset.MinValue into
// filters ("Timestamp ge datetime'0001-01-01T00:00:00.0000000Z'"), which the
// OData grammar allows; since no stored value is that early, every such
// literal compares with every stored DateTime exactly as the real instant
// would. The literal then prints as 1600-12-31T23:59:59.9999999Z, which
// parses back to itself. Dates past 9999 stay an error: they can only arise
// through an offset on 9999-12-31, and have no 4-digit-year printed form.
func parseDateTimeLiteral(s string) (int64, error) {
	ticks, err := edm.ParseDateTime(s)
	if errors.Is(err, edm.ErrDateTimeRange) && len(s) >= 4 {
		if year, e := strconv.Atoi(s[:4]); e == nil && year >= 1 && year <= 1601 {
			return beforeMinDateTime, nil
		}
	}
	return ticks, err
}
