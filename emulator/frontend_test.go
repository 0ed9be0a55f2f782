package emulator

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Errors the service's front end answers before the Table service sees
// the request — credentials that do not authenticate it, service
// properties asked of a table's URL — come without the Table service's
// headers: no x-ms-version, Cache-Control or X-Content-Type-Options, and
// JSON as plain application/json (errors.go frontEndError,
// docs/protocol.md 8.1).

func TestAuthenticationFailureIsTheFrontEndsAnswer(t *testing.T) {
	_, hs := batchServer(t)
	const service = "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature."
	for _, tt := range []struct {
		name, method, target, accept, version, body string
		status                                      int
		code, contentType                           string
	}{
		// live: azure-data-tables test_new_invalid_key, recorded at both
		// versions: 403, Content-Type: application/json.
		{"$batch at 2025-07-05", "POST", "/devstoreaccount1/$batch", "application/json", "2025-07-05", "--batch_x--",
			403, "AuthenticationFailed", "application/json"},
		{"$batch at 2019-02-02", "POST", "/devstoreaccount1/$batch", "application/json", "2019-02-02", "--batch_x--",
			403, "AuthenticationFailed", "application/json"},
		{"query asking minimal metadata", "GET", "/devstoreaccount1/Tables", "application/json;odata=minimalmetadata", "2019-02-02", "",
			403, "AuthenticationFailed", "application/json"},
		{"insert asking full metadata", "POST", "/devstoreaccount1/batchtbl", "application/json;odata=fullmetadata", "2025-07-05", `{"PartitionKey":"p","RowKey":"r"}`,
			403, "AuthenticationFailed", "application/json"},
		// live: test_create_properties (2025-07-05), test_challenge_auth
		// (2019-07-07): application/xml, no x-ms-version.
		{"service properties", "GET", "/devstoreaccount1/?restype=service&comp=properties", "application/xml", "2025-07-05", "",
			403, "AuthenticationFailed", "application/xml"},
		// live: .NET EnableTenantDiscoveryDoesNotFailAuth (2020-12-06): no
		// Authorization, 401 with x-ms-version all the same.
		{"no credentials", "GET", "/devstoreaccount1/Tables", "application/json;odata=minimalmetadata", "2020-12-06", "",
			401, "NoAuthenticationInformation", "application/json"},
		// live: .NET TimespanPropertyInCustomEntity…(StorageAAD)
		// (2020-12-06): a refused token's 401 echoes no
		// x-ms-client-request-id.
		{"refused token", "POST", "/devstoreaccount1/Tables", "application/json;odata=minimalmetadata", "2020-12-06", `{"TableName":"t"}`,
			401, "InvalidAuthenticationInfo", "application/json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := signed(t, tt.method, hs.URL, tt.target, tt.body)
			req.Header.Set("x-ms-version", tt.version)
			req.Header.Set("Accept", tt.accept)
			req.Header.Set("x-ms-client-request-id", "client-1")
			switch tt.code {
			case "NoAuthenticationInformation":
				req.Header.Del("Authorization")
			case "InvalidAuthenticationInfo":
				req.Header.Set("Authorization", "Bearer not-a-token")
			default:
				req.Header.Set("Authorization", "SharedKeyLite devstoreaccount1:"+base64.StdEncoding.EncodeToString(make([]byte, 32)))
			}
			if strings.Contains(tt.target, "$batch") {
				req.Header.Set("Content-Type", "multipart/mixed; boundary=batch_x")
			}
			r := send(t, req)
			if r.StatusCode != tt.status || r.Header.Get("x-ms-error-code") != tt.code {
				t.Fatalf("%d %q, want %d %s: %s", r.StatusCode, r.Header.Get("x-ms-error-code"), tt.status, tt.code, r.body)
			}
			if ct := r.Header.Get("Content-Type"); ct != tt.contentType {
				t.Errorf("Content-Type %q, want %q", ct, tt.contentType)
			}
			for _, h := range []string{"x-ms-version", "Cache-Control", "X-Content-Type-Options"} {
				v, ok := r.Header[http.CanonicalHeaderKey(h)]
				if h == "x-ms-version" && tt.code == "NoAuthenticationInformation" {
					if got := r.Header.Get(h); got != tt.version {
						t.Errorf("x-ms-version %q, want %s", got, tt.version)
					}
				} else if ok {
					t.Errorf("%s: %q; the front end sends none", h, v)
				}
			}
			if got, want := r.Header.Get("x-ms-client-request-id"), "client-1"; tt.code == "InvalidAuthenticationInfo" && got != "" || tt.code != "InvalidAuthenticationInfo" && got != want {
				t.Errorf("x-ms-client-request-id %q (sent %q)", got, want)
			}
			var code, msg string
			if tt.contentType == "application/xml" {
				var x struct {
					Code    string `xml:"code"`
					Message string `xml:"message"`
				}
				if err := xml.Unmarshal([]byte(r.body), &x); err != nil {
					t.Fatalf("%v: %s", err, r.body)
				}
				code, msg = x.Code, x.Message
			} else {
				code, msg = jsonErrorMessage(t, r.body)
			}
			first, hint := errorLines(t, msg)
			if code != tt.code || tt.code == "AuthenticationFailed" && first != service || hint == "" {
				t.Errorf("code %s, first line %q, hint %q", code, first, hint)
			}
		})
	}
}

// TestAuthorizationFailureIsTheTableServicesAnswer: a request that
// authenticates but that its SAS does not allow is refused by the Table
// service, with the level asked for and its headers (.NET recordings
// ValidateSasCredentials*: AuthorizationPermissionMismatch, "application/json;
// odata=minimalmetadata; …", x-ms-version, Cache-Control).
func TestAuthorizationFailureIsTheTableServicesAnswer(t *testing.T) {
	_, hs := batchServer(t)
	q := url.Values{"sv": {"2019-02-02"}, "tn": {"batchtbl"}, "sp": {"r"}, "se": {time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05Z")}}
	sts := strings.Join([]string{"r", "", q.Get("se"), "/table/devstoreaccount1/batchtbl", "", "", "", "2019-02-02", "", "", "", ""}, "\n")
	key, _ := base64.StdEncoding.DecodeString(DevKey)
	m := hmac.New(sha256.New, key)
	io.WriteString(m, sts)
	q.Set("sig", base64.StdEncoding.EncodeToString(m.Sum(nil)))
	req := signed(t, "POST", hs.URL, "/devstoreaccount1/batchtbl?"+q.Encode(), `{"PartitionKey":"p","RowKey":"r"}`)
	req.Header.Del("Authorization")
	req.Header.Set("Accept", "application/json")
	r := send(t, req)
	if r.StatusCode != 403 || r.Header.Get("x-ms-error-code") != "AuthorizationPermissionMismatch" {
		t.Fatalf("%d %s: %s", r.StatusCode, r.Header.Get("x-ms-error-code"), r.body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json;odata=minimalmetadata;streaming=true;charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if r.Header.Get("x-ms-version") != "2019-02-02" || r.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("x-ms-version %q, Cache-Control %q", r.Header.Get("x-ms-version"), r.Header.Get("Cache-Control"))
	}
}

// TestServicePropertiesBelowATable: Get and Set Service Properties sent to
// a table's URL, "/<account>/<table>/?restype=service&comp=properties", as
// a TableServiceClient given a table's URL sends them, are 400
// InvalidQueryParameterValue, an OData XML error without x-ms-version
// (live, x-ms-version 2025-07-05: azure-data-tables
// test_client_with_url_ends_with_table_name in test_table_service_properties).
func TestServicePropertiesBelowATable(t *testing.T) {
	_, hs := batchServer(t)
	const body = `<?xml version='1.0' encoding='utf-8'?>
<StorageServiceProperties><Logging><Version>1.0</Version><Delete>false</Delete><Read>false</Read><Write>true</Write><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging></StorageServiceProperties>`
	for _, method := range []string{"PUT", "GET"} {
		t.Run(method, func(t *testing.T) {
			b := ""
			if method == "PUT" {
				b = body
			}
			req := signed(t, method, hs.URL, "/devstoreaccount1/batchtbl/?restype=service&comp=properties", b)
			req.Header.Set("x-ms-version", "2025-07-05")
			req.Header.Set("Accept", "application/xml")
			if b != "" {
				req.Header.Set("Content-Type", "application/xml")
			}
			signComp(req, "/"+DevAccount+"/batchtbl/", "properties")
			r := send(t, req)
			if r.StatusCode != 400 || r.Header.Get("x-ms-error-code") != "InvalidQueryParameterValue" || r.Header.Get("Content-Type") != "application/xml" {
				t.Fatalf("%d %s %q: %s", r.StatusCode, r.Header.Get("x-ms-error-code"), r.Header.Get("Content-Type"), r.body)
			}
			var x struct {
				XMLName xml.Name
				Code    string `xml:"code"`
				Message string `xml:"message"`
			}
			if err := xml.Unmarshal([]byte(r.body), &x); err != nil || x.XMLName.Local != "error" || x.Code != "InvalidQueryParameterValue" {
				t.Fatalf("%v %+v: %s", err, x, r.body)
			}
			if first, _ := errorLines(t, x.Message); first != "Value for one of the query parameters specified in the request URI is invalid." {
				t.Errorf("first line %q", first)
			}
			if v, ok := r.Header["X-Ms-Version"]; ok {
				t.Errorf("x-ms-version %q; the front end sends none", v)
			}
		})
	}
}
