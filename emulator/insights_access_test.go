package emulator

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Who may read GET /_tableemu/insights (insights/access.go): unsigned only
// a loopback client of the public development account, otherwise a request
// signed with Shared Key, which reads only its own account's tables.

// otherKey is the second account's key in these tests.
var otherKey = base64.StdEncoding.EncodeToString([]byte("the other account's key, not public"))

// insightsServer serves devstoreaccount1 (under devKey) and "other", with
// --insights, and writes to one table of each: what each account's report
// must hold and the other's must not.
func insightsServer(t *testing.T, devKey string) (*Server, *httptest.Server) {
	t.Helper()
	accts, err := parseAccounts(DevAccount + ":" + devKey + ";other:" + otherKey)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{InMemory: true, Silent: true, Insights: true, Accounts: accts})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.Close(); s.Close() })
	for _, w := range []struct{ account, key, table, pk, filter string }{
		{DevAccount, devKey, "devtable", "devpk", "Secret eq 'devliteral'"},
		{"other", otherKey, "othertable", "otherpk", "Secret eq 'otherliteral'"},
	} {
		for _, rq := range []struct{ method, path, body string }{
			{"POST", "/" + w.account + "/Tables", `{"TableName":"` + w.table + `"}`},
			{"POST", "/" + w.account + "/" + w.table, `{"PartitionKey":"` + w.pk + `","RowKey":"1"}`},
			{"GET", "/" + w.account + "/" + w.table + "()?$filter=" + strings.ReplaceAll(w.filter, " ", "%20"), ""},
		} {
			req := sharedKeyRequest(t, rq.method, hs.URL, rq.path, rq.body, w.account, w.account, w.key)
			if r := send(t, req); r.StatusCode/100 != 2 {
				t.Fatalf("%s %s: %d %s", rq.method, rq.path, r.StatusCode, r.body)
			}
		}
	}
	return s, hs
}

// sharedKeyRequest signs target (path and query) with Shared Key as
// claimed, using key: the string-to-sign of the Table service
// (docs/protocol.md 9.3), whose resource is "/<claimed><path>".
func sharedKeyRequest(t *testing.T, method, base, target, body, claimed, signedAs, key string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, base+target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	path, _, _ := strings.Cut(target, "?")
	date := time.Now().UTC().Format(http.TimeFormat)
	ct := ""
	if body != "" {
		ct = "application/json"
		req.Header.Set("Content-Type", ct)
	}
	req.Header.Set("x-ms-date", date)
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("Accept", "application/json;odata=nometadata")
	k, _ := base64.StdEncoding.DecodeString(key)
	m := hmac.New(sha256.New, k)
	io.WriteString(m, method+"\n\n"+ct+"\n"+date+"\n/"+signedAs+path)
	req.Header.Set("Authorization", "SharedKey "+claimed+":"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	return req
}

// viaNetwork serves req as if it had arrived from 192.0.2.7 on the
// server's address 192.0.2.2:10002 (a listener on --tableHost 0.0.0.0
// reached from another machine, or through a container's published port).
func viaNetwork(s *Server, req *http.Request) *sent {
	local := &net.TCPAddr{IP: net.ParseIP("192.0.2.2"), Port: 10002}
	req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, local))
	req.RemoteAddr = "192.0.2.7:50123"
	req.Host = "192.0.2.2:10002"
	req.RequestURI = req.URL.RequestURI()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return &sent{rec.Result(), rec.Body.String()}
}

// insightsTables reads a report's table names, from both its parts.
func insightsTables(t *testing.T, r *sent) (tables, timeline []string) {
	t.Helper()
	var rep struct {
		Tables []struct {
			Account string `json:"account"`
			Table   string `json:"table"`
		} `json:"tables"`
		Timeline struct {
			Tables []struct {
				Account string `json:"account"`
				Table   string `json:"table"`
			} `json:"tables"`
		} `json:"timeline"`
	}
	if r.StatusCode != 200 {
		t.Fatalf("insights: %d %s", r.StatusCode, r.body)
	}
	if err := json.Unmarshal([]byte(r.body), &rep); err != nil {
		t.Fatalf("insights: %v: %s", err, r.body)
	}
	for _, x := range rep.Tables {
		tables = append(tables, x.Account+"/"+x.Table)
	}
	for _, x := range rep.Timeline.Tables {
		timeline = append(timeline, x.Account+"/"+x.Table)
	}
	return tables, timeline
}

// wantOnly checks that a report holds account's table and nothing of the
// other account: not its table, partition key or filter literal.
func wantOnly(t *testing.T, r *sent, account string) {
	t.Helper()
	own, mine, other := "devstoreaccount1/devtable", "dev", "other"
	if account == "other" {
		own, mine, other = "other/othertable", "other", "dev"
	}
	tables, timeline := insightsTables(t, r)
	if len(tables) != 1 || tables[0] != own || len(timeline) != 1 || timeline[0] != own {
		t.Errorf("report of %s: tables %v, timeline %v; want %s only", account, tables, timeline, own)
	}
	for _, leak := range []string{other + "table", other + "pk", other + "literal"} {
		if strings.Contains(r.body, leak) {
			t.Errorf("report of %s holds %q of the other account", account, leak)
		}
	}
	if !strings.Contains(r.body, mine+"literal") {
		t.Errorf("report of %s lacks its own scan filter: %s", account, r.body)
	}
}

// TestInsightsLoopbackUnsigned: on a loopback listener, with
// devstoreaccount1 under its public key, `curl
// http://127.0.0.1:10002/_tableemu/insights` reads the development
// account's report, and only it.
func TestInsightsLoopbackUnsigned(t *testing.T) {
	_, hs := insightsServer(t, DevKey)
	for _, host := range []string{"", "localhost", "[::1]"} {
		req := mustReq(t, "GET", hs.URL+"/_tableemu/insights")
		if host != "" {
			req.Host = host + ":" + hs.URL[strings.LastIndexByte(hs.URL, ':')+1:]
		}
		wantOnly(t, send(t, req), DevAccount)
	}
}

// TestInsightsUnsignedRefused: unsigned, the report is refused — with the
// service's 401 NoAuthenticationInformation, its challenge and a hint —
// wherever the explorer would not open the development account by itself:
// a connection from another machine, a loopback connection under another
// host name (DNS rebinding), a server whose devstoreaccount1 has another
// key. A SAS is refused too (403 AuthenticationFailed): it grants table
// operations, not the report.
func TestInsightsUnsignedRefused(t *testing.T) {
	s, hs := insightsServer(t, DevKey)
	rebound := mustReq(t, "GET", hs.URL+"/_tableemu/insights")
	rebound.Host = "tableemu.example:10002"
	_, hsOwnKey := insightsServer(t, otherKey)
	for name, r := range map[string]*sent{
		"from another machine":          viaNetwork(s, mustReq(t, "GET", "http://192.0.2.2:10002/_tableemu/insights")),
		"under another host name":       send(t, rebound),
		"devstoreaccount1 with its key": send(t, mustReq(t, "GET", hsOwnKey.URL+"/_tableemu/insights")),
	} {
		t.Run(name, func(t *testing.T) {
			if strings.Contains(r.body, "devpk") || strings.Contains(r.body, "devtable") {
				t.Fatalf("data without credentials: %s", r.body)
			}
			wantHint(t, readError(t, r), 401, "NoAuthenticationInformation",
				"Server failed to authenticate the request. Please refer to the information in the www-authenticate header.",
				"loopback", "Shared Key", "/<account>/_tableemu/insights", "/_tableemu/")
			if r.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
	sas := viaNetwork(s, mustReq(t, "GET", "http://192.0.2.2:10002/_tableemu/insights?sv=2019-02-02&tn=devtable&sp=r&se=2099-01-01&sig=AAAA"))
	wantHint(t, readError(t, sas), 403, "AuthenticationFailed",
		"Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature.",
		"no SAS", "Shared Key")
}

// TestInsightsSigned: a request signed with an account's key reads that
// account's report and nothing of the other's, from another machine and
// on loopback alike (a signature, there, names whose report is wanted).
func TestInsightsSigned(t *testing.T) {
	s, hs := insightsServer(t, DevKey)
	for _, a := range []struct{ name, key string }{{DevAccount, DevKey}, {"other", otherKey}} {
		req := sharedKeyRequest(t, "GET", "http://192.0.2.2:10002", "/_tableemu/insights", "", a.name, a.name, a.key)
		wantOnly(t, viaNetwork(s, req), a.name)
		wantOnly(t, send(t, sharedKeyRequest(t, "GET", hs.URL, "/_tableemu/insights", "", a.name, a.name, a.key)), a.name)
	}
	// Shared Key Lite is Shared Key too (package auth accepts both).
	req := mustReq(t, "GET", "http://192.0.2.2:10002/_tableemu/insights")
	req.URL.Opaque = "/_tableemu/insights"
	signLiteForBench(req)
	wantOnly(t, viaNetwork(s, req), DevAccount)
}

// TestInsightsOtherKeyRefused: one account's key does not read another's
// report — claiming the other account, signing as it, or naming an account
// the server does not have is 403 AuthenticationFailed — and a malformed
// header is the service's 400 InvalidAuthenticationInfo. None of these
// answers carries data.
func TestInsightsOtherKeyRefused(t *testing.T) {
	s, _ := insightsServer(t, DevKey)
	const base, path = "http://192.0.2.2:10002", "/_tableemu/insights"
	bad := func(h string) *http.Request {
		req := sharedKeyRequest(t, "GET", base, path, "", DevAccount, DevAccount, DevKey)
		req.Header.Set("Authorization", h)
		return req
	}
	for _, tc := range []struct {
		name   string
		req    *http.Request
		status int
		code   string
	}{
		{"claims devstoreaccount1, signed with other's key", sharedKeyRequest(t, "GET", base, path, "", DevAccount, DevAccount, otherKey), 403, "AuthenticationFailed"},
		{"claims other, signed with the public key", sharedKeyRequest(t, "GET", base, path, "", "other", "other", DevKey), 403, "AuthenticationFailed"},
		{"claims other, signs devstoreaccount1's resource with its key", sharedKeyRequest(t, "GET", base, path, "", "other", DevAccount, DevKey), 403, "AuthenticationFailed"},
		{"an account the server does not have", sharedKeyRequest(t, "GET", base, path, "", "nosuch", "nosuch", otherKey), 403, "AuthenticationFailed"},
		{"no account:signature pair", bad("SharedKey devstoreaccount1"), 400, "InvalidAuthenticationInfo"},
		{"another scheme", bad("Basic dXNlcjpwYXNz"), 400, "InvalidAuthenticationInfo"},
		{"a bearer token", bad("Bearer eyJ0eXAiOiJKV1QifQ.e30.c2ln"), 403, "AuthenticationFailed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := viaNetwork(s, tc.req)
			e := readError(t, r)
			if e.status != tc.status || e.header != tc.code || e.code != tc.code {
				t.Fatalf("%d %s/%s, want %d %s: %s", e.status, e.header, e.code, tc.status, tc.code, e.message)
			}
			for _, leak := range []string{"devtable", "devpk", "othertable", "otherpk"} {
				if strings.Contains(r.body, leak) {
					t.Errorf("a refusal carries %q", leak)
				}
			}
		})
	}
}
