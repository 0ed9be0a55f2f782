package filtercache

import (
	"math/rand/v2"
	"testing"
)

// TestCentryLess: the cache orders entries exactly as SQLite orders the
// stored keys (bytewise), whatever their lengths and bytes, short keys
// decided by their 8-byte prefixes included; entries in an arena and
// probes alike, in chunks of every size.
func TestCentryLess(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	key := func() string {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = []byte{0, 1, 'a', 'b', 0x7f, 0xff}[r.IntN(6)]
		}
		return string(b)
	}
	arenas := []*arena{newTree().a, newTree().a, newTree().a}
	for i := 0; i < 200_000; i++ {
		apk, ark, bpk, brk := key(), key(), key(), key()
		if r.IntN(2) == 0 {
			bpk = apk
		}
		want := apk < bpk || apk == bpk && ark < brk
		a := arenas[i%len(arenas)]
		x := a.put(apk, ark, nil, 0, false)
		probe := r.IntN(2) == 0
		y := a.put(bpk, brk, []byte("slim"), 0, false)
		if probe {
			y = keyProbe(bpk, brk)
		}
		if got := a.less(x, y); got != want {
			t.Fatalf("(%q,%q) < (%q,%q): %v, want %v", apk, ark, bpk, brk, got, want)
		}
		if got, want := a.less(y, x), bpk < apk || bpk == apk && brk < ark; got != want {
			t.Fatalf("(%q,%q) < (%q,%q): %v, want %v", bpk, brk, apk, ark, got, want)
		}
		v := a.view()
		if v.pk(x) != apk || v.rk(x) != ark || v.slim(x) != "" {
			t.Fatalf("entry (%q,%q) reads back as (%q,%q,%q)", apk, ark, v.pk(x), v.rk(x), v.slim(x))
		}
		if probe {
			releaseProbe(y)
		}
	}
	n := 0
	probes.Range(func(any, any) bool { n++; return true })
	if n != 0 {
		t.Errorf("%d probes not released", n)
	}
}
