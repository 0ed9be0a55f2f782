package store

import (
	"slices"
	"strings"
	"testing"

	"github.com/tableemu/tableemu/odata/edm"
)

var placedProps = []edm.Property{
	{Name: "Amount", Value: edm.NewInt32(3)},
	{Name: "Price", Value: edm.NewDouble(9.5)},
	{Name: "name", Value: edm.NewString(strings.Repeat("long", 100))},
}

// TestEntityPropsKeyPlaces: where the keys stand round-trips through the
// stored form (keyplaces.go); keys first stores the bytes EncodeProps
// always stored; every other reader skips the markers.
func TestEntityPropsKeyPlaces(t *testing.T) {
	plain := EncodeProps(placedProps)
	for _, tc := range []struct {
		name string
		at   edm.KeyPlaces
		json string // the members' order, keys as markers
	}{
		{"first", edm.KeyPlaces{}, "Amount Price name"},
		{"last (.NET)", edm.KeyPlaces{PK: 3, RK: 3}, "Amount Price name $p $r"},
		{"split by a property (aztables' sorted map)", edm.KeyPlaces{PK: 1, RK: 2}, "Amount $p Price $r name"},
		{"RowKey first", edm.KeyPlaces{RKFirst: true}, "$r $p Amount Price name"},
		{"RowKey first, at the end", edm.KeyPlaces{PK: 3, RK: 3, RKFirst: true}, "Amount Price name $r $p"},
		{"PartitionKey first, RowKey after one", edm.KeyPlaces{RK: 1}, "$p Amount $r Price name"},
		{"RowKey before PartitionKey, apart", edm.KeyPlaces{PK: 2, RK: 0}, "$r Amount Price $p name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &edm.Entity{Properties: placedProps, Keys: tc.at}
			b := EncodeEntityProps(e)
			if tc.at.KeysFirst() && string(b) != string(plain) {
				t.Fatalf("keys first: %x, want EncodeProps' %x", b, plain)
			}
			if got := memberOrder(t, b); got != tc.json {
				t.Errorf("members %q, want %q", got, tc.json)
			}
			if len(b) > EntityPropsBound(e) {
				t.Errorf("%d bytes, past the bound %d", len(b), EntityPropsBound(e))
			}
			// Into short memory: the same bytes.
			if got := EncodeEntityPropsInto(nil, e); string(got) != string(b) {
				t.Errorf("EncodeEntityPropsInto(nil) = %x, want %x", got, b)
			}
			for _, alias := range []bool{false, true} {
				back := &edm.Entity{Keys: edm.KeyPlaces{PK: 9}} // overwritten
				if err := DecodeEntityProps(back, b, alias); err != nil {
					t.Fatal(err)
				}
				if back.Keys != tc.at || !samePropValues(back.Properties, placedProps) {
					t.Errorf("alias %v: decoded %+v %v, want %+v", alias, back.Keys, back.Properties, tc.at)
				}
			}
			if got, err := DecodeProps(b); err != nil || !samePropValues(got, placedProps) {
				t.Errorf("DecodeProps: %v %v", got, err)
			}
			for _, p := range placedProps {
				if v, ok, err := LookupProp(b, p.Name); err != nil || !ok || !edm.Equal(v, p.Value) {
					t.Errorf("LookupProp(%s) = %v %v %v", p.Name, v, ok, err)
				}
			}
			for _, name := range []string{"p", "r", "PartitionKey", "RowKey"} {
				if _, ok, err := LookupProp(b, name); ok || err != nil {
					t.Errorf("LookupProp(%s) found %v, err %v: a marker read as a property", name, ok, err)
				}
			}
			// The filter cache's slim form leaves out the long value and
			// keeps the markers (a null is never long); it reads the slim
			// form with LookupProp, and an entity from it only when
			// nothing was left out (filtercache's scan).
			slim, any, err := SlimProps(b, 16, func([]byte) {})
			if err != nil || !any {
				t.Fatalf("SlimProps: %v %v", any, err)
			}
			want := strings.Join(slices.DeleteFunc(strings.Fields(tc.json), func(m string) bool { return m == "name" }), " ")
			if got := memberOrder(t, slim); got != want {
				t.Errorf("slim members %q, want %q", got, want)
			}
			if v, ok, err := LookupProp(slim, "Price"); err != nil || !ok || v.F != 9.5 {
				t.Errorf("LookupProp(slim, Price) = %v %v %v", v, ok, err)
			}
		})
	}
}

// TestKeyMarksDamaged: a marker with a value, or a key that is neither a
// property's nor a marker, is refused as damage, not skipped.
func TestKeyMarksDamaged(t *testing.T) {
	for _, body := range [][]byte{
		appendElem(appendElem(nil, jbText, "$p"), jbText, "x"), // "$p": "x"
		append(appendElem(nil, jbText, "$q"), jbNull),          // "$q": null
		append(appendElem(nil, jbText, "p"), jbNull),           // "p": null
	} {
		b := appendHeader(nil, jbObject, len(body))
		b = append(b, body...)
		if _, err := DecodeProps(b); err == nil {
			t.Errorf("%q decoded", b)
		}
		if err := DecodeEntityProps(&edm.Entity{}, b, true); err == nil {
			t.Errorf("%q decoded as an entity", b)
		}
	}
}

// TestKeyPlacesAt: a count past the last property means after it.
func TestKeyPlacesAt(t *testing.T) {
	at := edm.KeyPlaces{PK: 7, RK: 7, RKFirst: true}
	if a, b := at.At(2, 2); a != "RowKey" || b != "PartitionKey" {
		t.Errorf("At(2, 2) = %q %q", a, b)
	}
	if a, b := at.At(1, 2); a != "" || b != "" {
		t.Errorf("At(1, 2) = %q %q", a, b)
	}
}

// memberOrder lists a stored object's members: a property's name (its
// key without the type suffix) or a marker's key.
func memberOrder(t *testing.T, b []byte) string {
	t.Helper()
	_, i, n, ok := jbHead(b, 0)
	if !ok || i+n != len(b) {
		t.Fatalf("not an object: %x", b)
	}
	var names []string
	for i < len(b) {
		_, ks, kn, _ := jbHead(b, i)
		_, vs, vn, _ := jbHead(b, ks+kn)
		k := string(b[ks : ks+kn])
		if len(k) > 2 {
			k = k[:len(k)-2]
		}
		names = append(names, k)
		i = vs + vn
	}
	return strings.Join(names, " ")
}

func samePropValues(got, want []edm.Property) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].Name != want[i].Name || !edm.Equal(got[i].Value, want[i].Value) {
			return false
		}
	}
	return true
}
