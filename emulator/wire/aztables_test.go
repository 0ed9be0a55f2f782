package wire

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/odata/edm"
)

// The Go SDK's own entity JSON (docs/protocol.md 13, "Entity JSON the SDK
// sends") decodes to the right EDM types.
func TestDecodeAztablesEDMEntity(t *testing.T) {
	when := time.Date(2021, 9, 8, 18, 58, 49, 770495900, time.UTC)
	src := aztables.EDMEntity{
		Entity: aztables.Entity{PartitionKey: "pk'1", RowKey: "rk 1"},
		Properties: map[string]any{
			"Str":   "hello \"world\" 😀",
			"Int":   int32(-42),
			"Big":   aztables.EDMInt64(math.MaxInt64),
			"Small": aztables.EDMInt64(math.MinInt64),
			"Dbl":   3.25,
			"Whole": 2.0, // the SDK writes 2: inferred Int32, an SDK quirk
			"Bool":  true,
			"When":  aztables.EDMDateTime(when),
			"Id":    aztables.EDMGUID("C9DA6455-213D-42C9-9A79-3E9149A57833"),
			"Bytes": aztables.EDMBinary([]byte{0, 1, 2, 0xff}),
			"Empty": aztables.EDMBinary([]byte{}),
		},
	}
	body, err := json.Marshal(src)
	if err != nil {
		t.Fatal(err)
	}
	d, err := DecodeEntity(body)
	if err != nil {
		t.Fatalf("DecodeEntity(%s): %v", body, err)
	}
	// The SDK doubles quotes in body keys (docs/protocol.md 13); the emulator
	// stores what it is sent.
	if d.Entity.PartitionKey != "pk''1" || d.Entity.RowKey != "rk 1" {
		t.Errorf("keys = %q, %q", d.Entity.PartitionKey, d.Entity.RowKey)
	}
	want := map[string]edm.Value{
		"Str":   edm.NewString("hello \"world\" 😀"),
		"Int":   edm.NewInt32(-42),
		"Big":   edm.NewInt64(math.MaxInt64),
		"Small": edm.NewInt64(math.MinInt64),
		"Dbl":   edm.NewDouble(3.25),
		"Whole": edm.NewInt32(2),
		"Bool":  edm.NewBoolean(true),
		"When":  edm.NewDateTime(edm.TicksFromTime(when)),
		"Id":    guid("c9da6455-213d-42c9-9a79-3e9149a57833"),
		"Bytes": edm.NewBinary([]byte{0, 1, 2, 0xff}),
		"Empty": edm.NewBinary([]byte{}),
	}
	if len(d.Entity.Properties) != len(want) {
		t.Fatalf("properties %+v", d.Entity.Properties)
	}
	for _, p := range d.Entity.Properties {
		if w, ok := want[p.Name]; !ok || !sameValue(p.Value, w) {
			t.Errorf("%s = %#v, want %#v", p.Name, p.Value, w)
		}
	}
	if err := ValidateEntity(&d.Entity); err != nil {
		t.Errorf("ValidateEntity: %v", err)
	}
}

// A struct embedding aztables.Entity sends Timestamp "0001-01-01T00:00:00Z"
// and plain time.Time / []byte / int64 fields untyped (docs/protocol.md 13).
func TestDecodeAztablesStruct(t *testing.T) {
	type row struct {
		aztables.Entity
		At    time.Time
		Raw   []byte
		Count int64
		Ratio float64
	}
	body, err := json.Marshal(row{
		Entity: aztables.Entity{PartitionKey: "p", RowKey: "r"},
		At:     time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC),
		Raw:    []byte("hi"),
		Count:  1 << 40,
		Ratio:  0.5,
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := DecodeEntity(body)
	if err != nil {
		t.Fatalf("DecodeEntity(%s): %v", body, err)
	}
	want := []edm.Property{
		{Name: "At", Value: edm.NewString("2020-01-02T03:04:05Z")},
		{Name: "Raw", Value: edm.NewString("aGk=")},
		{Name: "Count", Value: edm.NewDouble(1 << 40)},
		{Name: "Ratio", Value: edm.NewDouble(0.5)},
	}
	if err := sameEntity(&edm.Entity{PartitionKey: "p", RowKey: "r", Properties: want}, &d.Entity); err != nil {
		t.Error(err)
	}
}

func fullEntity() *edm.Entity {
	return &edm.Entity{
		PartitionKey: "p'1 ä",
		RowKey:       "r\"1",
		Timestamp:    ts,
		Properties: []edm.Property{
			{Name: "Str", Value: edm.NewString("s \"q\" 😀")},
			{Name: "Int", Value: edm.NewInt32(math.MinInt32)},
			{Name: "Big", Value: edm.NewInt64(math.MaxInt64)},
			{Name: "Dbl", Value: edm.NewDouble(200.23)},
			{Name: "Whole", Value: edm.NewDouble(5)},
			{Name: "Tiny", Value: edm.NewDouble(4.9e-324)},
			{Name: "Bool", Value: edm.NewBoolean(false)},
			{Name: "When", Value: edm.NewDateTime(edm.MaxDateTime)},
			{Name: "Early", Value: edm.NewDateTime(edm.MinDateTime)},
			{Name: "Id", Value: guid("c9da6455-213d-42c9-9a79-3e9149a57833")},
			{Name: "Bytes", Value: edm.NewBinary([]byte{0, 0xfe, 0xff})},
			{Name: "NaN", Value: edm.NewDouble(math.NaN())},
		},
	}
}

// checkEDMEntity checks what aztables.EDMEntity made of fullEntity. viaClient
// is set when the bytes came through Client.GetEntity, which decodes the
// body into map[string]any and re-marshals it: 5.0 passes through float64,
// comes out as 5, and EDMEntity then reads an int32 — an SDK quirk no
// server can avoid (docs/protocol.md 13).
func checkEDMEntity(t *testing.T, got aztables.EDMEntity, viaClient bool) {
	t.Helper()
	if got.PartitionKey != "p'1 ä" || got.RowKey != "r\"1" {
		t.Errorf("keys = %q, %q", got.PartitionKey, got.RowKey)
	}
	if tt := time.Time(got.Timestamp); edm.TicksFromTime(tt) != ts {
		t.Errorf("Timestamp = %v", tt)
	}
	if got.ETag != ETag(ts) {
		t.Errorf("ETag = %q", got.ETag)
	}
	want := map[string]any{
		"Str":   "s \"q\" 😀",
		"Int":   int32(math.MinInt32),
		"Big":   aztables.EDMInt64(math.MaxInt64),
		"Dbl":   200.23,
		"Whole": 5.0, // written 5.0, so it stays a float64
		"Tiny":  4.9e-324,
		"Bool":  false,
		"Id":    aztables.EDMGUID("c9da6455-213d-42c9-9a79-3e9149a57833"),
		// The SDK maps any Edm.Double annotation to nil (docs/protocol.md 13):
		// NaN cannot survive this client, whatever the server does.
		"NaN": nil,
	}
	if viaClient {
		want["Whole"] = int32(5)
	}
	for name, w := range want {
		if v, ok := got.Properties[name]; !ok || v != w {
			t.Errorf("%s = %#v (%T), want %#v (%T)", name, v, v, w, w)
		}
	}
	if b, ok := got.Properties["Bytes"].(aztables.EDMBinary); !ok || string(b) != "\x00\xfe\xff" {
		t.Errorf("Bytes = %#v", got.Properties["Bytes"])
	}
	for name, w := range map[string]int64{"When": edm.MaxDateTime, "Early": edm.MinDateTime} {
		v, ok := got.Properties[name].(aztables.EDMDateTime)
		if !ok || edm.TicksFromTime(time.Time(v)) != w {
			t.Errorf("%s = %#v", name, got.Properties[name])
		}
	}
	if len(got.Properties) != 12 {
		t.Errorf("%d properties: %v", len(got.Properties), got.Properties)
	}
}

// aztables can read our minimal-metadata output into an EDMEntity with
// every type intact (docs/protocol.md 13, "Response parsing that EDMEntity
// requires").
func TestAztablesUnmarshalsMinimal(t *testing.T) {
	for _, doc := range [][]byte{
		AppendEntityDocument(nil, fullEntity(), &Options{Level: MinimalMetadata, BaseURL: "http://h/acct", Table: "t"}),
		AppendEntity(nil, fullEntity(), nil),
	} {
		var got aztables.EDMEntity
		if err := json.Unmarshal(doc, &got); err != nil {
			t.Fatalf("EDMEntity.UnmarshalJSON(%s): %v", doc, err)
		}
		checkEDMEntity(t, got, false)
	}
}

// The same through the real client: GetEntity against a server that
// answers with our encoding.
func TestAztablesClientGetEntity(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := fullEntity()
		o := &Options{Level: MinimalMetadata, BaseURL: "http://" + r.Host, Table: "t"}
		w.Header().Set("Content-Type", o.Level.ContentType())
		w.Header().Set("ETag", ETag(e.Timestamp))
		w.Header().Set("x-ms-version", "2019-02-02")
		_, _ = w.Write(AppendEntityDocument(nil, e, o))
	}))
	defer srv.Close()
	opts := &aztables.ClientOptions{ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}}
	client, err := aztables.NewClientWithNoCredential(srv.URL+"/t", opts)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.GetEntity(context.Background(), "p'1 ä", "r\"1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.ETag) != ETag(ts) {
		t.Errorf("response ETag = %q", resp.ETag)
	}
	var got aztables.EDMEntity
	if err := json.Unmarshal(resp.Value, &got); err != nil {
		t.Fatalf("unmarshal %s: %v", resp.Value, err)
	}
	checkEDMEntity(t, got, true)
}
