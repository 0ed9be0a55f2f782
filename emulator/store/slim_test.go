package store

import (
	"strings"
	"testing"

	"github.com/tableemu/tableemu/odata/edm"
)

// TestSlimProps: the slim form holds exactly the properties whose values
// fit, with the same values, in order, and is itself valid stored
// properties; with nothing to leave out it is the same bytes.
func TestSlimProps(t *testing.T) {
	long := strings.Repeat("x", 300)
	props := []edm.Property{
		{Name: "A", Value: edm.NewString("short")},
		{Name: "Doc", Value: edm.NewString(long)},
		{Name: "N", Value: edm.NewInt64(1 << 40)},
		{Name: "Bin", Value: edm.NewBinary([]byte(long))},
		{Name: "D", Value: edm.NewDouble(2.5)},
	}
	b := EncodeProps(props)
	var names []string
	slim, dropped, err := SlimProps(b, 64, func(n []byte) { names = append(names, string(n)) })
	if err != nil || !dropped || strings.Join(names, ",") != "Doc,Bin" {
		t.Fatalf("dropped %v %q, err %v", dropped, names, err)
	}
	got, err := DecodeProps(slim)
	if err != nil {
		t.Fatal(err)
	}
	want := []edm.Property{props[0], props[2], props[4]}
	if len(got) != len(want) {
		t.Fatalf("slim holds %d properties, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Name != want[i].Name || !edm.Equal(got[i].Value, want[i].Value) {
			t.Fatalf("property %d: %v, want %v", i, got[i], want[i])
		}
	}
	if _, ok, _ := LookupProp(slim, "Doc"); ok {
		t.Fatal("a large value stayed in the slim form")
	}
	same, dropped, err := SlimProps(b, 1000, nil)
	if err != nil || dropped || &same[0] != &b[0] {
		t.Fatalf("nothing to leave out: dropped %v, err %v, copied %v", dropped, err, &same[0] != &b[0])
	}
	for _, bad := range [][]byte{nil, {0x1c}, {0x3c, 0x17, 'A', '$'}} {
		if _, _, err := SlimProps(bad, 64, nil); err == nil {
			t.Errorf("% x: no error", bad)
		}
	}
}
