// Package wire is the entity JSON codec of the Table service: it decodes
// request bodies into edm.Entity values (with the service's typing rules),
// validates entities against the service's limits, and encodes entities in
// the three OData metadata levels (docs/protocol.md 4, 5, 10).
//
// The decoder is a small hand-written scanner rather than encoding/json:
// entity bodies are the hot path, and the typing rules need the exact text
// of every number (is it an integer? does it fit an Int32?) and the list of
// keys as sent (duplicates are an error, not "last one wins").
package wire

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/odata/edm"
)

// kind is the JSON type of a member's value.
type kind uint8

const (
	kString kind = iota
	kNumber
	kTrue
	kFalse
	kNull
)

func (k kind) String() string {
	switch k {
	case kString:
		return "a string"
	case kNumber:
		return "a number"
	case kTrue, kFalse:
		return "a boolean"
	}
	return "null"
}

// member is one "name": value pair of the body, in the order sent.
type member struct {
	name string
	kind kind
	// text is the decoded string for kString and the literal text for
	// kNumber (the typing rules look at its exact form).
	text string
	// integer is true for a kNumber without fraction or exponent.
	integer bool
	// off is the byte offset of the value, for error messages.
	off int
}

type scanner struct {
	b []byte
	i int
	// buf is reused for strings that contain escapes.
	buf []byte
	// shared: strings without escapes, and number texts, are b's own
	// bytes rather than copies (DecodeEntityShared).
	shared bool
}

// text is b[start:end] as a string: a copy, or b's bytes when shared.
func (s *scanner) text(start, end int) string {
	if s.shared && end > start {
		return unsafe.String(&s.b[start], end-start)
	}
	return string(s.b[start:end])
}

// scan reads one flat JSON object. It never recurses: an array or object
// value is refused where it starts, so "[[[[..." of any depth fails at its
// first byte (docs/protocol.md 4.2: property values are primitives only).
// Members are appended to members, which the caller may reuse.
func scan(members []member, body []byte, shared bool) ([]member, error) {
	s := scanner{b: body, shared: shared}
	// A UTF-8 byte order mark is tolerated: some Windows clients write one.
	if len(body) >= 3 && body[0] == 0xEF && body[1] == 0xBB && body[2] == 0xBF {
		s.i = 3
	}
	s.skipSpace()
	if s.i == len(s.b) {
		return nil, invalidBody("the request body is empty; an entity is a JSON object such as {\"PartitionKey\":\"p\",\"RowKey\":\"r\"}")
	}
	if s.b[s.i] != '{' {
		if s.b[s.i] == '[' {
			return nil, invalidBody("the request body is a JSON array; an entity must be a single JSON object")
		}
		return nil, s.syntax("expected '{' at the start of the entity")
	}
	s.i++
	s.skipSpace()
	if s.peek('}') {
		s.i++
		return members, s.end()
	}
	for {
		s.skipSpace()
		if !s.peek('"') {
			return nil, s.syntax("expected a property name in double quotes")
		}
		name, err := s.str()
		if err != nil {
			return nil, err
		}
		s.skipSpace()
		if !s.peek(':') {
			return nil, s.syntax("expected ':' after property name " + quote(name))
		}
		s.i++
		s.skipSpace()
		m := member{name: name, off: s.i}
		if err := s.value(&m); err != nil {
			return nil, err
		}
		members = append(members, m)
		s.skipSpace()
		if s.i == len(s.b) {
			return nil, s.syntax("unexpected end of body; expected ',' or '}'")
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return members, s.end()
		default:
			return nil, s.syntax("expected ',' or '}' after the value of " + quote(name))
		}
	}
}

// end checks that nothing but whitespace follows the object.
func (s *scanner) end() error {
	s.skipSpace()
	if s.i != len(s.b) {
		return s.syntax("unexpected data after the end of the entity object")
	}
	return nil
}

func (s *scanner) skipSpace() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) peek(c byte) bool { return s.i < len(s.b) && s.b[s.i] == c }

// value reads one primitive value into m.
func (s *scanner) value(m *member) error {
	if s.i == len(s.b) {
		return s.syntax("unexpected end of body; expected the value of " + quote(m.name))
	}
	switch c := s.b[s.i]; {
	case c == '"':
		v, err := s.str()
		if err != nil {
			return err
		}
		m.kind, m.text = kString, v
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number(m)
	case c == 't':
		m.kind = kTrue
		return s.literal("true")
	case c == 'f':
		m.kind = kFalse
		return s.literal("false")
	case c == 'n':
		m.kind = kNull
		return s.literal("null")
	case c == '[':
		return invalidBodyf("property %s at byte %d has an array value; property values must be strings, numbers, booleans or null", quote(m.name), s.i)
	case c == '{':
		return invalidBodyf("property %s at byte %d has an object value; property values must be strings, numbers, booleans or null", quote(m.name), s.i)
	default:
		return s.syntax("expected a value for " + quote(m.name))
	}
	return nil
}

func (s *scanner) literal(word string) error {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return s.syntax("invalid literal; expected " + word)
	}
	s.i += len(word)
	return nil
}

// number reads a JSON number (RFC 8259 grammar, nothing looser: no leading
// '+', no leading zeros, no bare '.', no NaN) and keeps its text.
func (s *scanner) number(m *member) error {
	start := s.i
	integer := true
	if s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.i < len(s.b) && s.b[s.i] >= '1' && s.b[s.i] <= '9':
		s.digits()
	default:
		return s.syntax("invalid number; expected a digit")
	}
	if s.peek('.') {
		integer = false
		s.i++
		if s.digits() == 0 {
			return s.syntax("invalid number; expected a digit after '.'")
		}
	}
	if s.peek('e') || s.peek('E') {
		integer = false
		s.i++
		if s.peek('+') || s.peek('-') {
			s.i++
		}
		if s.digits() == 0 {
			return s.syntax("invalid number; expected a digit in the exponent")
		}
	}
	m.kind, m.text, m.integer = kNumber, s.text(start, s.i), integer
	return nil
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// str reads a JSON string starting at the opening quote. The common case,
// no escapes, is one pass and one allocation (none when shared).
func (s *scanner) str() (string, error) {
	open := s.i
	s.i++
	start := s.i
	for s.i < len(s.b) {
		s.i += edm.PlainJSONPrefix(s.b[s.i:])
		if s.i >= len(s.b) {
			break
		}
		c := s.b[s.i]
		switch {
		case c == '"':
			v := s.text(start, s.i)
			s.i++
			return v, nil
		case c == '\\':
			return s.strSlow(open, start)
		case c < 0x20:
			return "", s.syntax("control character in a string must be escaped")
		case c < utf8.RuneSelf:
			s.i++
		default:
			r, size := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && size == 1 {
				return "", invalidBodyf("the request body is not valid UTF-8 at byte %d", s.i)
			}
			s.i += size
		}
	}
	return "", invalidBodyf("the request body ends inside the string that starts at byte %d", open)
}

// strSlow continues a string that has escapes, from s.i (at a backslash).
func (s *scanner) strSlow(open, start int) (string, error) {
	s.buf = append(s.buf[:0], s.b[start:s.i]...)
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return string(s.buf), nil
		case c == '\\':
			if err := s.escape(); err != nil {
				return "", err
			}
		case c < 0x20:
			return "", s.syntax("control character in a string must be escaped")
		case c < utf8.RuneSelf:
			s.buf = append(s.buf, c)
			s.i++
		default:
			r, size := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && size == 1 {
				return "", invalidBodyf("the request body is not valid UTF-8 at byte %d", s.i)
			}
			s.buf = append(s.buf, s.b[s.i:s.i+size]...)
			s.i += size
		}
	}
	return "", invalidBodyf("the request body ends inside the string that starts at byte %d", open)
}

// escape decodes one backslash escape at s.i into s.buf. Surrogates must
// come in valid pairs: a lone one has no UTF-8 form, and storing U+FFFD
// instead would silently change the client's data.
func (s *scanner) escape() error {
	at := s.i
	if s.i+1 >= len(s.b) {
		return s.syntax("unterminated escape sequence")
	}
	c := s.b[s.i+1]
	s.i += 2
	switch c {
	case '"', '\\', '/':
		s.buf = append(s.buf, c)
	case 'b':
		s.buf = append(s.buf, '\b')
	case 'f':
		s.buf = append(s.buf, '\f')
	case 'n':
		s.buf = append(s.buf, '\n')
	case 'r':
		s.buf = append(s.buf, '\r')
	case 't':
		s.buf = append(s.buf, '\t')
	case 'u':
		r, ok := s.hex4()
		if !ok {
			return invalidBodyf("invalid \\u escape at byte %d; expected four hexadecimal digits", at)
		}
		switch {
		case utf16.IsSurrogate(r) && r < 0xDC00:
			// A high surrogate must be followed by an escaped low one.
			if s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
				s.i += 2
				lo, ok := s.hex4()
				if ok && lo >= 0xDC00 && lo <= 0xDFFF {
					r = utf16.DecodeRune(r, lo)
					break
				}
			}
			return invalidBodyf("unpaired UTF-16 surrogate escape at byte %d", at)
		case utf16.IsSurrogate(r):
			return invalidBodyf("unpaired UTF-16 surrogate escape at byte %d", at)
		}
		s.buf = utf8.AppendRune(s.buf, r)
	default:
		s.i = at
		return s.syntax("invalid escape sequence in a string")
	}
	return nil
}

func (s *scanner) hex4() (rune, bool) {
	if len(s.b)-s.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	s.i += 4
	return r, true
}

// syntax reports malformed JSON at the current position.
func (s *scanner) syntax(what string) error {
	if s.i >= len(s.b) {
		return invalidBodyf("the request body is not valid JSON: %s (at the end of the body)", what)
	}
	return invalidBodyf("the request body is not valid JSON: %s at byte %d", what, s.i)
}

// invalidBody is 400 InvalidInput with the service's sentence, "One of the
// request inputs is not valid.", alone on the first line — the live answer
// to a key that is not a string (live-Py
// test_encoder_create_entity_basic) — and what is wrong in tableemu's hint
// after it (docs/protocol.md 8.1).
func invalidBody(detail string) error {
	return tableemu.New(tableemu.InvalidInput).WithHint("%s", sentence(detail))
}

func invalidBodyf(format string, args ...any) error {
	return invalidBody(sprintf(format, args...))
}

// unreadableMessage is the live service's sentence for a value that its
// EDM type cannot hold: an Edm.Int32 of 2147483648 or -2147483649, an
// Edm.Int64 of "9223372036854775808" (live-Py
// test_insert_entity_with_large_int32_value_throws,
// test_insert_entity_with_large_int64_value_throws,
// test_encoder_create_entity_atypical_values: InvalidInput, this sentence
// and nothing more). It is the generic message of the OData reader that
// converts every typed value, so tableemu gives it for every value its type
// cannot hold (docs/protocol.md 0.1).
const unreadableMessage = "An error occurred while processing this request."

// unreadableValuef is 400 InvalidInput with unreadableMessage and what is
// wrong in tableemu's hint.
func unreadableValuef(format string, args ...any) error {
	return tableemu.Newf(tableemu.InvalidInput, unreadableMessage).WithHint("%s", sentence(sprintf(format, args...)))
}

// sentence ends s with a full stop.
func sentence(s string) string {
	if s != "" && !strings.HasSuffix(s, ".") {
		return s + "."
	}
	return s
}
