package edm

import (
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

// FormatDouble renders a Double so that a client reading untyped JSON keeps
// it a Double: integral values get ".0" ("5.0"), large and small magnitudes
// use an exponent, and the special values are the strings the service uses
// ("NaN", "Infinity", "-Infinity"), which must travel as JSON strings with an
// Edm.Double annotation (docs/protocol.md 0.1, 4.2).
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
	}
	// Plain notation in the range JavaScript and .NET print plainly, an
	// exponent outside it; either way the shortest text that round-trips.
	abs := math.Abs(f)
	start := len(b)
	if abs == 0 || (abs >= 1e-7 && abs < 1e21) {
		b = strconv.AppendFloat(b, f, 'f', -1, 64)
	} else {
		b = strconv.AppendFloat(b, f, 'e', -1, 64)
	}
	for _, c := range b[start:] {
		if c == '.' || c == 'e' {
			return b
		}
	}
	return append(b, ".0"...)
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
