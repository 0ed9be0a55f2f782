package wire

import (
	"math"
	"testing"

	"github.com/tableemu/tableemu/odata/edm"
)

// TestLines: the JSON Lines export's form (Options.Lines) has no
// odata.etag and annotates whole Doubles, and decoding reads the
// Timestamp back for an import (Decoded.Timestamp).
func TestLines(t *testing.T) {
	e := &edm.Entity{PartitionKey: "p", RowKey: "r", Timestamp: 638_000_000_000_000_001,
		Properties: []edm.Property{
			{Name: "W", Value: edm.NewDouble(2)}, {Name: "Z", Value: edm.NewDouble(math.Copysign(0, -1))},
			{Name: "F", Value: edm.NewDouble(0.5)}, {Name: "I", Value: edm.NewInt32(2)},
		}}
	got := string(AppendEntity(nil, e, &Options{Level: MinimalMetadata, Lines: true}))
	want := `{"PartitionKey":"p","RowKey":"r","Timestamp":"2022-09-28T22:13:20.0000001Z","W@odata.type":"Edm.Double","W":2.0,` +
		`"Z@odata.type":"Edm.Double","Z":-0.0,"F":0.5,"I":2}`
	if got != want {
		t.Errorf("Lines:\n%s\nwant\n%s", got, want)
	}
	d, err := DecodeEntity([]byte(got))
	if err != nil || !d.HasTimestamp || d.Timestamp != "2022-09-28T22:13:20.0000001Z" || d.Entity.Timestamp != 0 {
		t.Errorf("decoded %+v %v", d, err)
	}
	if d.Entity.Properties[0].Value.T != edm.Double || d.Entity.Properties[3].Value.T != edm.Int32 {
		t.Errorf("types %+v", d.Entity.Properties)
	}
	for body, has := range map[string]bool{`{"Timestamp":null}`: false, `{}`: false, `{"Timestamp":5}`: true} {
		d, err := DecodeEntity([]byte(body))
		if err != nil || d.HasTimestamp != has || d.Timestamp != "" {
			t.Errorf("%s: %+v %v", body, d, err)
		}
	}
	// Without Lines, minimal metadata is the service's: an ETag, and
	// whole Doubles as bare numbers.
	if got := string(AppendEntity(nil, e, &Options{Level: MinimalMetadata})); got[:14] != `{"odata.etag":` {
		t.Errorf("minimal metadata: %s", got)
	}
}
