package emulator

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tableemu/tableemu/emulator/explorer"
)

// TestExplorerMounted: the explorer is served at /_tableemu/ with its
// policy, adds no way to the data (nothing under /_tableemu/ answers with
// table or entity data, whatever the method), leaves the Table API's
// authentication alone, and keeps /_tableemu/insights.
func TestExplorerMounted(t *testing.T) {
	s, err := New(Config{InMemory: true, Silent: true, Insights: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer func() { hs.Close(); s.Close() }()
	do := func(req *http.Request) (*http.Response, string) {
		t.Helper()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	for _, rq := range []struct{ method, target, body string }{
		{"POST", "/devstoreaccount1/Tables", `{"TableName":"secrets"}`},
		{"POST", "/devstoreaccount1/secrets", `{"PartitionKey":"p","RowKey":"r","Secret":"swordfish"}`},
	} {
		req := signed(t, rq.method, hs.URL, rq.target, rq.body)
		req.Header.Set("Content-Type", "application/json")
		if res, body := do(req); res.StatusCode/100 != 2 {
			t.Fatalf("%s %s: %d %s", rq.method, rq.target, res.StatusCode, body)
		}
	}

	res, body := do(mustReq(t, "GET", hs.URL+"/_tableemu/"))
	if res.StatusCode != 200 || res.Header.Get("Content-Security-Policy") != explorer.CSP {
		t.Fatalf("GET /_tableemu/: %d, CSP %q", res.StatusCode, res.Header.Get("Content-Security-Policy"))
	}
	if !strings.Contains(body, `content="devstoreaccount1"`) {
		t.Error("a loopback request to a server with the development account: the page is not told to open it")
	}

	for _, p := range []string{"/_tableemu/devstoreaccount1/secrets()", "/_tableemu/devstoreaccount1/Tables", "/_tableemu/../devstoreaccount1/secrets()",
		"/_tableemu/%2e%2e/devstoreaccount1/secrets()", "/_tableemu/secrets", "/_tableemu/$batch", "/_tableemu/?comp=list"} {
		for _, m := range []string{"GET", "POST", "PUT", "DELETE", "MERGE"} {
			req := mustReq(t, m, hs.URL+"/")
			req.URL.Opaque = strings.SplitN(p, "?", 2)[0]
			res, body := do(req)
			if strings.Contains(body, "swordfish") || strings.Contains(body, `"TableName"`) || res.StatusCode/100 == 2 && m != "GET" {
				t.Errorf("%s %s: %d %.80q: the explorer path reached data or accepted a write", m, p, res.StatusCode, body)
			}
		}
	}
	// Without a signature the API still refuses.
	if res, body := do(mustReq(t, "GET", hs.URL+"/devstoreaccount1/secrets()")); res.StatusCode/100 == 2 || strings.Contains(body, "swordfish") {
		t.Errorf("unsigned query: %d", res.StatusCode)
	}
	// The insights report is still the report, with the timeline.
	res, body = do(mustReq(t, "GET", hs.URL+"/_tableemu/insights"))
	var report struct {
		Tables   []json.RawMessage `json:"tables"`
		Timeline struct {
			Target int `json:"partitionTargetPerSecond"`
			Tables []struct {
				Table      string `json:"table"`
				Partitions []struct {
					PartitionKey string  `json:"partitionKey"`
					PerSecond    []int32 `json:"perSecond"`
				} `json:"partitions"`
			} `json:"tables"`
		} `json:"timeline"`
	}
	if err := json.Unmarshal([]byte(body), &report); res.StatusCode != 200 || err != nil {
		t.Fatalf("GET /_tableemu/insights: %d %v", res.StatusCode, err)
	}
	if tl := report.Timeline; tl.Target != 2000 || len(tl.Tables) != 1 || tl.Tables[0].Table != "secrets" ||
		len(tl.Tables[0].Partitions) != 1 || len(tl.Tables[0].Partitions[0].PerSecond) < 2 {
		t.Errorf("timeline %+v: want one write to partition p of secrets in the last two seconds", tl)
	} else if ps := tl.Tables[0].Partitions[0].PerSecond; ps[len(ps)-1]+ps[len(ps)-2] != 1 {
		t.Errorf("timeline %+v: want one write to partition p of secrets in the last two seconds", tl)
	}
}

// TestExplorerOtherAccounts: with AZURITE_ACCOUNTS-style accounts (no
// development account) the page is never told to open one by itself.
func TestExplorerOtherAccounts(t *testing.T) {
	accts, err := parseAccounts("devstoreaccount1:c2VjcmV0a2V5;other:" + DevKey)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{InMemory: true, Silent: true, Accounts: accts})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer func() { hs.Close(); s.Close() }()
	res, err := http.Get(hs.URL + "/_tableemu/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(b), `<meta name="tableemu-dev-account" content="">`) {
		t.Error("devstoreaccount1 with another key: the page was told to open it")
	}
}

func mustReq(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
