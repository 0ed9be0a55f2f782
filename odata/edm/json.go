package edm

import (
	"encoding/binary"
	"unicode/utf8"
)

// JSON string writing, shared by the wire codec and the store's property
// format so that both escape alike.

// AppendJSONString appends s as a JSON string. Unlike encoding/json it does not
// escape '<', '>', '&', U+2028 or U+2029: responses are JSON documents, not
// script. Invalid UTF-8 is written as U+FFFD, so the output is always valid
// JSON.
func AppendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	b = AppendJSONStringBody(b, s)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// AppendJSONStringBody appends s JSON-escaped, without the quotes.
func AppendJSONStringBody(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		// Skip plain ASCII 32 and then 8 bytes at a time: responses are
		// mostly long runs of them, and this loop is the hottest in a
		// query. The four words of a block are tested together, which
		// keeps the processor's pipelines full.
		for i+32 <= len(s) {
			w := []byte(s[i : i+32])
			if attention(binary.LittleEndian.Uint64(w))|attention(binary.LittleEndian.Uint64(w[8:]))|
				attention(binary.LittleEndian.Uint64(w[16:]))|attention(binary.LittleEndian.Uint64(w[24:])) != 0 {
				break
			}
			i += 32
		}
		for i+8 <= len(s) && plainASCII8(binary.LittleEndian.Uint64([]byte(s[i:i+8]))) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		i++
		start = i
	}
	return append(b, s[start:]...)
}

// JSONPlain reports whether AppendJSONStringBody would copy s unchanged:
// valid UTF-8 without control characters, '"' or '\\'.
func JSONPlain(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if attention(binary.LittleEndian.Uint64([]byte(s[i:i+8]))) != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
		if c >= utf8.RuneSelf {
			// The rest holds multi-byte characters: check it whole.
			rest := s[i:]
			for j := 0; j < len(rest); j++ {
				if c := rest[j]; c < 0x20 || c == '"' || c == '\\' {
					return false
				}
			}
			return utf8.ValidString(rest)
		}
	}
	return true
}

// PlainJSONPrefix is how many leading bytes of b are printable ASCII
// other than '"' and '\\': the run a JSON string reader can pass over
// without looking at each byte (eight at a time here).
func PlainJSONPrefix(b []byte) int {
	i := 0
	for i+8 <= len(b) && attention(binary.LittleEndian.Uint64(b[i:i+8])) == 0 {
		i += 8
	}
	for i < len(b) {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			break
		}
		i++
	}
	return i
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plainASCII8 reports whether none of the eight bytes of w needs attention
// when writing a JSON string: no byte below 0x20, no '"', no '\\', and no
// byte with the high bit set (multi-byte UTF-8, checked one rune at a
// time). Classic SWAR tests: a byte b < n sets the high bit of (b - n) for
// b < 0x80, and a byte equal to c becomes zero under XOR.
func plainASCII8(w uint64) bool { return attention(w) == 0 }

// attention is non-zero when a byte of w needs attention (plainASCII8).
func attention(w uint64) uint64 {
	below := (w - lsb*0x20) &^ w
	quote := w ^ (lsb * '"')
	bslash := w ^ (lsb * '\\')
	zeroQ := (quote - lsb) &^ quote
	zeroB := (bslash - lsb) &^ bslash
	return (below | zeroQ | zeroB | w) & msb
}
