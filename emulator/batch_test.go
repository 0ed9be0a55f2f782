package emulator

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Tests of $batch (docs/protocol.md 7) at the wire: golden exchanges in the
// layouts the Go, JS and .NET SDKs (and the legacy Node SDK) send
// (batch_golden_test.go), the parser's tolerance, and the rules whose
// failures live inside the 202. The SDK-level behaviour is in
// conformance/batch_test.go.

// batchServer is a test server with the tables "batchtbl" and "other".
func batchServer(t testing.TB) (*Server, *httptest.Server) {
	return batchServerWith(t, Config{InMemory: true, Silent: true})
}

// batchServerWith is batchServer on cfg (batch_cosmos_test.go: under the
// cosmos profile).
func batchServerWith(t testing.TB, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.Close(); s.Close() })
	for _, name := range []string{"batchtbl", "other"} {
		resp := send(t, signedTB(t, "POST", hs.URL, "/devstoreaccount1/Tables", `{"TableName":"`+name+`"}`))
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("create table %s: %d", name, resp.StatusCode)
		}
	}
	return s, hs
}

// signedTB is server_test.go's signed for benchmarks and fuzzers too.
func signedTB(t testing.TB, method, base, target, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, base+"/", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	path, query, _ := strings.Cut(target, "?")
	req.URL.Opaque, req.URL.RawQuery = path, query
	if body != "" {
		req.Header.Set("Content-Type", "application/json") // a test may set another
	}
	date := time.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("x-ms-version", "2019-02-02")
	key, _ := base64.StdEncoding.DecodeString(DevKey)
	m := hmac.New(sha256.New, key)
	io.WriteString(m, date+"\n/"+DevAccount+path)
	req.Header.Set("Authorization", "SharedKeyLite "+DevAccount+":"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	return req
}

type sent struct {
	*http.Response
	body string
}

func send(t testing.TB, req *http.Request) *sent {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &sent{resp, string(b)}
}

// postBatch sends body to $batch as is, after replacing "HOST" with the
// server's host:port.
func postBatch(t testing.TB, hs *httptest.Server, contentType, body string) *sent {
	t.Helper()
	body = strings.ReplaceAll(body, "HOST", strings.TrimPrefix(hs.URL, "http://"))
	req := signedTB(t, "POST", hs.URL, "/devstoreaccount1/$batch", body)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	req.Header.Set("DataServiceVersion", "3.0")
	return send(t, req)
}

func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`batchresponse_[0-9a-f-]{36}`), "batchresponse_B"},
	{regexp.MustCompile(`changesetresponse_[0-9a-f-]{36}`), "changesetresponse_C"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d(%3A|:)\d\d(%3A|:)\d\d\.\d{7}Z`), "TS"},
	{regexp.MustCompile(`RequestId:[0-9a-f-]{36}`), "RequestId:ID"},
	{regexp.MustCompile(`127\.0\.0\.1:\d+`), "HOST"},
}

// normalize replaces what varies between runs (boundaries, times, ids,
// the port) and turns CRLF into "\n", after checking that every line ends
// with CRLF (docs/protocol.md 0.1).
func normalize(t *testing.T, s string) string {
	t.Helper()
	if strings.Contains(strings.ReplaceAll(s, "\r\n", ""), "\n") {
		t.Errorf("a line of the batch response does not end with CRLF:\n%q", s)
	}
	for _, n := range normalizers {
		s = n.re.ReplaceAllString(s, n.with)
	}
	return strings.ReplaceAll(s, "\r\n", "\n")
}

func TestBatchGolden(t *testing.T) {
	_, hs := batchServer(t)
	for _, g := range append(goldens, pythonGoldens...) {
		t.Run(g.name, func(t *testing.T) {
			for _, setup := range g.setup {
				r := postBatch(t, hs, "multipart/mixed; boundary=batch_s", setup)
				if r.StatusCode != 202 || r.Header.Get("x-ms-error-code") != "" {
					t.Fatalf("setup: %d %s", r.StatusCode, r.body)
				}
			}
			req := g.request
			if !g.lf {
				req = crlf(req)
			}
			r := postBatch(t, hs, g.contentType, req)
			if r.StatusCode != g.status || r.Header.Get("x-ms-error-code") != g.errorCode {
				t.Fatalf("status %d, x-ms-error-code %q; want %d, %q\n%s", r.StatusCode, r.Header.Get("x-ms-error-code"), g.status, g.errorCode, r.body)
			}
			ct := r.Header.Get("Content-Type")
			if !strings.HasPrefix(ct, "multipart/mixed; boundary=batchresponse_") || !strings.HasPrefix(r.body, "--"+strings.TrimPrefix(ct, "multipart/mixed; boundary=")+"\r\n") {
				t.Errorf("Content-Type %q does not name the body's boundary", ct)
			}
			if got := normalize(t, r.body); got != g.response {
				t.Errorf("response differs from the golden one:\n--- got\n%s\n--- want\n%s", got, g.response)
			}
		})
	}
}

// outcome is a batch response in brief: the outer status and error code,
// and each part's status; for a failure, the code and message index (-1
// when the message has none).
type outcome struct {
	status    int
	errorCode string
	parts     []int
	code      string
	index     int
}

var (
	partStatus = regexp.MustCompile(`(?m)^HTTP/1\.1 (\d{3}) `)
	partError  = regexp.MustCompile(`"code":"(\w+)","message":\{"lang":"en-US","value":"(?:(\d+):)?`)
)

func outcomeOf(r *sent) outcome {
	o := outcome{status: r.StatusCode, errorCode: r.Header.Get("x-ms-error-code"), index: -1}
	for _, m := range partStatus.FindAllStringSubmatch(r.body, -1) {
		var n int
		fmt.Sscan(m[1], &n)
		o.parts = append(o.parts, n)
	}
	if m := partError.FindStringSubmatch(r.body); m != nil && r.StatusCode == 202 {
		o.code = m[1]
		if m[2] != "" {
			fmt.Sscan(m[2], &o.index)
		}
	}
	return o
}

// op is one operation for changeset: "METHOD target" then headers and an
// optional body, LF-separated as in a part. An operation with a body and
// no Content-Type gets "Content-Type: application/json", as every SDK
// sends it (contenttype.go); rawChangeset leaves the operations as they are.
func changeset(ops ...string) string {
	for i, op := range ops {
		ops[i] = withJSONContentType(op)
	}
	return rawChangeset(ops...)
}

func rawChangeset(ops ...string) string {
	var b strings.Builder
	b.WriteString("--batch_t\r\nContent-Type: multipart/mixed; boundary=changeset_t\r\n\r\n")
	for _, op := range ops {
		b.WriteString("--changeset_t\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		b.WriteString(crlf(op))
		b.WriteString("\r\n")
	}
	b.WriteString("--changeset_t--\r\n--batch_t--\r\n")
	return b.String()
}

const batchCT = "multipart/mixed; boundary=batch_t"

func insertOp(pk, rk string) string {
	return fmt.Sprintf("POST http://HOST/devstoreaccount1/batchtbl HTTP/1.1\nPrefer: return-no-content\nContent-Type: application/json\n\n{\"PartitionKey\":%q,\"RowKey\":%q}", pk, rk)
}

// entityStatus is the status of a Get Entity through the single API.
func entityStatus(t *testing.T, hs *httptest.Server, table, pk, rk string) int {
	t.Helper()
	r := send(t, signedTB(t, "GET", hs.URL, "/devstoreaccount1/"+table+"(PartitionKey='"+pk+"',RowKey='"+rk+"')", ""))
	return r.StatusCode
}

// TestBatchTolerance: layouts real clients send, or could, all accepted
// (docs/protocol.md 7.1).
func TestBatchTolerance(t *testing.T) {
	_, hs := batchServer(t)
	ins := func(rk string) string {
		return "POST http://HOST/devstoreaccount1/batchtbl HTTP/1.1\nPrefer: return-no-content\nContent-Type: application/json\n\n{\"PartitionKey\":\"p\",\"RowKey\":\"" + rk + "\"}"
	}
	cases := []struct {
		name, contentType, body, rk string
	}{
		{"LF line endings", batchCT, "--batch_t\nContent-Type: multipart/mixed; boundary=changeset_t\n\n--changeset_t\nContent-Type: application/http\n\n" + ins("lf") + "\n--changeset_t--\n--batch_t--\n", "lf"},
		{"quoted boundaries", `multipart/mixed; boundary="batch_t"`, strings.Replace(changeset(ins("quoted")), "boundary=changeset_t", `boundary="changeset_t"`, 1), "quoted"},
		{"close delimiter without --", batchCT, strings.TrimSuffix(changeset(ins("noclose")), "--batch_t--\r\n") + "--batch_t\r\n", "noclose"},
		{"no close delimiters at all", batchCT, strings.TrimSuffix(changeset(ins("noend")), "--changeset_t--\r\n--batch_t--\r\n"), "noend"},
		{"preamble, epilogue, padding", batchCT, "preamble\r\n" + strings.ReplaceAll(changeset(ins("pad")), "--changeset_t\r\n", "--changeset_t  \r\n") + "epilogue", "pad"},
		{"blank lines before the request line", batchCT, changeset("\n\n" + ins("blank")), "blank"},
		{"path target", batchCT, changeset(strings.Replace(ins("path"), "http://HOST", "", 1)), "path"},
		{"relative target", batchCT, changeset(strings.Replace(ins("rel"), "http://HOST/devstoreaccount1/", "", 1)), "rel"},
		{"https target, other host", batchCT, changeset(strings.Replace(ins("https"), "http://HOST", "https://127.0.0.1:1", 1)), "https"},
		{"folded header", batchCT, changeset(strings.Replace(ins("fold"), "Prefer: return-no-content", "X-Folded: a\n\tb\nPrefer: return-no-content", 1)), "fold"},
		{"empty header values", batchCT, changeset(strings.Replace(ins("empty"), "Prefer:", "x-ms-version:\nDataServiceVersion: \nPrefer:", 1)), "empty"},
		{"lower-case method", batchCT, changeset(strings.Replace(ins("lower"), "POST", "post", 1)), "lower"},
		{"charset parameter", `multipart/mixed; charset="utf-8"; boundary=batch_t`, strings.Replace(changeset(ins("cs")), "multipart/mixed; boundary=changeset_t", `multipart/mixed;charset="utf-8";boundary=changeset_t`, 1), "cs"},
		{"legacy entry Content-Type", batchCT, changeset(strings.Replace(ins("entry"), "Content-Type: application/json", "Content-Type: application/json;type=entry", 1)), "entry"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := postBatch(t, hs, tc.contentType, tc.body)
			o := outcomeOf(r)
			if o.status != 202 || o.errorCode != "" || len(o.parts) != 1 || o.parts[0] != 204 {
				t.Fatalf("%+v\n%s", o, r.body)
			}
			if st := entityStatus(t, hs, "batchtbl", "p", tc.rk); st != 200 {
				t.Fatalf("entity not written: %d", st)
			}
		})
	}
}

// TestBatchVerbs: merge by MERGE, PATCH and POST + X-HTTP-Method inside a
// batch, as outside (docs/protocol.md 1.2).
func TestBatchVerbs(t *testing.T) {
	_, hs := batchServer(t)
	r := postBatch(t, hs, batchCT, changeset(insertOp("p", "a"), insertOp("p", "b"), insertOp("p", "c")))
	if o := outcomeOf(r); o.errorCode != "" {
		t.Fatal(r.body)
	}
	target := func(rk string) string {
		return "http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='" + rk + "')"
	}
	r = postBatch(t, hs, batchCT, changeset(
		"MERGE "+target("a")+" HTTP/1.1\nIf-Match: *\n\n{\"M\":1}",
		"PATCH "+target("b")+" HTTP/1.1\nIf-Match: *\n\n{\"M\":1}",
		"POST "+target("c")+" HTTP/1.1\nX-HTTP-Method: MERGE\nIf-Match: *\n\n{\"M\":1}",
		"POST "+target("d")+" HTTP/1.1\nX-HTTP-Method: MERGE\n\n{\"M\":1}",
	))
	if o := outcomeOf(r); o.errorCode != "" || fmt.Sprint(o.parts) != "[204 204 204 204]" {
		t.Fatalf("%+v\n%s", o, r.body)
	}
	for _, rk := range []string{"a", "b", "c", "d"} {
		g := send(t, signedTB(t, "GET", hs.URL, "/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='"+rk+"')", ""))
		if !strings.Contains(g.body, `"M":1`) {
			t.Errorf("%s not merged: %s", rk, g.body)
		}
	}
}

// TestBatchMalformed: a body that is not a batch fails the whole request
// with 400 InvalidInput and a message saying what is wrong (docs/protocol.md 7.4).
func TestBatchMalformed(t *testing.T) {
	_, hs := batchServer(t)
	ok := changeset(insertOp("p", "m"))
	cases := []struct {
		name, contentType, body, says string
	}{
		{"no Content-Type", "", ok, "multipart/mixed"},
		{"JSON Content-Type", "application/json", ok, "multipart/mixed"},
		{"no boundary", "multipart/mixed", ok, "boundary"},
		{"boundary absent from the body", "multipart/mixed; boundary=nope", ok, "delimiter"},
		{"empty body", batchCT, "", "delimiter"},
		{"empty batch", batchCT, "--batch_t--\r\n", "no changeset"},
		{"two changesets", batchCT, strings.Replace(ok, "--batch_t--", "--batch_t\r\nContent-Type: multipart/mixed; boundary=changeset_t\r\n\r\n--changeset_t--\r\n--batch_t--", 1), "2 parts"},
		{"no request line", batchCT, changeset("Prefer: return-no-content\n\n{}"), "request line"},
		{"request line without version", batchCT, changeset("POST http://HOST/devstoreaccount1/batchtbl\n\n{}"), "request line"},
		{"header without colon", batchCT, changeset("POST http://HOST/devstoreaccount1/batchtbl HTTP/1.1\nPrefer return-no-content\n\n{}"), "Name: value"},
		{"part of another type", batchCT, strings.Replace(ok, "Content-Type: application/http", "Content-Type: text/plain", 1), "application/http"},
		{"text after a delimiter", batchCT, strings.Replace(ok, "--changeset_t\r\n", "--changeset_t junk\r\n", 1), "follows the boundary"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := postBatch(t, hs, tc.contentType, tc.body)
			if r.StatusCode != 400 || r.Header.Get("x-ms-error-code") != "InvalidInput" {
				t.Fatalf("%d %q: %s", r.StatusCode, r.Header.Get("x-ms-error-code"), r.body)
			}
			var e struct {
				Err struct {
					Code    string
					Message struct{ Value string }
				} `json:"odata.error"`
			}
			if err := json.Unmarshal([]byte(r.body), &e); err != nil || e.Err.Code != "InvalidInput" || !strings.Contains(e.Err.Message.Value, tc.says) {
				t.Fatalf("want a message saying %q: %s", tc.says, r.body)
			}
		})
	}
	if st := entityStatus(t, hs, "batchtbl", "p", "m"); st != 404 {
		t.Fatalf("a malformed batch wrote an entity: %d", st)
	}
}

// TestBatchOperationFailures: each rule, broken by the second operation,
// answers 202 with only that operation's part, its index in the message,
// the code in x-ms-error-code, and the first operation not written
// (docs/protocol.md 0.1, 7.4).
func TestBatchOperationFailures(t *testing.T) {
	_, hs := batchServer(t)
	first := insertOp("p", "first")
	entity := func(pk, rk string) string {
		return "http://HOST/devstoreaccount1/batchtbl(PartitionKey='" + pk + "',RowKey='" + rk + "')"
	}
	cases := []struct {
		name   string
		second string
		status int
		code   string
	}{
		{"two partitions", insertOp("q", "x"), 400, "CommandsInBatchActOnDifferentPartitions"},
		{"another table", "POST http://HOST/devstoreaccount1/other HTTP/1.1\n\n{\"PartitionKey\":\"p\",\"RowKey\":\"x\"}", 400, "CommandsInBatchActOnDifferentPartitions"},
		{"same entity", "DELETE " + entity("p", "first") + " HTTP/1.1\nIf-Match: *\n\n", 400, "InvalidDuplicateRow"},
		{"query among writes", "GET " + entity("p", "x") + " HTTP/1.1\n\n", 400, "InvalidInput"},
		{"another account", "POST http://HOST/otheraccount/batchtbl HTTP/1.1\n\n{\"PartitionKey\":\"p\",\"RowKey\":\"x\"}", 400, "InvalidInput"},
		{"table operation", "POST http://HOST/devstoreaccount1/Tables HTTP/1.1\n\n{\"TableName\":\"x\"}", 400, "InvalidInput"},
		{"POST to an entity", "POST " + entity("p", "x") + " HTTP/1.1\n\n{}", 405, "UnsupportedHttpVerb"},
		{"delete without If-Match", "DELETE " + entity("p", "x") + " HTTP/1.1\n\n", 400, "MissingRequiredHeader"},
		{"malformed If-Match", "PUT " + entity("p", "x") + " HTTP/1.1\nIf-Match: nonsense\n\n{}", 400, "InvalidInput"},
		{"X-HTTP-Method on PUT", "PUT " + entity("p", "x") + " HTTP/1.1\nX-HTTP-Method: MERGE\n\n{}", 400, "XMethodNotUsingPost"},
		{"body not JSON", "POST http://HOST/devstoreaccount1/batchtbl HTTP/1.1\n\n{\"PartitionKey\":", 400, "InvalidInput"},
		{"insert without RowKey", "POST http://HOST/devstoreaccount1/batchtbl HTTP/1.1\n\n{\"PartitionKey\":\"p\"}", 400, "PropertiesNeedValue"},
		{"key with a slash", "DELETE http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='a%2Fb') HTTP/1.1\nIf-Match: *\n\n", 400, "InvalidInput"},
		{"Atom only", "POST http://HOST/devstoreaccount1/batchtbl HTTP/1.1\nAccept: application/atom+xml\n\n{\"PartitionKey\":\"p\",\"RowKey\":\"x\"}", 415, "AtomFormatNotSupported"},
		{"missing entity", "DELETE " + entity("p", "x") + " HTTP/1.1\nIf-Match: *\n\n", 404, "ResourceNotFound"},
		{"stale ETag", "PUT " + entity("p", "existing") + " HTTP/1.1\nIf-Match: W/\"datetime'2000-01-01T00%3A00%3A00.0000000Z'\"\n\n{}", 412, "UpdateConditionNotSatisfied"},
		// If-Match forms (docs/protocol.md 0.1): a weak ETag, W/ in either
		// case, that matches nothing is 412; a strong one is 400.
		{"unknown weak ETag", "MERGE " + entity("p", "existing") + " HTTP/1.1\nIf-Match: W/\"wrong\"\n\n{}", 412, "UpdateConditionNotSatisfied"},
		{"lower-case w/ ETag", "DELETE " + entity("p", "existing") + " HTTP/1.1\nIf-Match: w/\"wrong\"\n\n", 412, "UpdateConditionNotSatisfied"},
		{"strong ETag", "PUT " + entity("p", "existing") + " HTTP/1.1\nIf-Match: \"wrong\"\n\n{}", 400, "InvalidInput"},
		{"our ETag without W/", "DELETE " + entity("p", "existing") + " HTTP/1.1\nIf-Match: \"datetime'2000-01-01T00%3A00%3A00.0000000Z'\"\n\n", 400, "InvalidInput"},
		{"existing entity", insertOp("p", "existing"), 409, "EntityAlreadyExists"},
	}
	r := postBatch(t, hs, batchCT, changeset(insertOp("p", "existing")))
	if r.Header.Get("x-ms-error-code") != "" {
		t.Fatal(r.body)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := postBatch(t, hs, batchCT, changeset(first, tc.second))
			o := outcomeOf(r)
			if o.status != 202 || len(o.parts) != 1 || o.parts[0] != tc.status || o.code != tc.code || o.index != 1 || o.errorCode != tc.code {
				t.Fatalf("want operation 1 to fail %d %s, got %+v\n%s", tc.status, tc.code, o, r.body)
			}
			if st := entityStatus(t, hs, "batchtbl", "p", "first"); st != 404 {
				t.Fatalf("operation 0 was committed: %d", st)
			}
		})
	}
}

// TestBatchKeysArePairs: entities are told apart by (PartitionKey, RowKey),
// not by the keys run together: ("ab","c") after ("a","bc") is another
// entity group, not a repeat.
func TestBatchKeysArePairs(t *testing.T) {
	_, hs := batchServer(t)
	r := postBatch(t, hs, batchCT, changeset(insertOp("p", "ab"), insertOp("p", "a"), insertOp("p", "b")))
	if o := outcomeOf(r); o.errorCode != "" || len(o.parts) != 3 {
		t.Fatalf("%+v %s", o, r.body)
	}
	r = postBatch(t, hs, batchCT, changeset(insertOp("a", "bc"), insertOp("ab", "c")))
	if o := outcomeOf(r); o.code != "CommandsInBatchActOnDifferentPartitions" || o.index != 1 {
		t.Fatalf("%+v %s", o, r.body)
	}
}

func TestBatchTooManyOperations(t *testing.T) {
	_, hs := batchServer(t)
	ops := make([]string, 101)
	for i := range ops {
		ops[i] = insertOp("p", fmt.Sprint(i))
	}
	r := postBatch(t, hs, batchCT, changeset(ops...))
	o := outcomeOf(r)
	// Live names operation 99, the last a change set may hold, and
	// answers with its headers, Preference-Applied of an insert included
	// (Python SDK recordings test_batch_too_many_ops, docs/protocol.md 7.4).
	if o.status != 202 || o.code != "InvalidInput" || o.index != 99 || len(o.parts) != 1 || o.parts[0] != 400 ||
		!strings.Contains(r.body, `"99:The batch request operation exceeds the maximum 100 changes per change set.\n`) ||
		!strings.Contains(r.body, "HTTP/1.1 400 Bad Request\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nPreference-Applied: return-no-content\r\nDataServiceVersion: 3.0;\r\n") {
		t.Fatalf("%+v\n%s", o, r.body)
	}
	if st := entityStatus(t, hs, "batchtbl", "p", "0"); st != 404 {
		t.Fatalf("a batch of 101 wrote an entity: %d", st)
	}
	r = postBatch(t, hs, batchCT, changeset(ops[:100]...))
	if o := outcomeOf(r); o.errorCode != "" || len(o.parts) != 100 {
		t.Fatalf("a batch of 100: %+v", o)
	}
}

// TestBatchTooLarge: a batch body of exactly 4 MiB is served; one byte more
// is 413 RequestBodyTooLarge for the whole request, the limit of every
// request body (docs/protocol.md 0.1, 7.2).
func TestBatchTooLarge(t *testing.T) {
	_, hs := batchServer(t)
	host := strings.TrimPrefix(hs.URL, "http://")
	// body builds 100 inserts whose padding adds up to exactly size bytes
	// of body (each op's two strings stay under the 32 KiB-character limit).
	body := func(prefix string, size int) string {
		op := func(i, pad int) string {
			return "POST http://" + host + "/devstoreaccount1/batchtbl HTTP/1.1\n\n{\"PartitionKey\":\"" + prefix + "\",\"RowKey\":\"" +
				fmt.Sprintf("%03d", i) + "\",\"A\":\"" + strings.Repeat("a", pad/2) + "\",\"B\":\"" + strings.Repeat("b", pad-pad/2) + "\"}"
		}
		var ops []string
		for i := 0; i < 100; i++ {
			ops = append(ops, op(i, 0))
		}
		left := size - len(changeset(ops...))
		for i := range ops {
			ops[i] = op(i, left/100+btoi(i < left%100))
		}
		return changeset(ops...)
	}
	exact := body("exact", maxBody)
	if len(exact) != maxBody {
		t.Fatalf("test body is %d bytes", len(exact))
	}
	if o := outcomeOf(postBatch(t, hs, batchCT, exact)); o.status != 202 || o.errorCode != "" || len(o.parts) != 100 {
		t.Fatalf("a batch of exactly 4 MiB: %+v", o)
	}
	over := body("over", maxBody+1)
	r := postBatch(t, hs, batchCT, over)
	if r.StatusCode != 413 || r.Header.Get("x-ms-error-code") != "RequestBodyTooLarge" {
		t.Fatalf("4 MiB + 1: %d %s", r.StatusCode, r.body)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestBatchLoneQueryMissing: a query batch that fails answers without a
// changeset, like its success, and without an index in the message: the
// batch holds that one operation (batchIndexed).
func TestBatchLoneQueryMissing(t *testing.T) {
	_, hs := batchServer(t)
	r := postBatch(t, hs, batchCT, crlf("--batch_t\nContent-Type: application/http\n\nGET http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='none') HTTP/1.1\n\n--batch_t--\n"))
	o := outcomeOf(r)
	if o.code != "ResourceNotFound" || o.index != -1 || strings.Contains(r.body, "changesetresponse") {
		t.Fatalf("%+v\n%s", o, r.body)
	}
	// A GET alone inside a changeset is accepted too, and answered in one.
	r = postBatch(t, hs, batchCT, changeset("GET http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='none') HTTP/1.1\n\n"))
	if o := outcomeOf(r); o.code != "ResourceNotFound" || !strings.Contains(r.body, "changesetresponse") {
		t.Fatalf("%+v\n%s", o, r.body)
	}
}

// TestUnclosedKeyLiteral: "(PartitionKey=')" once sliced out of range in the
// lenient key parser (found by FuzzBatch; seed bda1eb328686af49). It is a
// clean 400 in a single request and in a batch.
func TestUnclosedKeyLiteral(t *testing.T) {
	_, hs := batchServer(t)
	r := send(t, signedTB(t, "GET", hs.URL, "/devstoreaccount1/batchtbl(PartitionKey=')", ""))
	if r.StatusCode != 400 || r.Header.Get("x-ms-error-code") != "InvalidInput" {
		t.Fatalf("single: %d %s", r.StatusCode, r.body)
	}
	r = postBatch(t, hs, batchCT, changeset("DELETE http://HOST/devstoreaccount1/batchtbl(PartitionKey=') HTTP/1.1\nIf-Match: *\n\n"))
	if o := outcomeOf(r); o.code != "InvalidInput" || o.index != 0 {
		t.Fatalf("batch: %+v %s", o, r.body)
	}
}

// TestBatchPathsFromServiceRoot: operations addressed "/table…" from the
// service root, as the legacy Python SDK writes them (with LF line ends),
// name tables of the batch's account on a path-style URL; "/<account>/table"
// and absolute URLs keep working beside them.
func TestBatchPathsFromServiceRoot(t *testing.T) {
	_, hs := batchServer(t)
	body := changeset(
		"POST /batchtbl HTTP/1.1\nContent-ID: 1\n\n{\"PartitionKey\":\"root\",\"RowKey\":\"a\"}",
		"PUT /batchtbl(PartitionKey='root',RowKey='b') HTTP/1.1\n\n{\"V\":1}",
		"POST /devstoreaccount1/batchtbl HTTP/1.1\n\n{\"PartitionKey\":\"root\",\"RowKey\":\"c\"}",
		"POST http://HOST/devstoreaccount1/batchtbl HTTP/1.1\n\n{\"PartitionKey\":\"root\",\"RowKey\":\"d\"}",
	)
	r := postBatch(t, hs, batchCT, strings.ReplaceAll(body, "\r\n", "\n"))
	if o := outcomeOf(r); o.errorCode != "" || len(o.parts) != 4 {
		t.Fatalf("%+v\n%s", o, r.body)
	}
	for _, rk := range []string{"a", "b", "c", "d"} {
		if st := entityStatus(t, hs, "batchtbl", "root", rk); st != 200 {
			t.Fatalf("%s: %d", rk, st)
		}
	}
	r = postBatch(t, hs, batchCT, changeset("DELETE /batchtbl(PartitionKey='root',RowKey='a') HTTP/1.1\nIf-Match: *\n\n"))
	if o := outcomeOf(r); o.errorCode != "" || len(o.parts) != 1 || entityStatus(t, hs, "batchtbl", "root", "a") != 404 {
		t.Fatalf("%+v\n%s", o, r.body)
	}
}
