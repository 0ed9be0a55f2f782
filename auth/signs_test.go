package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"testing"
)

// TestSignsReusesKeyedStates: signs keeps HMAC states per key between
// calls; reused states must give the same answers as fresh ones, for each
// key and string, and never carry one key's state to another.
func TestSignsReusesKeyedStates(t *testing.T) {
	k1, k2 := []byte("first key"), []byte("second key, longer than the sixty-four bytes of a SHA-256 block.....")
	mac := func(key []byte, s string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(s))
		return h.Sum(nil)
	}
	for round := 0; round < 3; round++ {
		for _, tc := range []struct {
			keys [][]byte
			mac  []byte
			want bool
		}{
			{[][]byte{k1}, mac(k1, "b"), true},
			{[][]byte{k1, k2}, mac(k2, "a"), true},
			{[][]byte{k2, k1}, mac(k1, "b"), true},
			{[][]byte{k1}, mac(k2, "a"), false},
			{[][]byte{k2}, mac(k1, "b"), false},
			{[][]byte{k1, k2}, mac(k1, "c"), false},
		} {
			if got := signs(tc.keys, []string{"a", "b"}, tc.mac); got != tc.want {
				t.Fatalf("round %d: signs(%q, a|b) = %v, want %v", round, tc.keys, got, tc.want)
			}
		}
	}
}
