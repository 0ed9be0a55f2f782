package edm

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestAppendJSONString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{`"\`, `"\"\\"`},
		{"\n\r\t\b\f", `"\n\r\t\b\f"`},
		{"\x00\x01\x1f\x7f", `"\u0000\u0001\u001f` + "\x7f" + `"`},
		{"<a>&b", `"<a>&b"`},
		{"\u2028\u2029", "\"\u2028\u2029\""},
		{"é😀ꀕ", `"é😀ꀕ"`},
		{"a\xffb", `"a\ufffdb"`},
		{"\xe2\x82", `"\ufffd\ufffd"`},
		{"/", `"/"`},
	}
	for _, tt := range tests {
		got := string(AppendJSONString([]byte("x"), tt.in))
		if got != "x"+tt.want {
			t.Errorf("AppendJSONString(%+q) = %s, want %s", tt.in, got[1:], tt.want)
		}
		var back string
		if err := json.Unmarshal([]byte(got[1:]), &back); err != nil {
			t.Errorf("AppendJSONString(%+q) is not JSON: %v", tt.in, err)
		}
	}
}

func TestPlainASCII8(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 8; pos++ {
			buf := []byte("abcdefgh")
			buf[pos] = byte(c)
			want := c >= 0x20 && c < 0x80 && c != '"' && c != '\\'
			w := uint64(buf[0]) | uint64(buf[1])<<8 | uint64(buf[2])<<16 | uint64(buf[3])<<24 |
				uint64(buf[4])<<32 | uint64(buf[5])<<40 | uint64(buf[6])<<48 | uint64(buf[7])<<56
			if got := plainASCII8(w); got != want {
				t.Fatalf("byte %#x at %d: %v, want %v", c, pos, got, want)
			}
		}
	}
}

func BenchmarkAppendJSONString(b *testing.B) {
	s := strings.Repeat("plain ascii text of a typical entity ", 25)
	buf := make([]byte, 0, 2048)
	b.SetBytes(int64(len(s)))
	for i := 0; i < b.N; i++ {
		buf = AppendJSONString(buf[:0], s)
	}
}

// TestAppendJSONStringLong puts each kind of byte that needs attention at
// every position of a 70-byte string, so that the 32- and 8-byte skips and
// the byte loop all meet it.
func TestAppendJSONStringLong(t *testing.T) {
	for _, special := range []string{`"`, `\`, "\n", "\x01", "é", "\xff"} {
		for pos := 0; pos < 70; pos++ {
			s := strings.Repeat("a", pos) + special + strings.Repeat("b", 70-pos)
			got := AppendJSONString(nil, s)
			var back string
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatalf("%+q at %d: %s is not JSON: %v", special, pos, got, err)
			}
			want := strings.ToValidUTF8(s, "\ufffd")
			if back != want {
				t.Fatalf("%+q at %d: round trip %+q, want %+q", special, pos, back, want)
			}
		}
	}
}

// TestJSONPlain checks JSONPlain against what AppendJSONStringBody does.
func TestJSONPlain(t *testing.T) {
	for _, s := range []string{"", "plain", strings.Repeat("x", 100), "é😀ꀕ", strings.Repeat("ab", 9) + "é",
		`a"b`, `a\b`, "a\nb", "\x7f", "a\xffb", strings.Repeat("x", 20) + "é\x01", strings.Repeat("y", 17) + "\xe2\x82", "<&>"} {
		want := string(AppendJSONStringBody(nil, s)) == s
		if got := JSONPlain(s); got != want {
			t.Errorf("JSONPlain(%+q) = %v, want %v", s, got, want)
		}
	}
}

func TestPlainJSONPrefix(t *testing.T) {
	// A byte needing attention at every position of runs longer than the
	// eight-byte steps: the prefix ends exactly there.
	for n := 0; n < 40; n++ {
		for _, c := range []byte{'"', '\\', 0, 0x1f, 0x7f + 1, 0xff} {
			for at := 0; at <= n; at++ {
				b := []byte(strings.Repeat("x", n))
				want := n
				if at < n {
					b[at], want = c, at
				}
				if got := PlainJSONPrefix(b); got != want {
					t.Fatalf("PlainJSONPrefix(%q) = %d, want %d", b, got, want)
				}
			}
		}
	}
	if got := PlainJSONPrefix([]byte(" ~\x7f")); got != 3 {
		t.Fatalf("space, tilde and DEL are plain: %d", got)
	}
}
