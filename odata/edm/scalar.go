package edm

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"
)

// ErrGuidSyntax is returned by ParseGuid.
var ErrGuidSyntax = errors.New("not a GUID in 8-4-4-4-12 hexadecimal form")

// ParseGuid accepts the canonical 8-4-4-4-12 form in either case and returns
// it lower-cased, the form the service returns (docs/protocol.md 4.2).
func ParseGuid(s string) (string, error) {
	if len(s) != 36 {
		return "", ErrGuidSyntax
	}
	b := []byte(s)
	for i, c := range b {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return "", ErrGuidSyntax
			}
			continue
		}
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		case c >= 'A' && c <= 'F':
			b[i] = c + ('a' - 'A')
		default:
			return "", ErrGuidSyntax
		}
	}
	return string(b), nil
}

// FormatDouble renders a Double as the service writes it: the text of
// .NET Framework's round-trip format ("R": 15 significant digits when they
// read back as the same Double, else 17; an exponent, written "E+21" or
// "E-05", when it is at least that precision or below -4), with ".0" added
// to a number that has neither fraction nor exponent ("5.0") so that a
// client reading untyped JSON keeps it a Double. Live answers 1.1 for a
// stored 1.1000000000000001 and 9.2233720368547758E+21 for an untyped
// 9223372036854775808000, where the shortest text would have 16 digits
// (docs/protocol.md 4.2). The special values are the strings the service
// uses ("NaN", "Infinity", "-Infinity"), which travel as JSON strings with
// an Edm.Double annotation (docs/protocol.md 0.1, 4.2).
func FormatDouble(f float64) string { return string(AppendDouble(nil, f)) }

// AppendDouble appends FormatDouble(f) to b.
func AppendDouble(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(b, "-0.0"...)
		}
		return append(b, "0.0"...)
	}
	// d.ddde±x with 15 significant digits, or 17 when 15 do not read back
	// as f. For a normal Double, fifteen read back exactly when the
	// shortest text that does has at most 15 digits (any decimal of 15
	// digits or fewer survives the trip through a Double: DBL_DIG), and
	// are then that text, so the shortest form decides without parsing
	// anything back.
	var scratch [32]byte
	prec := 15
	e := strconv.AppendFloat(scratch[:0], f, 'e', -1, 64)
	if e[0] == '-' {
		b = append(b, '-')
		e = e[1:]
	}
	// e is now d[.ddd]e±x: the significant digits are all but the point.
	// A subnormal holds fewer than 53 bits, so the rule does not hold for
	// it: its 15 digits are formatted and read back.
	if x := bytes.IndexByte(e, 'e'); x > prec+1 {
		prec = 17
		e = strconv.AppendFloat(scratch[:0], math.Abs(f), 'e', prec-1, 64)
	} else if math.Abs(f) < 0x1p-1022 {
		e = strconv.AppendFloat(scratch[:0], math.Abs(f), 'e', prec-1, 64)
		if back, _ := strconv.ParseFloat(string(e), 64); back != math.Abs(f) {
			prec = 17
			e = strconv.AppendFloat(scratch[:0], math.Abs(f), 'e', prec-1, 64)
		}
	}
	x := bytes.IndexByte(e, 'e')
	exp, _ := strconv.Atoi(string(e[x+1:]))
	// The significant digits without the point, trailing zeros dropped.
	var dbuf [17]byte
	digits := append(dbuf[:0], e[0])
	if x > 2 {
		digits = append(digits, e[2:x]...)
	}
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	switch {
	case exp < -4 || exp >= prec:
		b = append(b, digits[0])
		if len(digits) > 1 {
			b = append(b, '.')
			b = append(b, digits[1:]...)
		}
		b = append(b, 'E')
		if exp < 0 {
			b = append(b, '-')
			exp = -exp
		} else {
			b = append(b, '+')
		}
		if exp < 10 {
			b = append(b, '0')
		}
		return strconv.AppendInt(b, int64(exp), 10)
	case exp < 0:
		b = append(b, "0."...)
		for i := -1; i > exp; i-- {
			b = append(b, '0')
		}
		return append(b, digits...)
	}
	whole := exp + 1
	for i := 0; i < whole; i++ {
		if i < len(digits) {
			b = append(b, digits[i])
		} else {
			b = append(b, '0')
		}
	}
	if whole >= len(digits) {
		return append(b, ".0"...)
	}
	b = append(b, '.')
	return append(b, digits[whole:]...)
}

// IsSpecialDouble reports whether f is NaN or infinite: the Doubles JSON
// cannot carry as numbers.
func IsSpecialDouble(f float64) bool { return math.IsNaN(f) || math.IsInf(f, 0) }

// ErrDoubleSyntax is returned by ParseDouble.
var ErrDoubleSyntax = errors.New("not a Double")

// ParseDouble reads a Double as clients send it: a JSON number, or a string
// holding a number or one of "NaN", "Infinity", "-Infinity" (the legacy JS SDK
// sends every Double as a string). A finite text that overflows float64
// ("13e7705") is an error, as on the service (docs/protocol.md 0.1).
func ParseDouble(s string) (float64, error) {
	switch s {
	case "NaN":
		return math.NaN(), nil
	case "Infinity", "INF", "+Infinity":
		return math.Inf(1), nil
	case "-Infinity", "-INF":
		return math.Inf(-1), nil
	}
	if s == "" || strings.ContainsAny(s, "_xXpPnNiI") {
		// Go's ParseFloat accepts hex floats, underscores, "inf" and "nan";
		// none of those are Doubles on the wire.
		return 0, ErrDoubleSyntax
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, ErrDoubleSyntax
	}
	return f, nil
}
