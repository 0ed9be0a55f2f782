package emulator

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu"
)

// FuzzResourcePath: request targets and Host headers (docs/protocol.md 1.1–1.3)
// never panic the resource parser, which refuses only with a coded 4xx;
// every entity address it accepts names keys that, written back in the
// canonical form clients use (quotes doubled, path-escaped), parse to the
// same keys; and the whole server, reached with a valid signature, never
// answers 5xx and puts a code on every error.
func FuzzResourcePath(f *testing.F) {
	for _, s := range []struct {
		method uint8
		host   string
		target string
	}{
		{0, "127.0.0.1:10002", "/devstoreaccount1/Tables"},
		{0, "127.0.0.1:10002", "/devstoreaccount1/Tables('fuzztbl')"},
		{0, "127.0.0.1:10002", "/devstoreaccount1/fuzztbl()?$filter=PartitionKey%20eq%20'p'&$top=5"},
		{0, "127.0.0.1:10002", "/devstoreaccount1/fuzztbl(PartitionKey='p',RowKey='r')"},
		{1, "127.0.0.1:10002", "/devstoreaccount1/fuzztbl(PartitionKey='it''s',RowKey='a%2Fb')"},
		{2, "127.0.0.1:10002", "/devstoreaccount1/fuzztbl(RowKey='r',%20PartitionKey='p')"},
		{3, "127.0.0.1:10002", "/devstoreaccount1/fuzztbl(PartitionKey='q'k',RowKey='r')"},
		{4, "127.0.0.1:10002", "/devstoreaccount1/fuzztbl(PartitionKey='%F0%9F%98%80',RowKey='%C3%A9%00')"},
		{5, "127.0.0.1:10002", "/devstoreaccount1/fuzztbl"},
		{6, "127.0.0.1:10002", "/devstoreaccount1-secondary/fuzztbl(PartitionKey='p',RowKey='r')"},
		{0, "devstoreaccount1.table.localhost:10002", "/fuzztbl(PartitionKey='p',RowKey='r')"},
		{0, "devstoreaccount1-secondary.table.localhost", "/Tables"},
		{0, "[::1]:10002", "/devstoreaccount1/?restype=service&comp=properties"},
		{0, "127.0.0.1:10002", "http://127.0.0.1:10002/devstoreaccount1/fuzztbl(PartitionKey='p',RowKey='r')"},
		{0, "127.0.0.1:10002", "/devstoreaccount1/fuzztbl(PartitionKey='',RowKey='')"},
		{0, "127.0.0.1:10002", "/devstoreaccount1/fuzztbl(PartitionKey='p')"},
		{0, "127.0.0.1:10002", "/devstoreaccount1/fuzztbl()("},
		{0, "127.0.0.1:10002", "/devstoreaccount1/Tables('x''y')"},
		{0, "127.0.0.1:10002", "/%zz/Tables"},
		{0, "127.0.0.1:10002", "/devstoreaccount1/fuzztbl(PartitionKey='a#b',RowKey='c?d')"},
		{7, "127.0.0.1:10002", "/devstoreaccount1/$batch"},
		{0, "", "/"},
		// Regression: "PartitionKey='" alone sliced out of range in the
		// greedy key reading (resource.go parseKeyArgs).
		{0, "127.0.0.1:10002", "/devstoreaccount1/fuzztbl(PartitionKey=')"},
	} {
		f.Add(s.method, s.host, s.target)
	}

	s, err := New(Config{InMemory: true, Silent: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	serve := func(t testing.TB, method, host, target, body string, hdr map[string]string) *httptest.ResponseRecorder {
		var b strings.Builder
		b.WriteString(method + " " + target + " HTTP/1.1\r\nHost: " + host + "\r\n")
		for k, v := range hdr {
			b.WriteString(k + ": " + v + "\r\n")
		}
		b.WriteString("Content-Length: " + itoa(len(body)) + "\r\n\r\n" + body)
		// http.ReadRequest validates the request line as the server does:
		// a target net/http would refuse never reaches the handler.
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(b.String())))
		if err != nil {
			return nil
		}
		req.RemoteAddr = "127.0.0.1:40000"
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		return rec
	}
	admin := func(t testing.TB, method, target, body string) {
		date := time.Now().UTC().Format(http.TimeFormat)
		rec := serve(t, method, "127.0.0.1:10002", target, body, map[string]string{
			"x-ms-date": date, "x-ms-version": "2019-02-02", "Authorization": liteAuth(date, target),
			"Content-Type": "application/json", "Accept": "application/json;odata=nometadata",
		})
		if rec == nil || rec.Code >= 500 {
			t.Fatalf("%s %s: %v", method, target, rec)
		}
	}
	reset := func(t testing.TB) {
		admin(t, "DELETE", "/devstoreaccount1/Tables('fuzztbl')", "")
		admin(t, "POST", "/devstoreaccount1/Tables", `{"TableName":"fuzztbl"}`)
		admin(t, "POST", "/devstoreaccount1/fuzztbl", `{"PartitionKey":"p","RowKey":"r","V":1}`)
	}
	reset(f)
	methods := []string{"GET", "PUT", "MERGE", "DELETE", "POST", "PATCH", "HEAD", "OPTIONS"}
	runs := 0

	f.Fuzz(func(t *testing.T, method uint8, host, target string) {
		res, perr := s.parseResource(host, target)
		if perr != nil {
			if !tableemu.Known(perr.Code) || perr.Status < 400 || perr.Status >= 500 {
				t.Fatalf("parseResource(%q, %q): %v", host, target, perr)
			}
		} else if res.kind == kEntity {
			canon := "/devstoreaccount1/t(PartitionKey='" + keyLiteral(res.pk) + "',RowKey='" + keyLiteral(res.rk) + "')"
			back, err := s.parseResource("127.0.0.1:10002", canon)
			if err != nil || back.kind != kEntity || back.pk != res.pk || back.rk != res.rk {
				t.Fatalf("keys %q %q from %q do not round-trip through %q: %q %q %v", res.pk, res.rk, target, canon, back.pk, back.rk, err)
			}
		}
		if pk, rk, ok := parseKeyArgs(target); ok {
			canon := "PartitionKey='" + strings.ReplaceAll(pk, "'", "''") + "',RowKey='" + strings.ReplaceAll(rk, "'", "''") + "'"
			if pk2, rk2, ok := parseKeyArgs(canon); !ok || pk2 != pk || rk2 != rk {
				t.Fatalf("parseKeyArgs(%q) = %q %q, but its canonical form %q reads %q %q %v", target, pk, rk, canon, pk2, rk2, ok)
			}
		}

		// The whole server, with a signature over the path as sent, so
		// the request reaches the handlers.
		if runs++; runs%2000 == 0 {
			reset(t)
		}
		if !plausibleHost(host) {
			host = "127.0.0.1:10002"
		}
		m := methods[int(method)%len(methods)]
		path, query, _ := strings.Cut(target, "?")
		if q, err := url.ParseQuery(query); err == nil && q.Has("comp") {
			path += "?comp=" + q.Get("comp")
		}
		date := time.Now().UTC().Format(http.TimeFormat)
		hdr := map[string]string{
			"x-ms-date": date, "x-ms-version": "2019-02-02", "Authorization": liteAuth(date, path),
			"Accept": "application/json;odata=minimalmetadata", "Content-Type": "application/json",
		}
		if method&0x80 != 0 {
			hdr["If-Match"] = "*"
		}
		if method&0x40 != 0 {
			hdr["Origin"] = "http://example.com"
			hdr["Access-Control-Request-Method"] = "GET"
		}
		body := ""
		if m == "PUT" || m == "MERGE" || m == "PATCH" || m == "POST" {
			body = `{"PartitionKey":"p","RowKey":"fz","V":2}`
		}
		rec := serve(t, m, host, target, body, hdr)
		if rec == nil {
			return // net/http refuses the request line itself
		}
		// 501 NotImplemented is the service's own answer to filters it
		// refuses (property against property, docs/protocol.md 6.1); any other
		// 5xx is a server fault.
		deliberate := rec.Code == 501 && rec.Header().Get("x-ms-error-code") == "NotImplemented"
		if rec.Code >= 500 && !deliberate {
			t.Fatalf("%s %q (Host %q): %d %s", m, target, host, rec.Code, rec.Body)
		}
		if rec.Code >= 400 && m != "HEAD" {
			code := rec.Header().Get("x-ms-error-code")
			if code == "" || !tableemu.Known(tableemu.Code(code)) {
				t.Fatalf("%s %q: %d without a known x-ms-error-code: %s", m, target, rec.Code, rec.Body)
			}
			if got := bodyErrorCode(rec.Body.Bytes()); got != code {
				t.Fatalf("%s %q: header code %s, body code %q: %s", m, target, code, got, rec.Body)
			}
		}
	})
}

// keyLiteral writes a key as SDKs put it in a URL: quotes doubled, then
// path-escaped (docs/protocol.md 1.3, 13).
func keyLiteral(k string) string { return url.PathEscape(strings.ReplaceAll(k, "'", "''")) }

// liteAuth is the Shared Key Lite header for a path-style path as sent
// (docs/protocol.md 9.4, 9.5), computed here rather than by package auth.
func liteAuth(date, path string) string {
	key, _ := base64.StdEncoding.DecodeString(DevKey)
	m := hmac.New(sha256.New, key)
	io.WriteString(m, date+"\n/"+DevAccount+path)
	return "SharedKeyLite " + DevAccount + ":" + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// plausibleHost keeps Host values net/http's server would let through.
func plausibleHost(h string) bool {
	if h == "" || len(h) > 255 {
		return false
	}
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(".-_:[]", c)) {
			return false
		}
	}
	return true
}

// bodyErrorCode is the code of an OData JSON or XML error body.
func bodyErrorCode(b []byte) string {
	var j struct {
		Err struct {
			Code string `json:"code"`
		} `json:"odata.error"`
	}
	if err := json.Unmarshal(b, &j); err == nil && j.Err.Code != "" {
		return j.Err.Code
	}
	s := string(b)
	if _, rest, ok := strings.Cut(s, "<m:code>"); ok {
		code, _, _ := strings.Cut(rest, "<")
		return code
	}
	if _, rest, ok := strings.Cut(s, "<Code>"); ok {
		code, _, _ := strings.Cut(rest, "<")
		return code
	}
	return ""
}
