package main

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/tableemu/tableemu/emulator"
)

// TestMemoryLimit: the server sets the Go memory limit to its cache's
// budget plus the Go allowance — 640 MiB by default, 192 MiB with
// --cacheSize 64 — and sets none without a cache (--cacheSize 0, a
// PostgreSQL database) or when the user set GOMEMLIMIT.
func TestMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	none := func(string) string { return "" }
	for _, tc := range []struct {
		args  []string
		env   func(string) string
		limit int64 // MiB; 0: left as it was
	}{
		{nil, none, 640},
		{[]string{"--cacheSize", "64"}, none, 192},
		{[]string{"--cacheSize", "0"}, none, 0},
		{[]string{"--database", "postgres://u@127.0.0.1:1/db"}, none, 0},
		{nil, func(k string) string {
			if k == "GOMEMLIMIT" {
				return "3GiB"
			}
			return ""
		}, 0},
	} {
		cfg, err := emulator.LoadConfig(tc.args, none, nil)
		if err != nil {
			t.Fatal(err)
		}
		debug.SetMemoryLimit(math.MaxInt64)
		setMemoryLimit(cfg, tc.env)
		got := debug.SetMemoryLimit(-1)
		want := int64(math.MaxInt64)
		if tc.limit > 0 {
			want = tc.limit << 20
		}
		if got != want {
			t.Errorf("%v: memory limit %d, want %d", tc.args, got, want)
		}
	}
}
