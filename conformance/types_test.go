package conformance

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// testEDMRoundTrip writes every EDM type at its edges through the SDK's
// EDMEntity and reads it back typed.
func testEDMRoundTrip(t *testing.T, tg *target) {
	c := tg.newTable(t)
	bin := []byte{0, 1, 2, 0xfe, 0xff}
	in := aztables.EDMEntity{
		Entity: aztables.Entity{PartitionKey: "types", RowKey: "edges"},
		Properties: map[string]any{
			"Str":        "héllo \"quoted\" \\ \n\t\u0001 😀",
			"EmptyStr":   "",
			"PlainStr":   "plain text é ꀕ, nothing to escape",
			"I32":        int32(-2147483648),
			"I32Max":     int32(2147483647),
			"I64Min":     aztables.EDMInt64(math.MinInt64),
			"I64Max":     aztables.EDMInt64(math.MaxInt64),
			"Dbl":        1.5,
			"DblTiny":    4.9e-324,
			"DblHuge":    1.7976931348623157e308,
			"DblNeg":     -0.25,
			"BoolT":      true,
			"BoolF":      false,
			"Guid":       aztables.EDMGUID("c9da6455-213d-42c9-9a79-3e9149a57833"),
			"Bin":        aztables.EDMBinary(bin),
			"BinEmpty":   aztables.EDMBinary([]byte{}),
			"DateMin":    aztables.EDMDateTime(time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)),
			"DateMax":    aztables.EDMDateTime(time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)),
			"Date100ns":  aztables.EDMDateTime(time.Date(2021, 9, 8, 18, 58, 49, 770495900, time.UTC)),
			"DateNoFrac": aztables.EDMDateTime(time.Date(1970, 10, 4, 0, 0, 0, 0, time.UTC)),
		},
	}
	body, err := json.Marshal(in)
	must(t, err)
	_, err = c.AddEntity(ctx(), body, nil)
	must(t, err)

	// Each format, read as one entity and through a query: the query
	// path streams entities from the store and copies strings it stored
	// as needing no escaping, the single read decodes them.
	filter := "PartitionKey eq 'types'"
	for _, format := range []aztables.MetadataFormat{aztables.MetadataFormatMinimal, aztables.MetadataFormatFull} {
		resp, err := c.GetEntity(ctx(), "types", "edges", &aztables.GetEntityOptions{Format: &format})
		must(t, err)
		page, err := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter, Format: &format}).NextPage(ctx())
		must(t, err)
		if len(page.Entities) != 1 {
			t.Fatalf("query returned %d entities", len(page.Entities))
		}
		for _, raw := range [][]byte{resp.Value, page.Entities[0]} {
			var out aztables.EDMEntity
			must(t, json.Unmarshal(raw, &out))
			p := out.Properties
			check := func(name string, ok bool) {
				t.Helper()
				if !ok {
					t.Errorf("%s: %s came back as %#v (%T)", format, name, p[name], p[name])
				}
			}
			check("Str", p["Str"] == in.Properties["Str"])
			check("EmptyStr", p["EmptyStr"] == "")
			check("PlainStr", p["PlainStr"] == in.Properties["PlainStr"])
			check("I32", p["I32"] == int32(-2147483648))
			check("I32Max", p["I32Max"] == int32(2147483647))
			check("I64Min", p["I64Min"] == aztables.EDMInt64(math.MinInt64))
			check("I64Max", p["I64Max"] == aztables.EDMInt64(math.MaxInt64))
			check("Dbl", p["Dbl"] == 1.5)
			check("DblTiny", p["DblTiny"] == 4.9e-324)
			check("DblHuge", p["DblHuge"] == 1.7976931348623157e308)
			check("DblNeg", p["DblNeg"] == -0.25)
			check("BoolT", p["BoolT"] == true)
			check("BoolF", p["BoolF"] == false)
			check("Guid", p["Guid"] == in.Properties["Guid"])
			b, _ := p["Bin"].(aztables.EDMBinary)
			check("Bin", bytes.Equal(b, bin))
			be, ok := p["BinEmpty"].(aztables.EDMBinary)
			check("BinEmpty", ok && len(be) == 0)
			for _, d := range []string{"DateMin", "DateMax", "Date100ns", "DateNoFrac"} {
				got, ok := p[d].(aztables.EDMDateTime)
				check(d, ok && time.Time(got).Equal(time.Time(in.Properties[d].(aztables.EDMDateTime))))
			}
		}
	}
}

func TestEDMRoundTrip(t *testing.T) { testEDMRoundTrip(t, shared) }

// testEDMWire checks the JSON the service writes for each type in minimal
// metadata: annotations only where the type is not inferable, Int64 as a
// string, whole Doubles with ".0", DateTime trimmed (docs/protocol.md 4.2).
func testEDMWire(t *testing.T, tg *target) {
	_, name := tg.newNamedTable(t)
	in := `{"PartitionKey":"p","RowKey":"r",
		"I":5,"Big":2147483648,"D":2.0,"Dd@odata.type":"Edm.Double","Dd":"42","N@odata.type":"Edm.Double","N":"NaN",
		"Inf@odata.type":"Edm.Double","Inf":"Infinity","NInf@odata.type":"Edm.Double","NInf":"-Infinity",
		"L@odata.type":"Edm.Int64","L":"-9223372036854775808",
		"T@odata.type":"Edm.DateTime","T":"1970-10-04T00:00:00.000000Z",
		"G@odata.type":"Edm.Guid","G":"C9DA6455-213D-42C9-9A79-3E9149A57833",
		"B@odata.type":"Edm.Binary","B":"AAEC","S":"s","Y":true,
		"I2@odata.type":"Edm.Int32","I2":7, "Nul":null}`
	r := tg.raw(t, "POST", "/"+name, nil, []byte(in))
	if r.StatusCode != 201 {
		t.Fatalf("insert: %d %s", r.StatusCode, r.body)
	}
	r = tg.raw(t, "GET", entityPath(name, "p", "r"), nil, nil)
	want := map[string]string{
		`"I":5`:                                 "Int32 unannotated",
		`"Big":2147483648.0`:                    "an integer beyond Int32 is a Double",
		`"D":2.0`:                               "whole Double keeps its point",
		`"Dd":42.0`:                             "Double sent as a string",
		`"N@odata.type":"Edm.Double","N":"NaN"`: "NaN",
		`"Inf@odata.type":"Edm.Double","Inf":"Infinity"`:                       "Infinity",
		`"NInf@odata.type":"Edm.Double","NInf":"-Infinity"`:                    "-Infinity",
		`"L@odata.type":"Edm.Int64","L":"-9223372036854775808"`:                "Int64 as a string",
		`"G@odata.type":"Edm.Guid","G":"c9da6455-213d-42c9-9a79-3e9149a57833"`: "Guid lower-cased",
		`"B@odata.type":"Edm.Binary","B":"AAEC"`:                               "Binary",
		`"S":"s"`:                                                              "String", `"Y":true`: "Boolean", `"I2":7`: "annotated Int32 needs no annotation back",
	}
	for frag, what := range want {
		if !bytes.Contains(r.body, []byte(frag)) {
			t.Errorf("%s: missing %s in %s", what, frag, r.body)
		}
	}
	for _, absent := range []string{`Nul`, `"Edm.Int32"`, `"Edm.String"`, `"Edm.Boolean"`, `"D@odata.type"`} {
		if bytes.Contains(r.body, []byte(absent)) {
			t.Errorf("%s should not appear in %s", absent, r.body)
		}
	}
	t.Run("DateTime", func(t *testing.T) {
		// Cosmos DB writes every DateTime with 7 digits (python-cosmos
		// test_insert_entity_dictionary: 1970-10-04T00:00:00.0000000Z).
		want := `"T@odata.type":"Edm.DateTime","T":"1970-10-04T00:00:00Z"`
		if tg.cosmos {
			want = `"T@odata.type":"Edm.DateTime","T":"1970-10-04T00:00:00.0000000Z"`
		}
		if !bytes.Contains(r.body, []byte(want)) {
			t.Errorf("want %s in %s", want, r.body)
		}
	})
	t.Run("member order", func(t *testing.T) {
		// Timestamp follows RowKey in Table storage's entity, and comes
		// last in Cosmos DB's (python-cosmos test_insert_entity_dictionary,
		// test_get_entity).
		ts := bytes.Index(r.body, []byte(`"Timestamp":`))
		if ts < 0 {
			t.Fatalf("no Timestamp in %s", r.body)
		}
		after := bytes.Index(r.body, []byte(`"RowKey":"r",`)) + len(`"RowKey":"r",`)
		last := bytes.HasSuffix(r.body[ts:], []byte(`"}`)) && bytes.Count(r.body[ts:], []byte(`":`)) == 1
		if tg.cosmos && !last || !tg.cosmos && ts != after {
			t.Errorf("Timestamp at %d of %s", ts, r.body)
		}
	})
}

func TestEDMWire(t *testing.T) { testEDMWire(t, shared) }

func testBadPayloads(t *testing.T, tg *target) {
	_, name := tg.newNamedTable(t)
	for _, tc := range []struct{ body, code string }{
		{`{"PartitionKey":"p","RowKey":"r"`, "InvalidInput"},
		{`not json`, "InvalidInput"},
		{`[1,2]`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"r","X":{"nested":1}}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"r","X":[1]}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"r","X@odata.type":"Edm.Int64","X":"abc"}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"r","X@odata.type":"Edm.Nope","X":"1"}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"r","X@odata.type":"Edm.Int32","X":2147483648}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"r","X@odata.type":"Edm.Double","X":"13e7705"}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"r","X@odata.type":"Edm.Guid","X":"not-a-guid"}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"r","X@odata.type":"Edm.Binary","X":"!!"}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"r","X@odata.type":"Edm.DateTime","X":"yesterday"}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"r","X@odata.type":"Edm.DateTime","X":"1600-12-31T23:59:59Z"}`, "OutOfRangeInput"},
		{`{"PartitionKey":"p","RowKey":"r","X":1,"X":2}`, "DuplicatePropertiesSpecified"},
		{`{"PartitionKey":1,"RowKey":"r"}`, "InvalidInput"},
		{"{\"PartitionKey\":\"p\",\"RowKey\":\"r\",\"X\":\"\xff\"}", "InvalidInput"},
		{"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", "InvalidInput"},
	} {
		r := tg.raw(t, "POST", "/"+name, nil, []byte(tc.body))
		wantRawCode(t, r, 400, tc.code)
	}
	// Nothing was stored.
	r := tg.raw(t, "GET", "/"+name+"()", nil, nil)
	if bytes.Contains(r.body, []byte(`"RowKey"`)) {
		t.Fatalf("a bad payload was stored: %s", r.body)
	}
}

func TestBadPayloads(t *testing.T) { testBadPayloads(t, shared) }
