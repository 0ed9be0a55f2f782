package conformance

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu/auth"
	"github.com/tableemu/tableemu/emulator"
)

// TestBearerRefusalFollowsVersion: a bearer token tableemu refuses is
// answered as the service answers the x-ms-version the request names
// (docs/protocol.md 9.9) — 401 InvalidAuthenticationInfo, "Server failed to
// authenticate the request. Please refer to the information in the
// www-authenticate header.", with the Bearer challenge, from 2019-12-12 on
// (live at 2020-12-06: azure-data-tables recording
// test_challenge_auth_supported_version); 403 AuthenticationFailed without a
// challenge before (live at 2019-07-07: test_challenge_auth_unsupported_version)
// and without x-ms-version. With --oauth basic (a token of another issuer,
// an expired one) and without it (every token), in JSON and in XML, as the
// front end answers (no x-ms-version, Cache-Control or
// X-Content-Type-Options); the hint after the service's sentence says what
// to do in each case.
func TestBearerRefusalFollowsVersion(t *testing.T) {
	const (
		challenged = "Server failed to authenticate the request. Please refer to the information in the www-authenticate header."
		refused    = "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature."
	)
	foreign := string(mint(t, entraClaims("iss", "https://issuer.example/")))
	expired := string(mint(t, entraClaims("exp", time.Now().Add(-time.Minute).Unix())))
	cases := []struct {
		version string // "" sends none
		status  int
		code    string
		message string
	}{
		{"2025-07-05", 401, "InvalidAuthenticationInfo", challenged},
		{"2020-12-06", 401, "InvalidAuthenticationInfo", challenged},
		{"2019-12-12", 401, "InvalidAuthenticationInfo", challenged},
		{"2019-07-07", 403, "AuthenticationFailed", refused},
		{"2019-02-02", 403, "AuthenticationFailed", refused},
		{"", 403, "AuthenticationFailed", refused},
	}
	for _, server := range []struct {
		name   string
		cfg    emulator.Config
		tokens []string
	}{
		{"oauth basic", emulator.Config{OAuth: "basic"}, []string{foreign, expired}},
		{"no oauth", emulator.Config{}, []string{string(mint(t, entraClaims()))}},
	} {
		tg := startTLS(t, server.cfg)
		for _, token := range server.tokens {
			for _, tc := range cases {
				// A JSON operation and an XML one (Get Service Stats, at the
				// secondary, as the recordings asked).
				for _, target := range []string{"/" + tg.account + "/Tables", "/" + tg.account + "-secondary/?restype=service&comp=stats"} {
					req, err := http.NewRequest("GET", strings.TrimSuffix(tg.endpoint, "/"+tg.account)+target, nil)
					must(t, err)
					req.Header.Set("Authorization", "Bearer "+token)
					req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
					if tc.version != "" {
						req.Header.Set("x-ms-version", tc.version)
					}
					resp, err := tg.client.Do(req)
					must(t, err)
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					where := server.name + " " + target + " at " + tc.version
					if resp.StatusCode != tc.status || resp.Header.Get("x-ms-error-code") != tc.code {
						t.Fatalf("%s: %d %s, want %d %s\n%s", where, resp.StatusCode, resp.Header.Get("x-ms-error-code"), tc.status, tc.code, body)
					}
					challenge := ""
					if tc.status == 401 {
						challenge = auth.BearerChallenge
					}
					if got := resp.Header.Get("WWW-Authenticate"); got != challenge {
						t.Fatalf("%s: WWW-Authenticate %q, want %q", where, got, challenge)
					}
					// The front end's answer, at every version: no
					// x-ms-version, Cache-Control or X-Content-Type-Options,
					// plain JSON (docs/protocol.md 0.1).
					for _, h := range []string{"x-ms-version", "Cache-Control", "X-Content-Type-Options"} {
						if v, has := resp.Header[http.CanonicalHeaderKey(h)]; has {
							t.Fatalf("%s: %s %q, want none", where, h, v)
						}
					}
					if ct := resp.Header.Get("Content-Type"); ct != "application/json" && ct != "application/xml" {
						t.Fatalf("%s: Content-Type %q", where, ct)
					}
					code, message := errorOf(t, resp.Header.Get("Content-Type"), body)
					// The service's sentence alone on the first line, then
					// tableemu's hint: --oauth basic, or --debug for the reason.
					first, rest, _ := strings.Cut(message, "\n")
					hint := "tableemu: start it with --debug FILE to log why the bearer token was refused."
					if server.cfg.OAuth == "" {
						hint = "tableemu: it accepts Microsoft Entra ID bearer tokens only when started with --oauth basic"
					}
					if code != tc.code || first != tc.message || !strings.HasPrefix(rest, hint) {
						t.Fatalf("%s: body code %q, message %q, want %s %q then %q", where, code, message, tc.code, tc.message, hint)
					}
				}
			}
		}
	}
}

// errorOf reads the code and message of a JSON or XML error body.
func errorOf(t *testing.T, contentType string, body []byte) (code, message string) {
	t.Helper()
	if strings.HasPrefix(contentType, "application/xml") {
		var e struct {
			Code    string `xml:"code"`
			Message string `xml:"message"`
		}
		must(t, xml.Unmarshal(body, &e))
		return e.Code, e.Message
	}
	var e struct {
		Err struct {
			Code    string
			Message struct{ Value string }
		} `json:"odata.error"`
	}
	must(t, json.Unmarshal(body, &e))
	return e.Err.Code, e.Err.Message.Value
}
