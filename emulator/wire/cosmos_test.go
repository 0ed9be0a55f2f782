package wire

import (
	"encoding/json"
	"testing"

	"github.com/tableemu/tableemu/odata/edm"
)

// The form of Azure Cosmos DB for Table (Options.Cosmos; docs/cosmos.md),
// as its recordings show it (conformance/testdata/recordings/python-cosmos,
// net-cosmos): Timestamp last; in full metadata odata.type, odata.id,
// odata.editLink, odata.metadata, odata.etag; a single entity's
// odata.metadata naming the table in the path, without $select; DateTime
// with seven digits.

// cosmosEntity is test_get_entity_full_metadata's entity, in part: its
// keys, an Int32, a DateTime and an Int64, in the order sent.
func cosmosEntity() *edm.Entity {
	return &edm.Entity{PartitionKey: "pka2452feb", RowKey: "rka2452feb", Timestamp: ts, Properties: []edm.Property{
		{Name: "age", Value: edm.NewInt32(39)},
		{Name: "Birthday", Value: dt("1973-10-04T00:00:00Z")},
		{Name: "ratio", Value: edm.NewDouble(3.1)},
		{Name: "large", Value: edm.NewInt64(933311100)},
	}}
}

const cosmosBase = "https://127.0.0.1:8902/fakecosmosaccount"

func TestAppendEntityCosmosLevels(t *testing.T) {
	o := Options{BaseURL: cosmosBase, Account: "fakecosmosaccount", Table: "uttablea2452feb", Cosmos: true}
	link := `uttablea2452feb(PartitionKey='pka2452feb',RowKey='rka2452feb')`
	props := `"age":39,"Birthday@odata.type":"Edm.DateTime","Birthday":"1973-10-04T00:00:00.0000000Z",` +
		`"ratio":3.1,"large@odata.type":"Edm.Int64","large":"933311100"`
	stamp := `"Timestamp":"2021-09-08T18:58:49.7704959Z"`
	for _, tt := range []struct {
		name     string
		level    Level
		document bool
		want     string
	}{
		{"minimal document", MinimalMetadata, true,
			`{"odata.metadata":"` + cosmosBase + `/uttablea2452feb/$metadata#uttablea2452feb/@Element","odata.etag":` + etagJSON +
				`,"PartitionKey":"pka2452feb","RowKey":"rka2452feb",` + props + `,` + stamp + `}`},
		{"minimal in value", MinimalMetadata, false,
			`{"odata.etag":` + etagJSON + `,"PartitionKey":"pka2452feb","RowKey":"rka2452feb",` + props + `,` + stamp + `}`},
		{"full document", FullMetadata, true,
			`{"odata.type":"fakecosmosaccount.uttablea2452feb","odata.id":"` + cosmosBase + `/` + link + `",` +
				`"odata.editLink":"` + link + `",` +
				`"odata.metadata":"` + cosmosBase + `/uttablea2452feb/$metadata#uttablea2452feb/@Element","odata.etag":` + etagJSON +
				`,"PartitionKey":"pka2452feb","RowKey":"rka2452feb",` + props +
				`,"Timestamp@odata.type":"Edm.DateTime",` + stamp + `}`},
		// test_query_entities_full_metadata: the document's order
		// without odata.metadata.
		{"full in value", FullMetadata, false,
			`{"odata.type":"fakecosmosaccount.uttablea2452feb","odata.id":"` + cosmosBase + `/` + link + `",` +
				`"odata.editLink":"` + link + `","odata.etag":` + etagJSON +
				`,"PartitionKey":"pka2452feb","RowKey":"rka2452feb",` + props +
				`,"Timestamp@odata.type":"Edm.DateTime",` + stamp + `}`},
		{"none document", NoMetadata, true,
			`{"PartitionKey":"pka2452feb","RowKey":"rka2452feb","age":39,"Birthday":"1973-10-04T00:00:00.0000000Z",` +
				`"ratio":3.1,"large":"933311100",` + stamp + `}`},
	} {
		o.Level = tt.level
		var got string
		if tt.document {
			got = string(AppendEntityDocument(nil, cosmosEntity(), &o))
		} else {
			got = string(AppendEntity(nil, cosmosEntity(), &o))
		}
		if got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%s: invalid JSON", tt.name)
		}
	}
}

// test_get_entity_with_select (python-cosmos): $select=age,ratio answers
// odata.metadata without the $select, odata.etag, age, ratio. A listed
// Timestamp (not in the recordings) comes last, as in a whole entity.
func TestAppendEntityCosmosSelect(t *testing.T) {
	o := &Options{BaseURL: cosmosBase, Table: "uttable426e2f33", Select: []string{"age", "ratio"}, SelectEcho: "age,ratio", Cosmos: true}
	want := `{"odata.metadata":"` + cosmosBase + `/uttable426e2f33/$metadata#uttable426e2f33/@Element","odata.etag":` + etagJSON +
		`,"age":39,"ratio":3.1}`
	if got := string(AppendEntityDocument(nil, cosmosEntity(), o)); got != want {
		t.Errorf("select:\n got %s\nwant %s", got, want)
	}
	o = &Options{Level: NoMetadata, Select: []string{"Timestamp", "age", "RowKey", "Missing"}, Cosmos: true}
	want = `{"RowKey":"rka2452feb","age":39,"Missing":null,"Timestamp":"2021-09-08T18:58:49.7704959Z"}`
	if got := string(AppendEntity(nil, cosmosEntity(), o)); got != want {
		t.Errorf("select with Timestamp:\n got %s\nwant %s", got, want)
	}
}

// Seven digits whatever the value: a whole second, a millisecond
// (test_datetime_milliseconds), the earliest instant and the latest.
func TestAppendEntityCosmosDateTime(t *testing.T) {
	for in, want := range map[string]string{
		"2020-01-01T01:02:00Z":         "2020-01-01T01:02:00.0000000Z",
		"2011-11-04T00:05:23.283Z":     "2011-11-04T00:05:23.2830000Z",
		"2026-03-30T06:13:29.39274Z":   "2026-03-30T06:13:29.3927400Z",
		"1601-01-01T00:00:00Z":         "1601-01-01T00:00:00.0000000Z",
		"9999-12-31T23:59:59.9999999Z": "9999-12-31T23:59:59.9999999Z",
	} {
		e := &edm.Entity{Properties: []edm.Property{{Name: "d", Value: dt(in)}}}
		o := &Options{Level: NoMetadata, Select: []string{"d"}}
		o.Cosmos = true
		if got := string(AppendEntity(nil, e, o)); got != `{"d":"`+want+`"}` {
			t.Errorf("cosmos %s = %s, want %s", in, got, want)
		}
		o.Cosmos = false
		if got, short := string(AppendEntity(nil, e, o)), string(edm.AppendDateTime(nil, e.Properties[0].Value.N)); got != `{"d":"`+short+`"}` {
			t.Errorf("storage %s = %s, want %s", in, got, short)
		}
	}
}

// BenchmarkAppendEntityCosmos is BenchmarkAppendEntity in Cosmos DB's form.
func BenchmarkAppendEntityCosmos(b *testing.B) {
	e := sampleEntity()
	o := &Options{Level: MinimalMetadata, Cosmos: true}
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendEntity(buf[:0], e, o)
	}
}
