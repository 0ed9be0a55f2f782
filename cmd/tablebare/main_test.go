package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestBareAnswersTablebench: the reference server answers every request
// tablebench sends as tablebench expects — the figures beside it are only
// meaningful if it does the same work.
func TestBareAnswersTablebench(t *testing.T) {
	s, err := open(t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	s.base = hs.URL + "/devstoreaccount1"
	do := func(method, path, query string, body string, hdr ...string) (*http.Response, string) {
		t.Helper()
		u := s.base + path
		if query != "" {
			u += "?" + query
		}
		req, _ := http.NewRequest(method, u, strings.NewReader(body))
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	want := func(resp *http.Response, body string, status int) {
		t.Helper()
		if resp.StatusCode != status {
			t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, body)
		}
	}
	r, b := do("POST", "/Tables", "", `{"TableName":"t"}`, "Prefer", "return-no-content")
	want(r, b, 204)
	r, b = do("POST", "/Tables", "", `{"TableName":"t"}`)
	want(r, b, 409)

	// $batch of 3 inserts, then a duplicate batch fails whole.
	var bb bytes.Buffer
	bb.WriteString("--batch_x\r\nContent-Type: multipart/mixed; boundary=changeset_x\r\n\r\n")
	for i := range 3 {
		e := fmt.Sprintf(`{"PartitionKey":"p","RowKey":"r%d","Tag":"t%d"}`, i, i%2)
		fmt.Fprintf(&bb, "--changeset_x\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"+
			"POST %s/t HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s\r\n", s.base, len(e), e)
	}
	bb.WriteString("--changeset_x--\r\n\r\n--batch_x--\r\n")
	r, b = do("POST", "/$batch", "", bb.String(), "Content-Type", "multipart/mixed; boundary=batch_x")
	want(r, b, 202)
	if strings.Count(b, "204 No Content") != 3 || strings.Contains(b, "odata.error") {
		t.Fatalf("batch response: %s", b)
	}
	r, b = do("POST", "/$batch", "", bb.String(), "Content-Type", "multipart/mixed; boundary=batch_x")
	if r.StatusCode != 202 || !strings.Contains(b, "odata.error") {
		t.Fatalf("duplicate batch: %d %s", r.StatusCode, b)
	}

	r, b = do("POST", "/t", "", `{"PartitionKey":"q","RowKey":"a","Score":1.5,"Pad":"x"}`, "Prefer", "return-no-content")
	want(r, b, 204)
	r, b = do("POST", "/t", "", `{"PartitionKey":"q","RowKey":"a"}`)
	want(r, b, 409)
	r, b = do("MERGE", "/t(PartitionKey='q',RowKey='a')", "", `{"Score":2.25,"Seen":true}`, "If-Match", "*")
	want(r, b, 204)
	r, b = do("GET", "/t(PartitionKey='q',RowKey='a')", "", "")
	want(r, b, 200)
	for _, part := range []string{`"odata.etag":"W/\"datetime'`, `"Score":2.25`, `"Seen":true`, `"Pad":"x"`, `"Timestamp":"`} {
		if !strings.Contains(b, part) {
			t.Fatalf("entity after merge lacks %s: %s", part, b)
		}
	}
	r, b = do("MERGE", "/t(PartitionKey='q',RowKey='none')", "", `{}`, "If-Match", "*")
	want(r, b, 404)

	// Queries: a key range, a property filter, and every entity with a
	// continuation at each entity ($top=1).
	q := url.Values{"$filter": {"PartitionKey eq 'p' and RowKey ge 'r1' and RowKey lt 'r9'"}}
	r, b = do("GET", "/t()", q.Encode(), "")
	want(r, b, 200)
	if n := strings.Count(b, "odata.etag"); n != 2 {
		t.Fatalf("range: %d entities: %s", n, b)
	}
	q = url.Values{"$filter": {"Tag eq 't0'"}}
	r, b = do("GET", "/t()", q.Encode(), "")
	if n := strings.Count(b, "odata.etag"); r.StatusCode != 200 || n != 2 {
		t.Fatalf("property filter: %d entities: %s", n, b)
	}
	q = url.Values{"$top": {"1"}}
	var keys []string
	for {
		r, b = do("GET", "/t()", q.Encode(), "")
		want(r, b, 200)
		i := strings.Index(b, `"RowKey":"`)
		keys = append(keys, b[i+10:i+10+strings.IndexByte(b[i+10:], '"')])
		npk := r.Header.Get("x-ms-continuation-NextPartitionKey")
		if npk == "" {
			break
		}
		q.Set("NextPartitionKey", npk)
		q.Set("NextRowKey", r.Header.Get("x-ms-continuation-NextRowKey"))
	}
	if got := strings.Join(keys, ","); got != "r0,r1,r2,a" {
		t.Fatalf("paged through %s", got)
	}
	r, b = do("GET", "/t()", url.Values{"$filter": {"Score gt 1 or Tag eq 'x'"}}.Encode(), "")
	want(r, b, 501)

	r, b = do("DELETE", "/Tables('t')", "", "")
	want(r, b, 204)
	r, b = do("DELETE", "/Tables('t')", "", "")
	want(r, b, 404)
}
