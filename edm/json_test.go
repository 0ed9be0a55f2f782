package edm

import (
	"encoding/json"
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
