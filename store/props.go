package store

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tableemu/tableemu/edm"
)

// Stored property format: one JSON object per entity, in the client's
// property order, mapping each name to a two-element array [type, value]
// with type the edm.Type number:
//
//	String   [0,"text"]         Boolean  [4,true]
//	Int32    [1,42]             DateTime [5,637000000000000000]  (ticks)
//	Int64    [2,-9000000000]    Guid     [6,"c9da6455-213d-..."] (lower-case)
//	Double   [3,2.5]            Binary   [7,"0aff"]              (lower-case hex)
//
// Every value is a native SQLite JSON scalar whose SQL order is the EDM
// order for its type (ticks for DateTime, hex for Binary), so filters can be
// compiled to json_extract comparisons guarded by the type number. Doubles
// ±Inf are written 9e999/-9e999, which SQLite reads as ±Inf; NaN, which has
// no JSON number form, is the string "NaN".
// The format is private to the store; the wire codec is elsewhere.

func encodeProps(props []edm.Property) string {
	b := make([]byte, 0, 64*len(props)+2)
	b = append(b, '{')
	for i, p := range props {
		if i > 0 {
			b = append(b, ',')
		}
		b = edm.AppendJSONString(b, p.Name)
		b = append(b, ':', '[')
		b = strconv.AppendInt(b, int64(p.Value.T), 10)
		b = append(b, ',')
		v := p.Value
		switch v.T {
		case edm.String, edm.Guid:
			b = edm.AppendJSONString(b, v.S)
		case edm.Int32, edm.Int64, edm.DateTime:
			b = strconv.AppendInt(b, v.N, 10)
		case edm.Double:
			switch {
			case math.IsNaN(v.F):
				b = append(b, `"NaN"`...)
			case math.IsInf(v.F, 1):
				b = append(b, "9e999"...)
			case math.IsInf(v.F, -1):
				b = append(b, "-9e999"...)
			default:
				b = strconv.AppendFloat(b, v.F, 'g', -1, 64)
			}
		case edm.Boolean:
			b = strconv.AppendBool(b, v.Bool())
		case edm.Binary:
			b = append(b, '"')
			b = hex.AppendEncode(b, v.B)
			b = append(b, '"')
		}
		b = append(b, ']')
	}
	b = append(b, '}')
	return string(b)
}

var errProps = errors.New("stored properties are malformed")

// decodeProps parses the stored format back into properties.
func decodeProps(s string) ([]edm.Property, error) {
	d := propDecoder{s: s}
	d.ws()
	if !d.eat('{') {
		return nil, d.fail("expected {")
	}
	var props []edm.Property
	d.ws()
	if d.eat('}') {
		return props, nil
	}
	for {
		d.ws()
		name, err := d.str()
		if err != nil {
			return nil, err
		}
		d.ws()
		if !d.eat(':') {
			return nil, d.fail("expected :")
		}
		d.ws()
		if !d.eat('[') {
			return nil, d.fail("expected [")
		}
		d.ws()
		t, err := strconv.Atoi(d.number())
		if err != nil || t < 0 || t > int(edm.Binary) {
			return nil, d.fail("bad type")
		}
		d.ws()
		if !d.eat(',') {
			return nil, d.fail("expected ,")
		}
		d.ws()
		v := edm.Value{T: edm.Type(t)}
		switch v.T {
		case edm.String, edm.Guid:
			v.S, err = d.str()
		case edm.Int32, edm.Int64, edm.DateTime:
			v.N, err = strconv.ParseInt(d.number(), 10, 64)
		case edm.Double:
			if d.peek() == '"' {
				var str string
				if str, err = d.str(); err == nil && str != "NaN" {
					err = d.fail("bad double")
				}
				v.F = math.NaN()
			} else {
				v.F, err = strconv.ParseFloat(d.number(), 64)
				if err != nil && math.IsInf(v.F, 0) {
					err = nil // 9e999 is how ±Inf is stored
				}
			}
		case edm.Boolean:
			switch {
			case d.lit("true"):
				v.N = 1
			case d.lit("false"):
			default:
				err = d.fail("bad boolean")
			}
		case edm.Binary:
			var h string
			if h, err = d.str(); err == nil {
				v.B, err = hex.DecodeString(h)
				if v.B == nil {
					v.B = []byte{}
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%w: property %q: %v", errProps, name, err)
		}
		d.ws()
		if !d.eat(']') {
			return nil, d.fail("expected ]")
		}
		props = append(props, edm.Property{Name: name, Value: v})
		d.ws()
		if d.eat('}') {
			return props, nil
		}
		if !d.eat(',') {
			return nil, d.fail("expected , or }")
		}
	}
}

type propDecoder struct {
	s string
	i int
}

func (d *propDecoder) fail(msg string) error {
	return fmt.Errorf("%w at offset %d: %s", errProps, d.i, msg)
}

func (d *propDecoder) ws() {
	for d.i < len(d.s) && (d.s[d.i] == ' ' || d.s[d.i] == '\n' || d.s[d.i] == '\t' || d.s[d.i] == '\r') {
		d.i++
	}
}

func (d *propDecoder) peek() byte {
	if d.i < len(d.s) {
		return d.s[d.i]
	}
	return 0
}

func (d *propDecoder) eat(c byte) bool {
	if d.peek() == c {
		d.i++
		return true
	}
	return false
}

func (d *propDecoder) lit(w string) bool {
	if len(d.s)-d.i >= len(w) && d.s[d.i:d.i+len(w)] == w {
		d.i += len(w)
		return true
	}
	return false
}

func (d *propDecoder) number() string {
	start := d.i
	for d.i < len(d.s) {
		c := d.s[d.i]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			d.i++
			continue
		}
		break
	}
	return d.s[start:d.i]
}

// str reads a JSON string, undoing every escape JSON allows.
func (d *propDecoder) str() (string, error) {
	if !d.eat('"') {
		return "", d.fail("expected string")
	}
	start := d.i
	for d.i < len(d.s) && d.s[d.i] != '"' && d.s[d.i] != '\\' {
		d.i++
	}
	if d.i < len(d.s) && d.s[d.i] == '"' {
		d.i++
		return d.s[start : d.i-1], nil // fast path: no escapes
	}
	b := []byte(d.s[start:d.i])
	for d.i < len(d.s) {
		c := d.s[d.i]
		d.i++
		switch c {
		case '"':
			return string(b), nil
		case '\\':
			if d.i >= len(d.s) {
				return "", d.fail("bad escape")
			}
			e := d.s[d.i]
			d.i++
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := d.hex4()
				if !ok {
					return "", d.fail("bad \\u escape")
				}
				if utf16.IsSurrogate(r) && d.lit(`\u`) {
					if lo, ok := d.hex4(); ok {
						r = utf16.DecodeRune(r, lo)
					}
				}
				b = utf8.AppendRune(b, r)
			default:
				return "", d.fail("bad escape")
			}
		default:
			b = append(b, c)
		}
	}
	return "", d.fail("unterminated string")
}

func (d *propDecoder) hex4() (rune, bool) {
	if d.i+4 > len(d.s) {
		return 0, false
	}
	v, err := strconv.ParseUint(d.s[d.i:d.i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	d.i += 4
	return rune(v), true
}
