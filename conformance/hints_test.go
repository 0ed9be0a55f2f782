package conformance

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// tableemu's hints after the service's message (docs/protocol.md 8.3), as a
// user meets them: through the Go SDK, and from the real binary. The
// service's status and code must stay what SDKs expect; the hint must be in
// what the SDK shows.

// wantSDKHint asserts that err is the service's status and code, and that
// the error the SDK shows holds the service's message and tableemu's hint.
func wantSDKHint(t *testing.T, err error, status int, code, service string, says ...string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("want a ResponseError, got %v", err)
	}
	if re.StatusCode != status || re.ErrorCode != code {
		t.Fatalf("want %d %s, got %d %q: %v", status, code, re.StatusCode, re.ErrorCode, err)
	}
	shown := err.Error()
	// The SDK shows the body as sent: the hint's line break is the JSON
	// escape \n there.
	if !strings.Contains(shown, service+`\ntableemu: `) && !strings.Contains(shown, service+"\ntableemu: ") {
		t.Errorf("the error does not show the service's message followed by a hint:\n%s", shown)
	}
	for _, s := range says {
		if !strings.Contains(shown, s) {
			t.Errorf("the error does not say %q:\n%s", s, shown)
		}
	}
}

func TestHintsThroughSDK(t *testing.T) {
	needInProcess(t)
	ctx := context.Background()

	t.Run("wrong key", func(t *testing.T) {
		cred, err := aztables.NewSharedKeyCredential(shared.account, base64.StdEncoding.EncodeToString([]byte("not the key")))
		if err != nil {
			t.Fatal(err)
		}
		svc, err := aztables.NewServiceClientWithSharedKey(shared.endpoint+"/", cred, clientOptions())
		if err != nil {
			t.Fatal(err)
		}
		_, err = svc.CreateTable(ctx, "hintwrongkey", nil)
		wantSDKHint(t, err, 403, "AuthenticationFailed",
			"Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature.",
			"--debug FILE", "string tableemu signed")
	})

	t.Run("no credentials", func(t *testing.T) {
		svc, err := aztables.NewServiceClientWithNoCredential(shared.endpoint+"/", clientOptions())
		if err != nil {
			t.Fatal(err)
		}
		_, err = svc.NewListTablesPager(nil).NextPage(ctx)
		wantSDKHint(t, err, 401, "NoAuthenticationInformation",
			"Server failed to authenticate the request. Please refer to the information in the www-authenticate header.",
			"account key", "connection string")
	})

	t.Run("endpoint without the account", func(t *testing.T) {
		// A connection string whose TableEndpoint lacks /devstoreaccount1:
		// the SDK sends /Tables, whose first segment is taken for the account.
		base := strings.TrimSuffix(shared.endpoint, "/"+shared.account)
		cs := "DefaultEndpointsProtocol=http;AccountName=" + shared.account + ";AccountKey=" + shared.key + ";TableEndpoint=" + base + ";"
		svc, err := aztables.NewServiceClientFromConnectionString(cs, clientOptions())
		if err != nil {
			t.Fatal(err)
		}
		_, err = svc.CreateTable(ctx, "hintnoaccount", nil)
		wantSDKHint(t, err, 400, "InvalidUri", "The requested URI does not represent any resource on the server.",
			`there is no account \"Tables\" here`, "URLs are /<account>/Tables", base+"/"+shared.account+"/Tables")
	})

	t.Run("table name", func(t *testing.T) {
		_, err := shared.service(t).CreateTable(ctx, "my_table", nil)
		wantSDKHint(t, err, 400, "InvalidResourceName", "The specifed resource name contains invalid characters.",
			"3 to 63 letters or digits, starting with a letter")
	})
}

// TestHintsBinary: the real program started with --debug FILE answers the
// mistakes with hints, and its debug log holds the string it signed for a
// request whose signature does not verify, which signs correctly with the
// account key.
func TestHintsBinary(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "debug.log")
	p, err := startBinary(t, bin, dir, "--inMemoryPersistence", "--debug", logPath)
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(strings.TrimSuffix(p.endpoint, "/devstoreaccount1"), "http://")
	get := func(path string, sign func(*http.Request)) *rawResponse {
		req, err := http.NewRequest("GET", "http://"+host+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "application/json;odata=minimalmetadata")
		if sign != nil {
			sign(req)
		}
		return do(t, req)
	}
	message := func(r *rawResponse) string {
		t.Helper()
		s := string(r.body)
		if i := strings.Index(s, `\nRequestId:`); i >= 0 {
			s = s[:i]
		}
		return s
	}

	r := get("/", nil)
	wantRawCode(t, r, 400, "InvalidUri")
	if m := message(r); !strings.Contains(m, "tableemu: this URL names no account. URLs are /<account>/Tables…, e.g. http://"+host+"/devstoreaccount1/Tables") {
		t.Errorf("GET /: %s", m)
	}

	r = get("/devstoreaccount1/Tables", nil)
	wantRawCode(t, r, 401, "NoAuthenticationInformation")
	if m := message(r); !strings.Contains(m, "tableemu: the request carries no credentials") {
		t.Errorf("no credentials: %s", m)
	}

	date := time.Now().UTC().Format(http.TimeFormat)
	sts := date + "\n/devstoreaccount1/devstoreaccount1/Tables"
	withKey := func(key []byte) func(*http.Request) {
		return func(req *http.Request) {
			m := hmac.New(sha256.New, key)
			m.Write([]byte(sts))
			req.Header.Set("x-ms-date", date)
			req.Header.Set("Authorization", "SharedKeyLite devstoreaccount1:"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
		}
	}
	r = get("/devstoreaccount1/Tables", withKey([]byte("not the account key")))
	wantRawCode(t, r, 403, "AuthenticationFailed")
	if m := message(r); !strings.Contains(m, "tableemu: the reason, and for a signature mismatch the string tableemu signed, are in its --debug log.") {
		t.Errorf("bad signature with --debug: %s", m)
	}
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	want := "request " + r.Header.Get("x-ms-request-id") + ": string to sign: " + strconv.Quote(sts)
	if !strings.Contains(string(log), want) {
		t.Errorf("the debug log lacks %q:\n%s", want, log)
	}
	if strings.Contains(string(log), shared.key) || strings.Contains(string(log), "SharedKeyLite devstoreaccount1:") {
		t.Errorf("the debug log holds the key or the signature:\n%s", log)
	}
	key, _ := base64.StdEncoding.DecodeString(shared.key)
	if r := get("/devstoreaccount1/Tables", withKey(key)); r.StatusCode != 200 {
		t.Errorf("the logged string signed with the account key: %d %s", r.StatusCode, r.body)
	}
}
