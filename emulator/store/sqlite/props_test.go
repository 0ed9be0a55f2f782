package sqlite

import (
	"math"
	"strings"
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata/edm"
)

// TestPropsAreSQLiteJSONB checks the Go-written JSONB against SQLite
// itself: json_valid in strict JSONB mode accepts it, json() renders the
// expected JSON, and json_extract reads each typed key as the SQL value
// the filter compiler relies on.
func TestPropsAreSQLiteJSONB(t *testing.T) {
	s := open(t)
	props := []edm.Property{
		{Name: "S", Value: edm.NewString(`quote " backslash \ nl ` + "\n tab \t ctrl \x01 😀 " + strings.Repeat("long", 100))},
		{Name: "E", Value: edm.NewString("")},
		{Name: "I", Value: edm.NewInt32(-7)},
		{Name: "L", Value: edm.NewInt64(math.MinInt64)},
		{Name: "D", Value: edm.NewDouble(2.5)},
		{Name: "W", Value: edm.NewDouble(3)},
		{Name: "Inf", Value: edm.NewDouble(math.Inf(1))},
		{Name: "NInf", Value: edm.NewDouble(math.Inf(-1))},
		{Name: "NaN", Value: edm.NewDouble(math.NaN())},
		{Name: "T", Value: edm.NewBoolean(true)},
		{Name: "F", Value: edm.NewBoolean(false)},
		{Name: "DT", Value: edm.NewDateTime(edm.MaxDateTime)},
		{Name: "G", Value: edm.Value{T: edm.Guid, S: "c9da6455-213d-42c9-9a79-3e9149a57833"}},
		{Name: "B", Value: edm.NewBinary([]byte{0, 0xff})},
		{Name: "Ünï_名", Value: edm.NewInt32(1)},
	}
	blob := store.EncodeProps(props)
	var valid int
	var text string
	err := s.testRow(`SELECT json_valid(?, 8), json(?)`, blob, blob).Scan(&valid, &text)
	if err != nil {
		t.Fatal(err)
	}
	if valid != 1 {
		t.Fatalf("SQLite does not accept the JSONB: %s", text)
	}
	want := `{"S$s":"quote \" backslash \\ nl \n tab \t ctrl \u0001 😀 ` + strings.Repeat("long", 100) + `","E$s":"","I$i":-7,"L$l":-9223372036854775808,"D$d":2.5,"W$d":3.0,` +
		`"Inf$d":9e999,"NInf$d":-9e999,"NaN$d":"NaN","T$b":true,"F$b":false,"DT$t":3155378975999999999,` +
		`"G$g":"c9da6455-213d-42c9-9a79-3e9149a57833","B$x":"00ff","Ünï_名$i":1}`
	if text != want {
		t.Fatalf("json():\n%s\nwant\n%s", text, want)
	}
	for _, tc := range []struct {
		key  string
		want any
	}{
		{"I$i", int64(-7)}, {"L$l", int64(math.MinInt64)}, {"D$d", 2.5}, {"W$d", 3.0},
		{"Inf$d", math.Inf(1)}, {"T$b", int64(1)}, {"F$b", int64(0)}, {"E$s", ""}, {"B$x", "00ff"},
		{"Ünï_名$i", int64(1)}, {"I$l", nil},
	} {
		var got any
		if err := s.testRow(`SELECT json_extract(?, ?)`, blob, `$."`+tc.key+`"`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("json_extract %s = %#v, want %#v", tc.key, got, tc.want)
		}
	}
	back, err := store.DecodeProps(blob)
	if err != nil {
		t.Fatal(err)
	}
	for i := range props {
		a, b := props[i].Value, back[i].Value
		same := props[i].Name == back[i].Name && (edm.Equal(a, b) || a.T == edm.Double && math.IsNaN(a.F) && math.IsNaN(b.F))
		if !same {
			t.Errorf("%s: %v came back as %v", props[i].Name, a, b)
		}
	}
	// Large payloads use the 2- and 4-byte size forms.
	big := []edm.Property{{Name: "Big", Value: edm.NewString(strings.Repeat("z", 70000))}}
	blob = store.EncodeProps(big)
	if err := s.testRow(`SELECT json_valid(?, 8)`, blob).Scan(&valid); err != nil || valid != 1 {
		t.Fatalf("large JSONB: valid=%d err=%v", valid, err)
	}
	if back, err := store.DecodeProps(blob); err != nil || back[0].Value.S != big[0].Value.S {
		t.Fatalf("large round trip: %v", err)
	}
}

// TestKeyMarksAreSQLiteJSONB: the stored form that keeps where the keys
// stand (store.EncodeEntityProps, under the cosmos profile) is JSONB
// SQLite accepts, its markers are null members, and json_extract reads
// every real property as it does without them, so that compiled filters
// and automatic indexes see the same values.
func TestKeyMarksAreSQLiteJSONB(t *testing.T) {
	s := open(t)
	props := []edm.Property{
		{Name: "Amount", Value: edm.NewInt32(3)},
		{Name: "Price", Value: edm.NewDouble(9.5)},
		{Name: "name", Value: edm.NewString("x")},
	}
	plain := store.EncodeProps(props)
	for _, tc := range []struct {
		at   edm.KeyPlaces
		want string
	}{
		{edm.KeyPlaces{PK: 3, RK: 3}, `{"Amount$i":3,"Price$d":9.5,"name$s":"x","$p":null,"$r":null}`},
		{edm.KeyPlaces{PK: 1, RK: 2}, `{"Amount$i":3,"$p":null,"Price$d":9.5,"$r":null,"name$s":"x"}`},
		{edm.KeyPlaces{RKFirst: true}, `{"$r":null,"$p":null,"Amount$i":3,"Price$d":9.5,"name$s":"x"}`},
	} {
		blob := store.EncodeEntityProps(&edm.Entity{Properties: props, Keys: tc.at})
		var valid int
		var text string
		if err := s.testRow(`SELECT json_valid(?, 8), json(?)`, blob, blob).Scan(&valid, &text); err != nil {
			t.Fatal(err)
		}
		if valid != 1 || text != tc.want {
			t.Errorf("%+v: json_valid %d, json() %s, want %s", tc.at, valid, text, tc.want)
		}
		for _, key := range []string{"Amount$i", "Price$d", "name$s", "Price$i", "Missing$s"} {
			var got, want any
			if err := s.testRow(`SELECT json_extract(?, ?), json_extract(?, ?)`, blob, `$."`+key+`"`, plain, `$."`+key+`"`).Scan(&got, &want); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%+v: json_extract %s = %#v, without markers %#v", tc.at, key, got, want)
			}
		}
	}
}
