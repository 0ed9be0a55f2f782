package emulator

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestEntityURLKeyEncoding: every URL tableemu builds from an entity's keys
// — an insert's Location, and DataServiceId under Prefer: return-no-content,
// odata.id and odata.editLink in fullmetadata, a batch insert's Location —
// doubles a quote and percent-encodes all but the RFC 2396 unreserved
// characters, as the live service answered the Python SDK's insert of
// RowKey RK'@*$!% (recording test_encoder_create_entity_basic, entry 3) and
// the JS SDK's of "A'aaa_bbbb2 (docs/protocol.md 1.3):
//
//	Location: …/uttable01ff8429c5(PartitionKey='PK',RowKey='RK''%40*%24!%25')
//
// The URL reads the entity back.
func TestEntityURLKeyEncoding(t *testing.T) {
	_, hs := batchServer(t)
	base := hs.URL + "/devstoreaccount1/"
	const path = "batchtbl(PartitionKey='PK',RowKey='RK''%40*%24!%25')"

	r := send(t, signedTB(t, "POST", hs.URL, "/devstoreaccount1/batchtbl", `{"PartitionKey":"PK","RowKey":"RK'@*$!%"}`))
	if r.StatusCode != 201 || r.Header.Get("Location") != base+path {
		t.Fatalf("insert: %d Location %q, want %q", r.StatusCode, r.Header.Get("Location"), base+path)
	}
	if g := send(t, signedTB(t, "GET", hs.URL, "/devstoreaccount1/"+path, "")); g.StatusCode != 200 || !strings.Contains(g.body, `"RowKey":"RK'@*$!%"`) {
		t.Fatalf("GET the Location: %d %s", g.StatusCode, g.body)
	}

	// Every byte outside the unreserved set, and UTF-8.
	req := signedTB(t, "POST", hs.URL, "/devstoreaccount1/batchtbl", `{"PartitionKey":"a b\"+,;=&:","RowKey":"~-_.()ä"}`)
	req.Header.Set("Prefer", "return-no-content")
	r = send(t, req)
	const want = "batchtbl(PartitionKey='a%20b%22%2B%2C%3B%3D%26%3A',RowKey='~-_.()%C3%A4')"
	if r.StatusCode != 204 || r.Header.Get("Location") != base+want || r.Header.Get("DataServiceId") != base+want {
		t.Fatalf("return-no-content: %d Location %q DataServiceId %q, want %q", r.StatusCode,
			r.Header.Get("Location"), r.Header.Get("DataServiceId"), base+want)
	}

	req = signedTB(t, "GET", hs.URL, "/devstoreaccount1/"+path, "")
	req.Header.Set("Accept", "application/json;odata=fullmetadata")
	r = send(t, req)
	var e struct {
		ID       string `json:"odata.id"`
		EditLink string `json:"odata.editLink"`
	}
	if err := json.Unmarshal([]byte(r.body), &e); err != nil || e.ID != base+path || e.EditLink != path {
		t.Fatalf("fullmetadata: odata.id %q, odata.editLink %q (%v), want %q", e.ID, e.EditLink, err, path)
	}

	r = postBatch(t, hs, batchCT, changeset("POST http://HOST/devstoreaccount1/batchtbl HTTP/1.1\n"+
		"Content-Type: application/json\nPrefer: return-no-content\n\n"+`{"PartitionKey":"PK","RowKey":"$@"}`))
	if loc := "Location: " + base + "batchtbl(PartitionKey='PK',RowKey='%24%40')\r\n"; r.StatusCode != 202 || !strings.Contains(r.body, loc) {
		t.Fatalf("batch insert: want %q in\n%s", loc, r.body)
	}
}

// TestCosmosLocationKeyEncoding: under the cosmos profile an insert's
// Location, alone (201 and 204) and in a batch part, escapes the keys as
// Cosmos DB answered the Python SDK's insert of RowKey RK'@*$!%
// (python-cosmos test_encoder_create_entity_basic, entry 3;
// wire.AppendCosmosLocationPath):
//
//	Location: …/uttable015cb82f2c(PartitionKey='PK',RowKey='RK''@*$!%2525')
//
// odata.id and odata.editLink keep Table storage's escaping (no Cosmos
// recording shows them for such keys).
func TestCosmosLocationKeyEncoding(t *testing.T) {
	_, hs := batchServerWith(t, Config{InMemory: true, Silent: true, Profile: ProfileCosmos})
	base := hs.URL + "/devstoreaccount1/"
	const path = "batchtbl(PartitionKey='PK',RowKey='RK''@*$!%2525')"
	r := send(t, signedTB(t, "POST", hs.URL, "/devstoreaccount1/batchtbl", `{"PartitionKey":"PK","RowKey":"RK'@*$!%"}`))
	if r.StatusCode != 201 || r.Header.Get("Location") != base+path {
		t.Fatalf("insert: %d Location %q, want %q", r.StatusCode, r.Header.Get("Location"), base+path)
	}
	req := signedTB(t, "POST", hs.URL, "/devstoreaccount1/batchtbl", `{"PartitionKey":"a b","RowKey":"ä"}`)
	req.Header.Set("Prefer", "return-no-content")
	r = send(t, req)
	const want = "batchtbl(PartitionKey='a%20b',RowKey='%C3%A4')"
	if r.StatusCode != 204 || r.Header.Get("Location") != base+want || r.Header.Get("DataServiceId") != "" {
		t.Fatalf("return-no-content: %d Location %q DataServiceId %q, want %q and none", r.StatusCode,
			r.Header.Get("Location"), r.Header.Get("DataServiceId"), base+want)
	}
	req = signedTB(t, "GET", hs.URL, "/devstoreaccount1/batchtbl(PartitionKey='PK',RowKey='RK''%40*%24!%25')", "")
	req.Header.Set("Accept", "application/json;odata=fullmetadata")
	r = send(t, req)
	var e struct {
		ID       string `json:"odata.id"`
		EditLink string `json:"odata.editLink"`
	}
	const storagePath = "batchtbl(PartitionKey='PK',RowKey='RK''%40*%24!%25')"
	if err := json.Unmarshal([]byte(r.body), &e); err != nil || e.ID != base+storagePath || e.EditLink != storagePath {
		t.Fatalf("fullmetadata: odata.id %q, odata.editLink %q (%v), want %q", e.ID, e.EditLink, err, storagePath)
	}
	r = postBatch(t, hs, batchCT, changeset("POST http://HOST/devstoreaccount1/batchtbl HTTP/1.1\n"+
		"Content-Type: application/json\nPrefer: return-no-content\n\n"+`{"PartitionKey":"PK","RowKey":"$@%"}`))
	if loc := "Location: " + base + "batchtbl(PartitionKey='PK',RowKey='$@%2525')\r\n"; r.StatusCode != 202 || !strings.Contains(r.body, loc) {
		t.Fatalf("batch insert: want %q in\n%s", loc, r.body)
	}
}
