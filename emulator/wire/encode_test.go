package wire

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/tableemu/tableemu/odata/edm"
)

// ts is 2021-09-08T18:58:49.7704959Z, the WIRE-GO example instant.
var ts = dt("2021-09-08T18:58:49.7704959Z").N

func sampleEntity() *edm.Entity {
	return &edm.Entity{
		PartitionKey: "p",
		RowKey:       "0",
		Timestamp:    ts,
		Properties: []edm.Property{
			{Name: "D", Value: dt("1970-10-04T00:00:00Z")},
			{Name: "G", Value: guid("C9DA6455-213D-42C9-9A79-3E9149A57833")},
			{Name: "B", Value: edm.NewBinary([]byte("BinaryTypeProperty"))},
			{Name: "L", Value: edm.NewInt64(35)},
			{Name: "Dbl", Value: edm.NewDouble(200.23)},
			{Name: "I", Value: edm.NewInt32(5)},
			{Name: "Whole", Value: edm.NewDouble(5)},
			{Name: "N", Value: edm.NewDouble(math.NaN())},
			{Name: "S", Value: edm.NewString("s")},
			{Name: "T", Value: edm.NewBoolean(true)},
		},
	}
}

const etagJSON = `"W/\"datetime'2021-09-08T18%3A58%3A49.7704959Z'\""`

func TestAppendEntityMinimal(t *testing.T) {
	got := string(AppendEntity(nil, sampleEntity(), &Options{Level: MinimalMetadata}))
	// The WIRE-PY example of docs/protocol.md 4.4, plus the other types.
	want := `{"odata.etag":` + etagJSON + `,` +
		`"PartitionKey":"p","RowKey":"0","Timestamp":"2021-09-08T18:58:49.7704959Z",` +
		`"D@odata.type":"Edm.DateTime","D":"1970-10-04T00:00:00Z",` +
		`"G@odata.type":"Edm.Guid","G":"c9da6455-213d-42c9-9a79-3e9149a57833",` +
		`"B@odata.type":"Edm.Binary","B":"QmluYXJ5VHlwZVByb3BlcnR5",` +
		`"L@odata.type":"Edm.Int64","L":"35","Dbl":200.23,"I":5,"Whole":5.0,` +
		`"N@odata.type":"Edm.Double","N":"NaN","S":"s","T":true}`
	if got != want {
		t.Errorf("minimal:\n got %s\nwant %s", got, want)
	}
	if !json.Valid([]byte(got)) {
		t.Error("invalid JSON")
	}
	// A nil Options is minimal metadata.
	if nilOpts := string(AppendEntity(nil, sampleEntity(), nil)); nilOpts != want {
		t.Errorf("nil options:\n got %s", nilOpts)
	}
}

func TestAppendEntityNoMetadata(t *testing.T) {
	got := string(AppendEntity([]byte("["), sampleEntity(), &Options{Level: NoMetadata}))
	want := `[{"PartitionKey":"p","RowKey":"0","Timestamp":"2021-09-08T18:58:49.7704959Z",` +
		`"D":"1970-10-04T00:00:00Z","G":"c9da6455-213d-42c9-9a79-3e9149a57833",` +
		`"B":"QmluYXJ5VHlwZVByb3BlcnR5","L":"35","Dbl":200.23,"I":5,"Whole":5.0,"N":"NaN","S":"s","T":true}`
	if got != want {
		t.Errorf("none:\n got %s\nwant %s", got, want)
	}
}

func TestAppendEntityDocumentFull(t *testing.T) {
	e := &edm.Entity{PartitionKey: "A'aaa_bbbb2\"", RowKey: "r k", Timestamp: ts,
		Properties: []edm.Property{{Name: "L", Value: edm.NewInt64(-1)}, {Name: "I", Value: edm.NewInt32(1)}}}
	o := &Options{Level: FullMetadata, BaseURL: "http://127.0.0.1:10002/devstoreaccount1", Account: "devstoreaccount1", Table: "t"}
	got := string(AppendEntityDocument(nil, e, o))
	want := `{"odata.metadata":"http://127.0.0.1:10002/devstoreaccount1/$metadata#t/@Element",` +
		`"odata.type":"devstoreaccount1.t",` +
		`"odata.id":"http://127.0.0.1:10002/devstoreaccount1/t(PartitionKey='A''aaa_bbbb2%22',RowKey='r%20k')",` +
		`"odata.etag":` + etagJSON + `,` +
		`"odata.editLink":"t(PartitionKey='A''aaa_bbbb2%22',RowKey='r%20k')",` +
		`"PartitionKey":"A'aaa_bbbb2\"","RowKey":"r k",` +
		`"Timestamp@odata.type":"Edm.DateTime","Timestamp":"2021-09-08T18:58:49.7704959Z",` +
		`"L@odata.type":"Edm.Int64","L":"-1","I":1}`
	if got != want {
		t.Errorf("full:\n got %s\nwant %s", got, want)
	}
}

func TestAppendEntityDocumentLevels(t *testing.T) {
	e := &edm.Entity{PartitionKey: "p", RowKey: "r", Timestamp: ts}
	base := Options{BaseURL: "https://acct.table.core.windows.net", Account: "acct", Table: "tableName1"}
	o := base
	o.Level = MinimalMetadata
	if got, want := string(AppendEntityDocument(nil, e, &o)),
		`{"odata.metadata":"https://acct.table.core.windows.net/$metadata#tableName1/@Element","odata.etag":`+etagJSON+
			`,"PartitionKey":"p","RowKey":"r","Timestamp":"2021-09-08T18:58:49.7704959Z"}`; got != want {
		t.Errorf("minimal document:\n got %s\nwant %s", got, want)
	}
	o.Level = NoMetadata
	if got, want := string(AppendEntityDocument(nil, e, &o)),
		`{"PartitionKey":"p","RowKey":"r","Timestamp":"2021-09-08T18:58:49.7704959Z"}`; got != want {
		t.Errorf("none document:\n got %s\nwant %s", got, want)
	}
}

func TestAppendEntitySelect(t *testing.T) {
	e := sampleEntity()
	o := &Options{Level: MinimalMetadata, BaseURL: "http://h/a", Table: "t", Select: []string{"S", "RowKey", "Missing", "L", "S"}}
	got := string(AppendEntityDocument(nil, e, o))
	want := `{"odata.metadata":"http://h/a/$metadata#t/@Element&$select=S,RowKey,Missing,L,S",` +
		`"odata.etag":` + etagJSON + `,"RowKey":"0","S":"s","Missing":null,"L@odata.type":"Edm.Int64","L":"35"}`
	if got != want {
		t.Errorf("select:\n got %s\nwant %s", got, want)
	}
	// Only absent properties: the etag and nulls.
	o = &Options{Level: NoMetadata, Select: []string{"Nope"}}
	if got := string(AppendEntity(nil, e, o)); got != `{"Nope":null}` {
		t.Errorf("select none = %s", got)
	}
	// "*" and an empty list mean everything.
	all := string(AppendEntity(nil, e, nil))
	for _, sel := range [][]string{{}, {"*"}, {"S", "*"}} {
		if got := string(AppendEntity(nil, e, &Options{Select: sel})); got != all {
			t.Errorf("select %q = %s", sel, got)
		}
	}
	// Timestamp selected in full metadata keeps its annotation.
	o = &Options{Level: FullMetadata, Table: "t", Select: []string{"Timestamp"}}
	got = string(AppendEntity(nil, &edm.Entity{Timestamp: ts}, o))
	if want := `"Timestamp@odata.type":"Edm.DateTime","Timestamp":"2021-09-08T18:58:49.7704959Z"}`; got[len(got)-len(want):] != want {
		t.Errorf("full select timestamp = %s", got)
	}
}

// WIRE-JS recording should_select_specific_properties, verbatim apart from
// the ETag: $select=baz,PartitionKey,RowKey returns the keys first.
func TestAppendEntitySelectRecording(t *testing.T) {
	e := &edm.Entity{PartitionKey: "P2_node", RowKey: "R1", Timestamp: ts, Properties: []edm.Property{
		{Name: "foo", Value: edm.NewString("testEntity")}, {Name: "bar", Value: edm.NewInt32(123)}, {Name: "baz", Value: edm.NewBoolean(true)}}}
	o := &Options{BaseURL: "https://fakeaccountname.table.core.windows.net", Table: "tableClientTestnode",
		Select: []string{"baz", "PartitionKey", "RowKey"}}
	want := `{"odata.metadata":"https://fakeaccountname.table.core.windows.net/$metadata#tableClientTestnode/@Element&$select=baz,PartitionKey,RowKey",` +
		`"odata.etag":` + etagJSON + `,"PartitionKey":"P2_node","RowKey":"R1","baz":true}`
	if got := string(AppendEntityDocument(nil, e, o)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestAppendEntityDoubles(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{5, `"X":5.0`},
		{math.Copysign(0, -1), `"X":-0.0`},
		{1e308, `"X":1E+308`},
		{4.9e-324, `"X":4.94065645841247E-324`},
		{math.Inf(1), `"X@odata.type":"Edm.Double","X":"Infinity"`},
		{math.Inf(-1), `"X@odata.type":"Edm.Double","X":"-Infinity"`},
	}
	for _, tt := range tests {
		e := &edm.Entity{Properties: []edm.Property{{Name: "X", Value: edm.NewDouble(tt.f)}}}
		got := string(AppendEntity(nil, e, &Options{Level: NoMetadata, Select: []string{"X"}}))
		gotMin := string(AppendEntity(nil, e, &Options{Level: MinimalMetadata, Select: []string{"X"}}))
		if want := "{" + tt.want + "}"; gotMin[len(gotMin)-len(want)+1:] != want[1:] {
			t.Errorf("minimal %v = %s, want …%s", tt.f, gotMin, want)
		}
		if !json.Valid([]byte(got)) || !json.Valid([]byte(gotMin)) {
			t.Errorf("invalid JSON for %v: %s", tt.f, gotMin)
		}
	}
}

func TestLevel(t *testing.T) {
	var zero Level
	if zero != MinimalMetadata {
		t.Error("the zero Level must be minimal metadata")
	}
	for l, want := range map[Level]string{
		MinimalMetadata: "application/json;odata=minimalmetadata;streaming=true;charset=utf-8",
		NoMetadata:      "application/json;odata=nometadata;streaming=true;charset=utf-8",
		FullMetadata:    "application/json;odata=fullmetadata;streaming=true;charset=utf-8",
	} {
		if got := l.ContentType(); got != want {
			t.Errorf("%v.ContentType() = %q", l, got)
		}
	}
}

func BenchmarkAppendEntity(b *testing.B) {
	e := sampleEntity()
	o := &Options{Level: MinimalMetadata}
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendEntity(buf[:0], e, o)
	}
}

func BenchmarkDecodeEntity(b *testing.B) {
	in := []byte(`{"PartitionKey":"partition","RowKey":"row-000001","Name":"Alice Example","Age":42,` +
		`"Score":98.5,"Active":true,"Id@odata.type":"Edm.Guid","Id":"c9da6455-213d-42c9-9a79-3e9149a57833",` +
		`"Big@odata.type":"Edm.Int64","Big":"1234567890123","When@odata.type":"Edm.DateTime","When":"2021-09-08T18:58:49.7704959Z"}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := DecodeEntity(in); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAppendEntityPlain checks that a String or Guid the reader marked
// Plain is written exactly as the escaping path writes it.
func TestAppendEntityPlain(t *testing.T) {
	e := sampleEntity()
	want := string(AppendEntity(nil, e, nil))
	for i := range e.Properties {
		if v := e.Properties[i].Value; (v.T == edm.String || v.T == edm.Guid) && edm.JSONPlain(v.S) {
			e.Properties[i].Plain = true
		}
	}
	if got := string(AppendEntity(nil, e, nil)); got != want {
		t.Fatalf("with Plain:\n%s\nwant\n%s", got, want)
	}
}
