package emulator

import (
	"net/url"
	"testing"
)

// TestParserErrorsUncached: the errors of the service's request parser, 400
// InvalidInput and PropertyNameInvalid and 404 TableNotFound, come without Cache-Control, and
// every other JSON error of the Table service with it; both with
// X-Content-Type-Options and x-ms-version (errors.go parserError,
// docs/protocol.md 8.1; the live answers are the Python and .NET SDK
// recordings named there, replayed by conformance/replay_test.go).
func TestParserErrorsUncached(t *testing.T) {
	_, hs := batchServer(t)
	send(t, signedTB(t, "POST", hs.URL, "/devstoreaccount1/batchtbl", `{"PartitionKey":"p","RowKey":"r"}`))
	cases := []struct {
		name, method, target, body string
		status                     int
		code                       string
		cached                     bool
	}{
		// InvalidInput, as recorded live without Cache-Control.
		{"Int32 out of range", "POST", "/devstoreaccount1/batchtbl", `{"PartitionKey":"p","RowKey":"a","v@odata.type":"Edm.Int32","v":2147483648}`, 400, "InvalidInput", false},
		{"RowKey not a string", "POST", "/devstoreaccount1/batchtbl", `{"PartitionKey":"p","RowKey":1}`, 400, "InvalidInput", false},
		{"typed key on insert", "POST", "/devstoreaccount1/batchtbl", `{"PartitionKey":"p","RowKey@odata.type":"Edm.Guid","RowKey":"4738422c-15e7-4170-9eb6-fb5b284e11ac"}`, 400, "InvalidInput", false},
		{"filter syntax", "GET", "/devstoreaccount1/batchtbl()?$filter=" + url.QueryEscape("aaa bbb ccc"), "", 400, "InvalidInput", false},
		{"one key under a table", "DELETE", "/devstoreaccount1/batchtbl/Tables('batchtbl')", "", 400, "InvalidInput", false},
		// PropertyNameInvalid, as recorded live without Cache-Control.
		{"property named 123", "POST", "/devstoreaccount1/batchtbl", `{"PartitionKey":"p","RowKey":"n","123":456}`, 400, "PropertyNameInvalid", false},
		{"property named 123 on merge", "MERGE", "/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='r')", `{"123":456}`, 400, "PropertyNameInvalid", false},
		// TableNotFound, as recorded live without Cache-Control.
		{"delete in a missing table", "DELETE", "/devstoreaccount1/missing(PartitionKey='p',RowKey='r')", "", 404, "TableNotFound", false},
		{"create table under a missing table", "POST", "/devstoreaccount1/missing/Tables", `{"PartitionKey":"p","RowKey":"r"}`, 404, "TableNotFound", false},
		{"query a missing table", "GET", "/devstoreaccount1/missing()", "", 404, "TableNotFound", false},
		// The rest of the Table service's errors, as recorded with it.
		{"missing entity", "GET", "/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='none')", "", 404, "ResourceNotFound", true},
		{"missing table", "DELETE", "/devstoreaccount1/Tables('missing')", "", 404, "ResourceNotFound", true},
		{"entity exists", "POST", "/devstoreaccount1/batchtbl", `{"PartitionKey":"p","RowKey":"r"}`, 409, "EntityAlreadyExists", true},
		{"table exists", "POST", "/devstoreaccount1/Tables", `{"TableName":"batchtbl"}`, 409, "TableAlreadyExists", true},
		{"no keys", "POST", "/devstoreaccount1/batchtbl", `{"v":1}`, 400, "PropertiesNeedValue", true},
		{"table name", "POST", "/devstoreaccount1/Tables", `{"TableName":"a-b"}`, 400, "InvalidResourceName", true},
		{"query under a table", "GET", "/devstoreaccount1/batchtbl/Tables", "", 501, "NotImplemented", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := signedTB(t, tc.method, hs.URL, tc.target, tc.body)
			if tc.method == "DELETE" {
				req.Header.Set("If-Match", "*")
			}
			r := send(t, req)
			if r.StatusCode != tc.status || r.Header.Get("x-ms-error-code") != tc.code {
				t.Fatalf("%d %s, want %d %s: %s", r.StatusCode, r.Header.Get("x-ms-error-code"), tc.status, tc.code, r.body)
			}
			if _, has := r.Header["Cache-Control"]; has != tc.cached {
				t.Errorf("Cache-Control %q, want it present: %v", r.Header.Get("Cache-Control"), tc.cached)
			}
			if r.Header.Get("X-Content-Type-Options") != "nosniff" || r.Header.Get("x-ms-version") != "2019-02-02" {
				t.Errorf("X-Content-Type-Options %q, x-ms-version %q", r.Header.Get("X-Content-Type-Options"), r.Header.Get("x-ms-version"))
			}
		})
	}
}
