package conformance

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/emulator"
)

// The SAS tamper matrix. Signatures are computed here, independently of
// tableemu's auth package, from docs/protocol.md 9.6 (service SAS, by version)
// and 9.7 (account SAS, both forms). Every request is a raw HTTP request so
// that exactly the fields under test are sent.

// sasFields are the query fields of a SAS, by name; "" leaves one out.
type sasFields map[string]string

func (f sasFields) with(kv ...string) sasFields {
	out := sasFields{}
	for k, v := range f {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// serviceStringToSign is docs/protocol.md 9.6: the "/table" prefix from
// 2015-02-21, sip and spr from 2015-04-05, the table name lower-cased.
func serviceStringToSign(account string, f sasFields) string {
	res := "/" + account + "/" + strings.ToLower(f["tn"])
	if f["sv"] >= "2015-02-21" {
		res = "/table" + res
	}
	parts := []string{f["sp"], f["st"], f["se"], res, f["si"]}
	if f["sv"] >= "2015-04-05" {
		parts = append(parts, f["sip"], f["spr"])
	}
	parts = append(parts, f["sv"], f["spk"], f["srk"], f["epk"], f["erk"])
	return strings.Join(parts, "\n")
}

// accountStringToSign is docs/protocol.md 9.7, with the encryption-scope line
// from 2020-12-06.
func accountStringToSign(account string, f sasFields) string {
	s := strings.Join([]string{account, f["sp"], f["ss"], f["srt"], f["st"], f["se"], f["sip"], f["spr"], f["sv"]}, "\n") + "\n"
	if f["sv"] >= "2020-12-06" {
		s += f["ses"] + "\n"
	}
	return s
}

// sasQuery signs signed with key and presents presented (the same fields
// unless tampered with).
func sasQuery(t *testing.T, key string, sts string, presented sasFields) string {
	t.Helper()
	q := url.Values{}
	for k, v := range presented {
		if v != "" {
			q.Set(k, v)
		}
	}
	q.Set("sig", sign(t, key, sts))
	return q.Encode()
}

// sasDo sends method to endpoint+path with the SAS query and no other
// credentials.
func sasDo(t *testing.T, client *http.Client, method, endpoint, path, query string, body []byte) *rawResponse {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	req, err := http.NewRequest(method, endpoint+path+sep+query, bytes.NewReader(body))
	must(t, err)
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("Accept", "application/json;odata=nometadata")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if method == "DELETE" {
		req.Header.Set("If-Match", "*")
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	must(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(t, err)
	return &rawResponse{Response: resp, body: b}
}

func wantOK(t *testing.T, r *rawResponse, what string) {
	t.Helper()
	if r.StatusCode >= 300 {
		t.Fatalf("%s: legitimate variant refused: %d %s %s", what, r.StatusCode, r.Header.Get("x-ms-error-code"), r.body)
	}
}

func sasTime(d time.Duration) string { return time.Now().Add(d).UTC().Format("2006-01-02T15:04:05Z") }

// tamperServer is tableemu with two accounts, a table "tamper" in the
// first holding entity (b, 5), and stored policies pol1 and pol2 (r, one
// hour) on it.
func tamperServer(t *testing.T, loose bool) *target {
	t.Helper()
	env := map[string]string{"AZURITE_ACCOUNTS": "acctone:" + emulator.DevKey + ";accttwo:" + otherKey}
	cfg, err := emulator.LoadConfig(nil, func(k string) string { return env[k] }, nil)
	must(t, err)
	cfg.Loose = loose
	tg := ownServer(t, cfg)
	svc := tg.service(t)
	_, err = svc.CreateTable(ctx(), "tamper", nil)
	must(t, err)
	_, err = svc.CreateTable(ctx(), "other", nil)
	must(t, err)
	c := svc.NewClient("tamper")
	_, err = c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "b", "RowKey": "5"}), nil)
	must(t, err)
	hour := time.Now().Add(time.Hour).UTC()
	_, err = c.SetAccessPolicy(ctx(), &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{
		{ID: to.Ptr("pol1"), AccessPolicy: &aztables.AccessPolicy{Expiry: &hour, Permission: to.Ptr("r")}},
		{ID: to.Ptr("pol2"), AccessPolicy: &aztables.AccessPolicy{Expiry: &hour, Permission: to.Ptr("r")}},
	}})
	must(t, err)
	return tg
}

const otherKey = "b3RoZXIgYWNjb3VudCdzIGtleSwgZGlmZmVyZW50IGJ5dGVz"

// TestServiceSASTamper: for each signed field of a service SAS, a
// signature over one value presented with another is refused with 403
// AuthenticationFailed, while the untampered SAS is accepted.
func TestServiceSASTamper(t *testing.T) {
	tg := tamperServer(t, false)
	base := sasFields{"sv": "2019-02-02", "tn": "tamper", "sp": "r", "st": sasTime(-time.Hour), "se": sasTime(time.Hour),
		"sip": "127.0.0.1", "spr": "https,http", "spk": "a", "srk": "1", "epk": "c", "erk": "9"}
	withPolicy := base.with("si", "pol1", "sp", "", "se", "")
	cases := []struct {
		field           string
		signed, present sasFields
	}{
		{"sv", base, base.with("sv", "2018-11-09")},
		{"tn", base, base.with("tn", "TAMPER2")},
		{"sp", base, base.with("sp", "raud")},
		{"st", base, base.with("st", sasTime(-2*time.Hour))},
		{"se", base, base.with("se", sasTime(2*time.Hour))},
		{"sip", base, base.with("sip", "127.0.0.0-127.0.0.255")},
		{"sip dropped", base, base.with("sip", "")},
		{"spr", base, base.with("spr", "http,https")},
		{"spr dropped", base.with("spr", "https,http"), base.with("spr", "")},
		{"si", withPolicy, withPolicy.with("si", "pol2")},
		{"spk", base, base.with("spk", "b")},
		{"srk", base, base.with("srk", "0")},
		{"epk", base, base.with("epk", "b")},
		{"erk", base, base.with("erk", "8")},
		{"erk added", base.with("erk", ""), base.with("erk", "9")},
	}
	path := entityPath("tamper", "b", "5")
	for _, tc := range cases {
		t.Run(tc.field, func(t *testing.T) {
			sts := serviceStringToSign(tg.account, tc.signed)
			wantOK(t, sasDo(t, nil, "GET", tg.endpoint, path, sasQuery(t, tg.key, sts, tc.signed), nil), "untampered")
			r := sasDo(t, nil, "GET", tg.endpoint, path, sasQuery(t, tg.key, sts, tc.present), nil)
			wantRawCode(t, r, 403, "AuthenticationFailed")
		})
	}
}

// TestServiceSASVersions: each version's string-to-sign is accepted, and a
// signature in one version's form presented under another is not.
func TestServiceSASVersions(t *testing.T) {
	tg := tamperServer(t, false)
	path := entityPath("tamper", "b", "5")
	for _, sv := range []string{"2013-08-15", "2014-02-14", "2015-02-21", "2015-04-05", "2017-07-29", "2019-02-02", "2019-07-07", "2020-12-06", "2021-06-08"} {
		t.Run(sv, func(t *testing.T) {
			f := sasFields{"sv": sv, "tn": "tamper", "sp": "r", "se": sasTime(time.Hour)}
			wantOK(t, sasDo(t, nil, "GET", tg.endpoint, path, sasQuery(t, tg.key, serviceStringToSign(tg.account, f), f), nil), sv)
		})
	}
	// A 2015-04-05 signature (with the sip/spr lines) presented as
	// 2015-02-21 (without them).
	f := sasFields{"sv": "2015-04-05", "tn": "tamper", "sp": "r", "se": sasTime(time.Hour)}
	r := sasDo(t, nil, "GET", tg.endpoint, path, sasQuery(t, tg.key, serviceStringToSign(tg.account, f), f.with("sv", "2015-02-21")), nil)
	wantRawCode(t, r, 403, "AuthenticationFailed")
}

// TestAccountSASTamper: the same for every signed field of an account SAS,
// in both string-to-sign forms.
func TestAccountSASTamper(t *testing.T) {
	tg := tamperServer(t, false)
	for _, sv := range []string{"2019-02-02", "2021-06-08"} {
		base := sasFields{"sv": sv, "ss": "t", "srt": "sco", "sp": "rl", "st": sasTime(-time.Hour), "se": sasTime(time.Hour),
			"sip": "127.0.0.1", "spr": "https,http"}
		if sv >= "2020-12-06" {
			base["ses"] = "scope1"
		}
		cases := []struct {
			field   string
			present sasFields
		}{
			{"sv", base.with("sv", "2018-11-09")},
			{"ss", base.with("ss", "bt")},
			{"srt", base.with("srt", "o")},
			{"sp", base.with("sp", "rwdl")},
			{"st", base.with("st", sasTime(-2*time.Hour))},
			{"se", base.with("se", sasTime(2*time.Hour))},
			{"sip", base.with("sip", "")},
			{"spr", base.with("spr", "http,https")},
		}
		if sv >= "2020-12-06" {
			cases = append(cases, struct {
				field   string
				present sasFields
			}{"ses", base.with("ses", "scope2")})
		}
		sts := accountStringToSign(tg.account, base)
		for _, tc := range cases {
			t.Run(sv+"/"+tc.field, func(t *testing.T) {
				wantOK(t, sasDo(t, nil, "GET", tg.endpoint, "/Tables", sasQuery(t, tg.key, sts, base), nil), "untampered")
				wantRawCode(t, sasDo(t, nil, "GET", tg.endpoint, "/Tables", sasQuery(t, tg.key, sts, tc.present), nil), 403, "AuthenticationFailed")
			})
		}
	}
}

// TestSASRefusals: each way a correctly signed SAS can still be wrong for
// the request, refused with the service's code (docs/protocol.md 0.1, 9.8),
// beside the legitimate variant that is accepted.
func TestSASRefusals(t *testing.T) {
	tg := tamperServer(t, false)
	path := entityPath("tamper", "b", "5")
	svc := sasFields{"sv": "2019-02-02", "tn": "tamper", "sp": "r", "se": sasTime(time.Hour)}
	acct := sasFields{"sv": "2019-02-02", "ss": "t", "srt": "sco", "sp": "rl", "se": sasTime(time.Hour)}
	serviceQ := func(f sasFields) string { return sasQuery(t, tg.key, serviceStringToSign(tg.account, f), f) }
	accountQ := func(f sasFields) string { return sasQuery(t, tg.key, accountStringToSign(tg.account, f), f) }
	cases := []struct {
		name      string
		method    string
		good, bad string
		status    int
		code      string
	}{
		{name: "expired", good: serviceQ(svc), bad: serviceQ(svc.with("se", sasTime(-time.Minute))), status: 403, code: "AuthenticationFailed"},
		{name: "not yet valid", good: serviceQ(svc.with("st", sasTime(-time.Minute))), bad: serviceQ(svc.with("st", sasTime(10*time.Minute))), status: 403, code: "AuthenticationFailed"},
		{name: "wrong permission", good: serviceQ(svc), bad: serviceQ(svc.with("sp", "aud")), status: 403, code: "AuthorizationPermissionMismatch"},
		// A read outside the key range finds nothing; a write is refused
		// (docs/protocol.md 0.1).
		{name: "out-of-range key", good: serviceQ(svc.with("spk", "a", "epk", "b")), bad: serviceQ(svc.with("spk", "c")), status: 404, code: "ResourceNotFound"},
		{name: "out-of-range row", good: serviceQ(svc.with("spk", "b", "srk", "5")), bad: serviceQ(svc.with("spk", "b", "srk", "6")), status: 404, code: "ResourceNotFound"},
		{name: "out-of-range write", method: "DELETE", good: serviceQ(svc.with("sp", "d", "spk", "b")), bad: serviceQ(svc.with("sp", "d", "spk", "c")), status: 403, code: "AuthorizationFailure"},
		{name: "wrong table", good: serviceQ(svc), bad: serviceQ(svc.with("tn", "other")), status: 403, code: "AuthorizationFailure"},
		{name: "wrong IP", good: serviceQ(svc.with("sip", "127.0.0.0-127.0.0.9")), bad: serviceQ(svc.with("sip", "10.0.0.1")), status: 403, code: "AuthorizationSourceIPMismatch"},
		{name: "https required", good: serviceQ(svc.with("spr", "https,http")), bad: serviceQ(svc.with("spr", "https")), status: 403, code: "AuthorizationProtocolMismatch"},
		{name: "unknown policy", good: serviceQ(svc.with("si", "pol1", "sp", "", "se", "")), bad: serviceQ(svc.with("si", "nope", "sp", "", "se", "")), status: 403, code: "AuthenticationFailed"},
		{name: "account SAS expired", good: accountQ(acct), bad: accountQ(acct.with("se", sasTime(-time.Minute))), status: 403, code: "AuthenticationFailed"},
		{name: "account SAS without table service", good: accountQ(acct), bad: accountQ(acct.with("ss", "bq")), status: 403, code: "AuthorizationServiceMismatch"},
		{name: "account SAS resource type", good: accountQ(acct), bad: accountQ(acct.with("srt", "sc")), status: 403, code: "AuthorizationResourceTypeMismatch"},
		{name: "account SAS permission", good: accountQ(acct), bad: accountQ(acct.with("sp", "l")), status: 403, code: "AuthorizationPermissionMismatch"},
		{name: "account SAS wrong IP", good: accountQ(acct.with("sip", "127.0.0.1")), bad: accountQ(acct.with("sip", "192.168.1.1-192.168.1.9")), status: 403, code: "AuthorizationSourceIPMismatch"},
		{name: "account SAS https required", good: accountQ(acct.with("spr", "https,http")), bad: accountQ(acct.with("spr", "https")), status: 403, code: "AuthorizationProtocolMismatch"},
		{name: "write with read SAS", method: "DELETE", good: serviceQ(svc.with("sp", "d", "spk", "b")), bad: serviceQ(svc), status: 403, code: "AuthorizationPermissionMismatch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = "GET"
			}
			r := sasDo(t, nil, method, tg.endpoint, path, tc.bad, nil)
			wantRawCode(t, r, tc.status, tc.code)
			if tc.code == "AuthorizationProtocolMismatch" && !strings.Contains(string(r.body), "--loose") {
				t.Fatalf("the protocol refusal should name --loose: %s", r.body)
			}
			wantOK(t, sasDo(t, nil, method, tg.endpoint, path, tc.good, nil), tc.name)
			if method == "DELETE" { // put the entity back for the next case
				_, err := tg.service(t).NewClient("tamper").AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "b", "RowKey": "5"}), nil)
				must(t, err)
			}
		})
	}

	t.Run("revoked policy", func(t *testing.T) {
		q := serviceQ(svc.with("si", "pol2", "sp", "", "se", ""))
		wantOK(t, sasDo(t, nil, "GET", tg.endpoint, path, q, nil), "before revocation")
		hour := time.Now().Add(time.Hour).UTC()
		_, err := tg.service(t).NewClient("tamper").SetAccessPolicy(ctx(), &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{
			{ID: to.Ptr("pol1"), AccessPolicy: &aztables.AccessPolicy{Expiry: &hour, Permission: to.Ptr("r")}}}})
		must(t, err)
		wantRawCode(t, sasDo(t, nil, "GET", tg.endpoint, path, q, nil), 403, "AuthenticationFailed")
	})

	t.Run("unknown account", func(t *testing.T) {
		ghost := strings.TrimSuffix(tg.endpoint, tg.account) + "ghost"
		f := svc
		q := sasQuery(t, tg.key, serviceStringToSign("ghost", f), f)
		wantRawCode(t, sasDo(t, nil, "GET", ghost, path, q, nil), 404, "ResourceNotFound")
		a := sasQuery(t, tg.key, accountStringToSign("ghost", acct), acct)
		wantRawCode(t, sasDo(t, nil, "GET", ghost, "/Tables", a, nil), 404, "ResourceNotFound")
	})

	t.Run("other account's key", func(t *testing.T) {
		two := strings.TrimSuffix(tg.endpoint, tg.account) + "accttwo"
		_, err := (&target{endpoint: two, account: "accttwo", key: otherKey}).service(t).CreateTable(ctx(), "tamper", nil)
		must(t, err)
		// acctone's SAS signed with accttwo's key, and accttwo's signed
		// with acctone's: both refused; each with its own key: accepted.
		wantRawCode(t, sasDo(t, nil, "GET", tg.endpoint, "/tamper()", sasQuery(t, otherKey, serviceStringToSign(tg.account, svc), svc), nil), 403, "AuthenticationFailed")
		wantRawCode(t, sasDo(t, nil, "GET", two, "/tamper()", sasQuery(t, tg.key, serviceStringToSign("accttwo", svc), svc), nil), 403, "AuthenticationFailed")
		// A SAS for acctone (its name signed) presented to accttwo.
		wantRawCode(t, sasDo(t, nil, "GET", two, "/tamper()", sasQuery(t, otherKey, serviceStringToSign(tg.account, svc), svc), nil), 403, "AuthenticationFailed")
		wantRawCode(t, sasDo(t, nil, "GET", two, "/Tables", sasQuery(t, otherKey, accountStringToSign(tg.account, acct), acct), nil), 403, "AuthenticationFailed")
		wantOK(t, sasDo(t, nil, "GET", tg.endpoint, "/tamper()", sasQuery(t, tg.key, serviceStringToSign(tg.account, svc), svc), nil), "own key")
		wantOK(t, sasDo(t, nil, "GET", two, "/tamper()", sasQuery(t, otherKey, serviceStringToSign("accttwo", svc), svc), nil), "own key")
	})
}

// TestSASProtocol: an spr=https SAS is refused over HTTP, accepted over
// HTTP with --loose and over HTTPS without it (docs/protocol.md 0.1, 13).
func TestSASProtocol(t *testing.T) {
	svc := sasFields{"sv": "2019-02-02", "tn": "tamper", "sp": "r", "se": sasTime(time.Hour), "spr": "https"}
	acct := sasFields{"sv": "2019-02-02", "ss": "t", "srt": "sco", "sp": "rl", "se": sasTime(time.Hour), "spr": "https"}
	path := entityPath("tamper", "b", "5")
	loose := tamperServer(t, true)
	wantOK(t, sasDo(t, nil, "GET", loose.endpoint, path, sasQuery(t, loose.key, serviceStringToSign(loose.account, svc), svc), nil), "service SAS with --loose")
	wantOK(t, sasDo(t, nil, "GET", loose.endpoint, "/Tables", sasQuery(t, loose.key, accountStringToSign(loose.account, acct), acct), nil), "account SAS with --loose")

	tls := startTLS(t, emulator.Config{})
	must(t, func() error {
		_, err := tls.sharedKeyService(t).CreateTable(ctx(), "tamper", nil)
		return err
	}())
	wantOK(t, sasDo(t, tls.client, "GET", tls.endpoint, "/tamper()", sasQuery(t, tls.key, serviceStringToSign(tls.account, svc), svc), nil), "service SAS over HTTPS")
	wantOK(t, sasDo(t, tls.client, "GET", tls.endpoint, "/Tables", sasQuery(t, tls.key, accountStringToSign(tls.account, acct), acct), nil), "account SAS over HTTPS")
}
