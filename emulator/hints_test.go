package emulator

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The hints tableemu adds after the service's message (hints.go,
// docs/protocol.md 8.3): each keeps the service's status, code (header and
// body alike) and message, the service's text alone on the first line, and
// a second line "tableemu: …" saying what to do.

// odataError is a JSON error body read back.
type odataError struct {
	status  int
	header  string // x-ms-error-code
	code    string
	message string // the message without the RequestId/Time lines
}

func readError(t *testing.T, r *sent) odataError {
	t.Helper()
	var j struct {
		E struct {
			Code    string `json:"code"`
			Message struct {
				Value string `json:"value"`
			} `json:"message"`
		} `json:"odata.error"`
	}
	if err := json.Unmarshal([]byte(r.body), &j); err != nil {
		t.Fatalf("status %d, body not an OData JSON error: %v: %s", r.StatusCode, err, r.body)
	}
	msg, _, ok := strings.Cut(j.E.Message.Value, "\nRequestId:")
	if !ok {
		t.Fatalf("message has no RequestId line: %q", j.E.Message.Value)
	}
	return odataError{r.StatusCode, r.Header.Get("x-ms-error-code"), j.E.Code, msg}
}

// wantHint checks status and code, that the message starts with the
// service's text and has exactly one hint, and that the hint says each of
// says.
func wantHint(t *testing.T, e odataError, status int, code, service string, says ...string) {
	t.Helper()
	if e.status != status || e.header != code || e.code != code {
		t.Fatalf("want %d %s in header and body, got %d %q/%q: %q", status, code, e.status, e.header, e.code, e.message)
	}
	hint, ok := strings.CutPrefix(e.message, service+"\ntableemu: ")
	if !ok {
		t.Fatalf("message %q does not start with the service's text %q and a hint", e.message, service)
	}
	if strings.Contains(hint, "tableemu: ") {
		t.Errorf("two hints: %q", e.message)
	}
	for _, s := range says {
		if !strings.Contains(hint, s) {
			t.Errorf("hint %q does not say %q", hint, s)
		}
	}
}

func unsigned(t *testing.T, method, url, body string) *sent {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return send(t, req)
}

func TestHintNoCredentials(t *testing.T) {
	_, hs := newTestServer(t)
	r := unsigned(t, "GET", hs.URL+"/devstoreaccount1/Tables", "")
	wantHint(t, readError(t, r), 401, "NoAuthenticationInformation",
		"Server failed to authenticate the request. Please refer to the information in the www-authenticate header.",
		"no credentials", "account key", "connection string")
	if r.Header.Get("WWW-Authenticate") == "" {
		t.Error("401 without WWW-Authenticate")
	}
}

func TestHintURLWithoutAccount(t *testing.T) {
	_, hs := newTestServer(t)
	host := strings.TrimPrefix(hs.URL, "http://")
	example := "e.g. http://" + host + "/devstoreaccount1/Tables"
	for _, tc := range []struct {
		target, says string
	}{
		{"/", "this URL names no account."},
		{"/Tables", `there is no account "Tables" here`},
		{"/Tables()", `there is no account "Tables()" here`},
		{"/mytable(PartitionKey='a',RowKey='b')", `there is no account "mytable(PartitionKey='a',RowKey='b')" here`},
	} {
		t.Run(tc.target, func(t *testing.T) {
			// Signed or not, the URL is refused before authentication.
			wantHint(t, readError(t, send(t, signed(t, "GET", hs.URL, tc.target, ""))), 400, "InvalidUri",
				"The requested URI does not represent any resource on the server.",
				tc.says, "URLs are /<account>/Tables", example, "the accounts here are devstoreaccount1", "AZURITE_ACCOUNTS")
		})
	}
}

// TestHintAccountEndpoint: the endpoint printed at start, opened as it is
// (curl, a browser), names an account and no operation: the service's 400
// InvalidUri, with a hint saying where the tables are. A malformed path
// under the account stays the service's answer alone.
func TestHintAccountEndpoint(t *testing.T) {
	_, hs := newTestServer(t)
	ep := hs.URL + "/devstoreaccount1"
	for _, target := range []string{"/devstoreaccount1", "/devstoreaccount1/"} {
		t.Run(target, func(t *testing.T) {
			wantHint(t, readError(t, unsigned(t, "GET", hs.URL+target, "")), 400, "InvalidUri",
				"The requested URI does not represent any resource on the server.",
				`endpoint of account "devstoreaccount1"`, "its tables are at "+ep+"/Tables", ep+"/<table>()")
		})
	}
	e := readError(t, send(t, signed(t, "GET", hs.URL, "/devstoreaccount1/orders(PartitionKey='a'", "")))
	if e.status != 400 || e.code != "InvalidUri" || strings.Contains(e.message, "tableemu:") {
		t.Errorf("malformed entity path: %+v", e)
	}
}

// TestHintSecondaryAndHostStyleEndpoints: the secondary endpoint
// (/devstoreaccount1-secondary, and the /acct-secondary/acct/ form Python's
// SDK builds) and the host-style endpoints (devstoreaccount1.table.localhost
// and its -secondary) opened as they are get the service's 400 InvalidUri
// with the same kind of hint as the primary's path-style endpoint, naming
// URLs under the endpoint that was used; and those URLs work.
func TestHintSecondaryAndHostStyleEndpoints(t *testing.T) {
	_, hs := newTestServer(t)
	port := hs.URL[strings.LastIndexByte(hs.URL, ':')+1:]
	for _, tc := range []struct {
		host, target string
		what, ep     string // the hint's words and the endpoint it names
		secondary    bool
	}{
		{"", "/devstoreaccount1-secondary", "secondary endpoint", hs.URL + "/devstoreaccount1-secondary", true},
		{"", "/devstoreaccount1-secondary/", "secondary endpoint", hs.URL + "/devstoreaccount1-secondary", true},
		{"", "/devstoreaccount1-secondary/devstoreaccount1/", "secondary endpoint", hs.URL + "/devstoreaccount1-secondary", true},
		{"devstoreaccount1.table.localhost:" + port, "/", "host-style endpoint", "http://devstoreaccount1.table.localhost:" + port, false},
		{"devstoreaccount1-secondary.table.localhost:" + port, "/", "host-style secondary endpoint", "http://devstoreaccount1-secondary.table.localhost:" + port, true},
	} {
		t.Run(tc.host+tc.target, func(t *testing.T) {
			for _, sign := range []bool{false, true} {
				var req *http.Request
				if sign {
					req = signed(t, "GET", hs.URL, tc.target, "")
				} else {
					req, _ = http.NewRequest("GET", hs.URL+tc.target, nil)
				}
				if tc.host != "" {
					req.Host = tc.host
				}
				req.Header.Set("Accept", "application/json;odata=minimalmetadata")
				says := []string{"this URL is the " + tc.what + ` of account "devstoreaccount1"`,
					"its tables are at " + tc.ep + "/Tables", tc.ep + "/<table>()"}
				if tc.secondary {
					says = append(says, "the service stats at "+tc.ep+"/?restype=service&comp=stats")
				}
				wantHint(t, readError(t, send(t, req)), 400, "InvalidUri",
					"The requested URI does not represent any resource on the server.", says...)
			}
			// The URLs the hint names are served (Shared Key Lite signs
			// the path as sent, and ?comp=).
			u, err := url.Parse(tc.ep)
			if err != nil {
				t.Fatal(err)
			}
			for _, target := range []string{u.Path + "/Tables", u.Path + "/?restype=service&comp=stats"} {
				if !tc.secondary && strings.Contains(target, "stats") {
					continue
				}
				req := signed(t, "GET", hs.URL, target, "")
				if tc.host != "" {
					req.Host = tc.host
				}
				if strings.Contains(target, "comp=stats") {
					key, _ := base64.StdEncoding.DecodeString(DevKey)
					m := hmac.New(sha256.New, key)
					io.WriteString(m, req.Header.Get("x-ms-date")+"\n/"+DevAccount+req.URL.Opaque+"?comp=stats")
					req.Header.Set("Authorization", "SharedKeyLite "+DevAccount+":"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
				}
				if r := send(t, req); r.StatusCode != 200 {
					t.Errorf("GET %s (Host %q), which the hint names: %d %s", target, tc.host, r.StatusCode, r.body)
				}
			}
		})
	}
}

// TestHintHostStyleWithDisableProductStyleUrl: with
// --disableProductStyleUrl, a host-style URL's account is not read from
// the Host; the root then names no account, and the hint says why.
func TestHintHostStyleWithDisableProductStyleUrl(t *testing.T) {
	s, err := New(Config{InMemory: true, Silent: true, DisableProductStyleURL: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.Close(); s.Close() })
	port := hs.URL[strings.LastIndexByte(hs.URL, ':')+1:]
	for _, host := range []string{"devstoreaccount1.table.localhost:" + port, "devstoreaccount1-secondary.table.localhost:" + port} {
		req, _ := http.NewRequest("GET", hs.URL+"/", nil)
		req.Host = host
		req.Header.Set("Accept", "application/json;odata=minimalmetadata")
		wantHint(t, readError(t, send(t, req)), 400, "InvalidUri",
			"The requested URI does not represent any resource on the server.",
			"this URL names no account.", `The host name names account "devstoreaccount1"`, "--disableProductStyleUrl",
			"e.g. http://"+host+"/devstoreaccount1/Tables")
	}
	// A host name that names no account: no word about the flag.
	req, _ := http.NewRequest("GET", hs.URL+"/", nil)
	req.Host = "emulator.local:" + port
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	if e := readError(t, send(t, req)); strings.Contains(e.message, "disableProductStyleUrl") {
		t.Errorf("emulator.local: %q", e.message)
	}
}

func TestHintUnknownAccount(t *testing.T) {
	accounts, err := parseAccounts("alpha:" + DevKey + ";beta:" + DevKey)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{InMemory: true, Silent: true, Accounts: accounts})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.Close(); s.Close() })
	// A path the router knows, under an account that is not served.
	r := unsigned(t, "GET", hs.URL+"/devstoreaccount1/Tables", "")
	wantHint(t, readError(t, r), 404, "ResourceNotFound", "The specified resource does not exist.",
		`there is no account "devstoreaccount1" here`, "the accounts here are alpha, beta (AZURITE_ACCOUNTS sets them)",
		"e.g. http://"+strings.TrimPrefix(hs.URL, "http://")+"/alpha/Tables")

	// A missing entity of a served account is the service's answer alone.
	signedAlpha := func(method, target, body string) *sent {
		req := signed(t, method, hs.URL, target, body)
		date := req.Header.Get("x-ms-date")
		key, _ := base64.StdEncoding.DecodeString(DevKey)
		m := hmac.New(sha256.New, key)
		io.WriteString(m, date+"\n/alpha"+req.URL.Opaque)
		req.Header.Set("Authorization", "SharedKeyLite alpha:"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
		req.Header.Set("Accept", "application/json;odata=minimalmetadata")
		return send(t, req)
	}
	if r := signedAlpha("POST", "/alpha/Tables", `{"TableName":"hinted"}`); r.StatusCode != 201 {
		t.Fatalf("create table: %d %s", r.StatusCode, r.body)
	}
	e := readError(t, signedAlpha("GET", "/alpha/hinted(PartitionKey='p',RowKey='r')", ""))
	if e.status != 404 || e.code != "ResourceNotFound" || e.message != "The specified resource does not exist." {
		t.Errorf("missing entity: %+v", e)
	}
}

func TestHintTableName(t *testing.T) {
	_, hs := newTestServer(t)
	for _, tc := range []struct {
		name, code, service string
	}{
		{"my_table", "InvalidResourceName", "The specifed resource name contains invalid characters."},
		{"1table", "InvalidResourceName", "The specifed resource name contains invalid characters."},
		{"ab", "OutOfRangeInput", "The specified resource name length is not within the permissible limits."},
		{strings.Repeat("a", 64), "OutOfRangeInput", "The specified resource name length is not within the permissible limits."},
		{"Tables", "InvalidInput", "One of the request inputs is not valid."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := send(t, signed(t, "POST", hs.URL, "/devstoreaccount1/Tables", `{"TableName":"`+tc.name+`"}`))
			wantHint(t, readError(t, r), 400, tc.code, tc.service,
				`"`+tc.name[:min(len(tc.name), 80)], "3 to 63 letters or digits, starting with a letter", `"tables" is reserved`)
		})
	}
}

// badlySigned is a Shared Key Lite request for /devstoreaccount1/Tables
// signed with a key that is not the account's; it returns the request and
// the string the server must have signed.
func badlySigned(t *testing.T, base string) (*http.Request, string) {
	t.Helper()
	req, err := http.NewRequest("GET", base+"/devstoreaccount1/Tables", nil)
	if err != nil {
		t.Fatal(err)
	}
	date := time.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	sts := date + "\n/devstoreaccount1/devstoreaccount1/Tables"
	m := hmac.New(sha256.New, []byte("not the account key"))
	io.WriteString(m, sts)
	req.Header.Set("Authorization", "SharedKeyLite devstoreaccount1:"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	return req, sts
}

// logLine is the one log format (LogTime, then the message).
var logLine = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \S`)

func TestHintBadSignature(t *testing.T) {
	const service = "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature."
	t.Run("without --debug", func(t *testing.T) {
		_, hs := newTestServer(t)
		req, _ := badlySigned(t, hs.URL)
		wantHint(t, readError(t, send(t, req)), 403, "AuthenticationFailed", service, "--debug FILE", "string tableemu signed")
	})
	t.Run("with --debug", func(t *testing.T) {
		logPath := filepath.Join(t.TempDir(), "debug.log")
		s, err := New(Config{InMemory: true, Silent: true, Debug: logPath})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(s)
		t.Cleanup(func() { hs.Close(); s.Close() })
		req, sts := badlySigned(t, hs.URL)
		r := send(t, req)
		wantHint(t, readError(t, r), 403, "AuthenticationFailed", service, "are in its --debug log")
		log, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		id := r.Header.Get("x-ms-request-id")
		want := "request " + id + ": string to sign: " + strconv.Quote(sts) + "\n"
		if !strings.Contains(string(log), want) {
			t.Errorf("debug log lacks %q:\n%s", want, log)
		}
		if !strings.Contains(string(log), "request "+id+": 403 AuthenticationFailed: The MAC signature found") {
			t.Errorf("debug log lacks the refusal's detail:\n%s", log)
		}
		// Every line is one entry in the one log format: the detail, which
		// quotes the string to sign, spans no lines of its own.
		for _, l := range strings.Split(strings.TrimSuffix(string(log), "\n"), "\n") {
			if !logLine.MatchString(l) {
				t.Errorf("debug log line not in the log format: %q", l)
			}
		}
		// The logged string is what the account key must sign: signing it
		// with the right key is accepted.
		good, _ := http.NewRequest("GET", hs.URL+"/devstoreaccount1/Tables", nil)
		good.Header = req.Header.Clone()
		key, _ := base64.StdEncoding.DecodeString(DevKey)
		m := hmac.New(sha256.New, key)
		io.WriteString(m, sts)
		good.Header.Set("Authorization", "SharedKeyLite devstoreaccount1:"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
		if r := send(t, good); r.StatusCode != 200 {
			t.Errorf("the logged string signed with the key: %d %s", r.StatusCode, r.body)
		}
	})
}

// TestHintsAreNotForServiceErrors: an ordinary refusal carries no hint,
// and a hinted one only one.
func TestHintsAreNotForServiceErrors(t *testing.T) {
	_, hs := newTestServer(t)
	e := readError(t, send(t, signed(t, "DELETE", hs.URL, "/devstoreaccount1/Tables('nosuch')", "")))
	if e.status != 404 || e.code != "ResourceNotFound" || e.message != "The specified resource does not exist." {
		t.Errorf("delete missing table: %+v", e)
	}
	wantHint(t, readError(t, unsigned(t, "GET", hs.URL+"/_tableemu/insights", "")), 404, "ResourceNotFound",
		"The specified resource does not exist.", "--insights")
}

// TestDebugLogsSASStringToSign: for a SAS whose signature does not verify,
// the --debug log holds the service SAS string-to-sign tableemu computed
// (docs/protocol.md 9.6).
func TestDebugLogsSASStringToSign(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "debug.log")
	s, err := New(Config{InMemory: true, Silent: true, Debug: logPath})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.Close(); s.Close() })
	se := time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05Z")
	wrong := hmac.New(sha256.New, []byte("not the account key")).Sum(nil) // the right size, the wrong value
	q := "sv=2019-02-02&tn=Orders&sp=r&se=" + se + "&sig=" + url.QueryEscape(base64.StdEncoding.EncodeToString(wrong))
	r := unsigned(t, "GET", hs.URL+"/devstoreaccount1/Orders()?"+q, "")
	wantHint(t, readError(t, r), 403, "AuthenticationFailed",
		"Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature.",
		"--debug log")
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	sts := "r\n\n" + se + "\n/table/devstoreaccount1/orders\n\n\n\n2019-02-02\n\n\n\n"
	want := "request " + r.Header.Get("x-ms-request-id") + ": string to sign: " + strconv.Quote(sts) + "\n"
	if !strings.Contains(string(log), want) {
		t.Errorf("debug log lacks %q:\n%s", want, log)
	}
}
