package auth

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu"
)

// liteRequest builds a path-style request signed with Shared Key Lite over
// the canonical resource signedResource (computed by the test, not by the
// package).
func liteRequest(method, rawPath, rawQuery, signedResource string, key []byte) *Request {
	q, _ := url.ParseQuery(rawQuery)
	date := testNow.Format(http.TimeFormat)
	h := http.Header{}
	h.Set("x-ms-date", date)
	h.Set("Authorization", "SharedKeyLite devstoreaccount1:"+hmacB64(key, date+"\n"+signedResource))
	return &Request{
		Method:         method,
		Header:         h,
		Query:          q,
		CanonicalPaths: CanonicalPaths("devstoreaccount1", rawPath),
		Now:            testNow,
	}
}

func TestSharedKeyLitePathStyle(t *testing.T) {
	cases := []struct {
		name, method, path, query, resource string
	}{
		{"tables", "GET", "/devstoreaccount1/Tables", "",
			"/devstoreaccount1/devstoreaccount1/Tables"},
		{"acl", "PUT", "/devstoreaccount1/mytable", "comp=acl",
			"/devstoreaccount1/devstoreaccount1/mytable?comp=acl"},
		{"service properties", "GET", "/devstoreaccount1/", "restype=service&comp=properties",
			"/devstoreaccount1/devstoreaccount1/?comp=properties"},
		{"no trailing slash properties", "GET", "/devstoreaccount1", "comp=properties&restype=service",
			"/devstoreaccount1/devstoreaccount1?comp=properties"},
		{"entity escaped as aztables sends it", "GET",
			"/devstoreaccount1/mytable(PartitionKey='pk%27%271',RowKey='rk%20%C3%A4%201')", "%24format=application%2Fjson",
			"/devstoreaccount1/devstoreaccount1/mytable(PartitionKey='pk%27%271',RowKey='rk%20%C3%A4%201')"},
		{"encoding drift: client signed the decoded path", "GET",
			"/devstoreaccount1/mytable(PartitionKey='a%20b',RowKey='c')", "",
			"/devstoreaccount1/devstoreaccount1/mytable(PartitionKey='a b',RowKey='c')"},
		{"secondary signed with the secondary segment", "GET", "/devstoreaccount1-secondary/", "restype=service&comp=stats",
			"/devstoreaccount1/devstoreaccount1-secondary/?comp=stats"},
		{"secondary signed with the primary segment", "GET", "/devstoreaccount1-secondary/", "restype=service&comp=stats",
			"/devstoreaccount1/devstoreaccount1/?comp=stats"},
		{"only comp takes part", "GET", "/devstoreaccount1/mytable()", "$filter=PartitionKey%20eq%20'a'&$top=5",
			"/devstoreaccount1/devstoreaccount1/mytable()"},
	}
	for _, tc := range cases {
		for i, key := range dev.Keys {
			req := liteRequest(tc.method, tc.path, tc.query, tc.resource, key)
			g, err := VerifySharedKey(req, dev)
			g = wantOK(t, g, err)
			if g.Kind != SharedKeyGrant {
				t.Errorf("%s key%d: kind %v", tc.name, i+1, g.Kind)
			}
		}
	}
}

func TestCanonicalPaths(t *testing.T) {
	got := CanonicalPaths("acct", "/acct-secondary/t(PartitionKey='a%20b',RowKey='')")
	want := []string{
		"/acct/acct-secondary/t(PartitionKey='a%20b',RowKey='')",
		"/acct/acct-secondary/t(PartitionKey='a b',RowKey='')",
		"/acct/acct/t(PartitionKey='a%20b',RowKey='')",
		"/acct/acct/t(PartitionKey='a b',RowKey='')",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got := CanonicalPaths("acct", ""); !slices.Equal(got, []string{"/acct/"}) {
		t.Errorf("empty path: %q", got)
	}
	// Python's path-style secondary: the primary's path behind the
	// "-secondary" segment, signed as the primary's path.
	got = CanonicalPaths("acct", "/acct-secondary/acct/")
	want = []string{"/acct/acct-secondary/acct/", "/acct/acct/acct/", "/acct/acct/"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	// A name that merely starts like the secondary is not rewritten.
	if got := CanonicalPaths("acct", "/acct-secondaryx/Tables"); len(got) != 1 {
		t.Errorf("prefix only: %q", got)
	}
}

// sharedKeyRequest signs the Shared Key (not Lite) Table form by hand.
func sharedKeyRequest(key []byte, dateHeader string) *Request {
	date := testNow.Format(http.TimeFormat)
	h := http.Header{}
	h.Set(dateHeader, date)
	h.Set("Content-Type", "application/json;odata=nometadata")
	h.Set("Content-MD5", "Q2hlY2sgSW50ZWdyaXR5IQ==")
	h.Set("X-Ms-Version", "2019-02-02") // never signed in the Table flavour
	path := "/devstoreaccount1/mytable(PartitionKey='a',RowKey='b')"
	sts := "PUT\nQ2hlY2sgSW50ZWdyaXR5IQ==\napplication/json;odata=nometadata\n" + date +
		"\n/devstoreaccount1" + path
	h.Set("Authorization", "SharedKey devstoreaccount1:"+hmacB64(key, sts))
	return &Request{Method: "PUT", Header: h, Query: url.Values{},
		CanonicalPaths: CanonicalPaths("devstoreaccount1", path), Now: testNow}
}

func TestSharedKeyTableForm(t *testing.T) {
	for _, hdr := range []string{"x-ms-date", "Date"} {
		for _, key := range dev.Keys {
			ok(t)(VerifySharedKey(sharedKeyRequest(key, hdr), dev))
		}
	}
	// Content-Type is part of the string to sign.
	req := sharedKeyRequest(devKey, "x-ms-date")
	req.Header.Set("Content-Type", "application/json")
	e := wantErr(t, sidecar(VerifySharedKey(req, dev)), tableemu.AuthenticationFailed)
	if !strings.HasPrefix(e.Detail, "The MAC signature found in the HTTP request '") ||
		!strings.Contains(e.Detail, "Server used following string to sign: 'PUT\nQ2hlY2sgSW50ZWdyaXR5IQ==\napplication/json\n") {
		t.Errorf("detail %q", e.Detail)
	}
	// So is the verb.
	req = sharedKeyRequest(devKey, "x-ms-date")
	req.Method = "MERGE"
	wantErr(t, sidecar(VerifySharedKey(req, dev)), tableemu.AuthenticationFailed)
}

func TestSharedKeyBothDates(t *testing.T) {
	// The client signed the Date header although x-ms-date is also present;
	// docs/protocol.md 9.3 asks to try both.
	req := sharedKeyRequest(devKey, "Date")
	req.Header.Set("x-ms-date", testNow.Add(time.Minute).Format(http.TimeFormat))
	ok(t)(VerifySharedKey(req, dev))
}

func TestSharedKeyClockSkew(t *testing.T) {
	for _, tc := range []struct {
		skew time.Duration
		ok   bool
	}{
		{0, true},
		{14*time.Minute + 59*time.Second, true},
		{-14*time.Minute - 59*time.Second, true},
		{15*time.Minute + time.Second, false},
		{-15*time.Minute - time.Second, false},
		{24 * time.Hour, false},
	} {
		req := liteRequest("GET", "/devstoreaccount1/Tables", "", "/devstoreaccount1/devstoreaccount1/Tables", devKey)
		req.Now = testNow.Add(tc.skew)
		g, err := VerifySharedKey(req, dev)
		if tc.ok {
			wantOK(t, g, err)
		} else {
			e := wantErr(t, err, tableemu.AuthenticationFailed)
			if !strings.Contains(e.Detail, "Request date header too") {
				t.Errorf("skew %v: detail %q", tc.skew, e.Detail)
			}
		}
	}
}

// sidecar drops the grant so a call can be passed to wantErr.
func sidecar(_ *Grant, err error) error { return err }

func TestSharedKeyRefusals(t *testing.T) {
	good := func() *Request {
		return liteRequest("GET", "/devstoreaccount1/Tables", "", "/devstoreaccount1/devstoreaccount1/Tables", devKey)
	}
	sig := good().Header.Get("Authorization")[len("SharedKeyLite devstoreaccount1:"):]
	cases := []struct {
		name   string
		mutate func(r *Request)
		code   tableemu.Code
		detail string
	}{
		{"no header", func(r *Request) { r.Header.Del("Authorization") }, tableemu.NoAuthenticationInformation, ""},
		{"two headers", func(r *Request) { r.Header.Add("Authorization", r.Header.Get("Authorization")) }, tableemu.InvalidAuthenticationInfo, "Duplicate"},
		{"unknown scheme", func(r *Request) { r.Header.Set("Authorization", "SharedAccessSignature sig=abc") }, tableemu.InvalidAuthenticationInfo, "scheme"},
		{"basic", func(r *Request) { r.Header.Set("Authorization", "Basic dXNlcjpwYXNz") }, tableemu.InvalidAuthenticationInfo, "scheme"},
		{"no colon", func(r *Request) { r.Header.Set("Authorization", "SharedKeyLite devstoreaccount1"+sig) }, tableemu.InvalidAuthenticationInfo, "is invalid"},
		{"three parts", func(r *Request) { r.Header.Set("Authorization", "SharedKeyLite a:b:"+sig) }, tableemu.InvalidAuthenticationInfo, "is invalid"},
		{"scheme only", func(r *Request) { r.Header.Set("Authorization", "SharedKey") }, tableemu.InvalidAuthenticationInfo, "is invalid"},
		{"bad base64", func(r *Request) { r.Header.Set("Authorization", "SharedKeyLite devstoreaccount1:not*base64") }, tableemu.InvalidAuthenticationInfo, "base64"},
		{"bearer", func(r *Request) { r.Header.Set("Authorization", "Bearer eyJ0eXAi") }, tableemu.AuthenticationFailed, "Bearer"},
		{"other account", func(r *Request) { r.Header.Set("Authorization", "SharedKeyLite otheraccount:"+sig) }, tableemu.AuthenticationFailed, "claimed account"},
		{"wrong signature", func(r *Request) {
			r.Header.Set("Authorization", "SharedKeyLite devstoreaccount1:"+hmacB64([]byte("wrong"), "x"))
		}, tableemu.AuthenticationFailed, "The MAC signature found in the HTTP request"},
		{"wrong path", func(r *Request) { r.CanonicalPaths = CanonicalPaths("devstoreaccount1", "/devstoreaccount1/Tables2") }, tableemu.AuthenticationFailed, "/devstoreaccount1/devstoreaccount1/Tables2"},
		{"comp added", func(r *Request) { r.Query.Set("comp", "acl") }, tableemu.AuthenticationFailed, "?comp=acl"},
		{"no date", func(r *Request) { r.Header.Del("x-ms-date") }, tableemu.AuthenticationFailed, "not specified"},
		{"empty date", func(r *Request) { r.Header.Set("x-ms-date", " ") }, tableemu.AuthenticationFailed, "not specified"},
		{"bad date", func(r *Request) { r.Header.Set("x-ms-date", "yesterday") }, tableemu.AuthenticationFailed, "incorrect"},
		{"no paths", func(r *Request) { r.CanonicalPaths = nil }, tableemu.InternalError, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := good()
			tc.mutate(r)
			e := wantErr(t, sidecar(VerifySharedKey(r, dev)), tc.code)
			if !strings.Contains(e.Detail, tc.detail) {
				t.Errorf("detail %q does not contain %q", e.Detail, tc.detail)
			}
		})
	}
	// Case-insensitive scheme, as the service parses it.
	r := good()
	r.Header.Set("Authorization", "sharedkeylite devstoreaccount1:"+sig)
	ok(t)(VerifySharedKey(r, dev))
	// The secondary account name in the header is accepted.
	r = good()
	r.Header.Set("Authorization", "SharedKeyLite devstoreaccount1-secondary:"+sig)
	ok(t)(VerifySharedKey(r, dev))
}

func TestAuthenticateDispatch(t *testing.T) {
	// Neither credential: 401 with the Bearer challenge left to the caller.
	r := &Request{Method: "GET", Header: http.Header{}, Query: url.Values{}, Now: testNow,
		CanonicalPaths: CanonicalPaths("devstoreaccount1", "/devstoreaccount1/Tables")}
	wantErr(t, sidecar(Authenticate(r, dev, VerifyOptions{})), tableemu.NoAuthenticationInformation)
	if !strings.HasPrefix(BearerChallenge, "Bearer authorization_uri=https://login.microsoftonline.com/") ||
		!strings.HasSuffix(BearerChallenge, " resource_id=https://storage.azure.com") {
		t.Errorf("challenge %q", BearerChallenge)
	}

	// Shared Key.
	lite := liteRequest("GET", "/devstoreaccount1/Tables", "", "/devstoreaccount1/devstoreaccount1/Tables", devKey)
	g := ok(t)(Authenticate(lite, dev, VerifyOptions{}))
	if g.Kind != SharedKeyGrant {
		t.Errorf("kind %v", g.Kind)
	}

	// SAS.
	f := map[string]string{"sv": "2019-02-02", "tn": "mytable", "sp": "r",
		"se": testNow.Add(time.Hour).Format("2006-01-02T15:04:05Z")}
	q := serviceSAS(devKey, "devstoreaccount1", f, false)
	g = ok(t)(Authenticate(sasRequest(q, true), dev, VerifyOptions{}))
	if g.Kind != ServiceSASGrant {
		t.Errorf("kind %v", g.Kind)
	}

	// Both: ambiguous.
	both := sasRequest(q, true)
	both.Header = lite.Header
	wantErr(t, sidecar(Authenticate(both, dev, VerifyOptions{})), tableemu.InvalidAuthenticationInfo)
}

// TestSharedKeyAccount: the account a header claims, read as
// VerifySharedKey reads it (the secondary name is the primary account),
// and the same refusals for a header that names none.
func TestSharedKeyAccount(t *testing.T) {
	for h, want := range map[string]string{
		"SharedKey acme:c2ln":                    "acme",
		"sharedkeylite acme:c2ln":                "acme",
		"SharedKey acme::c2ln":                   "acme",
		"SharedKey devstoreaccount1-secondary:x": "devstoreaccount1",
	} {
		got, err := SharedKeyAccount(http.Header{"Authorization": {h}})
		if err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", h, got, err, want)
		}
	}
	for h, code := range map[string]tableemu.Code{
		"":                   tableemu.NoAuthenticationInformation,
		"SharedKey acme":     tableemu.InvalidAuthenticationInfo,
		"Basic dXNlcjpwYXNz": tableemu.InvalidAuthenticationInfo,
		"Bearer eyJ0eXAi":    tableemu.AuthenticationFailed,
	} {
		hd := http.Header{}
		if h != "" {
			hd.Set("Authorization", h)
		}
		_, err := SharedKeyAccount(hd)
		wantErr(t, err, code)
	}
}
