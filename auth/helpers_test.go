package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu"
)

// The development account (docs/protocol.md 9.1) plus a second key.
const devKeyB64 = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

var (
	devKey  = mustB64(devKeyB64)
	devKey2 = []byte("an entirely different second key")
	dev     = &Account{Name: "devstoreaccount1", Keys: [][]byte{devKey, devKey2}}
	// testNow is the server clock in table tests.
	testNow = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
)

func mustB64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// hmacB64 is the test's own signer, independent of the package's.
func hmacB64(key []byte, s string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// wantErr asserts err is an *tableemu.Error with code (and its table status).
func wantErr(t *testing.T, err error, code tableemu.Code) *tableemu.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	var e *tableemu.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not *tableemu.Error", err, err)
	}
	if e.Code != code {
		t.Fatalf("code = %s (%v), want %s", e.Code, e, code)
	}
	if want := tableemu.New(code).Status; e.Status != want {
		t.Fatalf("status = %d, want %d", e.Status, want)
	}
	return e
}

func wantOK(t *testing.T, g *Grant, err error) *Grant {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if g == nil {
		t.Fatal("nil grant without error")
	}
	return g
}

// sasRequest is a request carrying query q at testNow from 10.1.2.3.
func sasRequest(q url.Values, secure bool) *Request {
	return &Request{
		Method:         http.MethodGet,
		Header:         http.Header{},
		Query:          q,
		CanonicalPaths: CanonicalPaths("devstoreaccount1", "/devstoreaccount1/mytable()"),
		Secure:         secure,
		RemoteIP:       netip.MustParseAddr("10.1.2.3"),
		Now:            testNow,
	}
}

// serviceSAS signs a service SAS by hand from the given fields (version
// 2015-04-05 or later form, docs/protocol.md 9.6), lower-casing tn in the
// canonical resource unless keepCase. Empty fields are left out of the query.
func serviceSAS(key []byte, account string, f map[string]string, keepCase bool) url.Values {
	tn := f["tn"]
	if !keepCase {
		tn = strings.ToLower(tn)
	}
	sts := strings.Join([]string{
		f["sp"], f["st"], f["se"], "/table/" + account + "/" + tn, f["si"],
		f["sip"], f["spr"], f["sv"], f["spk"], f["srk"], f["epk"], f["erk"],
	}, "\n")
	q := url.Values{}
	for k, v := range f {
		if v != "" {
			q.Set(k, v)
		}
	}
	q.Set("sig", hmacB64(key, sts))
	return q
}

// accountSAS signs an account SAS by hand; withScope selects the
// 2020-12-06 form (docs/protocol.md 9.7).
func accountSAS(key []byte, account string, f map[string]string, withScope bool) url.Values {
	sts := strings.Join([]string{account, f["sp"], f["ss"], f["srt"], f["st"], f["se"],
		f["sip"], f["spr"], f["sv"]}, "\n") + "\n"
	if withScope {
		sts += f["ses"] + "\n"
	}
	q := url.Values{}
	for k, v := range f {
		if v != "" {
			q.Set(k, v)
		}
	}
	q.Set("sig", hmacB64(key, sts))
	return q
}

func copyFields(f map[string]string, kv ...string) map[string]string {
	out := make(map[string]string, len(f)+len(kv)/2)
	for k, v := range f {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// ok adapts wantOK to a call's two results: ok(t)(VerifySharedKey(r, a)).
func ok(t *testing.T) func(*Grant, error) *Grant {
	return func(g *Grant, err error) *Grant {
		t.Helper()
		return wantOK(t, g, err)
	}
}
