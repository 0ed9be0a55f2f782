package wire

import (
	"strings"
	"testing"

	"github.com/tableemu/tableemu/odata/edm"
)

// TestDecodeKeyPlaces: under cosmos the decoder records where the keys
// stand among the properties (edm.Entity.Keys); under storage never.
func TestDecodeKeyPlaces(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       edm.KeyPlaces
	}{
		{"first (Python)", `{"PartitionKey":"p","RowKey":"r","a":1,"b":2}`, edm.KeyPlaces{}},
		// The .NET SDK: the properties, then PartitionKey and RowKey
		// (net-cosmos TableClientQueryableLiveTests).
		{"last (.NET)", `{"a":1,"b":2,"PartitionKey":"p","RowKey":"r"}`, edm.KeyPlaces{PK: 2, RK: 2}},
		// Go's aztables with a map: its keys sorted.
		{"split (aztables)", `{"Amount":1,"PartitionKey":"p","Price":2.5,"RowKey":"r","name":"x"}`, edm.KeyPlaces{PK: 1, RK: 2}},
		{"RowKey first", `{"RowKey":"r","PartitionKey":"p","a":1}`, edm.KeyPlaces{RKFirst: true}},
		{"RowKey first, last", `{"a":1,"RowKey":"r","PartitionKey":"p"}`, edm.KeyPlaces{PK: 1, RK: 1, RKFirst: true}},
		{"RowKey before, apart", `{"RowKey":"r","a":1,"PartitionKey":"p"}`, edm.KeyPlaces{PK: 1}},
		// Annotations, odata.* members, Timestamp and nulls are not
		// properties: they count for nothing.
		{"among what is not a property", `{"odata.etag":"x","a@odata.type":"Edm.Int64","a":"1","Timestamp":"t","n":null,"PartitionKey":"p","RowKey":"r"}`,
			edm.KeyPlaces{PK: 1, RK: 1}},
		// A key the body lacks (an update's keys are the URL's) stands
		// first.
		{"no keys", `{"a":1,"b":2}`, edm.KeyPlaces{}},
		{"RowKey only", `{"a":1,"RowKey":"r"}`, edm.KeyPlaces{RK: 1}},
		{"PartitionKey null", `{"a":1,"RowKey":"r","PartitionKey":null}`, edm.KeyPlaces{RK: 1}},
	} {
		for _, shared := range []bool{false, true} {
			d, err := DecodeEntityWith([]byte(tc.body), DecodeOptions{Cosmos: true, Shared: shared})
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if d.Entity.Keys != tc.want {
				t.Errorf("%s: keys at %+v, want %+v", tc.name, d.Entity.Keys, tc.want)
			}
			if d, err := DecodeEntityWith([]byte(tc.body), DecodeOptions{Shared: shared}); err != nil || !d.Entity.Keys.KeysFirst() {
				t.Errorf("%s: storage recorded keys at %+v (%v)", tc.name, d.Entity.Keys, err)
			}
		}
	}
}

// TestAppendEntityKeyPlaces: under cosmos the keys are written where
// Entity.Keys puts them, Timestamp still last; storage writes them first
// whatever Keys holds; a projection is unchanged.
func TestAppendEntityKeyPlaces(t *testing.T) {
	e := &edm.Entity{PartitionKey: "p", RowKey: "r", Timestamp: ts, Properties: []edm.Property{
		{Name: "Amount", Value: edm.NewInt32(1)},
		{Name: "Big", Value: edm.NewInt64(7)},
		{Name: "name", Value: edm.NewString("x")},
	}}
	const (
		pk, rk   = `"PartitionKey":"p"`, `"RowKey":"r"`
		amount   = `"Amount":1`
		big      = `"Big@odata.type":"Edm.Int64","Big":"7"`
		name     = `"name":"x"`
		stamp    = `"Timestamp":"2021-09-08T18:58:49.7704959Z"`
		fullTS   = `"Timestamp@odata.type":"Edm.DateTime",` + stamp
		noneBody = amount + `,"Big":"7",` + name
	)
	for _, tc := range []struct {
		name  string
		at    edm.KeyPlaces
		level Level
		want  string
	}{
		{"first", edm.KeyPlaces{}, MinimalMetadata, `{"odata.etag":` + etagJSON + `,` + pk + `,` + rk + `,` + amount + `,` + big + `,` + name + `,` + stamp + `}`},
		{"last", edm.KeyPlaces{PK: 3, RK: 3}, MinimalMetadata, `{"odata.etag":` + etagJSON + `,` + amount + `,` + big + `,` + name + `,` + pk + `,` + rk + `,` + stamp + `}`},
		{"split", edm.KeyPlaces{PK: 1, RK: 2}, MinimalMetadata, `{"odata.etag":` + etagJSON + `,` + amount + `,` + pk + `,` + big + `,` + rk + `,` + name + `,` + stamp + `}`},
		{"RowKey first", edm.KeyPlaces{RKFirst: true}, NoMetadata, `{` + rk + `,` + pk + `,` + noneBody + `,` + stamp + `}`},
		{"past the end", edm.KeyPlaces{PK: 9, RK: 1}, NoMetadata, `{` + amount + `,` + rk + `,"Big":"7",` + name + `,` + pk + `,` + stamp + `}`},
		{"last, full", edm.KeyPlaces{PK: 3, RK: 3}, FullMetadata, ""},
	} {
		e.Keys = tc.at
		o := &Options{Level: tc.level, BaseURL: cosmosBase, Account: "a", Table: "t", Cosmos: true}
		got := string(AppendEntity(nil, e, o))
		if tc.want != "" && got != tc.want {
			t.Errorf("%s:\n%s\nwant\n%s", tc.name, got, tc.want)
		}
		if tc.level == FullMetadata {
			wantTail := `"Big":"7",` + name + `,` + pk + `,` + rk + `,` + fullTS + `}`
			if len(got) < len(wantTail) || got[len(got)-len(wantTail):] != wantTail {
				t.Errorf("%s: %s, want it to end %s", tc.name, got, wantTail)
			}
		}
		// The document (Get Entity, the insert echo) likewise.
		if doc := string(AppendEntityDocument(nil, e, o)); tc.level == MinimalMetadata && !strings.HasSuffix(doc, `,"odata.etag":`+got[len(`{"odata.etag":`):]) {
			t.Errorf("%s: document %s, entity %s", tc.name, doc, got)
		}
		// Storage: the keys first, whatever the entity holds.
		o.Cosmos = false
		storage := string(AppendEntity(nil, e, o))
		e.Keys = edm.KeyPlaces{}
		if want := string(AppendEntity(nil, e, o)); storage != want {
			t.Errorf("%s: storage wrote %s, want %s", tc.name, storage, want)
		}
		// A projection lists what it lists, as before.
		e.Keys = tc.at
		o = &Options{Level: NoMetadata, Select: []string{"name", "RowKey"}, Cosmos: true}
		if got := string(AppendEntity(nil, e, o)); got != `{`+rk+`,`+name+`}` {
			t.Errorf("%s: projection %s", tc.name, got)
		}
	}
}

// BenchmarkAppendEntityCosmosKeysLast is BenchmarkAppendEntityCosmos with
// the keys after the properties, as the .NET SDK sends them.
func BenchmarkAppendEntityCosmosKeysLast(b *testing.B) {
	e := sampleEntity()
	e.Keys = edm.KeyPlaces{PK: uint16(len(e.Properties)), RK: uint16(len(e.Properties))}
	o := &Options{Level: MinimalMetadata, Cosmos: true}
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendEntity(buf[:0], e, o)
	}
}
