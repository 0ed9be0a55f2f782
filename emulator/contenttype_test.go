package emulator

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tableemu/tableemu"
)

// The Content-Type of a JSON body (contenttype.go, docs/protocol.md 2.1):
// every operation that takes a table or an entity accepts application/json
// with any parameters, and refuses a missing one with 400 InvalidInput,
// Atom with 415 AtomFormatNotSupported and any other type with 415
// MediaTypeNotSupported, writing nothing.

// jsonTypes are Content-Type values clients send, all accepted.
var jsonTypes = []string{
	"application/json",                           // Go, Python, Java, the explorer
	"application/json;odata=nometadata",          // JS, .NET, Python inserts
	"application/json; odata=nometadata",         // .NET, as recorded
	"application/json;type=entry",                // the legacy SDKs
	"application/json; charset=utf-8",            //
	"APPLICATION/JSON;Odata=FullMetadata",        // case does not matter
	"  application/json ; odata=minimalmetadata", // nor white space
	"application/json;odata=minimalmetadata;streaming=true;charset=utf-8",
}

// refusedTypes are Content-Type values ("" for none at all), each with the
// code it gets. The first six are what a web page on another site can
// send without a preflight (docs/security.md).
var refusedTypes = []struct {
	ct   string
	code tableemu.Code
}{
	{"", tableemu.InvalidInput},
	{"text/plain", tableemu.MediaTypeNotSupported},
	{"text/plain;charset=UTF-8", tableemu.MediaTypeNotSupported},
	{"application/x-www-form-urlencoded", tableemu.MediaTypeNotSupported},
	{"multipart/form-data; boundary=----WebKitFormBoundaryx", tableemu.MediaTypeNotSupported},
	{" ", tableemu.InvalidInput},
	{"application/atom+xml", tableemu.AtomFormatNotSupported},
	{"application/atom+xml;type=entry", tableemu.AtomFormatNotSupported},
	{"Application/Atom+XML", tableemu.AtomFormatNotSupported},
	{"application/xml", tableemu.MediaTypeNotSupported},
	{"text/xml", tableemu.MediaTypeNotSupported},
	{"application/octet-stream", tableemu.MediaTypeNotSupported},
	{"text/json", tableemu.MediaTypeNotSupported},
	{"application/jsonp", tableemu.MediaTypeNotSupported},
	{"application/json, text/plain", tableemu.MediaTypeNotSupported},
}

// ctOp is an operation that takes a JSON body, sent with a Content-Type.
type ctOp struct {
	name         string
	method, path string
	hdr          []string // more headers, in pairs
	body         string
	ok           int                    // its status when accepted
	wrote        func(*testing.T, bool) // checks whether it wrote (true) or not
}

// ctOps are the six operations, each writing something of its own, whose
// effect is visible through a read.
func ctOps(hs *httptest.Server, id string) []ctOp {
	table := func(name string) func(*testing.T, bool) {
		return func(t *testing.T, want bool) {
			t.Helper()
			st := send(t, signed(t, "GET", hs.URL, "/devstoreaccount1/Tables('"+name+"')", "")).StatusCode
			if (st == 200) != want {
				t.Errorf("table %s: GET %d, want it to exist: %v", name, st, want)
			}
		}
	}
	entity := func(rk, prop string) func(*testing.T, bool) {
		return func(t *testing.T, want bool) {
			t.Helper()
			r := send(t, signed(t, "GET", hs.URL, "/devstoreaccount1/cttbl(PartitionKey='p',RowKey='"+rk+"')", ""))
			got := r.StatusCode == 200 && strings.Contains(r.body, `"`+prop+`":"`+id+`"`)
			if got != want {
				t.Errorf("entity %s: %d %s, want %s=%s: %v", rk, r.StatusCode, r.body, prop, id, want)
			}
		}
	}
	key := func(rk string) string { return "/devstoreaccount1/cttbl(PartitionKey='p',RowKey='" + rk + "')" }
	tn := "ct" + strings.ReplaceAll(id, "_", "")
	return []ctOp{
		{"Create Table", "POST", "/devstoreaccount1/Tables", nil, `{"TableName":"` + tn + `"}`, 201, table(tn)},
		{"Insert Entity", "POST", "/devstoreaccount1/cttbl", nil, `{"PartitionKey":"p","RowKey":"ins` + id + `","V":"` + id + `"}`, 201, entity("ins"+id, "V")},
		{"Insert Entity below the table name", "POST", "/devstoreaccount1/cttbl/Tables", nil, `{"PartitionKey":"p","RowKey":"under` + id + `","V":"` + id + `"}`, 201, entity("under"+id, "V")},
		{"Update Entity", "PUT", key("existing"), []string{"If-Match", "*"}, `{"U":"` + id + `"}`, 204, entity("existing", "U")},
		{"Insert Or Replace Entity", "PUT", key("ior" + id), nil, `{"V":"` + id + `"}`, 204, entity("ior"+id, "V")},
		{"Merge Entity", "MERGE", key("existing"), []string{"If-Match", "*"}, `{"M":"` + id + `"}`, 204, entity("existing", "M")},
		{"Merge Entity by PATCH", "PATCH", key("existing"), []string{"If-Match", "*"}, `{"P":"` + id + `"}`, 204, entity("existing", "P")},
		{"Merge Entity by X-HTTP-Method", "POST", key("existing"), []string{"If-Match", "*", "X-HTTP-Method", "MERGE"}, `{"X":"` + id + `"}`, 204, entity("existing", "X")},
		{"Insert Or Merge Entity", "MERGE", key("iom" + id), nil, `{"V":"` + id + `"}`, 204, entity("iom"+id, "V")},
	}
}

// ctServer is a server with table cttbl holding entity p/existing.
func ctServer(t *testing.T) *httptest.Server {
	t.Helper()
	_, hs := newTestServer(t)
	for _, r := range []*http.Request{
		signed(t, "POST", hs.URL, "/devstoreaccount1/Tables", `{"TableName":"cttbl"}`),
		signed(t, "POST", hs.URL, "/devstoreaccount1/cttbl", `{"PartitionKey":"p","RowKey":"existing"}`),
	} {
		if st := send(t, r).StatusCode; st != 201 {
			t.Fatalf("%s %s: %d", r.Method, r.URL.Opaque, st)
		}
	}
	return hs
}

func sendCT(t *testing.T, hs *httptest.Server, op ctOp, ct []string) *sent {
	t.Helper()
	req := signed(t, op.method, hs.URL, op.path, op.body)
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	for i := 0; i+1 < len(op.hdr); i += 2 {
		req.Header.Set(op.hdr[i], op.hdr[i+1])
	}
	if ct == nil {
		req.Header.Del("Content-Type")
	} else {
		req.Header["Content-Type"] = ct
	}
	return send(t, req)
}

// readAnyError is readError for a JSON or an OData XML error body (415
// AtomFormatNotSupported is XML, errors.go).
func readAnyError(t *testing.T, r *sent) odataError {
	t.Helper()
	if !strings.HasPrefix(r.body, "<?xml") {
		return readError(t, r)
	}
	var x struct {
		Code    string `xml:"code"`
		Message string `xml:"message"`
	}
	if err := xml.Unmarshal([]byte(r.body), &x); err != nil {
		t.Fatalf("status %d, body not an OData XML error: %v: %s", r.StatusCode, err, r.body)
	}
	msg, _, _ := strings.Cut(x.Message, "\nRequestId:")
	return odataError{r.StatusCode, r.Header.Get("x-ms-error-code"), x.Code, msg}
}

func TestJSONContentTypeAccepted(t *testing.T) {
	hs := ctServer(t)
	for i, ct := range jsonTypes {
		for _, op := range ctOps(hs, fmt.Sprint("a", i)) {
			t.Run(op.name+"/"+ct, func(t *testing.T) {
				if r := sendCT(t, hs, op, []string{ct}); r.StatusCode != op.ok {
					t.Fatalf("%d, want %d: %s", r.StatusCode, op.ok, r.body)
				}
				op.wrote(t, true)
			})
		}
	}
}

func TestJSONContentTypeRefused(t *testing.T) {
	hs := ctServer(t)
	for i, tc := range refusedTypes {
		for _, op := range ctOps(hs, fmt.Sprint("r", i)) {
			t.Run(op.name+"/"+tc.ct, func(t *testing.T) {
				var ct []string // no header at all
				if tc.ct != "" {
					ct = []string{tc.ct}
				}
				e := readAnyError(t, sendCT(t, hs, op, ct))
				status := 415
				if tc.code == tableemu.InvalidInput {
					status = 400
				}
				if e.status != status || e.header != string(tc.code) || e.code != string(tc.code) {
					t.Fatalf("got %d %q/%q, want %d %s: %s", e.status, e.header, e.code, status, tc.code, e.message)
				}
				service := map[tableemu.Code]string{
					tableemu.InvalidInput:           "Content-Type header value missing.",
					tableemu.MediaTypeNotSupported:  "None of the provided media types are supported.",
					tableemu.AtomFormatNotSupported: "Atom format is not supported.",
				}[tc.code]
				if !strings.HasPrefix(e.message, service+"\ntableemu: ") || !strings.Contains(e.message, "Content-Type: application/json") {
					t.Errorf("message %q: want the service's %q, then a hint naming application/json", e.message, service)
				}
				op.wrote(t, false)
			})
		}
	}
	// Two Content-Type headers: each must be JSON.
	op := ctOps(hs, "two")[1]
	if e := readError(t, sendCT(t, hs, op, []string{"application/json", "text/plain"})); e.code != string(tableemu.MediaTypeNotSupported) {
		t.Errorf("application/json and text/plain: %d %s, want 415 MediaTypeNotSupported", e.status, e.code)
	}
	op.wrote(t, false)
}

// TestJSONContentTypeAfterAuth: authentication comes first, as on the
// service: a request that is not signed right is refused for that, whatever
// its Content-Type.
func TestJSONContentTypeAfterAuth(t *testing.T) {
	hs := ctServer(t)
	req := signed(t, "POST", hs.URL, "/devstoreaccount1/cttbl", `{"PartitionKey":"p","RowKey":"x"}`)
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("Authorization", "SharedKeyLite devstoreaccount1:AAAA")
	if r := send(t, req); r.StatusCode != 403 || r.Header.Get("x-ms-error-code") != "AuthenticationFailed" {
		t.Fatalf("%d %s, want 403 AuthenticationFailed", r.StatusCode, r.Header.Get("x-ms-error-code"))
	}
}

// withJSONContentType adds "Content-Type: application/json" to an
// operation (as for changeset, batch_test.go) that has a body and no Content-Type.
func withJSONContentType(op string) string {
	i := strings.Index(op, " HTTP/1.1\n")
	if i < 0 {
		return op
	}
	i += len(" HTTP/1.1\n")
	head, body, ok := strings.Cut("\n"+op[i:], "\n\n")
	if !ok || strings.TrimSpace(body) == "" || strings.Contains(strings.ToLower(head), "\ncontent-type:") {
		return op
	}
	return op[:i] + "Content-Type: application/json\n" + op[i:]
}

// TestJSONContentTypeBatch: in a change set each insert, update, merge and
// upsert needs application/json (with any parameters) as at top level; a
// refusal is that operation's, with its index, and the change set writes
// nothing. Deletes and gets carry no body and need none.
func TestJSONContentTypeBatch(t *testing.T) {
	_, hs := batchServer(t)
	ops := func(id, ct string) []string {
		h := ""
		if ct != "" {
			h = "Content-Type: " + ct + "\n"
		}
		e := "http://HOST/devstoreaccount1/batchtbl(PartitionKey='b',RowKey='"
		return []string{
			"POST http://HOST/devstoreaccount1/batchtbl HTTP/1.1\n" + h + "\n{\"PartitionKey\":\"b\",\"RowKey\":\"ins" + id + "\"}",
			"PUT " + e + "ior" + id + "') HTTP/1.1\n" + h + "\n{\"V\":1}",
			"PUT " + e + "base') HTTP/1.1\nIf-Match: *\n" + h + "\n{\"V\":1}",
			"MERGE " + e + "iom" + id + "') HTTP/1.1\n" + h + "\n{\"V\":1}",
			"PATCH " + e + "base2') HTTP/1.1\nIf-Match: *\n" + h + "\n{\"W\":1}",
		}
	}
	if o := outcomeOf(postBatch(t, hs, batchCT, changeset(insertOp("b", "base"), insertOp("b", "base2")))); o.status != 202 || o.code != "" {
		t.Fatalf("setup: %+v", o)
	}
	for i, ct := range jsonTypes {
		id := fmt.Sprint("a", i)
		if o := outcomeOf(postBatch(t, hs, batchCT, rawChangeset(ops(id, ct)...))); o.status != 202 || o.code != "" || len(o.parts) != 5 {
			t.Errorf("%q: %+v, want five successes", ct, o)
		}
		if st := entityStatus(t, hs, "batchtbl", "b", "ins"+id); st != 200 {
			t.Errorf("%q: the insert is %d", ct, st)
		}
	}
	for i, tc := range refusedTypes {
		id := fmt.Sprint("r", i)
		for at := range 5 {
			// Operation at gets tc.ct, the others application/json.
			parts := ops(id, "application/json")
			parts[at] = ops(id, tc.ct)[at]
			o := outcomeOf(postBatch(t, hs, batchCT, rawChangeset(parts...)))
			if o.status != 202 || o.code != string(tc.code) || o.index != at || len(o.parts) != 1 {
				t.Errorf("%q in operation %d: %+v, want 202 with only operation %d failing with %s", tc.ct, at, o, at, tc.code)
			}
			if st := entityStatus(t, hs, "batchtbl", "b", "ins"+id); st != 404 {
				t.Errorf("%q in operation %d: the change set's insert is %d, want it rolled back (404)", tc.ct, at, st)
			}
		}
	}
	// A delete and a get have no body, and need no Content-Type.
	for _, op := range []string{
		"DELETE http://HOST/devstoreaccount1/batchtbl(PartitionKey='b',RowKey='inso0') HTTP/1.1\nIf-Match: *\n\n",
		"GET http://HOST/devstoreaccount1/batchtbl(PartitionKey='b',RowKey='base') HTTP/1.1\n\n",
	} {
		op = strings.Replace(op, "inso0", "ins"+fmt.Sprint("a", 0), 1)
		if o := outcomeOf(postBatch(t, hs, batchCT, rawChangeset(op))); o.status != 202 || o.code != "" || len(o.parts) != 1 || o.parts[0] >= 300 {
			t.Errorf("%s: %+v", strings.Fields(op)[0], o)
		}
	}
}

// TestJSONContentTypeAllocs: accepting a JSON Content-Type allocates
// nothing (it is on every write's path).
func TestJSONContentTypeAllocs(t *testing.T) {
	for _, ct := range jsonTypes {
		v := []string{ct}
		if n := testing.AllocsPerRun(100, func() {
			if checkJSONContentType(v) != nil {
				t.Fatalf("%q refused", ct)
			}
		}); n != 0 {
			t.Errorf("%q: %.0f allocations", ct, n)
		}
	}
}

// BenchmarkJSONContentType: the check's cost on each write.
//
//	go test ./emulator -run '^$' -bench JSONContentType -benchmem
func BenchmarkJSONContentType(b *testing.B) {
	for _, ct := range []string{"application/json", "application/json;odata=nometadata"} {
		v := []string{ct}
		b.Run(ct, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if checkJSONContentType(v) != nil {
					b.Fatal("refused")
				}
			}
		})
	}
}
