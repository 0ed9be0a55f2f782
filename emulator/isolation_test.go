package emulator

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tableemu/tableemu"
)

// The isolation endpoints and methods (isolation.go, and package isolation).

// isoServer serves devstoreaccount1 (public key) and "other" with the
// given extra configuration.
func isoServer(t *testing.T, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	accts, err := parseAccounts(DevAccount + ":" + DevKey + ";other:" + otherKey)
	if err != nil {
		t.Fatal(err)
	}
	cfg.InMemory, cfg.Silent, cfg.Accounts = true, true, accts
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.Close(); s.Close() })
	return s, hs
}

func keyOf(account string) string {
	if account == DevAccount {
		return DevKey
	}
	return otherKey
}

// as sends a request signed with account's key, and fails the test on
// an answer with another status than want (0: any).
func as(t *testing.T, hs *httptest.Server, account, method, path, body string, want int) *sent {
	t.Helper()
	req := sharedKeyRequest(t, method, hs.URL, path, body, account, account, keyOf(account))
	if p, q, _ := strings.Cut(path, "?"); strings.Contains(q, "comp=properties") {
		// The canonicalized resource ends with ?comp= (docs/protocol.md 9.5).
		k, _ := base64.StdEncoding.DecodeString(keyOf(account))
		m := hmac.New(sha256.New, k)
		io.WriteString(m, method+"\n\n"+req.Header.Get("Content-Type")+"\n"+req.Header.Get("x-ms-date")+"\n/"+account+p+"?comp=properties")
		req.Header.Set("Authorization", "SharedKey "+account+":"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	}
	r := send(t, req)
	if want != 0 && r.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, r.StatusCode, r.body, want)
	}
	return r
}

// state is what an account shows through the Table API: its tables and
// each one's entities (RowKey=Gen), sorted.
func state(t *testing.T, hs *httptest.Server, account string) string {
	t.Helper()
	var tables struct {
		Value []struct{ TableName string } `json:"value"`
	}
	json.Unmarshal([]byte(as(t, hs, account, "GET", "/"+account+"/Tables", "", 200).body), &tables)
	var out []string
	for _, tb := range tables.Value {
		var es struct {
			Value []map[string]any `json:"value"`
		}
		json.Unmarshal([]byte(as(t, hs, account, "GET", "/"+account+"/"+tb.TableName+"()", "", 200).body), &es)
		var rows []string
		for _, e := range es.Value {
			rows = append(rows, fmt.Sprintf("%v=%v", e["RowKey"], e["Gen"]))
		}
		sort.Strings(rows)
		out = append(out, tb.TableName+": "+strings.Join(rows, " "))
	}
	return strings.Join(out, "\n")
}

func load(t *testing.T, hs *httptest.Server, account, table, gen string, n int) {
	t.Helper()
	if r := as(t, hs, account, "POST", "/"+account+"/Tables", `{"TableName":"`+table+`"}`, 0); r.StatusCode/100 != 2 && r.StatusCode != 409 {
		t.Fatalf("create table %s: %d %s", table, r.StatusCode, r.body)
	}
	for i := range n {
		as(t, hs, account, "PUT", fmt.Sprintf("/%s/%s(PartitionKey='p',RowKey='%03d')", account, table, i), `{"Gen":"`+gen+`"}`, 204)
	}
}

// TestIsolationHTTP walks the endpoints: save (201, then 200 when
// replaced), list, describe, restore, reset, delete; each answer's JSON;
// and that the other account is never touched.
func TestIsolationHTTP(t *testing.T) {
	_, hs := isoServer(t, Config{})
	dev := "/_tableemu/accounts/" + DevAccount
	load(t, hs, DevAccount, "Orders", "a", 5)
	load(t, hs, "other", "theirs", "x", 3)
	other := state(t, hs, "other")
	saved := state(t, hs, DevAccount)

	r := as(t, hs, DevAccount, "PUT", dev+"/snapshots/fixtures", "", 201)
	var info SnapshotInfo
	if err := json.Unmarshal([]byte(r.body), &info); err != nil || info.Name != "fixtures" || info.Account != DevAccount ||
		info.Tables != 1 || info.Entities != 5 || info.Created.IsZero() || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("PUT snapshot: %v %s (%s)", err, r.body, r.Header.Get("Content-Type"))
	}
	as(t, hs, DevAccount, "PUT", dev+"/snapshots/fixtures", "", 200)
	as(t, hs, DevAccount, "PUT", dev+"/snapshots/other.1", "", 201)
	var list struct {
		Account   string         `json:"account"`
		Snapshots []SnapshotInfo `json:"snapshots"`
	}
	json.Unmarshal([]byte(as(t, hs, DevAccount, "GET", dev+"/snapshots", "", 200).body), &list)
	if list.Account != DevAccount || len(list.Snapshots) != 2 || list.Snapshots[0].Name != "fixtures" || list.Snapshots[1].Name != "other.1" {
		t.Fatalf("list: %+v", list)
	}
	if r := as(t, hs, DevAccount, "GET", dev+"/snapshots/fixtures", "", 200); !strings.Contains(r.body, `"entities":5`) {
		t.Fatalf("GET snapshot: %s", r.body)
	}

	load(t, hs, DevAccount, "Orders", "b", 2) // rewrites two
	load(t, hs, DevAccount, "Extra", "b", 1)
	r = as(t, hs, DevAccount, "POST", dev+"/snapshots/fixtures/restore", "", 200)
	if !strings.Contains(r.body, `"name":"fixtures"`) {
		t.Fatalf("restore: %s", r.body)
	}
	if got := state(t, hs, DevAccount); got != saved {
		t.Fatalf("after restore:\n%s\nwant\n%s", got, saved)
	}

	r = as(t, hs, DevAccount, "POST", dev+"/reset", "", 200)
	if r.body != `{"account":"devstoreaccount1","tablesDeleted":1}` {
		t.Fatalf("reset: %s", r.body)
	}
	if got := state(t, hs, DevAccount); got != "" {
		t.Fatalf("after reset:\n%s", got)
	}
	if r := as(t, hs, DevAccount, "GET", "/"+DevAccount+"/Orders()", "", 404); !strings.Contains(r.body, "TableNotFound") {
		t.Fatalf("a reset table: %s", r.body)
	}
	as(t, hs, DevAccount, "DELETE", dev+"/snapshots/other.1", "", 204)
	e := readError(t, as(t, hs, DevAccount, "DELETE", dev+"/snapshots/other.1", "", 404))
	if e.code != "SnapshotNotFound" || e.header != "SnapshotNotFound" || !strings.Contains(e.message, `no snapshot named "other.1"`) {
		t.Fatalf("deleting it again: %+v", e)
	}
	as(t, hs, DevAccount, "POST", dev+"/snapshots/fixtures/restore", "", 200)
	if got := state(t, hs, DevAccount); got != saved {
		t.Fatalf("restore after reset:\n%s", got)
	}
	if got := state(t, hs, "other"); got != other {
		t.Fatalf("the other account changed:\n%s", got)
	}
}

// TestIsolationResetsProperties: a reset and a restore put back the
// service properties, and with them CORS, in the same step.
func TestIsolationResetsProperties(t *testing.T) {
	_, hs := isoServer(t, Config{})
	const props = `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors><CorsRule><AllowedOrigins>http://app.example</AllowedOrigins>` +
		`<AllowedMethods>GET</AllowedMethods><AllowedHeaders>*</AllowedHeaders><ExposedHeaders>*</ExposedHeaders><MaxAgeInSeconds>5</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>`
	preflight := func() int {
		req := mustReq(t, "OPTIONS", hs.URL+"/"+DevAccount+"/Tables")
		req.Header.Set("Origin", "http://app.example")
		req.Header.Set("Access-Control-Request-Method", "GET")
		return send(t, req).StatusCode
	}
	as(t, hs, DevAccount, "PUT", "/"+DevAccount+"/?restype=service&comp=properties", props, 202)
	as(t, hs, DevAccount, "PUT", "/_tableemu/accounts/"+DevAccount+"/snapshots/cors", "", 201)
	if preflight() != 200 {
		t.Fatal("the CORS rule does not apply")
	}
	as(t, hs, DevAccount, "POST", "/_tableemu/accounts/"+DevAccount+"/reset", "", 200)
	if got := preflight(); got != 403 {
		t.Errorf("preflight after reset: %d, want 403 (no CORS rules)", got)
	}
	if r := as(t, hs, DevAccount, "GET", "/"+DevAccount+"/?restype=service&comp=properties", "", 200); strings.Contains(r.body, "app.example") {
		t.Errorf("properties after reset: %s", r.body)
	}
	as(t, hs, DevAccount, "POST", "/_tableemu/accounts/"+DevAccount+"/snapshots/cors/restore", "", 200)
	if got := preflight(); got != 200 {
		t.Errorf("preflight after restore: %d, want 200", got)
	}
}

// TestIsolationRefusals: every refusal is the service's JSON error with
// a code, and changes nothing.
func TestIsolationRefusals(t *testing.T) {
	s, hs := isoServer(t, Config{})
	load(t, hs, DevAccount, "Keep", "a", 2)
	before := state(t, hs, DevAccount)
	dev := "/_tableemu/accounts/" + DevAccount
	net := "http://192.0.2.2:10002"
	for _, tc := range []struct {
		name   string
		r      *sent
		status int
		code   string
		says   string
	}{
		{"an invalid name", as(t, hs, DevAccount, "PUT", dev+"/snapshots/-bad", "", 0), 400, "InvalidSnapshotName", "1 to 64 characters"},
		{"a name too long", as(t, hs, DevAccount, "PUT", dev+"/snapshots/"+strings.Repeat("a", 65), "", 0), 400, "InvalidSnapshotName", "starting with a letter or a digit"},
		{"an unknown snapshot", as(t, hs, DevAccount, "POST", dev+"/snapshots/nope/restore", "", 0), 404, "SnapshotNotFound", `no snapshot named "nope"`},
		{"an unknown account", as(t, hs, DevAccount, "POST", "/_tableemu/accounts/nosuch/reset", "", 0), 404, "ResourceNotFound", "AZURITE_ACCOUNTS"},
		{"no such endpoint", as(t, hs, DevAccount, "POST", dev+"/wipe", "", 0), 400, "InvalidUri", "/reset"},
		{"a wrong method", as(t, hs, DevAccount, "GET", dev+"/reset", "", 0), 405, "UnsupportedHttpVerb", "POST /_tableemu/accounts/<account>/reset"},
		{"unsigned from another machine", viaNetwork(s, unsignedReq(t, "POST", net+dev+"/reset")), 401, "NoAuthenticationInformation", "Shared Key over /devstoreaccount1/_tableemu/accounts/devstoreaccount1/reset"},
		{"unsigned on loopback, another account", send(t, unsignedReq(t, "POST", hs.URL+"/_tableemu/accounts/other/reset")), 401, "NoAuthenticationInformation", "loopback"},
		{"signed by another account", send(t, sharedKeyRequest(t, "POST", hs.URL, dev+"/reset", "", "other", "other", otherKey)), 403, "AuthenticationFailed", ""},
		{"a wrong signature", send(t, sharedKeyRequest(t, "POST", hs.URL, dev+"/reset", "", DevAccount, DevAccount, otherKey)), 403, "AuthenticationFailed", ""},
		{"a SAS", send(t, unsignedReq(t, "POST", hs.URL+dev+"/reset?sv=2019-02-02&sp=raud&se=2099-01-01&sig=AAAA")), 403, "AuthenticationFailed", "no SAS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := readError(t, tc.r)
			if e.status != tc.status || e.code != tc.code || e.header != tc.code {
				t.Fatalf("%d %s/%s, want %d %s: %s", e.status, e.header, e.code, tc.status, tc.code, e.message)
			}
			if !strings.Contains(e.message, tc.says) {
				t.Errorf("the message %q does not say %q", e.message, tc.says)
			}
			if tc.status == 401 && tc.r.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
	if got := state(t, hs, DevAccount); got != before {
		t.Fatalf("a refused request changed the account:\n%s", got)
	}
	// Unsigned on loopback, devstoreaccount1 with its public key: served,
	// like the insights report (curl on the default set-up), given the
	// header that shows no web page sent it (crossorigin.go).
	if r := send(t, unsignedReq(t, "POST", hs.URL+dev+"/reset")); r.StatusCode != 200 {
		t.Fatalf("unsigned loopback reset of devstoreaccount1: %d %s", r.StatusCode, r.body)
	}
}

// TestIsolationGo: the methods on *Server, and their errors.
func TestIsolationGo(t *testing.T) {
	ctx := context.Background()
	s, hs := isoServer(t, Config{})
	load(t, hs, DevAccount, "Orders", "a", 3)
	info, err := s.Snapshot(ctx, DevAccount, "fixtures")
	if err != nil || info.Entities != 3 || info.Tables != 1 {
		t.Fatalf("Snapshot: %+v %v", info, err)
	}
	saved := state(t, hs, DevAccount)
	if err := s.Reset(ctx, DevAccount); err != nil {
		t.Fatal(err)
	}
	if state(t, hs, DevAccount) != "" {
		t.Fatal("Reset left tables")
	}
	if _, err := s.Restore(ctx, DevAccount, "fixtures"); err != nil {
		t.Fatal(err)
	}
	if got := state(t, hs, DevAccount); got != saved {
		t.Fatalf("after Restore:\n%s", got)
	}
	list, err := s.Snapshots(ctx, DevAccount)
	if err != nil || len(list) != 1 || list[0].String() == "" {
		t.Fatalf("Snapshots: %+v %v", list, err)
	}
	for _, tc := range []struct {
		err      error
		sentinel error
		code     tableemu.Code
	}{
		{s.Reset(ctx, "nosuch"), ErrUnknownAccount, tableemu.ResourceNotFound},
		{s.DeleteSnapshot(ctx, DevAccount, "nope"), ErrSnapshotNotFound, tableemu.SnapshotNotFound},
		{func() error { _, err := s.Restore(ctx, DevAccount, "a/b"); return err }(), ErrInvalidSnapshotName, tableemu.InvalidSnapshotName},
	} {
		if !errors.Is(tc.err, tc.sentinel) || tableemu.From(tc.err).Code != tc.code {
			t.Errorf("%v: want %v and %s", tc.err, tc.sentinel, tc.code)
		}
	}
	if err := s.ResetAll(ctx); err != nil {
		t.Fatal(err)
	}
	if state(t, hs, DevAccount) != "" || len(must(s.Snapshots(ctx, DevAccount))) != 1 {
		t.Fatal("ResetAll left tables, or took the snapshot")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestIsolationRaces: queries and writes racing resets and restores see
// the account before or after, never in between: a query of the table
// (one page) returns all of one snapshot's entities and none of the
// other's (with what writers added since), or TableNotFound; a write
// succeeds or finds no table; and after the last restore no racing write
// is left.
func TestIsolationRaces(t *testing.T) {
	ctx := context.Background()
	s, hs := isoServer(t, Config{})
	load(t, hs, DevAccount, "tab", "a", 60)
	must(s.Snapshot(ctx, DevAccount, "a"))
	as(t, hs, DevAccount, "DELETE", "/"+DevAccount+"/Tables('tab')", "", 204)
	load(t, hs, DevAccount, "tab", "b", 25)
	must(s.Snapshot(ctx, DevAccount, "b"))
	wantB := state(t, hs, DevAccount)

	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 100)
	// What the racing requests saw: queries of snapshot a, of b, of no
	// table; writes done, and refused for want of the table.
	var sawA, sawB, sawNone, wrote, refused atomic.Int64
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if w%2 == 0 {
					r := send(t, sharedKeyRequest(t, "GET", hs.URL, "/"+DevAccount+"/tab()", "", DevAccount, DevAccount, DevKey))
					if r.StatusCode == 404 && strings.Contains(r.body, "TableNotFound") {
						sawNone.Add(1)
						continue
					}
					var es struct {
						Value []map[string]any `json:"value"`
					}
					json.Unmarshal([]byte(r.body), &es)
					gens := map[any]int{}
					for _, e := range es.Value {
						gens[e["Gen"]]++
					}
					switch {
					// Besides what the writers put in since the last
					// restore: all of one snapshot, nothing of the other.
					case r.StatusCode == 200 && len(es.Value) == 60+gens["w"] && gens["a"] == 60:
						sawA.Add(1)
					case r.StatusCode == 200 && len(es.Value) == 25+gens["w"] && gens["b"] == 25:
						sawB.Add(1)
					default:
						errs <- fmt.Errorf("a query saw %d %v: %.200s", r.StatusCode, gens, r.body)
						return
					}
				} else {
					path := fmt.Sprintf("/%s/tab(PartitionKey='w%d',RowKey='%d')", DevAccount, w, i)
					r := send(t, sharedKeyRequest(t, "PUT", hs.URL, path, `{"Gen":"w"}`, DevAccount, DevAccount, DevKey))
					switch {
					case r.StatusCode == 204:
						wrote.Add(1)
					case r.StatusCode == 404 && strings.Contains(r.body, "TableNotFound"):
						refused.Add(1)
					default:
						errs <- fmt.Errorf("a write got %d %s", r.StatusCode, r.body)
						return
					}
				}
			}
		}()
	}
	// Until the requests have met every state (they then ran beside the
	// resets and restores), or 3000 of those.
	seenAll := func() bool {
		return sawA.Load() > 0 && sawB.Load() > 0 && sawNone.Load() > 0 && wrote.Load() > 0 && refused.Load() > 0
	}
	for i := 0; i < 3000 && (i < 90 || !seenAll()); i++ {
		var err error
		switch i % 3 {
		case 0:
			_, err = s.Restore(ctx, DevAccount, "a")
		case 1:
			err = s.Reset(ctx, DevAccount)
		default:
			_, err = s.Restore(ctx, DevAccount, "b")
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("queries saw a %d, b %d, no table %d; writes done %d, refused %d",
		sawA.Load(), sawB.Load(), sawNone.Load(), wrote.Load(), refused.Load())
	if !seenAll() {
		t.Error("the requests did not meet every state: they did not race the resets and restores")
	}
	must(s.Restore(ctx, DevAccount, "b"))
	if got := state(t, hs, DevAccount); got != wantB {
		t.Fatalf("after the last restore:\n%s\nwant\n%s", got, wantB)
	}
}

// TestIsolationUncounted: snapshots are not tables, insights do not see
// the endpoints, and the throttle does not charge them.
func TestIsolationUncounted(t *testing.T) {
	s, hs := isoServer(t, Config{Insights: true, Throttle: true})
	load(t, hs, DevAccount, "tab", "a", 20)
	for range 200 { // 200 × 20 entities: ten times the account's second
		as(t, hs, DevAccount, "PUT", "/_tableemu/accounts/"+DevAccount+"/snapshots/s", "", 0)
		as(t, hs, DevAccount, "POST", "/_tableemu/accounts/"+DevAccount+"/snapshots/s/restore", "", 200)
	}
	as(t, hs, DevAccount, "GET", "/"+DevAccount+"/tab()", "", 200)
	if got := state(t, hs, DevAccount); strings.Count(got, "\n") != 0 || !strings.HasPrefix(got, "tab: ") {
		t.Fatalf("tables after snapshots: %q", got)
	}
	rep := as(t, hs, DevAccount, "GET", "/_tableemu/insights", "", 200).body
	if strings.Contains(rep, "snapshot") || strings.Contains(rep, `"s"`) {
		t.Fatalf("insights mention the snapshot: %s", rep)
	}
	_ = s
}
