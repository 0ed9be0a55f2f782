package store

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The service orders PartitionKey and RowKey ordinally by UTF-16 code unit
// (docs/protocol.md 6.3, 6.6). Comparing UTF-8 bytes — SQLite's BINARY
// collation, PostgreSQL's COLLATE "C" — orders the same except that
// supplementary characters (4-byte UTF-8, surrogate pairs in UTF-16) sort
// after U+E000-U+FFFF instead of before. Both engines therefore store keys
// in CESU-8 form: each supplementary character is written as its two
// surrogates, each in 3-byte UTF-8 form (ED A0-BF xx). CESU-8 byte order is
// exactly UTF-16 code unit order, and for keys without supplementary
// characters (nearly all) the two forms are the same bytes, so the
// conversion is a scan that allocates nothing. CESU-8 is not valid UTF-8,
// so PostgreSQL keeps keys as bytea, which compares bytes (no collation).

// SortKey converts a key to its stored form.
func SortKey(s string) string {
	i := 0
	for i < len(s) && s[i] < 0xF0 {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		if r < 0x10000 {
			b.WriteRune(r)
			continue
		}
		hi, lo := utf16.EncodeRune(r)
		writeSurrogate(&b, hi)
		writeSurrogate(&b, lo)
	}
	return b.String()
}

func writeSurrogate(b *strings.Builder, u rune) {
	b.WriteByte(byte(0xE0 | (u >> 12)))
	b.WriteByte(byte(0x80 | ((u >> 6) & 0x3F)))
	b.WriteByte(byte(0x80 | (u & 0x3F)))
}

// FromSortKey converts a stored key back to UTF-8.
func FromSortKey(s string) string {
	if !strings.Contains(s, "\xED") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if hi, ok := surrogateAt(s, i); ok && hi < 0xDC00 {
			if lo, ok := surrogateAt(s, i+3); ok && lo >= 0xDC00 {
				b.WriteRune(utf16.DecodeRune(hi, lo))
				i += 6
				continue
			}
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteByte(s[i])
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// surrogateAt decodes a 3-byte CESU-8 surrogate at s[i:].
func surrogateAt(s string, i int) (rune, bool) {
	if i+3 > len(s) || s[i] != 0xED || s[i+1] < 0xA0 || s[i+1] > 0xBF || s[i+2]&0xC0 != 0x80 {
		return 0, false
	}
	return rune(s[i]&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), true
}
