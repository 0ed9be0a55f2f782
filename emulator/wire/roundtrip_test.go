package wire

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tableemu/tableemu/odata/edm"
)

// sameEntity compares keys and properties (names, order, types and values,
// Doubles bitwise with all NaNs equal).
func sameEntity(a, b *edm.Entity) error {
	if a.PartitionKey != b.PartitionKey || a.RowKey != b.RowKey {
		return fmt.Errorf("keys %q/%q vs %q/%q", a.PartitionKey, a.RowKey, b.PartitionKey, b.RowKey)
	}
	if len(a.Properties) != len(b.Properties) {
		return fmt.Errorf("%d properties vs %d", len(a.Properties), len(b.Properties))
	}
	for i := range a.Properties {
		pa, pb := a.Properties[i], b.Properties[i]
		if pa.Name != pb.Name || !sameValue(pa.Value, pb.Value) {
			return fmt.Errorf("property %d: %s=%#v vs %s=%#v", i, pa.Name, pa.Value, pb.Name, pb.Value)
		}
		if pa.Value.T == edm.Binary && !bytes.Equal(pa.Value.B, pb.Value.B) {
			return fmt.Errorf("binary %s differs", pa.Name)
		}
	}
	return nil
}

// reencode encodes e at each level that keeps types, decodes the result
// and compares.
func reencode(t testing.TB, e *edm.Entity) {
	t.Helper()
	for _, o := range []*Options{
		{Level: MinimalMetadata},
		{Level: FullMetadata, BaseURL: "http://127.0.0.1:10002/devstoreaccount1", Account: "devstoreaccount1", Table: "t"},
	} {
		out := AppendEntityDocument(nil, e, o)
		d, err := DecodeEntity(out)
		if err != nil {
			t.Fatalf("%v: decoding our own output %s: %v", o.Level, out, err)
		}
		if err := sameEntity(e, &d.Entity); err != nil {
			t.Fatalf("%v: round trip changed the entity: %v\noutput %s", o.Level, err, out)
		}
		list := AppendEntity(nil, e, o)
		if d2, err := DecodeEntity(list); err != nil || sameEntity(e, &d2.Entity) != nil {
			t.Fatalf("%v: AppendEntity output does not round trip: %v", o.Level, err)
		}
	}
}

func TestRoundTripEdges(t *testing.T) {
	allBytes := make([]byte, 256)
	for i := range allBytes {
		allBytes[i] = byte(i)
	}
	props := []struct {
		json string
		want edm.Value
	}{
		{`"I1":-2147483648`, edm.NewInt32(math.MinInt32)},
		{`"I2":2147483647`, edm.NewInt32(math.MaxInt32)},
		{`"I3":0`, edm.NewInt32(0)},
		{`"L1@odata.type":"Edm.Int64","L1":"-9223372036854775808"`, edm.NewInt64(math.MinInt64)},
		{`"L2@odata.type":"Edm.Int64","L2":"9223372036854775807"`, edm.NewInt64(math.MaxInt64)},
		{`"L3@odata.type":"Edm.Int64","L3":"0"`, edm.NewInt64(0)},
		{`"D1@odata.type":"Edm.Double","D1":"NaN"`, edm.NewDouble(math.NaN())},
		{`"D2@odata.type":"Edm.Double","D2":"Infinity"`, edm.NewDouble(math.Inf(1))},
		{`"D3@odata.type":"Edm.Double","D3":"-Infinity"`, edm.NewDouble(math.Inf(-1))},
		{`"D4":-0.0`, edm.NewDouble(math.Copysign(0, -1))},
		{`"D5":5.0`, edm.NewDouble(5)},
		{`"D6":1e308`, edm.NewDouble(1e308)},
		{`"D7":4.9e-324`, edm.NewDouble(4.9e-324)},
		{`"D8":1.7976931348623157e308`, edm.NewDouble(math.MaxFloat64)},
		{`"D9":2147483648`, edm.NewDouble(2147483648)},
		{`"D10":1e21`, edm.NewDouble(1e21)},
		{`"D11":0.1`, edm.NewDouble(0.1)},
		{`"D12":-1e-7`, edm.NewDouble(-1e-7)},
		{`"T1@odata.type":"Edm.DateTime","T1":"1601-01-01T00:00:00Z"`, edm.NewDateTime(edm.MinDateTime)},
		{`"T2@odata.type":"Edm.DateTime","T2":"9999-12-31T23:59:59.9999999Z"`, edm.NewDateTime(edm.MaxDateTime)},
		{`"T3@odata.type":"Edm.DateTime","T3":"2000-01-01T00:00:00.0000001Z"`, dt("2000-01-01T00:00:00.0000001Z")},
		{`"G@odata.type":"Edm.Guid","G":"ABCDEF01-2345-6789-ABCD-EF0123456789"`, guid("abcdef01-2345-6789-abcd-ef0123456789")},
		{`"B1@odata.type":"Edm.Binary","B1":""`, edm.NewBinary([]byte{})},
		{`"B2@odata.type":"Edm.Binary","B2":"` + b64(allBytes) + `"`, edm.NewBinary(allBytes)},
		{`"S1":""`, edm.NewString("")},
		{`"S2":"\"\\\/\b\f\n\r\t\u0000\u001f\u007f\u2028\u2029<>&'"`, edm.NewString("\"\\/\b\f\n\r\t\x00\x1f\x7f\u2028\u2029<>&'")},
		{`"S3":"\uD83D\uDE00 😀 \uDBFF\uDFFF \uFFFF \uE000 ꀕ"`, edm.NewString("😀 😀 \U0010FFFF \uffff \ue000 ꀕ")},
		{`"S4":"` + strings.Repeat("é", 1000) + `"`, edm.NewString(strings.Repeat("é", 1000))},
		{`"F":false`, edm.NewBoolean(false)},
		{`"Tr":true`, edm.NewBoolean(true)},
		{`"ꀕ":"Unicode"`, edm.NewString("Unicode")},
	}
	parts := make([]string, len(props))
	for i, p := range props {
		parts[i] = p.json
	}
	in := `{"PartitionKey":"pk 'quoted' \"x\" 😀","RowKey":"",` + strings.Join(parts, ",") + `}`
	d, err := DecodeEntity([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Entity.Properties) != len(props) {
		t.Fatalf("decoded %d properties, want %d", len(d.Entity.Properties), len(props))
	}
	for i, p := range props {
		if got := d.Entity.Properties[i].Value; !sameValue(got, p.want) {
			t.Errorf("%s decoded as %#v, want %#v", p.json, got, p.want)
		}
	}
	if err := ValidateEntity(&d.Entity); err != nil {
		t.Errorf("ValidateEntity: %v", err)
	}
	d.Entity.Timestamp = ts
	reencode(t, &d.Entity)
}

func b64(b []byte) string {
	var buf []byte
	e := &edm.Entity{Properties: []edm.Property{{Name: "x", Value: edm.NewBinary(b)}}}
	buf = AppendEntity(buf, e, &Options{Level: NoMetadata})
	s := string(buf)
	return s[strings.Index(s, `"x":"`)+5 : len(s)-2]
}
