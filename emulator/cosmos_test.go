package emulator

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// cosmosReply is one answer of a test server, read whole.
type cosmosReply struct {
	status int
	h      http.Header
	body   string
}

func cosmosDo(t *testing.T, hs *httptest.Server, method, target, body string, hdr map[string]string) cosmosReply {
	t.Helper()
	req := signed(t, method, hs.URL, "/"+DevAccount+target, body)
	req.Header.Set("x-ms-client-request-id", "client-1")
	return cosmosSend(t, hs, req, hdr)
}

// cosmosSend sends req with hdr's headers and reads the whole answer.
func cosmosSend(t *testing.T, hs *httptest.Server, req *http.Request, hdr map[string]string) cosmosReply {
	t.Helper()
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return cosmosReply{resp.StatusCode, resp.Header, string(b)}
}

func newProfileServer(t *testing.T, profile string) *httptest.Server {
	t.Helper()
	s, err := New(Config{InMemory: true, Silent: true, Profile: profile})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.Close(); s.Close() })
	return hs
}

// cosmosMessage is an error message of Cosmos DB for Table: the text, an
// optional ActivityId line naming the request id, the RequestID line.
// tableemu's hints, lines starting "tableemu: ", come before the
// RequestID line.
var cosmosMessage = regexp.MustCompile(`^(.*?)(?:\r\nActivityId: ([0-9a-f-]{36}), tableemu)?(?:\ntableemu: [^\n]*)*\nRequestID:([0-9a-f-]{36})\n$`)

// TestCosmosProfileAnswers: under --profile cosmos the answers carry Cosmos
// DB for Table's headers, Content-Type and error bodies, as recorded from
// it (docs/cosmos.md; conformance TestReplayCosmos replays the recordings);
// under the default profile they stay Table storage's.
func TestCosmosProfileAnswers(t *testing.T) {
	hs := newProfileServer(t, ProfileCosmos)
	noneOf := func(where string, h http.Header, names ...string) {
		t.Helper()
		for _, n := range names {
			if v, ok := h[http.CanonicalHeaderKey(n)]; ok {
				t.Errorf("%s: %s %q, want none", where, n, v)
			}
		}
	}
	storageOnly := []string{"x-ms-request-id", "x-ms-version", "x-ms-client-request-id", "Server", "Cache-Control", "X-Content-Type-Options"}

	r := cosmosDo(t, hs, "POST", "/Tables", `{"TableName":"cosmos1"}`, nil)
	if r.status != 201 || r.h.Get("Content-Type") != "application/json; odata=minimalmetadata" || !strings.HasPrefix(r.h.Get("ETag"), `W/"datetime'`) {
		t.Fatalf("Create Table: %d %v %s", r.status, r.h, r.body)
	}
	if !strings.HasPrefix(r.body, `{"TableName":"cosmos1","odata.metadata":`) {
		t.Errorf("Create Table: %s, want odata.metadata after TableName", r.body)
	}
	noneOf("Create Table", r.h, storageOnly...)

	r = cosmosDo(t, hs, "POST", "/Tables", `{"TableName":"cosmos1"}`, nil)
	wantCosmosError(t, "Create Table again", r, 409, "TableAlreadyExists", "The specified table: [] already exists.", false, "application/json; odata=minimalmetadata")
	noneOf("Create Table again", r.h, storageOnly...)

	r = cosmosDo(t, hs, "GET", "/Tables", "", nil)
	if r.status != 200 || !strings.HasPrefix(r.body, `{"value":[{"TableName":"cosmos1"}],"odata.metadata":`) {
		t.Errorf("Query Tables: %d %s, want odata.metadata after value", r.status, r.body)
	}

	r = cosmosDo(t, hs, "POST", "/cosmos1", `{"PartitionKey":"p","RowKey":"r"}`, map[string]string{"Prefer": "return-no-content"})
	if r.status != 204 || r.h.Get("Content-Type") != "application/json" || r.h.Get("Location") == "" {
		t.Fatalf("Insert Entity, no content: %d %v", r.status, r.h)
	}
	noneOf("Insert Entity", r.h, append(storageOnly, "DataServiceId")...)

	r = cosmosDo(t, hs, "DELETE", "/cosmos1(PartitionKey='p',RowKey='nope')", "", map[string]string{"If-Match": "*"})
	wantCosmosError(t, "Delete Entity missing", r, 404, "ResourceNotFound", "The specified resource does not exist.", false, "application/json; odata=fullmetadata")

	r = cosmosDo(t, hs, "GET", "/cosmos1()?$filter=aaa%20bbb%20ccc", "", nil)
	wantCosmosError(t, "bad $filter", r, 400, "InvalidInput", "Request url is invalid.", true, "application/json; odata=minimalmetadata")

	r = cosmosDo(t, hs, "POST", "/cosmos1", `{"RowKey":"r"}`, nil)
	wantCosmosError(t, "Insert without PartitionKey", r, 400, "PropertiesNeedValue", "PartitionKey/RowKey cannot be empty", true, "application/json; odata=fullmetadata")

	r = cosmosDo(t, hs, "GET", "/nosuchtable()", "", nil)
	wantCosmosError(t, "Query a missing table", r, 404, "ResourceNotFound", "The specified resource does not exist.", false, "application/json; odata=minimalmetadata")

	t.Run("entities", testCosmosEntityForm) // cosmos_form_test.go

	// The default profile: Table storage's answers.
	st := newProfileServer(t, "")
	r = cosmosDo(t, st, "POST", "/Tables", `{"TableName":"storage1"}`, nil)
	if r.status != 201 || r.h.Get("ETag") != "" || r.h.Get("x-ms-request-id") == "" || r.h.Get("x-ms-client-request-id") != "client-1" ||
		r.h.Get("Cache-Control") != "no-cache" || !strings.Contains(r.h.Get("Content-Type"), "streaming=true") {
		t.Fatalf("storage Create Table: %d %v", r.status, r.h)
	}
	r = cosmosDo(t, st, "POST", "/Tables", `{"TableName":"storage1"}`, nil)
	var e struct {
		E struct {
			Code    string
			Message struct{ Lang, Value string }
		} `json:"odata.error"`
	}
	if err := json.Unmarshal([]byte(r.body), &e); err != nil || e.E.Code != "TableAlreadyExists" || e.E.Message.Lang != "en-US" ||
		!strings.HasPrefix(e.E.Message.Value, "The table specified already exists.\nRequestId:"+r.h.Get("x-ms-request-id")+"\nTime:") {
		t.Fatalf("storage 409: %s (%v)", r.body, err)
	}
}

func wantCosmosError(t *testing.T, where string, r cosmosReply, status int, code, text string, activity bool, ctype string) {
	t.Helper()
	var e struct {
		E struct {
			Code    string
			Message struct{ Lang, Value string }
		} `json:"odata.error"`
	}
	if err := json.Unmarshal([]byte(r.body), &e); err != nil {
		t.Fatalf("%s: %d %s: %v", where, r.status, r.body, err)
	}
	if r.status != status || e.E.Code != code || e.E.Message.Lang != "en-us" || r.h.Get("Content-Type") != ctype {
		t.Fatalf("%s: %d %s, Content-Type %q; want %d %s en-us, %q", where, r.status, r.body, r.h.Get("Content-Type"), status, code, ctype)
	}
	m := cosmosMessage.FindStringSubmatch(e.E.Message.Value)
	first, _, _ := strings.Cut(e.E.Message.Value, "\n")
	first = strings.TrimSuffix(first, "\r")
	if m == nil || first != text || (m[2] != "") != activity || (activity && m[2] != m[3]) {
		t.Fatalf("%s: message %q; want %q, then %s, then \\nRequestID:<id>\\n", where, e.E.Message.Value, text,
			map[bool]string{true: "an ActivityId line naming the id", false: "no ActivityId line"}[activity])
	}
}
