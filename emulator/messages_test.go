package emulator

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// The service's sentence is the whole first line of an error's message,
// exactly as the live service writes it, at top level, inside a $batch and
// in XML; tableemu's explanation, where it gives one, is the next line,
// "tableemu: …", before the RequestId and Time lines (docs/protocol.md 8.1).
// The sentences marked live are those of the Python SDK's recorded live
// tests (azure-data-tables 12.5.1, x-ms-version 2019-02-02).

// errorLines splits an error message into the service's sentence, the
// hint line (without "tableemu: "; "" when there is none) and checks the
// RequestId and Time lines that end it.
func errorLines(t *testing.T, msg string) (first, hint string) {
	t.Helper()
	lines := strings.Split(msg, "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[len(lines)-2], "RequestId:") || !strings.HasPrefix(lines[len(lines)-1], "Time:") {
		t.Fatalf("message %q does not end with the RequestId and Time lines", msg)
	}
	switch len(lines) {
	case 3:
		return lines[0], ""
	case 4:
		h, ok := strings.CutPrefix(lines[1], "tableemu: ")
		if !ok || h == "" {
			t.Fatalf("message %q: the line after the service's sentence is not tableemu's hint", msg)
		}
		return lines[0], h
	}
	t.Fatalf("message %q has more lines than the sentence, a hint, RequestId and Time", msg)
	return "", ""
}

// jsonErrorMessage is an OData JSON error's code and message value.
func jsonErrorMessage(t *testing.T, body string) (code, msg string) {
	t.Helper()
	var j struct {
		E struct {
			Code    string `json:"code"`
			Message struct {
				Value string `json:"value"`
			} `json:"message"`
		} `json:"odata.error"`
	}
	if err := json.Unmarshal([]byte(body), &j); err != nil {
		t.Fatalf("not an OData JSON error: %v: %s", err, body)
	}
	return j.E.Code, j.E.Message.Value
}

func TestServiceSentenceIsTheFirstLine(t *testing.T) {
	_, hs := batchServer(t)
	const (
		notValid   = "One of the request inputs is not valid."
		processing = "An error occurred while processing this request."
	)
	tests := []struct {
		name, method, target, body string
		status                     int
		code, first                string
		hinted                     bool
	}{
		// live: test_insert_entity_property_name_too_long
		{"property name of 256 characters", "POST", "/devstoreaccount1/batchtbl",
			`{"PartitionKey":"p","RowKey":"r","` + strings.Repeat("a", 256) + `":"badval"}`,
			400, "PropertyNameTooLong", "The property name exceeds the maximum allowed length (255).", false},
		// live: test_insert_entity_too_many_properties (its three
		// sentences on one line are the service's)
		{"253 properties", "POST", "/devstoreaccount1/batchtbl", manyProperties(253),
			400, "TooManyProperties", "The entity contains more properties than allowed. Each entity can include up to 252 properties to store data. Each entity also has 3 system properties.", false},
		// live: test_insert_entity_with_large_int32_value_throws
		{"Int32 above its range", "POST", "/devstoreaccount1/batchtbl",
			`{"PartitionKey":"p","RowKey":"r","large@odata.type":"Edm.Int32","large":2147483648}`,
			400, "InvalidInput", processing, true},
		{"Int32 below its range", "POST", "/devstoreaccount1/batchtbl",
			`{"PartitionKey":"p","RowKey":"r","large@odata.type":"Edm.Int32","large":-2147483649}`,
			400, "InvalidInput", processing, true},
		// live: test_insert_entity_with_large_int64_value_throws
		{"Int64 above its range", "POST", "/devstoreaccount1/batchtbl",
			`{"PartitionKey":"p","RowKey":"r","large@odata.type":"Edm.Int64","large":"9223372036854775808"}`,
			400, "InvalidInput", processing, true},
		{"Int64 below its range", "POST", "/devstoreaccount1/batchtbl",
			`{"PartitionKey":"p","RowKey":"r","large@odata.type":"Edm.Int64","large":"-9223372036854775809"}`,
			400, "InvalidInput", processing, true},
		// live: test_encoder_create_entity_basic
		{"numeric RowKey", "POST", "/devstoreaccount1/batchtbl", `{"PartitionKey":"PK","RowKey":1}`,
			400, "InvalidInput", notValid, true},
		{"boolean RowKey", "POST", "/devstoreaccount1/batchtbl", `{"PartitionKey":"PK","RowKey":true}`,
			400, "InvalidInput", notValid, true},
		{"Double RowKey", "POST", "/devstoreaccount1/batchtbl", `{"PartitionKey":"PK","RowKey@odata.type":"Edm.Double","RowKey":3.14}`,
			400, "InvalidInput", notValid, true},
		// live: test_encoder_create_entity_atypical_values
		{"property named 123", "POST", "/devstoreaccount1/batchtbl", `{"PartitionKey":"PK","RowKey":"RK","123":456}`,
			400, "PropertyNameInvalid", "The property name is invalid.", true},
		// live: test_query_invalid_filter (7 is the end of "bbb")
		{"filter syntax error", "GET", "/devstoreaccount1/batchtbl()?$filter=aaa%20bbb%20ccc", "",
			400, "InvalidInput", "Syntax error at position 7 in 'aaa bbb ccc'.", true},
		// The codes' own sentences where the service's for the case is
		// not known; tableemu's explanation after them.
		{"property twice", "POST", "/devstoreaccount1/batchtbl", `{"PartitionKey":"p","RowKey":"r","x":1,"x":2}`,
			400, "DuplicatePropertiesSpecified", "A property is specified more than one time.", true},
		{"body not JSON", "POST", "/devstoreaccount1/batchtbl", `{"PartitionKey":"p",`,
			400, "InvalidInput", notValid, true},
		{"filter comparing two properties", "GET", "/devstoreaccount1/batchtbl()?$filter=a%20eq%20b", "",
			501, "NotImplemented", "The requested operation is not implemented on the specified resource.", true},
		{"filter with a dangling operator", "GET", "/devstoreaccount1/batchtbl()?$filter=a%20eq", "",
			400, "InvalidInput", "Expression expected at position 4 in 'a eq'.", true},
		{"select syntax error", "GET", "/devstoreaccount1/batchtbl()?$select=a,,b", "",
			400, "InvalidInput", "Syntax error at position 2 in $select 'a,,b'.", true},
		{"timeout not a number", "GET", "/devstoreaccount1/batchtbl()?timeout=x", "",
			400, "InvalidQueryParameterValue", "Value for one of the query parameters specified in the request URI is invalid.", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := send(t, signed(t, tt.method, hs.URL, tt.target, tt.body))
			code, msg := jsonErrorMessage(t, r.body)
			if r.StatusCode != tt.status || code != tt.code || r.Header.Get("x-ms-error-code") != tt.code {
				t.Fatalf("%d %s (header %q), want %d %s: %s", r.StatusCode, code, r.Header.Get("x-ms-error-code"), tt.status, tt.code, r.body)
			}
			first, hint := errorLines(t, msg)
			if first != tt.first {
				t.Errorf("first line %q, want the service's %q", first, tt.first)
			}
			if (hint != "") != tt.hinted {
				t.Errorf("hint %q, want one: %v", hint, tt.hinted)
			}
		})
	}
}

// manyProperties is an entity body with n properties besides its keys.
func manyProperties(n int) string {
	var b strings.Builder
	b.WriteString(`{"PartitionKey":"p","RowKey":"r"`)
	for i := range n {
		fmt.Fprintf(&b, `,"p%d":%d`, i, i)
	}
	return b.String() + "}"
}

// TestServiceSentenceIsTheFirstLineInABatch: the failed operation's message
// is "<index>:<the service's sentence>" on its first line, tableemu's
// explanation on the next; a body that is not a batch is refused at top
// level with InvalidInput's sentence alone on the first line.
func TestServiceSentenceIsTheFirstLineInABatch(t *testing.T) {
	_, hs := batchServer(t)
	op := func(body string) string {
		return "POST http://HOST/devstoreaccount1/batchtbl HTTP/1.1\nContent-Type: application/json\nAccept: application/json;odata=minimalmetadata\n\n" + body
	}
	for _, tt := range []struct {
		name, body, first string
	}{
		{"Int32 above its range", `{"PartitionKey":"p","RowKey":"a","n@odata.type":"Edm.Int32","n":2147483648}`,
			"0:An error occurred while processing this request."},
		{"numeric RowKey", `{"PartitionKey":"p","RowKey":1}`, "0:One of the request inputs is not valid."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := postBatch(t, hs, "multipart/mixed; boundary=batch_t", changeset(op(tt.body)))
			m := regexp.MustCompile(`"value":("(?:[^"\\]|\\.)*")`).FindStringSubmatch(r.body)
			if r.StatusCode != 202 || m == nil {
				t.Fatalf("%d, no failed operation's message:\n%s", r.StatusCode, r.body)
			}
			var msg string
			if err := json.Unmarshal([]byte(m[1]), &msg); err != nil {
				t.Fatal(err)
			}
			first, hint := errorLines(t, msg)
			if first != tt.first || hint == "" {
				t.Errorf("first line %q and hint %q, want %q and a hint", first, hint, tt.first)
			}
		})
	}
	t.Run("not a batch", func(t *testing.T) {
		r := postBatch(t, hs, "multipart/mixed; boundary=batch_t", "no boundary here")
		code, msg := jsonErrorMessage(t, r.body)
		first, hint := errorLines(t, msg)
		if r.StatusCode != 400 || code != "InvalidInput" || first != "One of the request inputs is not valid." || !strings.Contains(hint, "malformed") {
			t.Errorf("%d %s, first line %q, hint %q", r.StatusCode, code, first, hint)
		}
	})
}

// TestServiceSentenceIsTheFirstLineInXML: an OData XML error with a hint
// keeps the service's sentence alone on its first line (live, test_table
// test_create_properties: AuthenticationFailed to Get Service Properties).
func TestServiceSentenceIsTheFirstLineInXML(t *testing.T) {
	_, hs := newTestServer(t)
	req := signed(t, "GET", hs.URL, "/devstoreaccount1/?restype=service&comp=properties", "")
	req.Header.Set("Accept", "application/xml")
	req.Header.Set("Authorization", "SharedKeyLite devstoreaccount1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
	r := send(t, req)
	var x struct {
		Code    string `xml:"code"`
		Message string `xml:"message"`
	}
	if err := xml.Unmarshal([]byte(r.body), &x); err != nil || r.StatusCode != 403 || x.Code != "AuthenticationFailed" {
		t.Fatalf("%d %v: %s", r.StatusCode, err, r.body)
	}
	first, hint := errorLines(t, x.Message)
	if first != "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature." || hint == "" {
		t.Errorf("first line %q, hint %q", first, hint)
	}
}
