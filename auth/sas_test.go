package auth

import (
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu"
)

const isoZ = "2006-01-02T15:04:05Z"

func mustQuery(t *testing.T, raw string) url.Values {
	t.Helper()
	q, err := url.ParseQuery(raw)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// Golden vectors from aztables v1.4.1's unit tests (docs/protocol.md 13).
func TestGoldenAccountSAS(t *testing.T) {
	acct := &Account{Name: "myAccountName", Keys: [][]byte{mustB64("daaaaaaaaaabbbbbbbbbbcccccccccccccccccccdddddddddddddddddddeeeeeeeeeeefffffffffffggggg==")}}
	q := mustQuery(t, "se=2021-09-09T14%3A30%3A00Z&sig=m%2F%2FxhMvxidHaswzZRpyuiHykqnTppPi%2BQ9S5xHMksIQ%3D&sp=r&spr=https&srt=s&ss=t&st=2021-09-08T14%3A30%3A00Z&sv=2019-02-02")
	s, found := ParseSAS(q)
	if !found || !s.IsAccount() {
		t.Fatalf("ParseSAS: %v %v", s, found)
	}
	req := sasRequest(q, true)
	req.Now = time.Date(2021, 9, 8, 20, 0, 0, 0, time.UTC)
	g := ok(t)(s.Verify(req, acct, VerifyOptions{}))
	if g.Kind != AccountSASGrant || g.Permissions != "r" || g.ResourceTypes != "s" ||
		!g.Expiry.Equal(time.Date(2021, 9, 9, 14, 30, 0, 0, time.UTC)) {
		t.Errorf("grant %+v", g)
	}
	if err := g.Allow(GetServiceProperties, ""); err != nil {
		t.Error(err)
	}
	wantErr(t, g.Allow(SetServiceProperties, ""), tableemu.AuthorizationPermissionMismatch)
	wantErr(t, g.Allow(QueryEntities, "t"), tableemu.AuthorizationResourceTypeMismatch)

	// spr=https over HTTP: refused, unless --loose.
	req.Secure = false
	e := wantErr(t, sidecar(s.Verify(req, acct, VerifyOptions{})), tableemu.AuthorizationProtocolMismatch)
	if !strings.Contains(e.Message, "--loose") {
		t.Errorf("message %q does not name --loose", e.Message)
	}
	ok(t)(s.Verify(req, acct, VerifyOptions{Loose: true}))

	// One changed letter breaks it.
	q.Set("sp", "rw")
	s, _ = ParseSAS(q)
	req.Secure = true
	e = wantErr(t, sidecar(s.Verify(req, acct, VerifyOptions{})), tableemu.AuthenticationFailed)
	if want := "Signature did not match. String to sign used was myAccountName\nrw\nt\ns\n2021-09-08T14:30:00Z\n"; !strings.HasPrefix(e.Detail, want) {
		t.Errorf("detail %q", e.Detail)
	}
}

func TestGoldenServiceSAS(t *testing.T) {
	acct := &Account{Name: "fake-account", Keys: [][]byte{[]byte("fake-key")}}
	q := mustQuery(t, "se=2023-11-08T16%3A04%3A05Z&sig=WLeRe04Jnm2q7wuetbkWgFDtdWg%2BiE7RKwUSLbecPjE%3D&sp=r&spr=https&st=2023-11-08T15%3A04%3A05Z&sv=2019-02-02&tn=fake-table")
	s, found := ParseSAS(q)
	if !found || s.IsAccount() {
		t.Fatalf("ParseSAS: %v %v", s, found)
	}
	req := sasRequest(q, true)
	req.Now = time.Date(2023, 11, 8, 15, 30, 0, 0, time.UTC)
	g := ok(t)(s.Verify(req, acct, VerifyOptions{}))
	if g.Kind != ServiceSASGrant || g.Table != "fake-table" || g.Permissions != "r" {
		t.Errorf("grant %+v", g)
	}
	if _, bounded := g.KeyRange(); bounded {
		t.Error("unexpected key range")
	}
	if err := g.Allow(QueryEntities, "Fake-Table"); err != nil {
		t.Error(err)
	}
	// After expiry.
	req.Now = time.Date(2023, 11, 8, 16, 4, 5, 0, time.UTC)
	e := wantErr(t, sidecar(s.Verify(req, acct, VerifyOptions{})), tableemu.AuthenticationFailed)
	want := "Signature not valid in the specified time frame: Start [Wed, 08 Nov 2023 15:04:05 GMT] - Expiry [Wed, 08 Nov 2023 16:04:05 GMT] - Current [Wed, 08 Nov 2023 16:04:05 GMT]"
	if e.Detail != want {
		t.Errorf("detail %q\nwant   %q", e.Detail, want)
	}
}

func TestParseSAS(t *testing.T) {
	if _, found := ParseSAS(url.Values{"sv": {"2019-02-02"}, "tn": {"t"}}); found {
		t.Error("SAS without sig")
	}
	s, found := ParseSAS(url.Values{"sig": {""}})
	if !found {
		t.Fatal("empty sig is still a SAS")
	}
	wantErr(t, sidecar(s.Verify(sasRequest(s.q, true), dev, VerifyOptions{})), tableemu.AuthenticationFailed)
}

// baseService is a valid service SAS at testNow.
var baseService = map[string]string{
	"sv": "2019-02-02", "tn": "MyTable", "sp": "raud", "spr": "https,http",
	"st": testNow.Add(-time.Hour).Format(isoZ), "se": testNow.Add(time.Hour).Format(isoZ),
}

func verifyService(t *testing.T, f map[string]string, opts VerifyOptions) (*Grant, error) {
	t.Helper()
	q := serviceSAS(devKey, "devstoreaccount1", f, false)
	s, _ := ParseSAS(q)
	return s.Verify(sasRequest(q, false), dev, opts)
}

func TestServiceSASTableNameCase(t *testing.T) {
	// Go and JS lower-case tn in the canonical resource; .NET does not.
	for _, keep := range []bool{false, true} {
		q := serviceSAS(devKey, "devstoreaccount1", baseService, keep)
		s, _ := ParseSAS(q)
		g := ok(t)(s.Verify(sasRequest(q, false), dev, VerifyOptions{}))
		if g.Table != "MyTable" {
			t.Errorf("table %q", g.Table)
		}
	}
	// Key 2 signs too.
	q := serviceSAS(devKey2, "devstoreaccount1", baseService, false)
	s, _ := ParseSAS(q)
	ok(t)(s.Verify(sasRequest(q, false), dev, VerifyOptions{}))
}

func TestServiceSASOldVersions(t *testing.T) {
	se := testNow.Add(time.Hour).Format(isoZ)
	for _, tc := range []struct{ sv, sts string }{
		{"2015-02-21", "r\n\n" + se + "\n/table/devstoreaccount1/mytable\n\n2015-02-21\n\n\n\n"},
		{"2013-08-15", "r\n\n" + se + "\n/devstoreaccount1/mytable\n\n2013-08-15\n\n\n\n"},
		{"2012-02-12", "r\n\n" + se + "\n/devstoreaccount1/mytable\n\n2012-02-12\n\n\n\n"},
	} {
		q := url.Values{"sv": {tc.sv}, "tn": {"mytable"}, "sp": {"r"}, "se": {se},
			"sig": {hmacB64(devKey, tc.sts)}}
		s, _ := ParseSAS(q)
		ok(t)(s.Verify(sasRequest(q, false), dev, VerifyOptions{}))
		// sip/spr did not exist yet: an spr=https added later is neither
		// signed nor enforced.
		q.Set("spr", "https")
		s, _ = ParseSAS(q)
		ok(t)(s.Verify(sasRequest(q, false), dev, VerifyOptions{}))
	}
	// Too old.
	q := url.Values{"sv": {"2011-08-18"}, "tn": {"t"}, "sp": {"r"}, "se": {se}, "sig": {hmacB64(devKey, "x")}}
	s, _ := ParseSAS(q)
	wantErr(t, sidecar(s.Verify(sasRequest(q, false), dev, VerifyOptions{})), tableemu.AuthenticationFailed)
}

func TestSASTimeFormats(t *testing.T) {
	for _, tc := range []struct {
		st, se string
		ok     bool
	}{
		{"2024-05-06", "2024-05-07", true},
		{"2024-05-06T07:00Z", "2024-05-06T07:09Z", true},
		{"2024-05-06T07:08:09Z", "2024-05-06T07:08:10Z", true},
		{"2024-05-06T07:08:08.9999999Z", "2024-05-06T07:08:09.0000001Z", true},
		{"", "2024-05-06T07:08:09.5Z", true},
		{"2024-05-06T07:08:10Z", "2024-05-07", false},           // not yet valid
		{"2024-05-05", "2024-05-06T07:08:09Z", false},           // expiry is exclusive
		{"2024-05-06T08:00:00Z", "2024-05-06T08:00:00Z", false}, // start ≥ expiry
		{"", "2024-05-06T07:08:08Z", false},                     // expired, no start
		{"", "", false},                                         // se is required
		{"", "tomorrow", false},
		{"2024-13-01", "2024-05-07", false},
	} {
		f := copyFields(baseService, "st", tc.st, "se", tc.se)
		g, err := verifyService(t, f, VerifyOptions{})
		if tc.ok {
			wantOK(t, g, err)
		} else {
			wantErr(t, err, tableemu.AuthenticationFailed)
		}
	}
	// Start after expiry has its own detail.
	e := wantErr(t, sidecar(verifyService(t, copyFields(baseService, "st", "2024-05-07", "se", "2024-05-06"), VerifyOptions{})), tableemu.AuthenticationFailed)
	if !strings.HasPrefix(e.Detail, "Signed expiry time [Mon, 06 May 2024 00:00:00 GMT] has to be after signed start time [Tue, 07 May 2024 00:00:00 GMT]") {
		t.Errorf("detail %q", e.Detail)
	}
	if tm, good := ParseTime("2021-07-08T09:10:09.0000000Z"); !good || !tm.Equal(time.Date(2021, 7, 8, 9, 10, 9, 0, time.UTC)) {
		t.Errorf("ParseTime: %v %v", tm, good)
	}
}

func TestSASSourceIP(t *testing.T) {
	for _, tc := range []struct {
		sip, remote string
		ok          bool
	}{
		{"10.1.2.3", "10.1.2.3", true},
		{"10.1.2.3", "10.1.2.4", false},
		{"10.1.2.3-10.1.2.9", "10.1.2.3", true},
		{"10.1.2.3-10.1.2.9", "10.1.2.9", true},
		{"10.1.2.3-10.1.2.9", "10.1.2.2", false},
		{"10.1.2.3-10.1.2.9", "10.1.2.10", false},
		{"10.1.2.3-10.1.2.9", "::ffff:10.1.2.5", true}, // IPv4-mapped
		{"10.0.0.0-10.255.255.255", "2001:db8::1", false},
		{"2001:db8::1-2001:db8::ff", "2001:db8::10", true},
		{"10.1.2.3", "", false}, // no remote address
	} {
		f := copyFields(baseService, "sip", tc.sip)
		q := serviceSAS(devKey, "devstoreaccount1", f, false)
		s, _ := ParseSAS(q)
		req := sasRequest(q, false)
		req.RemoteIP = netip.Addr{}
		if tc.remote != "" {
			req.RemoteIP = netip.MustParseAddr(tc.remote)
		}
		g, err := s.Verify(req, dev, VerifyOptions{})
		if tc.ok {
			wantOK(t, g, err)
			continue
		}
		e := wantErr(t, err, tableemu.AuthorizationSourceIPMismatch)
		if tc.remote != "" && !strings.Contains(e.Message, "source IP "+netip.MustParseAddr(tc.remote).Unmap().String()) {
			t.Errorf("message %q", e.Message)
		}
	}
	for _, bad := range []string{"10.1.2", "10.1.2.9-10.1.2.3", "10.1.2.3-::1", "any"} {
		wantErr(t, sidecar(verifyService(t, copyFields(baseService, "sip", bad), VerifyOptions{})), tableemu.AuthenticationFailed)
	}
}

func TestSASProtocol(t *testing.T) {
	for _, tc := range []struct {
		spr           string
		secure, loose bool
		code          tableemu.Code // "" = allowed
	}{
		{"https", true, false, ""},
		{"https", false, false, tableemu.AuthorizationProtocolMismatch},
		{"https", false, true, ""},
		{"https,http", false, false, ""},
		{"", false, false, ""},
		{"http", true, false, tableemu.AuthenticationFailed},
	} {
		f := copyFields(baseService, "spr", tc.spr)
		q := serviceSAS(devKey, "devstoreaccount1", f, false)
		s, _ := ParseSAS(q)
		g, err := s.Verify(sasRequest(q, tc.secure), dev, VerifyOptions{Loose: tc.loose})
		if tc.code == "" {
			wantOK(t, g, err)
		} else {
			wantErr(t, err, tc.code)
		}
	}
}

func TestServiceSASMalformed(t *testing.T) {
	cases := map[string]map[string]string{
		"no tn":             copyFields(baseService, "tn", ""),
		"no sv":             copyFields(baseService, "sv", ""),
		"bad sv":            copyFields(baseService, "sv", "2019-2-2"),
		"no sp":             copyFields(baseService, "sp", ""),
		"sp out of order":   copyFields(baseService, "sp", "ar"),
		"sp repeated":       copyFields(baseService, "sp", "rr"),
		"sp unknown letter": copyFields(baseService, "sp", "rw"),
		"srk without spk":   copyFields(baseService, "srk", "a"),
		"erk without epk":   copyFields(baseService, "erk", "a"),
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			wantErr(t, sidecar(verifyService(t, f, VerifyOptions{})), tableemu.AuthenticationFailed)
		})
	}
	// Present but empty optional fields.
	q := serviceSAS(devKey, "devstoreaccount1", baseService, false)
	q["si"] = []string{""}
	s, _ := ParseSAS(q)
	e := wantErr(t, sidecar(s.Verify(sasRequest(q, false), dev, VerifyOptions{})), tableemu.AuthenticationFailed)
	if e.Detail != "si is optional but cannot be empty" {
		t.Errorf("detail %q", e.Detail)
	}
	// Signature shapes.
	for _, sig := range []string{"***", "c2hvcnQ=", ""} {
		q := serviceSAS(devKey, "devstoreaccount1", baseService, false)
		q.Set("sig", sig)
		s, _ := ParseSAS(q)
		wantErr(t, sidecar(s.Verify(sasRequest(q, false), dev, VerifyOptions{})), tableemu.AuthenticationFailed)
	}
	// A '+' that reached us as a space still verifies.
	q = serviceSAS(devKey, "devstoreaccount1", baseService, false)
	for i := 0; !strings.Contains(q.Get("sig"), "+"); i++ {
		q = serviceSAS(devKey, "devstoreaccount1", copyFields(baseService, "si", "", "spk", strings.Repeat("x", i)), false)
	}
	q.Set("sig", strings.ReplaceAll(q.Get("sig"), "+", " "))
	s, _ = ParseSAS(q)
	ok(t)(s.Verify(sasRequest(q, false), dev, VerifyOptions{}))
}

func TestSASSignatureMismatch(t *testing.T) {
	q := serviceSAS([]byte("not the key"), "devstoreaccount1", baseService, false)
	s, _ := ParseSAS(q)
	e := wantErr(t, sidecar(s.Verify(sasRequest(q, false), dev, VerifyOptions{})), tableemu.AuthenticationFailed)
	want := "Signature did not match. String to sign used was raud\n" + baseService["st"] + "\n" + baseService["se"] +
		"\n/table/devstoreaccount1/mytable\n\n\nhttps,http\n2019-02-02\n\n\n\n"
	if e.Detail != want {
		t.Errorf("detail %q\nwant   %q", e.Detail, want)
	}
	// A field changed after signing.
	q = serviceSAS(devKey, "devstoreaccount1", baseService, false)
	q.Set("tn", "othertable")
	s, _ = ParseSAS(q)
	wantErr(t, sidecar(s.Verify(sasRequest(q, false), dev, VerifyOptions{})), tableemu.AuthenticationFailed)
}

// The order of checks: signature, then time window, IP, protocol, then
// service (docs/protocol.md 9.8).
func TestSASCheckOrder(t *testing.T) {
	expired := copyFields(baseService, "st", "2020-01-01", "se", "2020-01-02", "sip", "192.0.2.1", "spr", "https")
	// Wrong key and everything else wrong: the signature decides.
	q := serviceSAS([]byte("bad"), "devstoreaccount1", expired, false)
	s, _ := ParseSAS(q)
	e := wantErr(t, sidecar(s.Verify(sasRequest(q, false), dev, VerifyOptions{})), tableemu.AuthenticationFailed)
	if !strings.HasPrefix(e.Detail, "Signature did not match") {
		t.Errorf("detail %q", e.Detail)
	}
	// Good key: the time window next.
	e = wantErr(t, sidecar(verifyService(t, expired, VerifyOptions{})), tableemu.AuthenticationFailed)
	if !strings.HasPrefix(e.Detail, "Signature not valid in the specified time frame") {
		t.Errorf("detail %q", e.Detail)
	}
	// In time: IP before protocol.
	inTime := copyFields(expired, "st", baseService["st"], "se", baseService["se"])
	wantErr(t, sidecar(verifyService(t, inTime, VerifyOptions{})), tableemu.AuthorizationSourceIPMismatch)
	wantErr(t, sidecar(verifyService(t, copyFields(inTime, "sip", ""), VerifyOptions{})), tableemu.AuthorizationProtocolMismatch)

	// Account SAS: protocol before service.
	f := map[string]string{"sv": "2019-02-02", "ss": "bq", "srt": "sco", "sp": "rwdlacu",
		"se": baseService["se"], "spr": "https"}
	q = accountSAS(devKey, "devstoreaccount1", f, false)
	s, _ = ParseSAS(q)
	wantErr(t, sidecar(s.Verify(sasRequest(q, false), dev, VerifyOptions{})), tableemu.AuthorizationProtocolMismatch)
	wantErr(t, sidecar(s.Verify(sasRequest(q, true), dev, VerifyOptions{})), tableemu.AuthorizationServiceMismatch)
}

func TestStoredPolicy(t *testing.T) {
	policies := map[string]Policy{
		"full":    {Start: testNow.Add(-time.Hour), Expiry: testNow.Add(time.Hour), Permission: "ru"},
		"noperm":  {Expiry: testNow.Add(time.Hour)},
		"expired": {Expiry: testNow.Add(-time.Minute), Permission: "r"},
		"empty":   {},
	}
	lookup := func(table, id string) (Policy, bool) {
		if !strings.EqualFold(table, "mytable") {
			return Policy{}, false
		}
		p, found := policies[id]
		return p, found
	}
	opts := VerifyOptions{Policy: lookup}
	si := func(id string, kv ...string) map[string]string {
		return copyFields(map[string]string{"sv": "2019-02-02", "tn": "mytable", "si": id}, kv...)
	}

	// The policy supplies st, se and sp.
	g := ok(t)(verifyService(t, si("full"), opts))
	if g.Permissions != "ru" || !g.Expiry.Equal(testNow.Add(time.Hour)) {
		t.Errorf("grant %+v", g)
	}
	wantErr(t, g.Allow(DeleteEntity, "mytable"), tableemu.AuthorizationPermissionMismatch)
	// The SAS supplies what the policy leaves out.
	g = ok(t)(verifyService(t, si("noperm", "sp", "rd"), opts))
	if g.Permissions != "rd" {
		t.Errorf("permissions %q", g.Permissions)
	}
	ok(t)(verifyService(t, si("empty", "sp", "r", "se", baseService["se"]), opts))

	refusals := map[string]map[string]string{
		"unknown id":              si("nosuch"),
		"st in both":              si("full", "st", baseService["st"]),
		"se in both":              si("full", "se", baseService["se"]),
		"sp in both":              si("full", "sp", "r"),
		"no sp anywhere":          si("noperm"),
		"no se anywhere":          si("empty", "sp", "r"),
		"policy expired":          si("expired"),
		"policy on another table": copyFields(si("full"), "tn", "othertable"),
	}
	for name, f := range refusals {
		t.Run(name, func(t *testing.T) {
			wantErr(t, sidecar(verifyService(t, f, opts)), tableemu.AuthenticationFailed)
		})
	}
	// No lookup at all: every si is unknown.
	wantErr(t, sidecar(verifyService(t, si("full"), VerifyOptions{})), tableemu.AuthenticationFailed)

	// Revocation: remove the policy and the same token stops working.
	q := serviceSAS(devKey, "devstoreaccount1", si("full"), false)
	s, _ := ParseSAS(q)
	ok(t)(s.Verify(sasRequest(q, false), dev, opts))
	delete(policies, "full")
	e := wantErr(t, sidecar(s.Verify(sasRequest(q, false), dev, opts)), tableemu.AuthenticationFailed)
	if e.Detail != "SAS identifier cannot be found for specified signed identifier" {
		t.Errorf("detail %q", e.Detail)
	}
	// Shortening the policy's expiry also revokes it.
	policies["full"] = Policy{Expiry: testNow.Add(-time.Second), Permission: "r"}
	wantErr(t, sidecar(s.Verify(sasRequest(q, false), dev, opts)), tableemu.AuthenticationFailed)
}

func TestAccountSAS(t *testing.T) {
	base := map[string]string{"sv": "2019-02-02", "ss": "bfqt", "srt": "sco", "sp": "rwdlacup",
		"st": baseService["st"], "se": baseService["se"], "spr": "https,http"}
	verify := func(f map[string]string, withScope bool) (*Grant, error) {
		q := accountSAS(devKey, "devstoreaccount1", f, withScope)
		s, _ := ParseSAS(q)
		return s.Verify(sasRequest(q, false), dev, VerifyOptions{})
	}
	g := ok(t)(verify(base, false))
	if g.Kind != AccountSASGrant || g.ResourceTypes != "sco" || g.Permissions != "rwdlacup" {
		t.Errorf("grant %+v", g)
	}
	// Both string-to-sign forms, whatever the version says.
	ok(t)(verify(copyFields(base, "sv", "2021-06-08", "ses", "scope1"), true))
	ok(t)(verify(copyFields(base, "sv", "2021-06-08"), true))
	ok(t)(verify(copyFields(base, "sv", "2021-06-08"), false))
	ok(t)(verify(base, true))
	// An encryption scope not signed is a mismatch.
	q := accountSAS(devKey, "devstoreaccount1", copyFields(base, "sv", "2021-06-08"), true)
	q.Set("ses", "other")
	s, _ := ParseSAS(q)
	wantErr(t, sidecar(s.Verify(sasRequest(q, false), dev, VerifyOptions{})), tableemu.AuthenticationFailed)
	// Letters in other orders are fine for an account SAS.
	ok(t)(verify(copyFields(base, "ss", "tqfb", "srt", "osc", "sp", "lrx"), false))

	wantErr(t, sidecar(verify(copyFields(base, "ss", "bq"), false)), tableemu.AuthorizationServiceMismatch)
	for name, f := range map[string]map[string]string{
		"old sv":      copyFields(base, "sv", "2015-02-21"),
		"ss repeated": copyFields(base, "ss", "tt"),
		"ss unknown":  copyFields(base, "ss", "tz"),
		"srt unknown": copyFields(base, "srt", "sx"),
		"sp unknown":  copyFields(base, "sp", "rz"),
		"sp repeated": copyFields(base, "sp", "rr"),
		"no se":       copyFields(base, "se", ""),
		"no sp":       copyFields(base, "sp", ""),
		"expired":     copyFields(base, "st", "2020-01-01", "se", "2020-01-02"),
		"bad st":      copyFields(base, "st", "2020-01-01T1"),
		"no srt (tn)": copyFields(base, "srt", "", "tn", ""),
	} {
		t.Run(name, func(t *testing.T) {
			wantErr(t, sidecar(verify(f, false)), tableemu.AuthenticationFailed)
		})
	}
}

// TestSASFieldTwice: a SAS that gives sig or any signed field twice is 403
// AuthenticationFailed, even when both values are the same, for service
// and account SAS alike (docs/protocol.md 0.1).
func TestSASFieldTwice(t *testing.T) {
	service := serviceSAS(devKey, "devstoreaccount1", copyFields(baseService, "spk", "a", "epk", "z"), false)
	account := accountSAS(devKey, "devstoreaccount1", map[string]string{"sv": "2019-02-02", "ss": "t", "srt": "sco", "sp": "rwdlacu",
		"se": baseService["se"]}, false)
	ok(t)(mustParse(t, service).Verify(sasRequest(service, true), dev, VerifyOptions{}))
	ok(t)(mustParse(t, account).Verify(sasRequest(account, true), dev, VerifyOptions{}))
	for name, q := range map[string]url.Values{"service": service, "account": account} {
		for key := range q {
			for _, second := range []string{q.Get(key), "other"} {
				twice := url.Values{}
				for k, v := range q {
					twice[k] = append([]string(nil), v...)
				}
				twice.Add(key, second)
				e := wantErr(t, sidecar(mustParse(t, twice).Verify(sasRequest(twice, true), dev, VerifyOptions{})), tableemu.AuthenticationFailed)
				if !strings.Contains(e.Detail, key+" is given 2 times") {
					t.Errorf("%s SAS, %s twice (%q): detail %q", name, key, second, e.Detail)
				}
			}
		}
	}
}

func mustParse(t *testing.T, q url.Values) *SAS {
	t.Helper()
	s, ok := ParseSAS(q)
	if !ok {
		t.Fatal("no SAS")
	}
	return s
}
