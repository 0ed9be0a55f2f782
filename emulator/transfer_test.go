package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu/emulator/store"
)

// The transfer endpoints (transfer.go, and emulator/transfer/http.go):
// who may call them, how they answer, and an export imported again.

// everyType is an entity holding a property of each EDM type, with the
// values that are hardest to keep: 100 ns DateTime, Int64 beyond 2^53,
// NaN and the infinities, an empty string and empty Binary.
const everyType = `{"PartitionKey":"p","RowKey":"%s",` +
	`"S":"text","Empty":"",` +
	`"I32":-7,"I64@odata.type":"Edm.Int64","I64":"9007199254740993",` +
	`"D":1.5,"NaN@odata.type":"Edm.Double","NaN":"NaN","Inf@odata.type":"Edm.Double","Inf":"Infinity","NInf@odata.type":"Edm.Double","NInf":"-Infinity",` +
	`"B":true,"DT@odata.type":"Edm.DateTime","DT":"2024-02-29T12:34:56.1234567Z",` +
	`"G@odata.type":"Edm.Guid","G":"c9da6455-213d-42c9-9a79-3e9149a57833",` +
	`"Bin@odata.type":"Edm.Binary","Bin":"AAEC/w==","NoBin@odata.type":"Edm.Binary","NoBin":""}`

// xferPath is the transfer endpoint path of account.
func xferPath(account, rest string) string { return "/_tableemu/accounts/" + account + rest }

// TestTransferHTTPRefusals: every refusal is the service's JSON error with
// a code, and writes nothing; the isolation endpoints beside them still
// answer.
func TestTransferHTTPRefusals(t *testing.T) {
	s, hs := isoServer(t, Config{})
	load(t, hs, DevAccount, "Keep", "a", 2)
	before := state(t, hs, DevAccount)
	dev := xferPath(DevAccount, "")
	net := "http://192.0.2.2:10002"
	body := `{"PartitionKey":"p","RowKey":"r"}` + "\n"
	for _, tc := range []struct {
		name   string
		r      *sent
		status int
		code   string
		says   string
	}{
		{"an unknown account", as(t, hs, DevAccount, "GET", xferPath("nosuch", "/export"), "", 0), 404, "ResourceNotFound", "AZURITE_ACCOUNTS"},
		{"no such endpoint", as(t, hs, DevAccount, "GET", dev+"/export/a/b", "", 0), 400, "InvalidUri", "/export/<table>"},
		{"import with no table", as(t, hs, DevAccount, "POST", dev+"/import", body, 0), 400, "InvalidUri", "POST /_tableemu/accounts/<account>/import/<table>"},
		{"a wrong method", as(t, hs, DevAccount, "POST", dev+"/export/Keep", body, 0), 405, "UnsupportedHttpVerb", "GET /_tableemu/accounts/<account>/export"},
		{"an unknown mode", as(t, hs, DevAccount, "POST", dev+"/import/New?mode=upsert", body, 0), 400, "InvalidQueryParameterValue", "fail (the default"},
		{"unsigned from another machine", viaNetwork(s, unsignedReq(t, "GET", net+dev+"/export")), 401, "NoAuthenticationInformation",
			"Shared Key over /devstoreaccount1/_tableemu/accounts/devstoreaccount1/export"},
		{"unsigned on loopback, another account", send(t, unsignedReq(t, "GET", hs.URL+xferPath("other", "/export"))), 401, "NoAuthenticationInformation", "loopback"},
		{"signed by another account", send(t, sharedKeyRequest(t, "POST", hs.URL, dev+"/import/New", body, "other", "other", otherKey)), 403, "AuthenticationFailed", ""},
		{"a wrong signature", send(t, sharedKeyRequest(t, "GET", hs.URL, dev+"/export/Keep", "", DevAccount, DevAccount, otherKey)), 403, "AuthenticationFailed", ""},
		{"a SAS on export", send(t, mustReq(t, "GET", hs.URL+dev+"/export/Keep?sv=2019-02-02&tn=Keep&sp=r&se=2099-01-01&sig=AAAA")), 403, "AuthenticationFailed", "no SAS"},
		{"a SAS on import", send(t, unsignedReq(t, "POST", hs.URL+dev+"/import/New?sv=2019-02-02&sp=raud&se=2099-01-01&sig=AAAA")), 403, "AuthenticationFailed", "no SAS"},
		{"a cross-site import", send(t, forged(t, "POST", hs.URL+dev+"/import/New", "text/plain", body, "Origin", "https://evil.example")), 403, "AuthorizationFailure", ""},
		{"a cross-site import, signed", send(t, withHeader(sharedKeyRequest(t, "POST", hs.URL, dev+"/import/New", body, DevAccount, DevAccount, DevKey),
			"Sec-Fetch-Site", "cross-site")), 403, "AuthorizationFailure", ""},
		{"an unsigned import without Tableemu-Request", send(t, forged(t, "POST", hs.URL+dev+"/import/New", "application/x-ndjson", body)), 403, "AuthorizationFailure", "Tableemu-Request"},
		{"a policy header that is not JSON", send(t, withHeader(sharedKeyRequest(t, "POST", hs.URL, dev+"/import/New", body, DevAccount, DevAccount, DevKey),
			"Tableemu-Acl", "read")), 400, "InvalidHeaderValue", "Tableemu-Acl is the table's stored access policies"},
		{"export of a table the account lacks", as(t, hs, DevAccount, "GET", dev+"/export/Nope", "", 0), 404, "TableNotFound", "has no table \"Nope\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := readError(t, tc.r)
			if e.status != tc.status || e.code != tc.code || e.header != tc.code {
				t.Fatalf("%d %s/%s, want %d %s: %s", e.status, e.header, e.code, tc.status, tc.code, e.message)
			}
			if !strings.Contains(e.message, tc.says) {
				t.Errorf("the message %q does not say %q", e.message, tc.says)
			}
		})
	}
	if got := state(t, hs, DevAccount); got != before {
		t.Fatalf("a refused request changed the account:\n%s", got)
	}
	// The isolation endpoints, under the same prefix, still answer, and
	// still refuse what is not theirs.
	as(t, hs, DevAccount, "GET", dev+"/snapshots", "", 200)
	if e := readError(t, as(t, hs, DevAccount, "POST", dev+"/wipe", "", 0)); e.code != "InvalidUri" || !strings.Contains(e.message, "/reset") {
		t.Fatalf("an unknown path beside them: %+v", e)
	}
}

func withHeader(req *http.Request, kv ...string) *http.Request {
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	return req
}

// TestTransferHTTPManifest: the manifest lists the tables, in the order
// of Query Tables with their stored access policies, and the service
// properties, for the dev account unsigned over loopback.
func TestTransferHTTPManifest(t *testing.T) {
	s, hs := isoServer(t, Config{})
	load(t, hs, DevAccount, "Orders", "a", 1)
	load(t, hs, DevAccount, "people", "a", 1)
	setACL(t, s, DevAccount, "Orders", store.SignedIdentifier{ID: "readers", Permission: "r",
		Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Expiry: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)})
	r := send(t, mustReq(t, "GET", hs.URL+xferPath(DevAccount, "/export")))
	if r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("manifest: %d %s %s", r.StatusCode, r.Header.Get("Content-Type"), r.body)
	}
	var m struct {
		Account    string `json:"account"`
		Properties string `json:"serviceProperties"`
		Tables     []struct {
			Name string            `json:"name"`
			ACL  []json.RawMessage `json:"acl"`
		} `json:"tables"`
	}
	if err := json.Unmarshal([]byte(r.body), &m); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tb := range m.Tables {
		names = append(names, tb.Name)
	}
	if m.Account != DevAccount || strings.Join(names, ",") != "Orders,people" || len(m.Tables[0].ACL) != 1 || len(m.Tables[1].ACL) != 0 ||
		!strings.Contains(m.Properties, "<StorageServiceProperties>") || !strings.Contains(string(m.Tables[0].ACL[0]), "readers") {
		t.Fatalf("manifest: %s", r.body)
	}
}

// setACL sets table's stored access policies in the store.
func setACL(t *testing.T, s *Server, account, table string, ids ...store.SignedIdentifier) {
	t.Helper()
	err := s.store.Update(context.Background(), func(tx *store.Tx) error {
		tb, err := tx.GetTable(account, table)
		if err != nil {
			return err
		}
		return tx.SetTableACL(tb, ids)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTransferHTTPRoundTrip: a table exported as JSON Lines and imported
// under another name, with its policies in Tableemu-Acl, exports again to
// the same bytes (every EDM type, Timestamps kept); the modes; signed with
// Shared Key, for another account than the dev one.
func TestTransferHTTPRoundTrip(t *testing.T) {
	s, hs := isoServer(t, Config{})
	for _, account := range []string{DevAccount, "other"} {
		t.Run(account, func(t *testing.T) {
			x := func(rest string) string { return xferPath(account, rest) }
			as(t, hs, account, "POST", "/"+account+"/Tables", `{"TableName":"Orders"}`, 201)
			for _, rk := range []string{"r1", "r2", "r3"} {
				as(t, hs, account, "PUT", "/"+account+"/Orders(PartitionKey='p',RowKey='"+rk+"')", fmt.Sprintf(everyType, rk), 204)
			}
			setACL(t, s, account, "Orders", store.SignedIdentifier{ID: "readers", Permission: "r", Expiry: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)})

			r := as(t, hs, account, "GET", x("/export/Orders"), "", 200)
			if r.Header.Get("Content-Type") != "application/x-ndjson" || r.Trailer.Get("Tableemu-Entities") != "3" || strings.Count(r.body, "\n") != 3 {
				t.Fatalf("export: %s, trailer %q:\n%s", r.Header.Get("Content-Type"), r.Trailer.Get("Tableemu-Entities"), r.body)
			}
			for _, want := range []string{`"I64@odata.type":"Edm.Int64","I64":"9007199254740993"`, `"NaN@odata.type":"Edm.Double","NaN":"NaN"`,
				`"DT":"2024-02-29T12:34:56.1234567Z"`, `"Empty":""`, `"Timestamp":"`} {
				if !strings.Contains(r.body, want) {
					t.Errorf("the export's lines lack %s:\n%s", want, r.body)
				}
			}
			var m struct {
				Tables []struct {
					Name string          `json:"name"`
					ACL  json.RawMessage `json:"acl"`
				} `json:"tables"`
			}
			json.Unmarshal([]byte(as(t, hs, account, "GET", x("/export"), "", 200).body), &m)
			if len(m.Tables) != 1 || len(m.Tables[0].ACL) == 0 {
				t.Fatalf("manifest: %+v", m)
			}
			post := func(table, query, body string, acl json.RawMessage, want int) *sent {
				t.Helper()
				req := sharedKeyRequest(t, "POST", hs.URL, x("/import/"+table)+query, body, account, account, keyOf(account))
				if acl != nil {
					req.Header.Set("Tableemu-Acl", string(acl))
				}
				got := send(t, req)
				if got.StatusCode != want {
					t.Fatalf("POST import/%s%s: %d %s", table, query, got.StatusCode, got.body)
				}
				return got
			}
			ans := post("Copy", "", r.body, m.Tables[0].ACL, 200)
			if want := `{"account":"` + account + `","table":"Copy","entities":3,"mode":"fail"}` + "\n"; ans.body != want {
				t.Errorf("import answered %q, want %q", ans.body, want)
			}
			if again := as(t, hs, account, "GET", x("/export/Copy"), "", 200); again.body != r.body {
				t.Errorf("the imported table exports\n%s\nthe source\n%s", again.body, r.body)
			}
			m.Tables = nil
			json.Unmarshal([]byte(as(t, hs, account, "GET", x("/export"), "", 200).body), &m)
			if len(m.Tables) != 2 || string(m.Tables[0].ACL) != string(m.Tables[1].ACL) {
				t.Errorf("the policies did not come with the table: %+v", m)
			}

			// Modes.
			e := readError(t, post("Copy", "", r.body, nil, 409))
			if e.code != "TableAlreadyExists" || !strings.Contains(e.message, "mode replace") {
				t.Errorf("mode fail over a table: %+v", e)
			}
			one := strings.SplitAfter(r.body, "\n")[0]
			changed := strings.Replace(one, `"S":"text"`, `"S":"changed"`, 1)
			post("copy", "?mode=merge", changed, nil, 200)
			if got := as(t, hs, account, "GET", x("/export/Copy"), "", 200).body; strings.Count(got, "\n") != 3 || !strings.Contains(got, `"changed"`) {
				t.Errorf("after a merge of one line:\n%s", got)
			}
			post("Copy", "?mode=replace", one, nil, 200)
			if got := as(t, hs, account, "GET", x("/export/Copy"), "", 200).body; got != one {
				t.Errorf("after a replace with one line:\n%s", got)
			}
			m.Tables = nil // a member the answer leaves out would keep its value
			json.Unmarshal([]byte(as(t, hs, account, "GET", x("/export"), "", 200).body), &m)
			if m.Tables[0].Name != "Copy" || len(m.Tables[0].ACL) != 0 {
				t.Errorf("a replace without Tableemu-Acl kept the table's policies: %+v", m.Tables[0])
			}
		})
	}
}

// TestTransferHTTPInvalidLine: a line the service would refuse is
// answered with the service's code for it and a hint naming the body's
// line and why; nothing of the table is written.
func TestTransferHTTPInvalidLine(t *testing.T) {
	_, hs := isoServer(t, Config{})
	dev := xferPath(DevAccount, "/import/Bad")
	good := `{"PartitionKey":"p","RowKey":"1"}` + "\n"
	for _, tc := range []struct {
		name, body string
		status     int
		code, says string
	}{
		{"not JSON", good + "\n" + "{nope\n", 400, "InvalidInput", "line 3: "},
		{"no RowKey", good + `{"PartitionKey":"p"}` + "\n", 400, "PropertiesNeedValue", "line 2: "},
		{"a bad Int64", `{"PartitionKey":"p","RowKey":"2","N@odata.type":"Edm.Int64","N":"x"}`, 400, "InvalidInput", "line 1: "},
		{"a value too large", good + `{"PartitionKey":"p","RowKey":"2","S":"` + strings.Repeat("x", 33000) + `"}`, 400, "PropertyValueTooLarge", "line 2: "},
		{"a key twice", good + good, 400, "InvalidDuplicateRow", "line 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := readError(t, as(t, hs, DevAccount, "POST", dev, tc.body, 0))
			if e.status != tc.status || e.code != tc.code || e.header != tc.code || !strings.Contains(e.message, "\ntableemu: ") || !strings.Contains(e.message, tc.says) {
				t.Errorf("%d %s: %q; want %d %s saying %q", e.status, e.code, e.message, tc.status, tc.code, tc.says)
			}
			if r := as(t, hs, DevAccount, "GET", "/"+DevAccount+"/Tables('Bad')", "", 0); r.StatusCode != 404 {
				t.Errorf("the refused import left its table: %d", r.StatusCode)
			}
		})
	}
}

// TestTransferTimesOutOnALockedDatabase: while another program holds the
// SQLite database's write lock, an import answers 500 OperationTimedOut at
// the endpoints' deadline (Config.IsolationTimeout) with a hint saying
// what that means, and wrote nothing; an export, a read, still answers.
func TestTransferTimesOutOnALockedDatabase(t *testing.T) {
	const limit = time.Second
	s, err := New(Config{Location: t.TempDir(), Silent: true, IsolationTimeout: limit})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.Close(); s.Close() })
	load(t, hs, DevAccount, "Orders", "a", 3)
	before := state(t, hs, DevAccount)
	release := holdWriteLock(t, s.DatabasePath())
	start := time.Now()
	r := as(t, hs, DevAccount, "POST", xferPath(DevAccount, "/import/New"), `{"PartitionKey":"p","RowKey":"1"}`, 0)
	took := time.Since(start)
	wantHint(t, readError(t, r), 500, "OperationTimedOut", "Operation could not be completed within the specified time.",
		"the import did not finish within 1s", "applied whole or not at all")
	if took < limit-50*time.Millisecond || took > limit+time.Second {
		t.Errorf("answered after %v, limit %v", took, limit)
	}
	if r := as(t, hs, DevAccount, "GET", xferPath(DevAccount, "/export/Orders"), "", 200); strings.Count(r.body, "\n") != 3 {
		t.Errorf("an export while locked: %s", r.body)
	}
	release()
	if got := state(t, hs, DevAccount); got != before {
		t.Errorf("after the timed-out import the account is\n%s\nwant\n%s", got, before)
	}
}
