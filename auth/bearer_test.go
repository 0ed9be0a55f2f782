package auth

import (
	"net/http"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tableemu/tableemu"
)

// mintToken signs claims with a throwaway HMAC key: tableemu does not
// verify signatures, so any key (or none) must do.
func mintToken(t testing.TB, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte("not the issuer's key"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// goodClaims are the claims of a token Azure AD issues for storage.
func goodClaims() jwt.MapClaims {
	return jwt.MapClaims{
		"aud": "https://storage.azure.com",
		"iss": "https://sts.windows.net/72f988bf-86f1-41af-91ab-2d7cd011db47/",
		"iat": testNow.Add(-5 * time.Minute).Unix(),
		"nbf": testNow.Add(-5 * time.Minute).Unix(),
		"exp": testNow.Add(time.Hour).Unix(),
		"oid": "11059fcc-5514-4800-b5f8-49808b9cfab6",
	}
}

func bearerRequest(auth string, secure bool) *Request {
	r := sasRequest(nil, secure)
	r.Header = http.Header{"Authorization": {auth}}
	return r
}

func TestVerifyBearer(t *testing.T) {
	with := func(kv ...any) jwt.MapClaims {
		c := goodClaims()
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(c, kv[i].(string))
			} else {
				c[kv[i].(string)] = kv[i+1]
			}
		}
		return c
	}
	accepted := []struct {
		name   string
		claims jwt.MapClaims
	}{
		{"storage audience", goodClaims()},
		{"storage audience with slash", with("aud", "https://storage.azure.com/")},
		{"storage app id", with("aud", "e406a681-f3d4-42a8-90b6-c2b029497af1")},
		{"this account's endpoint", with("aud", "https://devstoreaccount1.table.core.windows.net")},
		{"this account's endpoint, China", with("aud", "https://devstoreaccount1.table.core.chinacloudapi.cn/")},
		{"audience list", with("aud", []string{"https://example.com", "https://storage.azure.com"})},
		{"v2 issuer", with("iss", "https://login.microsoftonline.com/tenant/v2.0")},
		{"Germany issuer", with("iss", "https://sts.microsoftonline.de/tenant/")},
		{"exactly at nbf", with("nbf", testNow.Unix())},
	}
	for _, tc := range accepted {
		t.Run("accept/"+tc.name, func(t *testing.T) {
			g := ok(t)(VerifyBearer(bearerRequest("Bearer "+mintToken(t, tc.claims), true), dev))
			if g.Kind != SharedKeyGrant || g.Allow(DeleteTable, "") != nil {
				t.Fatalf("grant %+v does not carry the account's rights", g)
			}
		})
	}
	refused := []struct {
		name   string
		auth   string
		secure bool
		code   tableemu.Code
	}{
		{"over HTTP", "Bearer " + mintToken(t, goodClaims()), false, tableemu.AuthenticationFailed},
		{"expired", "Bearer " + mintToken(t, with("exp", testNow.Add(-time.Second).Unix())), true, tableemu.AuthenticationFailed},
		{"exactly at exp", "Bearer " + mintToken(t, with("exp", testNow.Unix())), true, tableemu.AuthenticationFailed},
		{"not yet valid", "Bearer " + mintToken(t, with("nbf", testNow.Add(time.Minute).Unix())), true, tableemu.AuthenticationFailed},
		{"no exp", "Bearer " + mintToken(t, with("exp", nil)), true, tableemu.AuthenticationFailed},
		{"no nbf", "Bearer " + mintToken(t, with("nbf", nil)), true, tableemu.AuthenticationFailed},
		{"no iat", "Bearer " + mintToken(t, with("iat", nil)), true, tableemu.AuthenticationFailed},
		{"exp not a number", "Bearer " + mintToken(t, with("exp", "tomorrow")), true, tableemu.AuthenticationFailed},
		{"foreign issuer", "Bearer " + mintToken(t, with("iss", "https://accounts.google.com")), true, tableemu.AuthenticationFailed},
		{"issuer look-alike", "Bearer " + mintToken(t, with("iss", "https://sts.windows.net.evil.example/")), true, tableemu.AuthenticationFailed},
		{"no issuer", "Bearer " + mintToken(t, with("iss", nil)), true, tableemu.AuthenticationFailed},
		{"key vault audience", "Bearer " + mintToken(t, with("aud", "https://vault.azure.net")), true, tableemu.AuthenticationFailed},
		{"another account's endpoint", "Bearer " + mintToken(t, with("aud", "https://other.table.core.windows.net")), true, tableemu.AuthenticationFailed},
		{"blob endpoint", "Bearer " + mintToken(t, with("aud", "https://devstoreaccount1.blob.core.windows.net")), true, tableemu.AuthenticationFailed},
		{"no audience", "Bearer " + mintToken(t, with("aud", nil)), true, tableemu.AuthenticationFailed},
		{"not a JWT", "Bearer not.a.jwt", true, tableemu.AuthenticationFailed},
		{"two segments", "Bearer abc.def", true, tableemu.AuthenticationFailed},
		{"empty token", "Bearer ", true, tableemu.AuthenticationFailed},
		{"other scheme", "SharedKey devstoreaccount1:abc", true, tableemu.InvalidAuthenticationInfo},
	}
	for _, tc := range refused {
		t.Run("refuse/"+tc.name, func(t *testing.T) {
			g, err := VerifyBearer(bearerRequest(tc.auth, tc.secure), dev)
			if g != nil {
				t.Fatalf("granted %+v", g)
			}
			wantErr(t, err, tc.code)
		})
	}
}

// TestBearerRefusalByVersion: a refused token is 401 InvalidAuthenticationInfo
// with the message that points at the challenge from x-ms-version
// 2019-12-12 on, 403 AuthenticationFailed before and without a version
// (docs/protocol.md 9.9) — with --oauth basic (VerifyBearer) and without
// (VerifySharedKey) — and the detail still names the check.
func TestBearerRefusalByVersion(t *testing.T) {
	const challenged = "Server failed to authenticate the request. Please refer to the information in the www-authenticate header."
	expired := "Bearer " + mintToken(t, jwt.MapClaims{"aud": "https://storage.azure.com", "iss": "https://sts.windows.net/x/",
		"iat": testNow.Add(-time.Hour).Unix(), "nbf": testNow.Add(-time.Hour).Unix(), "exp": testNow.Add(-time.Minute).Unix()})
	for version, want := range map[string]int{
		"2025-07-05": 401, "2020-12-06": 401, "2019-12-12": 401, "2019-10-10": 403, "2019-07-07": 403, "2019-02-02": 403, "": 403,
	} {
		for name, verify := range map[string]func(*Request) error{
			"oauth":    func(r *Request) error { _, err := VerifyBearer(r, dev); return err },
			"no oauth": func(r *Request) error { _, err := VerifySharedKey(r, dev); return err },
		} {
			r := bearerRequest(expired, true)
			if version != "" {
				r.Header.Set("x-ms-version", version)
			}
			e := tableemu.From(verify(r))
			switch {
			case want == 401 && (e.Status != 401 || e.Code != tableemu.InvalidAuthenticationInfo || e.Message != challenged):
				t.Errorf("%s at %q: %v, want 401 InvalidAuthenticationInfo %q", name, version, e, challenged)
			case want == 403 && (e.Status != 403 || e.Code != tableemu.AuthenticationFailed || e.Message != tableemu.New(tableemu.AuthenticationFailed).Message):
				t.Errorf("%s at %q: %v, want 403 AuthenticationFailed", name, version, e)
			case name == "oauth" && e.Detail != "Lifetime validation failed. The token is expired.":
				t.Errorf("%s at %q: detail %q", name, version, e.Detail)
			}
		}
	}
}

func TestIsBearer(t *testing.T) {
	for v, want := range map[string]bool{"Bearer x": true, "bearer x": true, "  Bearer x": true, "SharedKey a:b": false, "": false, "Bearerx": false} {
		if got := IsBearer(http.Header{"Authorization": {v}}); got != want {
			t.Errorf("IsBearer(%q) = %v", v, got)
		}
	}
	if IsBearer(http.Header{"Authorization": {"Bearer a", "Bearer b"}}) {
		t.Error("two Authorization headers are not one bearer token")
	}
}
