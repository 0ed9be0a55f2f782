package emulator

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// Tests of how a $batch answer names its operations (docs/protocol.md 7.1, 7.4):
// the "<index>:" prefix of the message, the headers of the failed part, and
// the answer to an empty change set, each as the live service's recordings
// show it (batchfail.go).

// failedMessage is the message of a failed part up to its RequestId line.
var failedMessage = regexp.MustCompile(`"value":"(.*?)\\nRequestId:`)

func messageOf(t *testing.T, r *sent) string {
	t.Helper()
	m := failedMessage.FindStringSubmatch(r.body)
	if m == nil {
		t.Fatalf("no failed part:\n%s", r.body)
	}
	var s string
	if err := json.Unmarshal([]byte(`"`+m[1]+`"`), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestBatchIndexRule: the message of a failed operation starts with its
// index unless the change set holds that one operation alone and it failed
// against the stored entity (409, 404, 412, a property too large) — at every
// x-ms-version, as recorded from 2017-04-17 to 2025-07-05. A failure found
// while reading the change set keeps "0:" even alone (CloudStub's
// transaction tests: TableNotFound, PropertiesNeedValue, OutOfRangeInput;
// Python SDK recording test_new_non_existent_table).
func TestBatchIndexRule(t *testing.T) {
	_, hs := batchServer(t)
	if r := postBatch(t, hs, batchCT, changeset(insertOp("p", "existing"))); r.Header.Get("x-ms-error-code") != "" {
		t.Fatal(r.body)
	}
	entity := func(rk string) string {
		return "http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='" + rk + "')"
	}
	stale := "PUT " + entity("existing") + " HTTP/1.1\nIf-Match: W/\"datetime'2012-06-15T22%3A51%3A44.9662825Z'\"\n\n{}"
	missing := "DELETE " + entity("none") + " HTTP/1.1\nIf-Match: *\n\n"
	big := `POST http://HOST/devstoreaccount1/batchtbl HTTP/1.1` + "\n\n" + `{"PartitionKey":"p","RowKey":"big","S":"` + strings.Repeat("x", 40000) + `"}`
	cases := []struct {
		name    string
		ops     []string
		version string
		want    string
	}{
		// Alone, failed against the stored entity: no index.
		{"stale ETag alone, 2025-07-05", []string{stale}, "2025-07-05", "The update condition specified in the request was not satisfied."},
		{"stale ETag alone, 2019-02-02", []string{stale}, "2019-02-02", "The update condition specified in the request was not satisfied."},
		{"missing entity alone", []string{missing}, "2025-07-05", "The specified resource does not exist."},
		{"existing entity alone", []string{insertOp("p", "existing")}, "2019-02-02", "The specified entity already exists."},
		{"property too large alone", []string{big}, "2019-02-02", "The property value exceeds the maximum allowed size (64KB). If the property value is a string, it is UTF-16 encoded and the maximum number of characters should be 32K or less."},
		// With another operation, even first: the index.
		{"stale ETag first of two", []string{stale, insertOp("p", "x")}, "2019-02-02", "0:The update condition specified in the request was not satisfied."},
		{"missing entity first of two", []string{missing, insertOp("p", "x")}, "2025-07-05", "0:The specified resource does not exist."},
		{"existing entity second of three", []string{insertOp("p", "a"), insertOp("p", "existing"), insertOp("p", "b")}, "2019-02-02", "1:The specified entity already exists."},
		// Found while reading the change set: the index, even alone.
		{"missing table alone", []string{strings.Replace(insertOp("p", "x"), "/batchtbl", "/doesntexist", 1)}, "2025-07-05", "0:The table specified does not exist."},
		{"no RowKey alone", []string{"POST http://HOST/devstoreaccount1/batchtbl HTTP/1.1\n\n{\"PartitionKey\":\"p\"}"}, "2019-02-02", "0:The values are not specified for all properties in the entity."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := strings.ReplaceAll(changeset(tc.ops...), "HOST", strings.TrimPrefix(hs.URL, "http://"))
			req := signedTB(t, "POST", hs.URL, "/devstoreaccount1/$batch", body)
			req.Header.Set("Content-Type", batchCT)
			req.Header.Set("x-ms-version", tc.version)
			r := send(t, req)
			if r.StatusCode != 202 {
				t.Fatalf("%d %s", r.StatusCode, r.body)
			}
			if got := messageOf(t, r); !strings.HasPrefix(got, tc.want) || (len(got) > len(tc.want) && !strings.HasPrefix(got[len(tc.want):], " tableemu: ") && !strings.HasPrefix(got[len(tc.want):], "\ntableemu: ")) {
				t.Fatalf("message %q, want %q (then only a tableemu: hint)", got, tc.want)
			}
		})
	}
}

// TestBatchFailureHeaders: the failed part carries the operation's own
// Cache-Control (and an insert's Preference-Applied) except for a missing
// table; a repeated entity, two entity groups and a 101st operation carry
// them (Go SDK recording TestBatchErrorHandleResponse, Python SDK
// recordings test_batch_same_row_operations_fail and
// test_batch_too_many_ops, Java SDK recording
// submitTransactionWithDifferentPartitionKeys for two entity groups).
func TestBatchFailureHeaders(t *testing.T) {
	_, hs := batchServer(t)
	own := "X-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nPreference-Applied: return-no-content\r\nDataServiceVersion: 3.0;\r\nContent-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n\r\n"
	group := "X-Content-Type-Options: nosniff\r\nDataServiceVersion: 3.0;\r\nContent-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n\r\n"
	for _, tc := range []struct {
		name    string
		ops     []string
		status  string
		headers string
	}{
		{"same entity twice", []string{insertOp("p", "1"), insertOp("p", "2"), insertOp("p", "3"), insertOp("p", "1")}, "400 Bad Request", own},
		{"missing table", []string{strings.Replace(insertOp("p", "x"), "/batchtbl", "/doesntexist", 1)}, "404 Not Found", group},
		{"two entity groups", []string{insertOp("p", "1"), insertOp("q", "2")}, "400 Bad Request", own},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := postBatch(t, hs, batchCT, changeset(tc.ops...))
			if !strings.Contains(r.body, "\r\nHTTP/1.1 "+tc.status+"\r\n"+tc.headers+"{") {
				t.Fatalf("want the part's headers\n%q\ngot:\n%s", tc.headers, r.body)
			}
		})
	}
}

// TestBatchEmptyChangeset: a change set without operations is answered as
// live answers it (Python SDK recording test_empty_batch, x-ms-version
// 2019-02-02): 202, and in the change set response 400 with only
// DataServiceVersion 1.0 and an XML Content-Type, and an OData XML error in
// the default namespace whose message is "An error occurred while
// processing this request." — the blank part the Python SDK sends and a
// change set with no part at all alike.
func TestBatchEmptyChangeset(t *testing.T) {
	_, hs := batchServer(t)
	for name, body := range map[string]string{
		"python":  "--batch_t\r\nContent-Type: multipart/mixed; boundary=changeset_t\r\n\r\n--changeset_t\r\n\r\n--changeset_t--\r\n\r\n--batch_t--\r\n",
		"no part": "--batch_t\r\nContent-Type: multipart/mixed; boundary=changeset_t\r\n\r\n--changeset_t--\r\n--batch_t--\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			r := postBatch(t, hs, batchCT, body)
			if r.StatusCode != 202 || r.Header.Get("x-ms-error-code") != "InvalidInput" {
				t.Fatalf("%d %q\n%s", r.StatusCode, r.Header.Get("x-ms-error-code"), r.body)
			}
			// The message's lines end with LF, inside the part, as live
			// sends them (tableemu's hint line too); every other line
			// with CRLF.
			got := r.body
			for _, n := range normalizers {
				got = n.re.ReplaceAllString(got, n.with)
			}
			lines := regexp.MustCompile(`\ntableemu: [^\n]*`).ReplaceAllString(strings.ReplaceAll(got, "\r\n", ""), "")
			if strings.Contains(strings.ReplaceAll(lines, "\nRequestId:ID\nTime:TS<", ""), "\n") {
				t.Errorf("a line other than the message's does not end with CRLF:\n%q", got)
			}
			got = strings.ReplaceAll(got, "\r\n", "\n")
			head := "--batchresponse_B\nContent-Type: multipart/mixed; boundary=changesetresponse_C\n\n--changesetresponse_C\n" +
				"Content-Type: application/http\nContent-Transfer-Encoding: binary\n\nHTTP/1.1 400 Bad Request\nDataServiceVersion: 1.0;\n" +
				"Content-Type: application/xml;charset=utf-8\n\n" +
				`<?xml version="1.0" encoding="utf-8"?><error xmlns="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata">` +
				`<code>InvalidInput</code><message xml:lang="en-US">An error occurred while processing this request.`
			tail := "RequestId:ID\nTime:TS</message></error>\n--changesetresponse_C--\n--batchresponse_B--\n"
			if !strings.HasPrefix(got, head) || !strings.HasSuffix(got, tail) {
				t.Fatalf("got:\n%s\nwant:\n%s…%s", got, head, tail)
			}
			// Between them only tableemu's hint, after the service's sentence.
			if hint := got[len(head) : len(got)-len(tail)]; hint != "\n" && !strings.Contains(hint, "tableemu: ") {
				t.Fatalf("unexpected text after the service's sentence: %q", hint)
			}
		})
	}
}

// TestBatchContentID: a Content-ID among the operation's request headers is
// echoed in its part, on success and on failure, right after the status
// line (legacy Python SDK recordings, x-ms-version 2017-04-17); one among
// the MIME part's headers, as the Python SDK writes it, is not: live
// answers those parts without one (its recordings at 2019-02-02 and
// 2025-07-05; docs/protocol.md 7.1).
func TestBatchContentID(t *testing.T) {
	_, hs := batchServer(t)
	body := changeset(insertOp("p", "c1"), "Content-ID: 7\nX: y\n\n"+insertOp("p", "c2"))
	body = strings.Replace(body, "Content-Transfer-Encoding: binary\r\n\r\nContent-ID: 7\r\nX: y\r\n\r\n", "Content-Transfer-Encoding: binary\r\nContent-ID: 7\r\n\r\n", 1)
	body = strings.Replace(body, "Prefer: return-no-content", "Content-ID: 3\r\nPrefer: return-no-content", 1)
	r := postBatch(t, hs, batchCT, body)
	if !strings.Contains(r.body, "HTTP/1.1 204 No Content\r\nContent-ID: 3\r\n") || strings.Count(r.body, "Content-ID") != 1 {
		t.Fatalf("want Content-ID 3 echoed and 7 not:\n%s", r.body)
	}
	r = postBatch(t, hs, batchCT, body)
	if !strings.Contains(r.body, "HTTP/1.1 409 Conflict\r\nContent-ID: 3\r\n") {
		t.Fatalf("Content-ID not echoed on the failed part:\n%s", r.body)
	}
}
