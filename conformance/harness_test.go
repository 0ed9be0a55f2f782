package conformance

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/emulator"
	"github.com/tableemu/tableemu/emulator/store/postgres/pgtest"
)

// target is the endpoint under test.
type target struct {
	endpoint string // table endpoint, e.g. http://127.0.0.1:1234/devstoreaccount1
	account  string
	key      string
	external bool
	// cosmos: the server answers under --profile cosmos, and the SDK
	// clients are in their Cosmos mode (startCosmos, cosmos_suite_test.go).
	cosmos bool
	// client, when set, carries every request to the server, whatever
	// host the URL names (startCosmos); nil is http.DefaultClient.
	client *http.Client
}

var shared *target

func TestMain(m *testing.M) {
	var stop func()
	if cs := os.Getenv("TABLEEMU_TEST_CONNECTION_STRING"); cs != "" {
		t, err := targetFromConnectionString(cs)
		if err != nil {
			fmt.Fprintln(os.Stderr, "TABLEEMU_TEST_CONNECTION_STRING:", err)
			os.Exit(2)
		}
		shared = t
	} else {
		// TABLEEMU_TEST_DATABASE: the shared server keeps its data in that
		// PostgreSQL database instead of memory (.ci/postgres.sh).
		cfg := emulator.Config{InMemory: true, Silent: true}
		if db := os.Getenv("TABLEEMU_TEST_DATABASE"); db != "" {
			cfg = emulator.Config{Database: db, Silent: true}
		}
		t, closeFn, err := startInProcess(cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		shared, stop = t, closeFn
	}
	code := m.Run()
	if stop != nil {
		stop()
	}
	pgtest.Stop() // the throwaway PostgreSQL of postgres_test.go, if one was started
	os.Exit(code)
}

// onBackend is cfg, an in-memory server's, on the backend under test: as
// given, or with TABLEEMU_TEST_DATABASE set (.ci/postgres.sh) on a new
// PostgreSQL database of its own (emulator/store/postgres/pgtest, on the server of
// TABLEEMU_TEST_POSTGRES), so that the tests that start their own server
// run on PostgreSQL too.
func onBackend(t *testing.T, cfg emulator.Config) emulator.Config {
	t.Helper()
	if cfg.InMemory && os.Getenv("TABLEEMU_TEST_DATABASE") != "" {
		cfg.InMemory, cfg.Database = false, pgtest.URL(t)
	}
	return cfg
}

// startInProcess runs tableemu on a loopback port.
func startInProcess(cfg emulator.Config) (*target, func(), error) {
	srv, err := emulator.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	hs := httptest.NewServer(srv)
	acct := emulator.DefaultAccounts()[0]
	if len(cfg.Accounts) > 0 {
		acct = cfg.Accounts[0]
	}
	t := &target{endpoint: hs.URL + "/" + acct.Name, account: acct.Name, key: acct.Keys[0]}
	return t, func() { hs.Close(); srv.Close() }, nil
}

func targetFromConnectionString(cs string) (*target, error) {
	kv := map[string]string{}
	for _, part := range strings.Split(cs, ";") {
		if k, v, ok := strings.Cut(part, "="); ok {
			kv[k] = v
		}
	}
	t := &target{account: kv["AccountName"], key: kv["AccountKey"], external: true, endpoint: kv["TableEndpoint"]}
	if t.endpoint == "" && kv["EndpointSuffix"] != "" {
		proto := kv["DefaultEndpointsProtocol"]
		if proto == "" {
			proto = "https"
		}
		t.endpoint = proto + "://" + t.account + ".table." + kv["EndpointSuffix"]
	}
	t.endpoint = strings.TrimSuffix(t.endpoint, "/")
	if t.account == "" || t.key == "" || t.endpoint == "" {
		return nil, errors.New("need AccountName, AccountKey and TableEndpoint or EndpointSuffix")
	}
	return t, nil
}

// needInProcess skips tests that restart or reconfigure the server.
func needInProcess(t *testing.T) {
	t.Helper()
	if shared.external {
		t.Skip("needs an in-process tableemu")
	}
}

// clientOptions turn off retries: a test that provokes a 500 should see it
// once, not four times with back-off (docs/protocol.md 13, "Retries").
func clientOptions() *aztables.ClientOptions {
	return &aztables.ClientOptions{ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}}
}

// options are clientOptions carried by tg's client, if it has one.
func (tg *target) options() *aztables.ClientOptions {
	o := clientOptions()
	if tg.client != nil {
		o.Transport = tg.client
	}
	return o
}

func (tg *target) service(t testing.TB) *aztables.ServiceClient {
	t.Helper()
	cred, err := aztables.NewSharedKeyCredential(tg.account, tg.key)
	if err != nil {
		t.Fatal(err)
	}
	// A trailing slash: the SDK joins paths onto it (docs/protocol.md 13).
	svc, err := aztables.NewServiceClientWithSharedKey(tg.endpoint+"/", cred, tg.options())
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// newTable creates a table with a random name and deletes it when the
// test ends.
func (tg *target) newTable(t *testing.T) *aztables.Client {
	t.Helper()
	c, _ := tg.newNamedTable(t)
	return c
}

// newNamedTable is newTable that also returns the name.
func (tg *target) newNamedTable(t *testing.T) (*aztables.Client, string) {
	t.Helper()
	name := tableName()
	svc := tg.service(t)
	if _, err := svc.CreateTable(ctx(), name, nil); err != nil {
		t.Fatalf("create table %s: %v", name, err)
	}
	t.Cleanup(func() { svc.DeleteTable(context.Background(), name, nil) })
	c := svc.NewClient(name)
	clientNames[c] = name
	return c, name
}

func tableName() string {
	var b [6]byte
	rand.Read(b[:])
	return "t" + hex.EncodeToString(b[:])
}

func ctx() context.Context { return context.Background() }

// wantCode asserts that err is a service error with this status and code.
func wantCode(t *testing.T, err error, status int, code string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("want %d %s, got %v", status, code, err)
	}
	if re.StatusCode != status || re.ErrorCode != code {
		t.Fatalf("want %d %s, got %d %q", status, code, re.StatusCode, re.ErrorCode)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rawResponse is a response read whole.
type rawResponse struct {
	*http.Response
	body []byte
}

// raw sends a request signed with Shared Key Lite, computed here
// independently of tableemu's auth package: StringToSign is the date and
// the canonicalized resource "/<account><path as sent>" plus "?comp=…"
// (docs/protocol.md 9.4, 9.5). path is appended to the endpoint as is.
func (tg *target) raw(t *testing.T, method, path string, hdr map[string]string, body []byte) *rawResponse {
	t.Helper()
	req, err := http.NewRequest(method, tg.endpoint+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	req.Header.Set("DataServiceVersion", "3.0")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	if _, unsigned := hdr["Authorization"]; !unsigned {
		tg.signLite(t, req)
	}
	return doWith(t, tg.client, req)
}

func (tg *target) signLite(t testing.TB, req *http.Request) {
	t.Helper()
	if req.Header.Get("x-ms-date") == "" {
		req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	}
	resource := "/" + tg.account + req.URL.EscapedPath()
	if comp := req.URL.Query().Get("comp"); comp != "" {
		resource += "?comp=" + comp
	}
	req.Header.Set("Authorization", "SharedKeyLite "+tg.account+":"+sign(t, tg.key, req.Header.Get("x-ms-date")+"\n"+resource))
}

func sign(t testing.TB, key, s string) string {
	t.Helper()
	k, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, k)
	m.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func do(t *testing.T, req *http.Request) *rawResponse {
	t.Helper()
	return doWith(t, nil, req)
}

// doWith is do through client (nil: http.DefaultClient).
func doWith(t *testing.T, client *http.Client, req *http.Request) *rawResponse {
	t.Helper()
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &rawResponse{Response: resp, body: b}
}

// wantRawCode asserts status and code, and that the code in
// x-ms-error-code equals the one in the body (docs/protocol.md 0.1).
func wantRawCode(t *testing.T, r *rawResponse, status int, code string) {
	t.Helper()
	if r.StatusCode != status {
		t.Fatalf("want status %d, got %d: %s", status, r.StatusCode, r.body)
	}
	if got := r.Header.Get("x-ms-error-code"); got != code {
		t.Fatalf("want x-ms-error-code %s, got %q: %s", code, got, r.body)
	}
	if bodyCode := errorCodeInBody(r); bodyCode != code {
		t.Fatalf("want body code %s, got %q: %s", code, bodyCode, r.body)
	}
}

func errorCodeInBody(r *rawResponse) string {
	var j struct {
		Err struct {
			Code string `json:"code"`
		} `json:"odata.error"`
	}
	if json.Unmarshal(r.body, &j) == nil && j.Err.Code != "" {
		return j.Err.Code
	}
	s := string(r.body)
	if i := strings.Index(s, "<m:code>"); i >= 0 {
		s = s[i+len("<m:code>"):]
		if j := strings.Index(s, "<"); j >= 0 {
			return s[:j]
		}
	}
	if i := strings.Index(s, "<Code>"); i >= 0 {
		s = s[i+len("<Code>"):]
		if j := strings.Index(s, "<"); j >= 0 {
			return s[:j]
		}
	}
	return ""
}

// entityPath is the URL path of an entity, escaped as the Go SDK does:
// quotes doubled, then each key path-escaped (docs/protocol.md 13).
func entityPath(table, pk, rk string) string {
	q := func(s string) string { return url.PathEscape(strings.ReplaceAll(s, "'", "''")) }
	return "/" + table + "(PartitionKey='" + q(pk) + "',RowKey='" + q(rk) + "')"
}

func jsonBody(t *testing.T, r *rawResponse) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(r.body))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("response is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

func errorsAs(err error, target any) bool { return errors.As(err, target) }
