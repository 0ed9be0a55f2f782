package conformance

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/emulator"
)

func TestAuthentication(t *testing.T) {
	_, name := shared.newNamedTable(t)

	t.Run("wrong key", func(t *testing.T) {
		cred, err := aztables.NewSharedKeyCredential(shared.account, "AAAA"+shared.key[4:])
		must(t, err)
		svc, err := aztables.NewServiceClientWithSharedKey(shared.endpoint+"/", cred, clientOptions())
		must(t, err)
		_, err = svc.CreateTable(ctx(), tableName(), nil)
		wantCode(t, err, 403, "AuthenticationFailed")
	})
	t.Run("no credentials", func(t *testing.T) {
		// 401 with a Bearer challenge, as the service answers
		// (docs/protocol.md 0.1); never anonymous access to data.
		r := shared.raw(t, "GET", "/"+name+"()", map[string]string{"Authorization": ""}, nil)
		if r.StatusCode != 401 || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer ") {
			t.Fatalf("status %d, WWW-Authenticate %q", r.StatusCode, r.Header.Get("WWW-Authenticate"))
		}
		code := r.Header.Get("x-ms-error-code")
		if code != "NoAuthenticationInformation" && code != "InvalidAuthenticationInfo" {
			t.Fatalf("code %q", code)
		}
	})
	t.Run("tampered signature", func(t *testing.T) {
		req, _ := http.NewRequest("GET", shared.endpoint+"/"+name+"()", nil)
		req.Header.Set("x-ms-version", "2019-02-02")
		req.Header.Set("Accept", "application/json")
		shared.signLite(t, req)
		req.URL.Path = "/" + shared.account + "/Tables" // signed for another resource
		wantRawCode(t, do(t, req), 403, "AuthenticationFailed")
	})
	t.Run("stale date", func(t *testing.T) {
		old := time.Now().Add(-20 * time.Minute).UTC().Format(http.TimeFormat)
		r := shared.raw(t, "GET", "/"+name+"()", map[string]string{"x-ms-date": old}, nil)
		wantRawCode(t, r, 403, "AuthenticationFailed")
	})
	t.Run("shared key", func(t *testing.T) {
		// Shared Key (not Lite), Table form: VERB, Content-MD5,
		// Content-Type, date, resource (docs/protocol.md 9.3); the Python SDK
		// and the legacy SDKs sign this way.
		body := `{"PartitionKey":"p","RowKey":"sk"}`
		req, _ := http.NewRequest("POST", shared.endpoint+"/"+name, strings.NewReader(body))
		date := time.Now().UTC().Format(http.TimeFormat)
		req.Header.Set("x-ms-date", date)
		req.Header.Set("x-ms-version", "2018-03-28") // the legacy SDK's version
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json;odata=nometadata")
		sts := "POST\n\napplication/json\n" + date + "\n/" + shared.account + req.URL.EscapedPath()
		req.Header.Set("Authorization", "SharedKey "+shared.account+":"+sign(t, shared.key, sts))
		r := do(t, req)
		if r.StatusCode != 201 || r.Header.Get("x-ms-version") != "2018-03-28" {
			t.Fatalf("status %d version %q: %s", r.StatusCode, r.Header.Get("x-ms-version"), r.body)
		}
	})
}

func TestSecondKeyAndCustomAccounts(t *testing.T) {
	needInProcess(t)
	// AZURITE_ACCOUNTS replaces devstoreaccount1 (as in Azurite); either
	// key of an account signs.
	env := map[string]string{"AZURITE_ACCOUNTS": "acct1:" + emulator.DevKey + ":a2V5dHdva2V5dHdva2V5dHdva2V5dHdva2V5dHdva2V5dHc=;acct2:a2V5dGhyZWU="}
	cfg, err := emulator.LoadConfig(nil, func(k string) string { return env[k] }, nil)
	must(t, err)
	cfg.InMemory, cfg.Silent = true, true
	tg, stop, err := startInProcess(cfg)
	must(t, err)
	defer stop()
	for _, key := range []string{emulator.DevKey, "a2V5dHdva2V5dHdva2V5dHdva2V5dHdva2V5dHdva2V5dHc="} {
		tg.key = key
		_, err := tg.service(t).CreateTable(ctx(), tableName(), nil)
		must(t, err)
	}
	tg2 := &target{endpoint: strings.Replace(tg.endpoint, "/acct1", "/acct2", 1), account: "acct2", key: "a2V5dGhyZWU="}
	_, err = tg2.service(t).CreateTable(ctx(), tableName(), nil)
	must(t, err)
	dev := &target{endpoint: strings.Replace(tg.endpoint, "/acct1", "/"+emulator.DevAccount, 1), account: emulator.DevAccount, key: emulator.DevKey}
	_, err = dev.service(t).CreateTable(ctx(), tableName(), nil)
	wantCode(t, err, 404, "ResourceNotFound")
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func TestCommonHeaders(t *testing.T) {
	_, name := shared.newNamedTable(t)
	r := shared.raw(t, "GET", "/"+name+"()", map[string]string{"x-ms-client-request-id": "my-id 42", "x-ms-version": "2019-02-02"}, nil)
	if !uuidRE.MatchString(r.Header.Get("x-ms-request-id")) {
		t.Fatalf("x-ms-request-id %q", r.Header.Get("x-ms-request-id"))
	}
	if r.Header.Get("x-ms-client-request-id") != "my-id 42" || r.Header.Get("x-ms-version") != "2019-02-02" {
		t.Fatalf("headers %v", r.Header)
	}
	if _, err := time.Parse(http.TimeFormat, r.Header.Get("Date")); err != nil {
		t.Fatalf("Date %q", r.Header.Get("Date"))
	}
	if r.Header.Get("Cache-Control") != "no-cache" || r.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("headers %v", r.Header)
	}

	// Errors carry the request id and a time in the message, and the same
	// code in the header and the body (docs/protocol.md 8.1).
	r = shared.raw(t, "GET", entityPath(name, "p", "missing"), nil, nil)
	wantRawCode(t, r, 404, "ResourceNotFound")
	msg := jsonBody(t, r)["odata.error"].(map[string]any)["message"].(map[string]any)
	if msg["lang"] != "en-US" || !strings.HasPrefix(msg["value"].(string), "The specified resource does not exist.\nRequestId:"+r.Header.Get("x-ms-request-id")+"\nTime:") {
		t.Fatalf("message %v", msg)
	}
}

func TestContentNegotiation(t *testing.T) {
	_, name := shared.newNamedTable(t)
	// No Accept: minimal metadata JSON.
	r := shared.raw(t, "GET", "/"+name+"()", map[string]string{"Accept": ""}, nil)
	if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json;odata=minimalmetadata") {
		t.Fatalf("no Accept: %d %s", r.StatusCode, r.Header.Get("Content-Type"))
	}
	// Atom only: 415 AtomFormatNotSupported.
	r = shared.raw(t, "GET", "/"+name+"()", map[string]string{"Accept": "application/atom+xml"}, nil)
	wantRawCode(t, r, 415, "AtomFormatNotSupported")
	// $format wins over Accept.
	r = shared.raw(t, "GET", "/"+name+"()?$format="+urlQueryEscape("application/json;odata=nometadata"), map[string]string{"Accept": "application/atom+xml"}, nil)
	if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json;odata=nometadata") {
		t.Fatalf("$format: %d %s", r.StatusCode, r.Header.Get("Content-Type"))
	}
	// Bare application/json, and parameters with spaces.
	r = shared.raw(t, "GET", "/"+name+"()", map[string]string{"Accept": "application/json; odata = fullmetadata"}, nil)
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json;odata=fullmetadata") {
		t.Fatalf("spaced Accept: %s", r.Header.Get("Content-Type"))
	}
}

func TestAPIVersions(t *testing.T) {
	_, name := shared.newNamedTable(t)
	for _, v := range []string{"2013-08-15", "2015-12-11", "2018-03-28", "2019-02-02", "2020-12-06"} {
		r := shared.raw(t, "GET", "/"+name+"()", map[string]string{"x-ms-version": v}, nil)
		if r.StatusCode != 200 || r.Header.Get("x-ms-version") != v {
			t.Fatalf("version %s: %d %s", v, r.StatusCode, r.body)
		}
	}
	r := shared.raw(t, "GET", "/"+name+"()", map[string]string{"x-ms-version": "not-a-date"}, nil)
	wantRawCode(t, r, 400, "InvalidHeaderValue")
}
