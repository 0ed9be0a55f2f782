package auth

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu"
)

// udkFields are a user delegation SAS's fields for mytable, valid at
// testNow (2024-05-06T07:08:09Z): key and SAS both 07:00 to 09:00.
var udkFields = map[string]string{
	"sv": "2025-07-05", "tn": "mytable", "sp": "raud", "spr": "https",
	"st": "2024-05-06T07:00:00Z", "se": "2024-05-06T09:00:00Z",
	"skoid": "62c18f92-db7d-44d1-be01-46057bcaf9e2", "sktid": "00000000-0000-0000-0000-000000000000",
	"skt": "2024-05-06T07:00:00Z", "ske": "2024-05-06T09:00:00Z", "sks": "t", "skv": "2025-07-05",
}

// udkKey is the key tableemu hands out for f's key fields.
func udkKey(t *testing.T, acctKey []byte, f map[string]string) []byte {
	t.Helper()
	start, ok1 := ParseTime(f["skt"])
	expiry, ok2 := ParseTime(f["ske"])
	if !ok1 || !ok2 {
		t.Fatalf("skt %q or ske %q", f["skt"], f["ske"])
	}
	return DelegationKey{ObjectID: f["skoid"], TenantID: f["sktid"], Start: start, Expiry: expiry,
		Service: f["sks"], Version: f["skv"], DelegatedUserTenantID: f["skdutid"]}.Value("devstoreaccount1", acctKey)
}

// udkSAS signs f by hand with key: the table user delegation
// string-to-sign written out again (auth/delegation.go, docs/protocol.md 9.10).
func udkSAS(key []byte, f map[string]string) url.Values {
	sts := strings.Join([]string{
		f["sp"], f["st"], f["se"], "/table/devstoreaccount1/" + strings.ToLower(f["tn"]),
		f["skoid"], f["sktid"], f["skt"], f["ske"], f["sks"], f["skv"], f["skdutid"], f["sduoid"],
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

// TestDelegationKeyValue pins the derivation: a key handed out by one
// release must verify on the next (and after a restart), so a change here
// is a break for every SAS users hold. The expected value was computed
// apart from this package, with Python's hmac over the same
// length-prefixed fields.
func TestDelegationKeyValue(t *testing.T) {
	got := base64.StdEncoding.EncodeToString(udkKey(t, devKey, udkFields))
	if want := "c9gzKUmnPbbmlaMu8yTmzyz8H7n+Bzk06eJ33Bdky7g="; got != want {
		t.Fatalf("key = %s, want %s", got, want)
	}
	// Every field, the account and the account key change it.
	base := udkKey(t, devKey, udkFields)
	for _, kv := range [][2]string{{"skoid", "x"}, {"sktid", "x"}, {"skt", "2024-05-06T07:00:01Z"},
		{"ske", "2024-05-07T09:00:00Z"}, {"sks", "b"}, {"skv", "2025-11-05"}, {"skdutid", "x"}} {
		if string(udkKey(t, devKey, copyFields(udkFields, kv[0], kv[1]))) == string(base) {
			t.Errorf("%s does not change the key", kv[0])
		}
	}
	if string(udkKey(t, devKey2, udkFields)) == string(base) {
		t.Error("the account key does not change the key")
	}
	// A time written with a fraction of zeros is the same time.
	if string(udkKey(t, devKey, copyFields(udkFields, "skt", "2024-05-06T07:00:00.0000000Z"))) != string(base) {
		t.Error("skt with a zero fraction gives another key")
	}
}

// TestDelegationStringToSign holds the string-to-sign to the form written
// out field by field (docs/protocol.md 9.10), and its signature to one
// computed apart from this package (Python's hmac, with the key of
// TestDelegationKeyValue).
func TestDelegationStringToSign(t *testing.T) {
	s, _ := ParseSAS(udkSAS(udkKey(t, devKey, udkFields), udkFields))
	want := "raud\n2024-05-06T07:00:00Z\n2024-05-06T09:00:00Z\n/table/devstoreaccount1/mytable\n" +
		"62c18f92-db7d-44d1-be01-46057bcaf9e2\n00000000-0000-0000-0000-000000000000\n" +
		"2024-05-06T07:00:00Z\n2024-05-06T09:00:00Z\nt\n2025-07-05\n\n\n\nhttps\n2025-07-05\n\n\n\n"
	got := s.delegationStringsToSign("devstoreaccount1")
	if got[0] != want {
		t.Fatalf("string to sign\n got %q\nwant %q", got[0], want)
	}
	if sig := s.Signature; sig != "l3CDCfEr5q5zaIVaqVVkvLCkQAmL3sPY3p6bpO6cbIw=" {
		t.Fatalf("sig = %s", sig)
	}
	// The form without the delegated user's lines is a later candidate.
	if len(got) != 2 || strings.Count(got[1], "\n") != strings.Count(want, "\n")-2 {
		t.Fatalf("candidates %q", got)
	}
}

func TestUserDelegationSAS(t *testing.T) {
	key := udkKey(t, devKey, udkFields)
	g := ok(t)(Authenticate(sasRequest(udkSAS(key, udkFields), true), dev, VerifyOptions{}))
	if g.Kind != ServiceSASGrant || g.Table != "mytable" || g.Permissions != "raud" || g.Identity != nil {
		t.Fatalf("grant %+v", g)
	}
	// A SAS outliving its key ends with it.
	longer := copyFields(udkFields, "se", "2024-05-07T00:00:00Z")
	if g := ok(t)(Authenticate(sasRequest(udkSAS(key, longer), true), dev, VerifyOptions{})); !g.Expiry.Equal(time.Date(2024, 5, 6, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("Expiry %v, want the key's", g.Expiry)
	}
	if err := g.Allow(InsertEntity, "MyTable"); err != nil {
		t.Error(err)
	}
	wantErr(t, g.Allow(QueryEntities, "other"), tableemu.AuthorizationFailure)
	wantErr(t, g.Allow(GetUserDelegationKey, ""), tableemu.AuthenticationFailed)

	// A key made with key2 verifies too (the account's keys rotate).
	ok(t)(Authenticate(sasRequest(udkSAS(udkKey(t, devKey2, udkFields), udkFields), true), dev, VerifyOptions{}))

	// Permissions and key ranges as for a service SAS.
	ro := copyFields(udkFields, "sp", "r", "spk", "a", "epk", "m")
	g = ok(t)(Authenticate(sasRequest(udkSAS(key, ro), true), dev, VerifyOptions{}))
	wantErr(t, g.Allow(InsertEntity, "mytable"), tableemu.AuthorizationPermissionMismatch)
	if g.InRange("z", "1") || !g.InRange("b", "1") {
		t.Error("key range")
	}

	refused := map[string]struct {
		q    url.Values
		code tableemu.Code
	}{
		// Keys tableemu never issued: signed with another account key,
		// or fields altered after signing.
		"other account key": {udkSAS(udkKey(t, []byte("not the account's key"), udkFields), udkFields), tableemu.AuthenticationFailed},
		"altered skoid":     {alter(udkSAS(key, udkFields), "skoid", "11111111-db7d-44d1-be01-46057bcaf9e2"), tableemu.AuthenticationFailed},
		"longer key window": {alter(udkSAS(key, udkFields), "ske", "2024-05-07T09:00:00Z"), tableemu.AuthenticationFailed},
		"wider sp":          {alter(udkSAS(key, copyFields(udkFields, "sp", "r")), "sp", "raud"), tableemu.AuthenticationFailed},
		// The key's window, then the SAS's, at testNow.
		"key expired": {udkSAS(udkKey(t, devKey, copyFields(udkFields, "ske", "2024-05-06T07:05:00Z")),
			copyFields(udkFields, "ske", "2024-05-06T07:05:00Z")), tableemu.AuthenticationFailed},
		"key not started": {udkSAS(udkKey(t, devKey, copyFields(udkFields, "skt", "2024-05-06T08:00:00Z")),
			copyFields(udkFields, "skt", "2024-05-06T08:00:00Z")), tableemu.AuthenticationFailed},
		"sas expired": {udkSAS(key, copyFields(udkFields, "se", "2024-05-06T07:05:00Z")), tableemu.AuthenticationFailed},
		// Field rules.
		"old sv":       {udkSAS(key, copyFields(udkFields, "sv", "2024-08-04")), tableemu.AuthenticationFailed},
		"blob key":     {udkSAS(udkKey(t, devKey, copyFields(udkFields, "sks", "b")), copyFields(udkFields, "sks", "b")), tableemu.AuthenticationFailed},
		"stored id":    {udkSAS(key, copyFields(udkFields, "si", "policy")), tableemu.AuthenticationFailed},
		"no tn":        {udkSAS(key, copyFields(udkFields, "tn", "")), tableemu.AuthenticationFailed},
		"no sktid":     {udkSAS(key, copyFields(udkFields, "sktid", "")), tableemu.AuthenticationFailed},
		"no sp":        {udkSAS(key, copyFields(udkFields, "sp", "")), tableemu.AuthenticationFailed},
		"bad skt":      {udkSAS(key, copyFields(udkFields, "skt", "yesterday")), tableemu.AuthenticationFailed},
		"delegated":    {udkSAS(key, copyFields(udkFields, "sduoid", "someone")), tableemu.AuthenticationFailed},
		"twice":        {twice(udkSAS(key, udkFields), "skoid"), tableemu.AuthenticationFailed},
		"http only":    {udkSAS(key, udkFields), tableemu.AuthorizationProtocolMismatch},
		"other source": {udkSAS(key, copyFields(udkFields, "sip", "10.9.9.9")), tableemu.AuthorizationSourceIPMismatch},
	}
	for name, c := range refused {
		t.Run(name, func(t *testing.T) {
			_, err := Authenticate(sasRequest(c.q, name != "http only"), dev, VerifyOptions{})
			wantErr(t, err, c.code)
		})
	}
}

func alter(q url.Values, k, v string) url.Values { q.Set(k, v); return q }

func twice(q url.Values, k string) url.Values { q.Add(k, q.Get(k)); return q }

// TestVerifyBearerIdentity: the grant of a token names its oid and tid, or
// what stands in for them.
func TestVerifyBearerIdentity(t *testing.T) {
	now := time.Now()
	base := map[string]any{"aud": "https://storage.azure.com", "iss": "https://sts.windows.net/72f988bf-0000-0000-0000-000000000000/",
		"iat": now.Add(-time.Minute).Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix()}
	for _, c := range []struct {
		extra    map[string]any
		oid, tid string
	}{
		{map[string]any{"oid": "o-1", "tid": "t-1"}, "o-1", "t-1"},
		{map[string]any{"sub": "s-1"}, "s-1", "72f988bf-0000-0000-0000-000000000000"},
		{nil, zeroGUID, "72f988bf-0000-0000-0000-000000000000"},
	} {
		claims := map[string]any{}
		for k, v := range base {
			claims[k] = v
		}
		for k, v := range c.extra {
			claims[k] = v
		}
		req := bearerRequest("Bearer "+mintToken(t, claims), true)
		req.Now = now
		g, err := VerifyBearer(req, dev)
		if err != nil {
			t.Fatal(err)
		}
		if g.Identity == nil || g.Identity.ObjectID != c.oid || g.Identity.TenantID != c.tid {
			t.Errorf("claims %v: identity %+v, want %s %s", c.extra, g.Identity, c.oid, c.tid)
		}
	}
}

// BenchmarkVerifySAS compares verifying a user delegation SAS, which
// derives its key (one HMAC more, with a fresh key each time), with a
// service SAS signed with the account key.
func BenchmarkVerifySAS(b *testing.B) {
	key := DelegationKey{ObjectID: udkFields["skoid"], TenantID: udkFields["sktid"],
		Start: time.Date(2024, 5, 6, 7, 0, 0, 0, time.UTC), Expiry: time.Date(2024, 5, 6, 9, 0, 0, 0, time.UTC),
		Service: "t", Version: "2025-07-05"}.Value("devstoreaccount1", devKey)
	service := map[string]string{"sv": "2025-07-05", "tn": "mytable", "sp": "raud", "spr": "https",
		"st": "2024-05-06T07:00:00Z", "se": "2024-05-06T09:00:00Z"}
	for _, c := range []struct {
		name string
		q    url.Values
	}{
		{"service", serviceSAS(devKey, "devstoreaccount1", service, false)},
		{"userdelegation", udkSAS(key, udkFields)},
	} {
		b.Run(c.name, func(b *testing.B) {
			req := sasRequest(c.q, true)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := Authenticate(req, dev, VerifyOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestUserDelegationSASKeepsNoKeys: verifying SAS tokens signed with many
// different keys leaves the per-key HMAC pools (kept for the process's
// life) as they were: derived keys are used once.
func TestUserDelegationSASKeepsNoKeys(t *testing.T) {
	count := func() int {
		macPools.RLock()
		defer macPools.RUnlock()
		return len(macPools.m)
	}
	ok(t)(Authenticate(sasRequest(udkSAS(udkKey(t, devKey, udkFields), udkFields), true), dev, VerifyOptions{}))
	before := count()
	for i := 0; i < 20; i++ {
		f := copyFields(udkFields, "skoid", "oid-"+strings.Repeat("x", i))
		ok(t)(Authenticate(sasRequest(udkSAS(udkKey(t, devKey, f), f), true), dev, VerifyOptions{}))
	}
	if after := count(); after != before {
		t.Fatalf("%d HMAC pools after 20 keys, %d before", after, before)
	}
}
