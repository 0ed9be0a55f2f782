package store

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/tableemu/tableemu/odata/edm"
)

// TestEncodePropsSizes: EncodeProps writes its object header in front of a
// body whose size it learns only at the end; every header size (the body
// in 0–11, 12–255, 256–65535 bytes and beyond) round-trips, with numbers
// at their longest.
func TestEncodePropsSizes(t *testing.T) {
	for _, n := range []int{0, 1, 3, 200, 250, 260, 65_000, 65_600, 70_000} {
		var props []edm.Property
		if n > 0 {
			props = append(props, edm.Property{Name: "S", Value: edm.NewString(strings.Repeat("x", n))})
		}
		if n > 1 {
			props = append(props,
				edm.Property{Name: "D", Value: edm.NewDouble(-1.2345678901234567e-308)},
				edm.Property{Name: "L", Value: edm.NewInt64(math.MinInt64)},
				edm.Property{Name: "B", Value: edm.NewBinary([]byte{0, 255})},
				edm.Property{Name: "T", Value: edm.NewBoolean(true)})
		}
		b := EncodeProps(props)
		// Into memory of exactly the bound, after other data: the same
		// bytes, inside that memory, capped at their end so that an
		// append to them cannot write over what follows.
		mem := make([]byte, 0, 7+PropsBound(props))
		mem = append(mem, "before:"...)
		in := EncodePropsInto(mem[7:7:cap(mem)], props)
		inside := false
		for i, full := 7, mem[:cap(mem)]; i < len(full) && len(in) > 0; i++ {
			inside = inside || &full[i] == &in[0]
		}
		if string(in) != string(b) || cap(in) != len(in) || !inside {
			t.Errorf("%d: EncodePropsInto gave %d bytes (cap %d, in the memory given: %v), want EncodeProps' %d there", n, len(in), cap(in), inside, len(b))
		}
		if string(mem) != "before:" {
			t.Errorf("%d: EncodePropsInto wrote before its memory: %q", n, mem)
		}
		// Too little memory, or none: the same bytes, in new memory.
		for _, short := range [][]byte{nil, make([]byte, 0, propsHead)} {
			if got := EncodePropsInto(short, props); string(got) != string(b) {
				t.Errorf("%d: EncodePropsInto into %d bytes gave %d bytes, want EncodeProps' %d", n, cap(short), len(got), len(b))
			}
		}
		got, err := DecodeProps(b)
		if err != nil {
			t.Fatalf("%d: decode: %v", n, err)
		}
		if len(got) == 0 {
			got = nil
		}
		if !reflect.DeepEqual(got, props) {
			t.Errorf("%d: round trip gave %v, want %v", n, got, props)
		}
	}
}
