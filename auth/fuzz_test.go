package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu"
)

// FuzzSAS feeds arbitrary query strings and Authorization headers to
// Authenticate (and the bearer path) and checks that it never panics and
// never grants what it should not:
//
//   - under a key no seed was signed with, nothing is ever granted;
//   - under the real keys, every grant is re-justified by an independent
//     check written here: the signature recomputed from the presented
//     fields by this file's own string-to-sign, the time window, the
//     services, and permissions no wider than those signed or stored;
//   - every refusal is an *tableemu.Error with a code from the table.
//
// Bearer tokens are only checked for panics and for refusal over HTTP: by
// design (--oauth basic, as Azurite) an unsigned token with the right
// claims is accepted, so "never grants" does not apply to them.
func FuzzSAS(f *testing.F) {
	for _, q := range fuzzSeeds() {
		f.Add(q.Encode(), "", false)
		f.Add(q.Encode(), "", true)
	}
	liteSig := hmacB64(devKey, rfc1123(testNow)+"\n/devstoreaccount1/devstoreaccount1/mytable()")
	f.Add("", "SharedKeyLite devstoreaccount1:"+liteSig, false)
	f.Add("comp=acl", "SharedKey devstoreaccount1:"+liteSig, false)
	f.Add("", "Bearer "+mintToken(f, goodClaims()), true)
	f.Add("sig=&sv=&tn=", "", false)
	f.Add("sig=%zz&se=9999-12-31", "Bearer a.b.c", false)
	f.Add(fuzzSeeds()[0].Encode(), "SharedKeyLite devstoreaccount1:"+liteSig, true)

	stranger := &Account{Name: "devstoreaccount1", Keys: [][]byte{[]byte("a key no seed was signed with")}}
	f.Fuzz(func(t *testing.T, rawQuery, authorization string, secure bool) {
		q, _ := url.ParseQuery(rawQuery) // keeps what parses, as net/http does
		req := fuzzRequest(q, authorization, secure)
		opts := VerifyOptions{Policy: fuzzPolicy}

		if g, err := Authenticate(req, stranger, opts); err == nil || g != nil {
			t.Fatalf("granted %+v under a key nobody signed with", g)
		} else {
			wantCoded(t, err)
		}
		g, err := Authenticate(req, dev, opts)
		if err != nil {
			wantCoded(t, err)
		} else {
			justify(t, req, g, fuzzPolicy)
			for _, op := range Ops() {
				if err := g.Allow(op, "mytable"); err != nil {
					wantCoded(t, err)
				}
			}
			g.InRange("a", "b")
		}
		if bg, err := VerifyBearer(req, dev); err == nil && !secure {
			t.Fatalf("bearer token accepted over HTTP: %+v", bg)
		}
	})
}

// fuzzSeeds are SAS query strings validly signed for devstoreaccount1 at
// testNow: service SAS of several shapes and versions, account SAS in both
// string-to-sign forms.
func fuzzSeeds() []url.Values {
	st := testNow.Add(-time.Hour).Format("2006-01-02T15:04:05Z")
	se := testNow.Add(time.Hour).Format("2006-01-02T15:04:05Z")
	svc := map[string]string{"sv": "2019-02-02", "tn": "mytable", "sp": "raud", "st": st, "se": se}
	return []url.Values{
		serviceSAS(devKey, "devstoreaccount1", svc, false),
		serviceSAS(devKey, "devstoreaccount1", copyFields(svc, "tn", "MyTable", "sp", "r"), true),
		serviceSAS(devKey, "devstoreaccount1", copyFields(svc, "spk", "a", "srk", "1", "epk", "b", "erk", "2"), false),
		serviceSAS(devKey, "devstoreaccount1", copyFields(svc, "sip", "10.0.0.0-10.255.255.255", "spr", "https"), false),
		serviceSAS(devKey, "devstoreaccount1", copyFields(svc, "si", "pol", "sp", "", "se", ""), false),
		serviceSAS(devKey2, "devstoreaccount1", copyFields(svc, "sv", "2020-12-06"), false),
		accountSAS(devKey, "devstoreaccount1", map[string]string{"sv": "2019-02-02", "ss": "t", "srt": "sco", "sp": "rwdlacu", "st": st, "se": se, "spr": "https"}, false),
		accountSAS(devKey, "devstoreaccount1", map[string]string{"sv": "2021-06-08", "ss": "bfqt", "srt": "o", "sp": "r", "se": se, "ses": "scope"}, true),
	}
}

func fuzzRequest(q url.Values, authorization string, secure bool) *Request {
	req := sasRequest(q, secure)
	req.Header.Set("X-Ms-Date", rfc1123(testNow))
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	return req
}

// fuzzPolicy knows one stored policy, "pol" on mytable.
func fuzzPolicy(table, id string) (Policy, bool) {
	if strings.EqualFold(table, "mytable") && id == "pol" {
		return Policy{Expiry: testNow.Add(time.Hour), Permission: "r"}, true
	}
	return Policy{}, false
}

// TestFuzzSASSeedsAreGranted keeps FuzzSAS honest: its seeds must reach
// the granted path, where justify re-derives each grant.
func TestFuzzSASSeedsAreGranted(t *testing.T) {
	for i, q := range fuzzSeeds() {
		req := fuzzRequest(q, "", true)
		g, err := Authenticate(req, dev, VerifyOptions{Policy: fuzzPolicy})
		if err != nil {
			t.Fatalf("seed %d (%s) refused: %v", i, q.Encode(), err)
		}
		justify(t, req, g, fuzzPolicy)
	}
}

func wantCoded(t *testing.T, err error) {
	t.Helper()
	var e *tableemu.Error
	if !errors.As(err, &e) || !tableemu.Known(e.Code) || e.Status != tableemu.New(e.Code).Status {
		t.Fatalf("refusal %v is not a coded tableemu.Error", err)
	}
}

// justify re-derives a grant from the request with this file's own
// reading of docs/protocol.md 9.3–9.7, and fails the test if it cannot.
func justify(t *testing.T, req *Request, g *Grant, policy func(string, string) (Policy, bool)) {
	t.Helper()
	q := req.Query
	_, hasSig := q["sig"]
	switch g.Kind {
	case SharedKeyGrant:
		if hasSig {
			t.Fatalf("Shared Key grant for a request with a SAS: %v", q)
		}
		scheme, cred, _ := strings.Cut(strings.TrimSpace(req.Header.Get("Authorization")), " ")
		i := strings.LastIndexByte(cred, ':')
		if i < 0 {
			t.Fatalf("Shared Key grant without account:signature: %q", cred)
		}
		resource := "/devstoreaccount1/devstoreaccount1/mytable()"
		if c, ok := q["comp"]; ok && len(c) > 0 {
			resource += "?comp=" + c[0]
		}
		date := req.Header.Get("X-Ms-Date")
		var sts string
		if strings.EqualFold(scheme, "SharedKeyLite") {
			sts = date + "\n" + resource
		} else {
			sts = "GET\n\n\n" + date + "\n" + resource
		}
		if !macMatches(cred[i+1:], sts) {
			t.Fatalf("Shared Key grant whose signature does not sign %q", sts)
		}
	case ServiceSASGrant:
		if !hasSig || q.Has("ss") || q.Has("srt") {
			t.Fatalf("service SAS grant for query %v", q)
		}
		if !macMatches(q.Get("sig"), independentServiceSTS(q, false)) && !macMatches(q.Get("sig"), independentServiceSTS(q, true)) {
			t.Fatalf("service SAS grant whose signature does not sign its fields: %v", q)
		}
		start, expiry, perms := q.Get("st"), q.Get("se"), q.Get("sp")
		if id := q.Get("si"); id != "" {
			p, ok := policy(q.Get("tn"), id)
			if !ok {
				t.Fatalf("grant for unknown policy %q", id)
			}
			if !p.Expiry.IsZero() {
				expiry = p.Expiry.Format(time.RFC3339Nano)
			}
			if p.Permission != "" {
				perms = p.Permission
			}
		}
		inWindow(t, req.Now, start, expiry)
		for _, c := range g.Permissions {
			if !strings.ContainsRune(perms, c) || !strings.ContainsRune("raud", c) {
				t.Fatalf("grant permission %q not signed (%q)", g.Permissions, perms)
			}
		}
		if g.Table != q.Get("tn") {
			t.Fatalf("grant for table %q, SAS names %q", g.Table, q.Get("tn"))
		}
		if q.Get("spr") == "https" && !req.Secure {
			t.Fatal("https-only service SAS granted over HTTP")
		}
	case AccountSASGrant:
		if !hasSig {
			t.Fatalf("account SAS grant without sig: %v", q)
		}
		if !strings.Contains(q.Get("ss"), "t") {
			t.Fatalf("account SAS grant without the table service: %q", q.Get("ss"))
		}
		base := strings.Join([]string{"devstoreaccount1", q.Get("sp"), q.Get("ss"), q.Get("srt"),
			q.Get("st"), q.Get("se"), q.Get("sip"), q.Get("spr"), q.Get("sv")}, "\n") + "\n"
		if !macMatches(q.Get("sig"), base) && !macMatches(q.Get("sig"), base+q.Get("ses")+"\n") {
			t.Fatalf("account SAS grant whose signature does not sign its fields: %v", q)
		}
		inWindow(t, req.Now, q.Get("st"), q.Get("se"))
		if g.Permissions != q.Get("sp") || g.ResourceTypes != q.Get("srt") {
			t.Fatalf("grant %q/%q differs from signed %q/%q", g.Permissions, g.ResourceTypes, q.Get("sp"), q.Get("srt"))
		}
		if q.Get("spr") == "https" && !req.Secure {
			t.Fatal("https-only account SAS granted over HTTP")
		}
	default:
		t.Fatalf("grant of unknown kind %d", g.Kind)
	}
}

// independentServiceSTS is the service SAS string-to-sign by version
// (docs/protocol.md 9.6): "/table" from 2015-02-21, sip and spr from 2015-04-05.
func independentServiceSTS(q url.Values, keepCase bool) string {
	tn := q.Get("tn")
	if !keepCase {
		tn = strings.ToLower(tn)
	}
	sv := q.Get("sv")
	res := "/devstoreaccount1/" + tn
	if sv >= "2015-02-21" {
		res = "/table" + res
	}
	parts := []string{q.Get("sp"), q.Get("st"), q.Get("se"), res, q.Get("si")}
	if sv >= "2015-04-05" {
		parts = append(parts, q.Get("sip"), q.Get("spr"))
	}
	parts = append(parts, sv, q.Get("spk"), q.Get("srk"), q.Get("epk"), q.Get("erk"))
	return strings.Join(parts, "\n")
}

func macMatches(sig, sts string) bool {
	got, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(sig, " ", "+"))
	if err != nil {
		return false
	}
	for _, key := range dev.Keys {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(sts))
		if hmac.Equal(m.Sum(nil), got) {
			return true
		}
	}
	return false
}

func inWindow(t *testing.T, now time.Time, start, expiry string) {
	t.Helper()
	if start != "" {
		s, ok := ParseTime(start)
		if !ok || now.Before(s) {
			t.Fatalf("granted before its start %q", start)
		}
	}
	e, ok := ParseTime(expiry)
	if !ok || !now.Before(e) {
		t.Fatalf("granted at or after its expiry %q", expiry)
	}
}
