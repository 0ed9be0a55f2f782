// Package edm holds the Entity Data Model values the Table service stores:
// the eight property types, their canonical forms and the same-type ordering
// the service uses when it compares them (docs/protocol.md 4.2, 6.3).
package edm

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Type is one of the eight EDM property types the Table service supports.
type Type uint8

// The zero Type is String, so a zero Value is the empty string.
const (
	String Type = iota
	Int32
	Int64
	Double
	Boolean
	DateTime
	Guid
	Binary
)

var typeNames = [...]string{
	String:   "Edm.String",
	Int32:    "Edm.Int32",
	Int64:    "Edm.Int64",
	Double:   "Edm.Double",
	Boolean:  "Edm.Boolean",
	DateTime: "Edm.DateTime",
	Guid:     "Edm.Guid",
	Binary:   "Edm.Binary",
}

// Name is the type's name as written in @odata.type annotations.
func (t Type) Name() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("Edm.Unknown(%d)", t)
}

func (t Type) String() string { return t.Name() }

// ParseType maps an @odata.type annotation ("Edm.Int64") to its Type.
// The service matches these names exactly (case-sensitive).
func ParseType(name string) (Type, bool) {
	for i, n := range typeNames {
		if n == name {
			return Type(i), true
		}
	}
	return 0, false
}

// Value is one typed property value. Exactly one payload field is meaningful,
// chosen by T:
//
//	String    S
//	Int32     N (within int32)
//	Int64     N
//	Double    F (NaN and ±Inf allowed)
//	Boolean   N (0 or 1)
//	DateTime  N, in 100 ns ticks since 0001-01-01T00:00:00Z (see datetime.go)
//	Guid      S, canonical lower-case 8-4-4-4-12 form
//	Binary    B
type Value struct {
	T Type
	S string
	N int64
	F float64
	B []byte
}

// Constructors keep the payload invariants above.

func NewString(s string) Value      { return Value{T: String, S: s} }
func NewInt32(i int32) Value        { return Value{T: Int32, N: int64(i)} }
func NewInt64(i int64) Value        { return Value{T: Int64, N: i} }
func NewDouble(f float64) Value     { return Value{T: Double, F: f} }
func NewDateTime(ticks int64) Value { return Value{T: DateTime, N: ticks} }
func NewBinary(b []byte) Value      { return Value{T: Binary, B: b} }

func NewBoolean(b bool) Value {
	if b {
		return Value{T: Boolean, N: 1}
	}
	return Value{T: Boolean}
}

// NewGuid parses s (see ParseGuid) into a Guid value.
func NewGuid(s string) (Value, error) {
	g, err := ParseGuid(s)
	if err != nil {
		return Value{}, err
	}
	return Value{T: Guid, S: g}, nil
}

// Bool reports a Boolean value's truth.
func (v Value) Bool() bool { return v.N != 0 }

// Compare orders two values of the same type the way the service does:
// strings by UTF-16 code unit (ordinal), numbers numerically, false before
// true, DateTime by instant, Guid by canonical string, Binary bytewise with a
// shorter prefix first. NaN sorts below every other Double and equal to
// itself, so ordering stays total; callers that need IEEE semantics for NaN
// check for it first. ok is false when the types differ.
func Compare(a, b Value) (c int, ok bool) {
	if a.T != b.T {
		return 0, false
	}
	switch a.T {
	case String, Guid:
		return CompareStrings(a.S, b.S), true
	case Double:
		return compareDouble(a.F, b.F), true
	case Binary:
		return bytes.Compare(a.B, b.B), true
	default: // Int32, Int64, Boolean, DateTime
		return cmp.Compare(a.N, b.N), true
	}
}

func compareDouble(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return -1
	case bn:
		return 1
	}
	return cmp.Compare(a, b)
}

// Equal reports whether a and b have the same type and value.
func Equal(a, b Value) bool {
	c, ok := Compare(a, b)
	return ok && c == 0
}

// CompareStrings compares by UTF-16 code units, as .NET's ordinal comparison
// (and so the service) does. It differs from Go's byte order only when one
// string has a supplementary character (UTF-16 surrogate, 0xD800-0xDFFF)
// where the other has a character in U+E000-U+FFFF.
func CompareStrings(a, b string) int {
	for i := 0; i < len(a) && i < len(b); {
		if a[i] == b[i] {
			i++
			continue
		}
		// First differing byte: both strings agree up to i, which is a
		// rune boundary or inside the same rune prefix. Back up to the
		// start of the rune and compare the runes as UTF-16 units.
		j := i
		for j > 0 && !utf8.RuneStart(a[j]) {
			j--
		}
		ra, _ := utf8.DecodeRuneInString(a[j:])
		rb, _ := utf8.DecodeRuneInString(b[j:])
		if c := cmp.Compare(utf16Key(ra), utf16Key(rb)); c != 0 {
			return c
		}
		// Only invalid UTF-8 decodes two different byte sequences to the
		// same rune (U+FFFD); order those bytewise so the order stays total.
		return cmp.Compare(a[i], b[i])
	}
	return cmp.Compare(len(a), len(b))
}

// utf16Key maps a rune to a number whose order is the order of the rune's
// first UTF-16 code unit, with ties broken by the rune itself.
func utf16Key(r rune) int64 {
	if r >= 0x10000 {
		hi, _ := utf16.EncodeRune(r)
		return int64(hi)<<21 | int64(r)
	}
	return int64(r) << 21
}

// UTF16Len is the length of s in UTF-16 code units, the unit the service's
// size limits count (docs/protocol.md 10).
func UTF16Len(s string) int {
	// ASCII is one unit a byte: skip it eight bytes at a time (property
	// values are mostly ASCII, and every write measures all of them).
	i := 0
	for i+8 <= len(s) && binary.LittleEndian.Uint64([]byte(s[i:i+8]))&msb == 0 {
		i += 8
	}
	n := i
	for _, r := range s[i:] {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// String renders a value for messages and tests, in OData literal syntax.
func (v Value) String() string {
	switch v.T {
	case String:
		return "'" + strings.ReplaceAll(v.S, "'", "''") + "'"
	case Int32:
		return fmt.Sprint(v.N)
	case Int64:
		return fmt.Sprintf("%dL", v.N)
	case Double:
		return FormatDouble(v.F)
	case Boolean:
		if v.Bool() {
			return "true"
		}
		return "false"
	case DateTime:
		return "datetime'" + FormatDateTime(v.N) + "'"
	case Guid:
		return "guid'" + v.S + "'"
	case Binary:
		return fmt.Sprintf("X'%x'", v.B)
	}
	return "?"
}
