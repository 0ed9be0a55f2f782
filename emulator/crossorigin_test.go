package emulator

import (
	"net/http"
	"strings"
	"testing"
)

// The cross-origin check of tableemu's own endpoints (crossorigin.go,
// docs/security.md).

// unsignedReq is an unsigned request as curl sends it with the header the
// docs give (docs/isolation.md): no Origin, no Sec-Fetch-Site.
func unsignedReq(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req := mustReq(t, method, url)
	req.Header.Set(toolRequestHeader, "1")
	return req
}

// forged is a request as a page on another site makes it: a form post or
// no-cors fetch with a simple content type and body, and what the browser
// adds. It carries neither Authorization nor Tableemu-Request: a page
// cannot send them without a preflight.
func forged(t *testing.T, method, url, ctype, body string, headers ...string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return req
}

// TestCrossOriginRefused: the requests — simple content types,
// a foreign or null Origin, Sec-Fetch-Site cross-site and same-site,
// through localhost — against reset, restore, snapshot save and delete
// are each refused with 403 AuthorizationFailure saying what to send, and
// neither the account's tables nor its snapshots change.
func TestCrossOriginRefused(t *testing.T) {
	_, hs := isoServer(t, Config{})
	dev := "/_tableemu/accounts/" + DevAccount
	load(t, hs, DevAccount, "Orders", "a", 3)
	as(t, hs, DevAccount, "PUT", dev+"/snapshots/fixtures", "", 201)
	load(t, hs, DevAccount, "After", "b", 2) // a restore would remove it
	tables := state(t, hs, DevAccount)
	snaps := as(t, hs, DevAccount, "GET", dev+"/snapshots", "", 200).body
	if !strings.Contains(tables, "After") || !strings.Contains(snaps, `"fixtures"`) {
		t.Fatalf("set-up: %s\n%s", tables, snaps)
	}
	localhost := strings.Replace(hs.URL, "127.0.0.1", "localhost", 1)
	const evil = "https://evil.example"
	form := "multipart/form-data; boundary=----x"
	formBody := "------x\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nb\r\n------x--\r\n"
	endpoints := []struct{ method, path string }{
		{"POST", dev + "/reset"},
		{"POST", dev + "/snapshots/fixtures/restore"},
		{"PUT", dev + "/snapshots/fixtures"},
		{"PUT", dev + "/snapshots/planted"},
		{"DELETE", dev + "/snapshots/fixtures"},
	}
	cases := []struct {
		name string
		req  func(method, url string) *http.Request
		says string
	}{
		{"text/plain from another origin", func(m, u string) *http.Request {
			return forged(t, m, hs.URL+u, "text/plain", "x", "Origin", evil)
		}, "Origin: " + evil},
		{"x-www-form-urlencoded from another origin", func(m, u string) *http.Request {
			return forged(t, m, hs.URL+u, "application/x-www-form-urlencoded", "a=b", "Origin", evil)
		}, "Origin: " + evil},
		{"multipart/form-data from another origin", func(m, u string) *http.Request {
			return forged(t, m, hs.URL+u, form, formBody, "Origin", evil)
		}, "Origin: " + evil},
		{"Origin null", func(m, u string) *http.Request {
			return forged(t, m, hs.URL+u, "text/plain", "x", "Origin", "null")
		}, "Origin: null"},
		{"Sec-Fetch-Site cross-site", func(m, u string) *http.Request {
			return forged(t, m, hs.URL+u, "text/plain", "x", "Sec-Fetch-Site", "cross-site")
		}, "Sec-Fetch-Site: cross-site"},
		{"Sec-Fetch-Site same-site", func(m, u string) *http.Request {
			// Another port of 127.0.0.1 is the same site, not the same origin.
			return forged(t, m, hs.URL+u, "text/plain", "x", "Sec-Fetch-Site", "same-site", "Origin", "http://127.0.0.1:1")
		}, "Sec-Fetch-Site: same-site"},
		{"through localhost", func(m, u string) *http.Request {
			return forged(t, m, localhost+u, "text/plain", "x", "Origin", evil)
		}, "Origin: " + evil},
		{"another port of the same host", func(m, u string) *http.Request {
			return forged(t, m, hs.URL+u, "text/plain", "x", "Origin", "http://127.0.0.1:1")
		}, "Origin: http://127.0.0.1:1"},
		{"a browser that sends neither Origin nor Sec-Fetch-Site", func(m, u string) *http.Request {
			return forged(t, m, hs.URL+u, "application/x-www-form-urlencoded", "a=b")
		}, "must carry the header Tableemu-Request"},
		{"Tableemu-Request from another origin", func(m, u string) *http.Request {
			return forged(t, m, hs.URL+u, "", "", "Origin", evil, toolRequestHeader, "1")
		}, "Origin: " + evil},
		{"signed, from another origin", func(m, u string) *http.Request {
			req := sharedKeyRequest(t, m, hs.URL, u, "", DevAccount, DevAccount, DevKey)
			req.Header.Set("Origin", evil)
			req.Header.Set("Sec-Fetch-Site", "cross-site")
			return req
		}, "Sec-Fetch-Site: cross-site"},
	}
	for _, tc := range cases {
		for _, ep := range endpoints {
			t.Run(tc.name+"/"+ep.method+" "+ep.path[len(dev):], func(t *testing.T) {
				r := send(t, tc.req(ep.method, ep.path))
				e := readError(t, r)
				if e.status != 403 || e.code != "AuthorizationFailure" || e.header != "AuthorizationFailure" {
					t.Fatalf("%d %s/%s, want 403 AuthorizationFailure: %s", e.status, e.header, e.code, e.message)
				}
				if !strings.HasPrefix(e.message, "This request is not authorized to perform this operation.\ntableemu: ") ||
					!strings.Contains(e.message, tc.says) || !strings.Contains(e.message, "docs/security.md") {
					t.Errorf("the message %q does not say %q and where to read more", e.message, tc.says)
				}
				if r.Header.Get("Access-Control-Allow-Origin") != "" {
					t.Errorf("a refusal with CORS headers: %v", r.Header)
				}
			})
		}
	}
	if got := state(t, hs, DevAccount); got != tables {
		t.Errorf("a refused request changed the tables:\n%s\nwant\n%s", got, tables)
	}
	if got := as(t, hs, DevAccount, "GET", dev+"/snapshots", "", 200).body; got != snaps {
		t.Errorf("a refused request changed the snapshots:\n%s\nwant\n%s", got, snaps)
	}
}

// TestCrossOriginAllowed: what tableemu's own clients send still works —
// signed requests (the CLI, the test helpers), the explorer's signed
// same-origin request, curl with Tableemu-Request — and what the check
// leaves alone is unchanged: reads, preflights (405, no CORS headers), the
// Table API.
func TestCrossOriginAllowed(t *testing.T) {
	_, hs := isoServer(t, Config{Insights: true})
	dev := "/_tableemu/accounts/" + DevAccount
	// Signed, as tableemu reset and the npm and Python helpers send it.
	load(t, hs, DevAccount, "Orders", "a", 2)
	as(t, hs, DevAccount, "PUT", dev+"/snapshots/fixtures", "", 201)
	// The explorer: signed, from its own origin, as Chromium marks it.
	load(t, hs, DevAccount, "More", "a", 1)
	req := sharedKeyRequest(t, "POST", hs.URL, dev+"/reset", "", DevAccount, DevAccount, DevKey)
	req.Header.Set("Origin", hs.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if r := send(t, req); r.StatusCode != 200 || !strings.Contains(r.body, `"tablesDeleted":2`) {
		t.Fatalf("the explorer's reset: %d %s", r.StatusCode, r.body)
	}
	// curl with the header, and the same with what a browser adds when the
	// user types the address (Sec-Fetch-Site: none).
	if r := send(t, unsignedReq(t, "POST", hs.URL+dev+"/snapshots/fixtures/restore")); r.StatusCode != 200 {
		t.Fatalf("curl's restore: %d %s", r.StatusCode, r.body)
	}
	req = unsignedReq(t, "DELETE", hs.URL+dev+"/snapshots/fixtures")
	req.Header.Set("Sec-Fetch-Site", "none")
	if r := send(t, req); r.StatusCode != 204 {
		t.Fatalf("delete with Sec-Fetch-Site none: %d %s", r.StatusCode, r.body)
	}
	if got := state(t, hs, DevAccount); got != "Orders: 000=a 001=a" {
		t.Fatalf("after restore: %q", got)
	}

	// Reads and preflights are not the check's: a GET from another origin
	// is answered without CORS headers (the page cannot read it), a
	// preflight is 405 (so no non-simple request follows).
	get := forged(t, "GET", hs.URL+dev+"/snapshots", "", "", "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")
	if r := send(t, get); r.StatusCode != 200 || r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("GET from another origin: %d %v", r.StatusCode, r.Header)
	}
	for _, p := range []string{dev + "/reset", dev + "/snapshots/fixtures", "/_tableemu/insights", "/_tableemu/"} {
		pre := forged(t, "OPTIONS", hs.URL+p, "", "", "Origin", "https://evil.example", "Access-Control-Request-Method", "PUT",
			"Access-Control-Request-Headers", "authorization,tableemu-request")
		r := send(t, pre)
		if r.StatusCode != 405 || r.Header.Get("Access-Control-Allow-Origin") != "" || r.Header.Get("Access-Control-Allow-Headers") != "" {
			t.Errorf("preflight of %s: %d %v", p, r.StatusCode, r.Header)
		}
	}
	// The explorer's files and the insights report take no writes; a
	// write from another origin is refused by the check, one with the
	// header by the handler, as before.
	for _, p := range []string{"/_tableemu/", "/_tableemu/insights", "/_tableemu"} {
		if r := send(t, forged(t, "POST", hs.URL+p, "text/plain", "x", "Origin", "https://evil.example")); r.StatusCode != 403 {
			t.Errorf("POST %s from another origin: %d %s", p, r.StatusCode, r.body)
		}
		if r := send(t, unsignedReq(t, "POST", hs.URL+p)); r.StatusCode != 405 {
			t.Errorf("POST %s with the header: %d %s", p, r.StatusCode, r.body)
		}
	}
	// The Table API is not checked here: a signed request from a page is
	// what CORS rules are for (cors.go), as on the service.
	api := sharedKeyRequest(t, "POST", hs.URL, "/"+DevAccount+"/Tables", `{"TableName":"FromPage"}`, DevAccount, DevAccount, DevKey)
	api.Header.Set("Origin", "https://evil.example")
	api.Header.Set("Sec-Fetch-Site", "cross-site")
	if r := send(t, api); r.StatusCode != 201 {
		t.Errorf("Table API from another origin: %d %s", r.StatusCode, r.body)
	}
}

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		origin, host string
		want         bool
	}{
		{"http://127.0.0.1:10002", "127.0.0.1:10002", true},
		{"https://127.0.0.1:10002", "127.0.0.1:10002", true}, // a proxy that terminates TLS
		{"HTTP://LocalHost:10002", "localhost:10002", true},
		{"http://[::1]:10002", "[::1]:10002", true},
		{"http://tables.example", "tables.example", true},
		{"http://127.0.0.1:10003", "127.0.0.1:10002", false},
		{"http://127.0.0.1", "127.0.0.1:10002", false},
		{"http://localhost:10002", "127.0.0.1:10002", false},
		{"null", "127.0.0.1:10002", false},
		{"", "127.0.0.1:10002", false},
		{"file://", "127.0.0.1:10002", false},
		{"chrome-extension://abc", "abc", false},
		{"http://", "", false},
		{"http://127.0.0.1:10002", "", false},
	} {
		if got := sameOrigin(tc.origin, tc.host); got != tc.want {
			t.Errorf("sameOrigin(%q, %q) = %v, want %v", tc.origin, tc.host, got, tc.want)
		}
	}
}

// BenchmarkToolPath is what a Table API request pays for tableemu's own
// endpoints: the one prefix test in ServeHTTP that sends /_tableemu/ to
// serveTool (and the cross-origin check), which Table API paths never
// reach.
func BenchmarkToolPath(b *testing.B) {
	path := "/devstoreaccount1/tbw(PartitionKey='p001',RowKey='r0000100')"
	n := 0
	for b.Loop() {
		if isToolPath(path) {
			n++
		}
	}
	if n != 0 {
		b.Fatal("a Table API path taken for tableemu's own")
	}
}
