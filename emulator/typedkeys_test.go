package emulator

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestInsertTypedKeys: Insert Entity refuses a key annotated with an EDM
// type other than Edm.String — 400 InvalidInput, "One of the request inputs
// is not valid." first — alone and inside a batch, where the failure is
// found while reading the change set and keeps its index; update, merge and
// the upserts accept the same body, and an Edm.String annotation passes
// everywhere (Python SDK recordings test_encoder_create_entity_complex_keys
// and test_encoder_upsert_entity_complex_keys, x-ms-version 2019-02-02;
// docs/protocol.md 0.1).
func TestInsertTypedKeys(t *testing.T) {
	_, hs := batchServer(t)
	const sentence = "One of the request inputs is not valid."
	typed := `{"PartitionKey@odata.type":"Edm.DateTime","PartitionKey":"2022-04-01T09:30:45.000000Z",` +
		`"RowKey@odata.type":"Edm.Guid","RowKey":"4738422c-15e7-4170-9eb6-fb5b284e11ac"}`
	binary := `{"PartitionKey@odata.type":"Edm.Binary","PartitionKey":"YmluYXJ5ZGF0YQ==","RowKey":"1234","Data":1}`
	for _, body := range []string{typed, binary} {
		r := send(t, signedTB(t, "POST", hs.URL, "/devstoreaccount1/batchtbl", body))
		var e struct {
			Err struct {
				Code    string
				Message struct{ Value string }
			} `json:"odata.error"`
		}
		if err := json.Unmarshal([]byte(r.body), &e); err != nil || r.StatusCode != 400 || e.Err.Code != "InvalidInput" ||
			r.Header.Get("x-ms-error-code") != "InvalidInput" || !strings.HasPrefix(e.Err.Message.Value, sentence) {
			t.Fatalf("insert %s: %d %s", body, r.StatusCode, r.body)
		}
		if first, _, _ := strings.Cut(e.Err.Message.Value, "\n"); first != sentence && !strings.HasPrefix(first, sentence+" tableemu: ") {
			t.Fatalf("insert %s: the service's sentence is not alone on its line: %q", body, first)
		}
	}
	if st := entityStatus(t, hs, "batchtbl", "2022-04-01T09:30:45.000000Z", "4738422c-15e7-4170-9eb6-fb5b284e11ac"); st != 404 {
		t.Fatalf("a refused insert wrote the entity: %d", st)
	}

	// The same bodies through the operations that take the keys from the URL.
	url := "/devstoreaccount1/batchtbl(PartitionKey='2022-04-01T09%3A30%3A45.000000Z',RowKey='4738422c-15e7-4170-9eb6-fb5b284e11ac')"
	for _, method := range []string{"PUT", "MERGE", "PATCH"} {
		if r := send(t, signedTB(t, method, hs.URL, url, typed)); r.StatusCode != 204 {
			t.Fatalf("%s with annotated keys: %d %s", method, r.StatusCode, r.body)
		}
	}
	if st := entityStatus(t, hs, "batchtbl", "2022-04-01T09:30:45.000000Z", "4738422c-15e7-4170-9eb6-fb5b284e11ac"); st != 200 {
		t.Fatalf("the upserted entity: %d", st)
	}
	plain := `{"PartitionKey":"p","PartitionKey@odata.type":"Edm.String","RowKey":"s","RowKey@odata.type":"Edm.String"}`
	if r := send(t, signedTB(t, "POST", hs.URL, "/devstoreaccount1/batchtbl", plain)); r.StatusCode != 201 {
		t.Fatalf("insert with Edm.String keys: %d %s", r.StatusCode, r.body)
	}

	// In a batch, alone: the failure keeps its index.
	r := postBatch(t, hs, batchCT, changeset("POST http://HOST/devstoreaccount1/batchtbl HTTP/1.1\nPrefer: return-no-content\n\n"+typed))
	if o := outcomeOf(r); o.status != 202 || o.code != "InvalidInput" || o.index != 0 || len(o.parts) != 1 || o.parts[0] != 400 ||
		!strings.Contains(r.body, `"value":"0:`+sentence) {
		t.Fatalf("%+v\n%s", o, r.body)
	}
	r = postBatch(t, hs, batchCT, changeset("PATCH http://HOST"+url+" HTTP/1.1\nIf-Match: *\n\n"+typed))
	if o := outcomeOf(r); o.errorCode != "" || len(o.parts) != 1 || o.parts[0] != 204 {
		t.Fatalf("a merge in a batch with annotated keys: %+v\n%s", o, r.body)
	}
}
