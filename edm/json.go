package edm

import "unicode/utf8"

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
