package emulator

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// lenientProps are the typed values of python-cosmos
// test_table_entity_cosmos…test_entity_with_edmtypes, which Cosmos DB for
// Table accepted in an upsert (204) and Table storage refused (400
// InvalidInput, python test_table_entity…test_entity_with_edmtypes):
// "text" is a number annotated Edm.String, the one form storage refuses
// (wire.DecodeOptions, docs/cosmos.md).
const lenientProps = `"bool@odata.type":"Edm.Boolean","bool":"false","text@odata.type":"Edm.String","text":42,` +
	`"number@odata.type":"Edm.Int32","number":"23","amount@odata.type":"Edm.Double","amount":"0",` +
	`"since@odata.type":"Edm.DateTime","since":"2008-07-10T00:00:00"`

func lenientEntity(rk string) string {
	return `{"PartitionKey":"p","RowKey":"` + rk + `",` + lenientProps + `}`
}

// TestCosmosProfileLenientValues: under --profile cosmos a single insert,
// an insert-or-merge (POST with X-HTTP-Method: MERGE, as the SDKs send it
// to Cosmos DB), a merge and an update of an existing entity and the
// operations of a change set accept the recorded typed values and read them back as Cosmos
// DB did: false, 42 and 23 as numbers without annotation, 0.0, the
// DateTime in UTC. Under the default profile each is 400 InvalidInput, as
// Table storage answered.
func TestCosmosProfileLenientValues(t *testing.T) {
	hs := cosmosBatchServer(t)
	entity := func(rk string) string { return "/batchtbl(PartitionKey='p',RowKey='" + rk + "')" }

	r := cosmosDo(t, hs, "POST", "/batchtbl", lenientEntity("ins"), nil)
	if r.status != 201 {
		t.Fatalf("Insert Entity: %d %s", r.status, r.body)
	}
	wantLenientRead(t, "Insert Entity's answer", r.body)

	r = cosmosDo(t, hs, "POST", entity("ups"), lenientEntity("ups"), map[string]string{"X-HTTP-Method": "MERGE"})
	if r.status != 204 {
		t.Fatalf("Insert Or Merge Entity: %d %s", r.status, r.body)
	}
	for _, rk := range []string{"mrg", "upd"} {
		r = cosmosDo(t, hs, "POST", "/batchtbl", `{"PartitionKey":"p","RowKey":"`+rk+`","other":"x"}`, nil)
		if r.status != 201 {
			t.Fatalf("Insert Entity %s: %d %s", rk, r.status, r.body)
		}
	}
	r = cosmosDo(t, hs, "POST", entity("mrg"), lenientEntity("mrg"), map[string]string{"X-HTTP-Method": "MERGE", "If-Match": "*"})
	if r.status != 204 {
		t.Fatalf("Merge Entity: %d %s", r.status, r.body)
	}
	r = cosmosDo(t, hs, "PUT", entity("upd"), lenientEntity("upd"), map[string]string{"If-Match": "*"})
	if r.status != 204 {
		t.Fatalf("Update Entity: %d %s", r.status, r.body)
	}
	for _, rk := range []string{"ins", "ups", "mrg", "upd"} {
		r = cosmosDo(t, hs, "GET", entity(rk), "", nil)
		if r.status != 200 {
			t.Fatalf("Get Entity %s: %d %s", rk, r.status, r.body)
		}
		wantLenientRead(t, "Get Entity "+rk, r.body)
	}

	b := postBatch(t, hs, batchCT, lenientChangeset())
	if o := outcomeOf(b); b.StatusCode != 202 || len(o.parts) != 3 || o.parts[0] != 201 || o.parts[1] != 204 || o.parts[2] != 204 ||
		strings.Contains(b.body, `"odata.error"`) {
		t.Fatalf("batch: %d %+v %s", b.StatusCode, o, b.body)
	}
	for _, rk := range []string{"b1", "b2", "b3"} {
		r = cosmosDo(t, hs, "GET", entity(rk), "", nil)
		if r.status != 200 {
			t.Fatalf("Get Entity %s after the batch: %d %s", rk, r.status, r.body)
		}
		wantLenientRead(t, "Get Entity "+rk+" after the batch", r.body)
	}

	// A boolean annotated Edm.String is not in the evidence: refused,
	// with Cosmos DB's sentence for a refused value.
	r = cosmosDo(t, hs, "POST", "/batchtbl", `{"PartitionKey":"p","RowKey":"no","text@odata.type":"Edm.String","text":true}`, nil)
	wantCosmosError(t, "Edm.String true", r, 400, "InvalidInput", "One of the input values is invalid.", true, "application/json; odata=fullmetadata")

	// The default profile: Table storage's 400 InvalidInput, every time.
	_, st := batchServer(t)
	for _, c := range []struct {
		what, method, target string
		hdr                  map[string]string
	}{
		{"Insert Entity", "POST", "/batchtbl", nil},
		{"Insert Or Merge Entity", "POST", entity("ups"), map[string]string{"X-HTTP-Method": "MERGE"}},
		{"Insert Or Replace Entity", "PUT", entity("ups"), nil},
	} {
		r := cosmosDo(t, st, c.method, c.target, lenientEntity("ups"), c.hdr)
		var e struct {
			E struct{ Code string } `json:"odata.error"`
		}
		if err := json.Unmarshal([]byte(r.body), &e); err != nil || r.status != 400 || e.E.Code != "InvalidInput" || r.h.Get("x-ms-error-code") != "InvalidInput" {
			t.Errorf("storage %s: %d %s, want 400 InvalidInput", c.what, r.status, r.body)
		}
	}
	b = postBatch(t, st, batchCT, lenientChangeset())
	if o := outcomeOf(b); b.StatusCode != 202 || o.code != "InvalidInput" || o.index != 0 || len(o.parts) != 1 || o.parts[0] != 400 {
		t.Errorf("storage batch: %d %+v %s", b.StatusCode, o, b.body)
	}
	if got := entityStatusOn(t, st, "b1"); got != 404 {
		t.Errorf("storage batch: Get Entity b1 %d, want 404", got)
	}
}

// lenientChangeset inserts b1, upserts b2 (merge) and b3 (replace), each
// with the lenient values.
func lenientChangeset() string {
	target := "http://HOST/devstoreaccount1/batchtbl"
	return changeset(
		"POST "+target+" HTTP/1.1\n\n"+lenientEntity("b1"),
		"MERGE "+target+"(PartitionKey='p',RowKey='b2') HTTP/1.1\n\n"+lenientEntity("b2"),
		"PUT "+target+"(PartitionKey='p',RowKey='b3') HTTP/1.1\n\n"+lenientEntity("b3"),
	)
}

func entityStatusOn(t *testing.T, hs *httptest.Server, rk string) int {
	t.Helper()
	return cosmosDo(t, hs, "GET", "/batchtbl(PartitionKey='p',RowKey='"+rk+"')", "", nil).status
}

// wantLenientRead checks a minimal-metadata entity holds the values as
// Cosmos DB read them back: numbers without annotation for "text" (the
// Edm.String annotation dropped), "number" and "amount".
func wantLenientRead(t *testing.T, what, body string) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("%s: %v: %s", what, err, body)
	}
	for name, want := range map[string]string{
		"bool": `false`, "text": `42`, "number": `23`, "amount": `0.0`, "since@odata.type": `"Edm.DateTime"`,
	} {
		if got := string(m[name]); got != want {
			t.Errorf("%s: %s is %s, want %s (%s)", what, name, got, want, body)
		}
	}
	for _, name := range []string{"text@odata.type", "number@odata.type", "bool@odata.type", "amount@odata.type"} {
		if v, ok := m[name]; ok {
			t.Errorf("%s: %s %s, want none, as Cosmos DB answered (%s)", what, name, v, body)
		}
	}
	// The DateTime's digits are the encoder's (docs/cosmos.md): the
	// instant is what is checked here.
	if s := string(m["since"]); !strings.HasPrefix(s, `"2008-07-10T00:00:00`) || !strings.HasSuffix(s, `Z"`) {
		t.Errorf("%s: since is %s, want 2008-07-10T00:00:00Z", what, s)
	}
}

// TestCosmosProfileAtypicalValues: what Azure Cosmos DB for Table refused
// in the Python SDK's atypical-value tests where Table storage did
// otherwise (python-cosmos test_encoder_cosmos…create_entity_atypical_values
// entries 3 and 9, …upsert_entity_atypical_values entries 5, 6, 17, 18):
// an unannotated integer outside Int64, which storage stores as a Double,
// is 400 InvalidInput on an insert and on either upsert; a property named
// 123 is 400 PropertyNameInvalid under both, Cosmos DB's message naming it.
func TestCosmosProfileAtypicalValues(t *testing.T) {
	hs := cosmosBatchServer(t)
	_, st := batchServerWith(t, Config{InMemory: true, Silent: true})
	const big = `{"PartitionKey":"PK1","RowKey":"RK1","Data":9223372036854775808000}`
	const invalid = "One of the input values is invalid."
	full := "application/json; odata=fullmetadata"
	upsert := "/batchtbl(PartitionKey='PK1',RowKey='RK1')"
	wantCosmosError(t, "insert 2^63·1000", cosmosDo(t, hs, "POST", "/batchtbl", big, nil), 400, "InvalidInput", invalid, true, full)
	wantCosmosError(t, "upsert-merge 2^63·1000", cosmosDo(t, hs, "POST", upsert, big, map[string]string{"X-HTTP-Method": "MERGE"}), 400, "InvalidInput", invalid, true, full)
	wantCosmosError(t, "upsert-replace 2^63·1000", cosmosDo(t, hs, "PUT", upsert, big, nil), 400, "InvalidInput", invalid, true, full)
	if r := cosmosDo(t, hs, "GET", upsert, "", nil); r.status != 404 {
		t.Fatalf("after the refusals: %d %s, want 404", r.status, r.body)
	}
	r := cosmosDo(t, st, "POST", "/batchtbl", big, map[string]string{"Accept": "application/json;odata=nometadata"})
	if r.status != 201 || !strings.Contains(r.body, `"Data":9.2233720368547758E+21`) {
		t.Fatalf("storage insert 2^63·1000: %d %s", r.status, r.body)
	}

	const named = "The property name '123' is invalid. See https://docs.microsoft.com/en-us/rest/api/storageservices/Understanding-the-Table-Service-Data-Model"
	wantCosmosError(t, "property 123", cosmosDo(t, hs, "POST", "/batchtbl", `{"PartitionKey":"PK","RowKey":"RK","123":456}`, nil), 400, "PropertyNameInvalid", named, true, full)
	wantCosmosError(t, "upsert, property 123", cosmosDo(t, hs, "PUT", "/batchtbl(PartitionKey='PK',RowKey='RK')", `{"123":456}`, nil), 400, "PropertyNameInvalid", named, true, full)
	r = cosmosDo(t, st, "POST", "/batchtbl", `{"PartitionKey":"PK","RowKey":"RK","123":456}`, nil)
	if r.status != 400 || !strings.Contains(r.body, `"PropertyNameInvalid"`) || !strings.Contains(r.body, `"The property name is invalid.\ntableemu: `) {
		t.Fatalf("storage, property 123: %d %s", r.status, r.body)
	}
}
