package odata

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tableemu/tableemu"
)

// Error is a $filter, $select or $top that the service would refuse.
//
// Code is tableemu.InvalidInput (400) for syntax errors, bad literals and
// exceeded limits, and tableemu.NotImplemented (501) for the forms the service
// parses but does not execute: a comparison between two properties or
// between two constants (docs/protocol.md 6.1).
//
// Pos is a 0-based byte offset into the input and is the number the Message
// reports. For the generic "Syntax error at position N" message it follows
// the service's convention of pointing just past the offending token. The
// captured message (docs/protocol.md 6.1) reports the end of the unexpected string
// literal, and Microsoft Graph, which uses the same OData parser, does the
// same:
//
//	Syntax error at position 23 in 'property1 eq 1'invalid''.
//	Syntax error at position 13 in 'iswhatever 12'.
//
// Every other message points at the start of the token it names.
//
// Message is the service's sentence, exactly as the service writes it (the
// first line of the error it answers, docs/protocol.md 8.1); Hint, when
// set, is tableemu's explanation, sent on the line after it.
type Error struct {
	Code    tableemu.Code
	Pos     int
	Message string
	Hint    string
}

func (e *Error) Error() string {
	if e.Hint != "" {
		return e.Message + " " + e.Hint
	}
	return e.Message
}

// APIError converts e to the error the response writer sends.
func (e *Error) APIError() *tableemu.Error {
	ae := tableemu.Newf(e.Code, "%s", e.Message)
	if e.Hint != "" {
		ae = ae.WithHint("%s", e.Hint)
	}
	return ae
}

// Unwrap exposes the *tableemu.Error, so tableemu.From(err) and errors.As find
// the right code and status without knowing this package.
func (e *Error) Unwrap() error { return e.APIError() }

// maxEcho bounds how much of the input a message repeats: the service echoes
// the whole filter, but a hostile megabyte of "((((" should not come back in
// an error body or a log line.
const maxEcho = 1024

// echo returns s for quoting in a message: cut at a rune boundary and
// marked with "..." when it is longer than maxEcho bytes, and with any
// invalid UTF-8 replaced, so the message is always valid text.
func echo(s string) string {
	if len(s) > maxEcho {
		n := maxEcho
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "..."
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

func newError(code tableemu.Code, pos int, format string, args ...any) *Error {
	return &Error{Code: code, Pos: pos, Message: fmt.Sprintf(format, args...)}
}

// The service's sentences of the two codes, for the refusals whose own
// sentence the service was never seen to write: they stand on the first
// line, tableemu's explanation in the hint (docs/protocol.md 8.1, 8.3).
const (
	invalidInput   = "One of the request inputs is not valid."
	notImplemented = "The requested operation is not implemented on the specified resource."
)

// hinted returns e with tableemu's explanation, which is sent on the line
// after the service's sentence.
func (e *Error) hinted(format string, args ...any) *Error {
	e.Hint = fmt.Sprintf(format, args...)
	return e
}

// The message templates below are the OData library's wording, which the
// service passes through (docs/protocol.md 6.1, 6.2); the hint, where there
// is one, is ours and says what was expected.

// syntaxError is the service's generic parse failure. pos is the end of the
// offending token (see Error). The service's message is that sentence and
// nothing more (live-Py test_query_invalid_filter: "Syntax error at
// position 7 in 'aaa bbb ccc'." for the filter aaa bbb ccc, 7 being the end
// of "bbb"); what was expected is tableemu's hint.
func syntaxError(src string, pos int, expected string) *Error {
	e := &Error{Code: tableemu.InvalidInput, Pos: pos, Message: fmt.Sprintf("Syntax error at position %d in '%s'.", pos, echo(src))}
	if expected != "" {
		e.Hint = "expected " + expected + "."
	}
	return e
}

func invalidCharError(src string, pos int, r rune) *Error {
	return newError(tableemu.InvalidInput, pos,
		"Syntax error: character '%c' is not valid at position %d in '%s'.", r, pos, echo(src))
}

func unterminatedError(src string, pos int) *Error {
	return newError(tableemu.InvalidInput, pos,
		"There is an unterminated string literal at position %d in '%s'.", pos, echo(src))
}

func digitExpectedError(src string, pos int) *Error {
	return newError(tableemu.InvalidInput, pos,
		"Digit expected at position %d in '%s'.", pos, echo(src))
}

func expressionExpectedError(src string, pos int) *Error {
	return newError(tableemu.InvalidInput, pos,
		"Expression expected at position %d in '%s'.", pos, echo(src)).
		hinted("expected a property name, a literal, 'not' or '('.")
}

func closeParenError(src string, pos int) *Error {
	return newError(tableemu.InvalidInput, pos,
		"')' or operator expected at position %d in '%s'.", pos, echo(src))
}

// literalError is a literal whose text does not make a value of its type,
// such as an Int32 out of range. The live service was seen to answer
// "Unrecognized 'Edm.Int32' literal '1498179600055'" (docs/protocol.md 6.2); the
// OData library adds " at '<pos>' in '<text>'.", kept here for the person
// reading it.
func literalError(src string, pos int, typ, text string) *Error {
	return newError(tableemu.InvalidInput, pos,
		"Unrecognized '%s' literal '%s' at '%d' in '%s'.", typ, echo(text), pos, echo(src))
}
