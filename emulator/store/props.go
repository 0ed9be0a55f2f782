package store

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/tableemu/tableemu/odata/edm"
)

// Stored property format: one SQLite JSONB object per entity
// (https://sqlite.org/jsonb.html), in the client's property order. Each
// property's key is its name plus "$" and a letter for its EDM type, and its
// value is a JSON scalar whose SQL order is the EDM order for that type:
//
//	Name$s  String    text            Name$b  Boolean   true / false
//	Name$i  Int32     integer         Name$t  DateTime  integer ticks
//	Name$l  Int64     integer         Name$g  Guid      text, lower-case
//	Name$d  Double    real            Name$x  Binary    text, lower-case hex
//
// Putting the type in the key lets a compiled filter test a property's
// type and value with one json_extract: '$."Age$i"' is NULL unless Age is an
// Int32 (sqlfilter.go). Property names never contain '$' (they are
// identifiers, wire.ValidatePropertyName). Doubles ±Inf are stored as
// 9e999/-9e999, which SQLite reads as ±Inf; NaN, which has no JSON number
// form, is the text "NaN". Under the cosmos profile the object may also
// hold two null members, "$p" and "$r", where the keys stood among the
// properties (keyplaces.go).
//
// The blob is produced and read here, in Go, rather than through SQLite's
// jsonb() and json(): that saves a text round trip on every write and read.
// JSONB is a documented, stable on-disk format; props_test.go checks that
// SQLite accepts what this writes (json_valid strict) and reads the same
// values back with json_extract.

// TypeLetters maps edm.Type to its key suffix letter.
var TypeLetters = [...]byte{
	edm.String:   's',
	edm.Int32:    'i',
	edm.Int64:    'l',
	edm.Double:   'd',
	edm.Boolean:  'b',
	edm.DateTime: 't',
	edm.Guid:     'g',
	edm.Binary:   'x',
}

func letterType(c byte) (edm.Type, bool) {
	for t, l := range TypeLetters {
		if l == c {
			return edm.Type(t), true
		}
	}
	return 0, false
}

// PropKey is the stored key of property name with type t.
func PropKey(name string, t edm.Type) string {
	return name + "$" + string(TypeLetters[t])
}

// JSONB element types (the low four bits of an element's first byte).
const (
	jbNull    = 0
	jbTrue    = 1
	jbFalse   = 2
	jbInt     = 3
	jbInt5    = 4
	jbFloat   = 5
	jbFloat5  = 6
	jbText    = 7
	jbTextJ   = 8
	jbText5   = 9
	jbTextRaw = 10
	jbArray   = 11
	jbObject  = 12
)

// appendHeader appends a JSONB element header: the type in the low nibble,
// and the payload size either in the high nibble (0-11) or in the 1, 2 or 4
// bytes that follow (nibble 12, 13, 14).
func appendHeader(b []byte, typ byte, n int) []byte {
	switch {
	case n <= 11:
		return append(b, byte(n)<<4|typ)
	case n <= 0xff:
		return append(b, 0xc0|typ, byte(n))
	case n <= 0xffff:
		return append(b, 0xd0|typ, byte(n>>8), byte(n))
	default:
		return append(b, 0xe0|typ, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

func appendElem(b []byte, typ byte, payload string) []byte {
	b = appendHeader(b, typ, len(payload))
	return append(b, payload...)
}

// EncodeProps renders properties as a JSONB object.
func EncodeProps(props []edm.Property) []byte {
	return EncodePropsInto(make([]byte, 0, PropsBound(props)), props)
}

// propsHead is the longest element header: EncodePropsInto writes the
// object's body after this much room and its header, once the body's
// size is known, just before the body.
const propsHead = 5

// PropsBound is the most bytes EncodeProps can take for props.
func PropsBound(props []edm.Property) int {
	size := propsHead
	for _, p := range props {
		size += 2*propsHead + len(p.Name) + 2
		switch p.Value.T {
		case edm.String, edm.Guid:
			size += len(p.Value.S)
		case edm.Binary:
			size += 2 * len(p.Value.B)
		default:
			size += 32 // a number, at most 25 bytes
		}
	}
	return size
}

// EncodePropsInto is EncodeProps writing into mem's capacity (its length
// does not matter), which the caller sizes with PropsBound(props), and
// returns the object, a part of mem capped at its own end. It lets a
// caller that knows when the object dies reuse its memory: the writer
// encodes every write into memory it reuses from one group of writes to
// the next (sqlite's Tx.encodeProps). A smaller mem still gives the
// object, in new memory.
func EncodePropsInto(mem []byte, props []edm.Property) []byte {
	return encodePropsInto(mem, props, edm.KeyPlaces{})
}

// encodePropsInto is EncodePropsInto with the keys' markers where at puts
// them (keyplaces.go); none when the keys are first.
func encodePropsInto(mem []byte, props []edm.Property, at edm.KeyPlaces) []byte {
	// One buffer, sized for the largest the properties can take.
	// (Growing a buffer from a guess, then copying it behind the header,
	// was an insert's largest allocation: 2.4 KB for a 1 KB entity.)
	const head = propsHead
	marks := !at.KeysFirst()
	if cap(mem) < head {
		n := PropsBound(props)
		if marks {
			n += 2 * markSize
		}
		mem = make([]byte, 0, n)
	}
	size := cap(mem)
	out := mem[:head:size]
	body := out[head:]
	var num [32]byte
	for i, p := range props {
		if marks {
			body = appendMarks(body, at, i, len(props))
		}
		v := p.Value
		body = appendHeader(body, jbTextRaw, len(p.Name)+2)
		body = append(body, p.Name...)
		body = append(body, '$', TypeLetters[v.T])
		switch v.T {
		case edm.String, edm.Guid:
			// TEXT marks a string JSON can carry as it is (jsonb.html:
			// "no escapes needed"), so a reader can say so (Plain).
			typ := byte(jbTextRaw)
			if edm.JSONPlain(v.S) {
				typ = jbText
			}
			body = appendElem(body, typ, v.S)
		case edm.Int32, edm.Int64, edm.DateTime:
			body = appendHeader(body, jbInt, len(strconv.AppendInt(num[:0], v.N, 10)))
			body = strconv.AppendInt(body, v.N, 10)
		case edm.Double:
			switch {
			case math.IsNaN(v.F):
				body = appendElem(body, jbTextRaw, "NaN")
			case math.IsInf(v.F, 1):
				body = appendElem(body, jbFloat, "9e999")
			case math.IsInf(v.F, -1):
				body = appendElem(body, jbFloat, "-9e999")
			default:
				t := strconv.AppendFloat(num[:0], v.F, 'g', -1, 64)
				if !strings.ContainsAny(string(t), ".e") {
					t = append(t, ".0"...)
				}
				body = appendHeader(body, jbFloat, len(t))
				body = append(body, t...)
			}
		case edm.Boolean:
			if v.Bool() {
				body = append(body, jbTrue)
			} else {
				body = append(body, jbFalse)
			}
		case edm.Binary:
			body = appendHeader(body, jbTextRaw, 2*len(v.B))
			body = hex.AppendEncode(body, v.B)
		}
	}
	if marks {
		body = appendMarks(body, at, len(props), len(props))
	}
	h := appendHeader(num[:0], jbObject, len(body))
	if cap(body) != size-head { // outgrew mem (a caller's short bound): copy
		return append(append(make([]byte, 0, len(h)+len(body)), h...), body...)
	}
	start := head - len(h)
	copy(out[start:], h)
	end := head + len(body)
	return out[start:end:end]
}

var errProps = errors.New("stored properties are malformed")

// jbElem reads the element header at b[i:]: its type, and the bounds of
// its payload.
func jbElem(b []byte, i int) (typ byte, start, end int, err error) {
	typ, start, n, ok := jbHead(b, i) // scanfunc.go
	end = start + n
	if !ok || n < 0 || end > len(b) {
		return 0, 0, 0, errProps
	}
	return typ, start, end, nil
}

// jbString returns a text element's string value.
func jbString(b []byte, typ byte, start, end int) (string, error) {
	switch typ {
	case jbText, jbTextRaw:
		return string(b[start:end]), nil
	case jbTextJ:
		return unescapeJSON(string(b[start:end]))
	}
	return "", errProps
}

// DecodeProps reads the stored JSONB object back into properties.
func DecodeProps(b []byte) ([]edm.Property, error) {
	return DecodePropsInto(make([]edm.Property, 0, 8), b, false)
}

// DecodePropsInto appends the properties of b to props. With alias, String
// and Guid values point into b instead of being copied: the caller must
// not use them once b changes (ScanEntities). The keys' markers
// (keyplaces.go) are skipped: DecodeEntityProps reads them.
func DecodePropsInto(props []edm.Property, b []byte, alias bool) ([]edm.Property, error) {
	props, _, err := decodeProps(props, b, alias)
	return props, err
}

// decodeProps is DecodePropsInto that also returns where the keys stand.
func decodeProps(props []edm.Property, b []byte, alias bool) ([]edm.Property, edm.KeyPlaces, error) {
	var at edm.KeyPlaces
	typ, i, end, err := jbElem(b, 0)
	if err != nil || typ != jbObject || end != len(b) {
		return nil, at, errProps
	}
	start := len(props)
	var seen [2]bool
	for i < end {
		ktyp, ks, ke, err := jbElem(b, i)
		if err != nil {
			return nil, at, err
		}
		var key string
		if alias && (ktyp == jbTextRaw || ktyp == jbText) && ke > ks {
			key = unsafe.String(&b[ks], ke-ks)
		} else {
			key, err = jbString(b, ktyp, ks, ke)
		}
		if err != nil || len(key) < 3 || key[len(key)-2] != '$' {
			// Off the path of every property: a key's marker, or damage.
			if err == nil && markAt(key, len(props)-start, &at, &seen) {
				if vtyp, _, ve, err := jbElem(b, ke); err == nil && vtyp == jbNull {
					i = ve
					continue
				}
			}
			return nil, at, fmt.Errorf("%w: key %q", errProps, key)
		}
		t, ok := letterType(key[len(key)-1])
		if !ok {
			return nil, at, fmt.Errorf("%w: key %q", errProps, key)
		}
		vtyp, vs, ve, err := jbElem(b, ke)
		if err != nil {
			return nil, at, err
		}
		v, err := jbValue(b, t, vtyp, vs, ve, alias)
		if err != nil {
			return nil, at, fmt.Errorf("%w: property %q", err, key)
		}
		// Plain is set only for the streaming reader: a copied entity is
		// compared whole in places, and its copy would gain nothing.
		props = append(props, edm.Property{Name: key[:len(key)-2], Value: v, Plain: alias && vtyp == jbText})
		i = ve
	}
	return props, at, nil
}

func jbValue(b []byte, t edm.Type, typ byte, start, end int, alias bool) (edm.Value, error) {
	v := edm.Value{T: t}
	var err error
	switch t {
	case edm.String, edm.Guid:
		if alias && (typ == jbTextRaw || typ == jbText) && end > start {
			v.S = unsafe.String(&b[start], end-start)
		} else {
			v.S, err = jbString(b, typ, start, end)
		}
	case edm.Binary:
		var h string
		if h, err = jbString(b, typ, start, end); err == nil {
			v.B, err = hex.DecodeString(h)
		}
	case edm.Int32, edm.Int64, edm.DateTime:
		if typ != jbInt {
			return v, errProps
		}
		v.N, err = parseInt(b[start:end])
	case edm.Double:
		switch typ {
		case jbFloat, jbInt:
			// The text is only read, never kept: no need to copy it.
			v.F, err = strconv.ParseFloat(unsafe.String(unsafe.SliceData(b[start:end]), end-start), 64)
			if err != nil && math.IsInf(v.F, 0) {
				err = nil // 9e999 is how ±Inf is stored
			}
		case jbTextRaw, jbText:
			if string(b[start:end]) != "NaN" {
				return v, errProps
			}
			v.F = math.NaN()
		default:
			return v, errProps
		}
	case edm.Boolean:
		switch typ {
		case jbTrue:
			v.N = 1
		case jbFalse:
		default:
			return v, errProps
		}
	}
	if err != nil {
		return v, errProps
	}
	return v, nil
}

// parseInt reads a stored integer: decimal digits with an optional '-'.
// Up to 18 digits cannot overflow and are read directly; longer ones go
// through strconv, which checks the range.
func parseInt(d []byte) (int64, error) {
	neg := len(d) > 0 && d[0] == '-'
	digits := d
	if neg {
		digits = d[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return strconv.ParseInt(string(d), 10, 64)
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, errProps
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

// unescapeJSON undoes JSON string escapes (a TEXTJ element's payload).
// tableemu writes raw text, but a blob rewritten by SQLite may hold TEXTJ.
func unescapeJSON(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			return "", errProps
		}
		switch s[i] {
		case '"', '\\', '/':
			b.WriteByte(s[i])
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := hex4(s, i+1)
			if !ok {
				return "", errProps
			}
			i += 4
			if utf16.IsSurrogate(r) && i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if lo, ok := hex4(s, i+3); ok {
					r = utf16.DecodeRune(r, lo)
					i += 6
				}
			}
			b.WriteRune(r)
		default:
			return "", errProps
		}
	}
	if !utf8.ValidString(b.String()) {
		return "", errProps
	}
	return b.String(), nil
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	v, err := strconv.ParseUint(s[i:i+4], 16, 32)
	return rune(v), err == nil
}

func HexString(b []byte) string { return hex.EncodeToString(b) }

// LookupProp finds property name in a stored JSONB object (props.go) and
// decodes its value alone; strings point into b. It runs for every entity
// a scan examines, so it reads element headers inline (jbHead for the
// rare sizes that take extra bytes) and compares a key only when its
// length is the name's plus the two-byte type suffix.
func LookupProp(b []byte, name string) (edm.Value, bool, error) {
	typ, i, n, ok := jbHead(b, 0)
	if !ok || typ != jbObject || i+n != len(b) {
		return edm.Value{}, false, errProps
	}
	for i < len(b) {
		// The key: its header, nearly always one byte.
		ktyp, ks, kn := b[i]&0x0f, i+1, int(b[i]>>4)
		if kn >= 12 {
			if ktyp, ks, kn, ok = jbHead(b, i); !ok {
				return edm.Value{}, false, errProps
			}
		}
		ke := ks + kn
		if ke >= len(b) {
			return edm.Value{}, false, errProps
		}
		vtyp, vs, vn := b[ke]&0x0f, ke+1, int(b[ke]>>4)
		if vn >= 12 {
			if vtyp, vs, vn, ok = jbHead(b, ke); !ok {
				return edm.Value{}, false, errProps
			}
		}
		ve := vs + vn
		if ve > len(b) {
			return edm.Value{}, false, errProps
		}
		i = ve
		key := b[ks:ke]
		if ktyp != jbTextRaw && ktyp != jbText {
			// Keys tableemu writes are raw text; one rewritten by SQLite
			// may be escaped.
			k, err := jbString(b, ktyp, ks, ke)
			if err != nil {
				return edm.Value{}, false, errProps
			}
			key = []byte(k)
		}
		if len(key) != len(name)+2 || key[len(name)] != '$' || string(key[:len(name)]) != name {
			continue
		}
		t, ok := letterType(key[len(key)-1])
		if !ok {
			return edm.Value{}, false, errProps
		}
		v, err := jbValue(b, t, vtyp, vs, ve, true)
		if err != nil {
			return edm.Value{}, false, err
		}
		return v, true, nil
	}
	return edm.Value{}, false, nil
}

// jbHead reads the element header at b[i:]: its type and the start and
// size of its payload, which it does not check against len(b).
func jbHead(b []byte, i int) (typ byte, start, n int, ok bool) {
	if i >= len(b) {
		return 0, 0, 0, false
	}
	typ, n, start = b[i]&0x0f, int(b[i]>>4), i+1
	switch n {
	case 12:
		if start+1 > len(b) {
			return 0, 0, 0, false
		}
		n, start = int(b[start]), start+1
	case 13:
		if start+2 > len(b) {
			return 0, 0, 0, false
		}
		n, start = int(b[start])<<8|int(b[start+1]), start+2
	case 14:
		if start+4 > len(b) {
			return 0, 0, 0, false
		}
		n, start = int(b[start])<<24|int(b[start+1])<<16|int(b[start+2])<<8|int(b[start+3]), start+4
	case 15:
		return 0, 0, 0, false // 8-byte sizes: never written
	}
	return typ, start, n, true
}
