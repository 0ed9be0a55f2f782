package emulator

import (
	"regexp"
	"testing"
)

// TestNewRequestID: version 4 UUIDs in the canonical form, all different.
func TestNewRequestID(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 10000 {
		id := newRequestID()
		if !re.MatchString(id) || seen[id] {
			t.Fatalf("request id %q (seen before: %v)", id, seen[id])
		}
		seen[id] = true
	}
}
