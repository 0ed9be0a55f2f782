package conformance

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tableemu/tableemu/emulator"
)

// preflight sends an unauthenticated OPTIONS request.
func (tg *target) preflight(t *testing.T, path string, hdr map[string]string) *rawResponse {
	t.Helper()
	req, err := http.NewRequest("OPTIONS", tg.endpoint+path, nil)
	must(t, err)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return do(t, req)
}

const corsRules = `<StorageServiceProperties><Cors>` +
	`<CorsRule><AllowedMethods>GET,PUT</AllowedMethods><AllowedOrigins>http://a.example,http://b.example</AllowedOrigins>` +
	`<AllowedHeaders>x-ms-meta-*,content-type</AllowedHeaders><ExposedHeaders>x-ms-request-id,x-ms-meta-*,x-custom</ExposedHeaders><MaxAgeInSeconds>60</MaxAgeInSeconds></CorsRule>` +
	`<CorsRule><AllowedMethods>DELETE,PATCH</AllowedMethods><AllowedOrigins>*</AllowedOrigins>` +
	`<AllowedHeaders>*</AllowedHeaders><ExposedHeaders>*</ExposedHeaders><MaxAgeInSeconds>7</MaxAgeInSeconds></CorsRule>` +
	`</Cors></StorageServiceProperties>`

// TestCORSPreflight: OPTIONS on any path, without credentials, answered
// from the account's CORS rules (docs/protocol.md 3.7).
func TestCORSPreflight(t *testing.T) {
	tg := ownServer(t, emulator.Config{})
	ask := map[string]string{"Origin": "http://a.example", "Access-Control-Request-Method": "PUT"}

	// No rules: every preflight is refused.
	wantRawCode(t, tg.preflight(t, "/", ask), 403, "CorsPreflightFailure")

	r := tg.raw(t, "PUT", "/?restype=service&comp=properties", xmlHeaders, []byte(corsRules))
	if r.StatusCode != 202 {
		t.Fatalf("set CORS rules: %d %s", r.StatusCode, r.body)
	}

	allowed := []struct {
		name, path                            string
		origin, method, headers, maxAge, cred string
	}{
		{"exact", "/", "http://a.example", "PUT", "", "60", "true"},
		{"origin case and second origin", "/sometable()", "HTTP://B.EXAMPLE", "GET", "", "60", "true"},
		{"literal and prefixed headers", "/t(PartitionKey='a',RowKey='b')", "http://a.example", "PUT", "x-ms-meta-color, Content-Type", "60", "true"},
		{"any origin rule", "/Tables", "https://anything.test", "PATCH", "x-ms-version,authorization", "7", "true"},
	}
	for _, tc := range allowed {
		t.Run("allow/"+tc.name, func(t *testing.T) {
			h := map[string]string{"Origin": tc.origin, "Access-Control-Request-Method": tc.method}
			if tc.headers != "" {
				h["Access-Control-Request-Headers"] = tc.headers
			}
			r := tg.preflight(t, tc.path, h)
			if r.StatusCode != 200 {
				t.Fatalf("status %d: %s", r.StatusCode, r.body)
			}
			want := map[string]string{
				"Access-Control-Allow-Origin":      tc.origin,
				"Access-Control-Allow-Methods":     tc.method,
				"Access-Control-Allow-Headers":     tc.headers,
				"Access-Control-Max-Age":           tc.maxAge,
				"Access-Control-Allow-Credentials": tc.cred,
			}
			for k, v := range want {
				if got := r.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}

	refused := []struct {
		name   string
		hdr    map[string]string
		status int
		code   string
	}{
		{"unknown origin", map[string]string{"Origin": "http://c.example", "Access-Control-Request-Method": "GET"}, 403, "CorsPreflightFailure"},
		{"method not allowed", map[string]string{"Origin": "http://a.example", "Access-Control-Request-Method": "MERGE"}, 403, "CorsPreflightFailure"},
		{"method case", map[string]string{"Origin": "http://a.example", "Access-Control-Request-Method": "put"}, 403, "CorsPreflightFailure"},
		{"header not allowed", map[string]string{"Origin": "http://a.example", "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "x-ms-meta-a,x-other"}, 403, "CorsPreflightFailure"},
		{"no Origin", map[string]string{"Access-Control-Request-Method": "GET"}, 400, "InvalidHeaderValue"},
		{"no method", map[string]string{"Origin": "http://a.example"}, 400, "InvalidHeaderValue"},
	}
	for _, tc := range refused {
		t.Run("refuse/"+tc.name, func(t *testing.T) {
			r := tg.preflight(t, "/", tc.hdr)
			wantRawCode(t, r, tc.status, tc.code)
			if r.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Fatalf("refusal carries Access-Control-Allow-Origin")
			}
		})
	}

	// Another account has no rules.
	other := &target{endpoint: strings.TrimSuffix(tg.endpoint, tg.account) + "nosuchaccount"}
	wantRawCode(t, other.preflight(t, "/", ask), 403, "CorsPreflightFailure")

	// Clearing the rules refuses again.
	r = tg.raw(t, "PUT", "/?restype=service&comp=properties", xmlHeaders, []byte("<StorageServiceProperties><Cors/></StorageServiceProperties>"))
	if r.StatusCode != 202 {
		t.Fatalf("clear CORS rules: %d %s", r.StatusCode, r.body)
	}
	wantRawCode(t, tg.preflight(t, "/", ask), 403, "CorsPreflightFailure")
}

// TestCORSActualRequests: the Access-Control headers on real responses,
// errors included (docs/protocol.md 2.2, 3.7).
func TestCORSActualRequests(t *testing.T) {
	tg := ownServer(t, emulator.Config{})
	_, name := tg.newNamedTable(t)
	// Before any rule: no CORS headers at all.
	r := tg.raw(t, "GET", "/"+name+"()", map[string]string{"Origin": "http://a.example"}, nil)
	if r.Header.Get("Access-Control-Allow-Origin") != "" || r.Header.Get("Vary") != "" {
		t.Fatalf("CORS headers without rules: %v", r.Header)
	}
	r = tg.raw(t, "PUT", "/?restype=service&comp=properties", xmlHeaders, []byte(corsRules))
	if r.StatusCode != 202 {
		t.Fatalf("set CORS rules: %d %s", r.StatusCode, r.body)
	}

	// A named origin: the origin, credentials, Vary, and the exposed
	// headers the response has, plus the rule's literal names.
	r = tg.raw(t, "GET", "/"+name+"()", map[string]string{"Origin": "http://a.example"}, nil)
	if r.StatusCode != 200 || r.Header.Get("Access-Control-Allow-Origin") != "http://a.example" ||
		r.Header.Get("Access-Control-Allow-Credentials") != "true" || r.Header.Get("Vary") != "Origin" {
		t.Fatalf("named origin: %d %v", r.StatusCode, r.Header)
	}
	exposed := strings.Split(r.Header.Get("Access-Control-Expose-Headers"), ",")
	if !contains(exposed, "x-ms-request-id") || !contains(exposed, "x-custom") || contains(exposed, "content-type") {
		t.Fatalf("Access-Control-Expose-Headers %q", exposed)
	}

	// A "*" rule: "*" without credentials or Vary; every response header is
	// exposed. Errors carry the headers too.
	r = tg.raw(t, "DELETE", entityPath(name, "p", "missing"), map[string]string{"Origin": "https://elsewhere.test", "If-Match": "*"}, nil)
	wantRawCode(t, r, 404, "ResourceNotFound")
	if r.Header.Get("Access-Control-Allow-Origin") != "*" || r.Header.Get("Access-Control-Allow-Credentials") != "" || r.Header.Get("Vary") != "" {
		t.Fatalf("any-origin rule: %v", r.Header)
	}
	exposed = strings.Split(r.Header.Get("Access-Control-Expose-Headers"), ",")
	for _, h := range []string{"x-ms-request-id", "x-ms-error-code", "content-type", "date"} {
		if !contains(exposed, h) {
			t.Fatalf("Access-Control-Expose-Headers %q lacks %s", exposed, h)
		}
	}

	// Rules but no match: Vary only. A GET without Origin: Vary only.
	for _, hdr := range []map[string]string{{"Origin": "http://c.example"}, {}} {
		r = tg.raw(t, "GET", "/"+name+"()", hdr, nil)
		if r.StatusCode != 200 || r.Header.Get("Access-Control-Allow-Origin") != "" || r.Header.Get("Vary") != "Origin" {
			t.Fatalf("%v: %d %v", hdr, r.StatusCode, r.Header)
		}
	}
	// An allowed origin with a method its rule does not allow: no match.
	r = tg.raw(t, "POST", "/"+name, map[string]string{"Origin": "http://a.example"}, marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r"}))
	if r.StatusCode != 201 || r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("POST from a.example: %d %v", r.StatusCode, r.Header)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
