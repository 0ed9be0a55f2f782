package emulator

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// Tests of $batch under --profile cosmos (batchcosmos.go, docs/cosmos.md):
// the parts as Azure Cosmos DB for Table writes them, byte for byte, for a
// change set of every kind of operation and for each kind of failure; the
// 400 for an empty change set; the 2 MiB limit. Table storage's answers
// are batch_test.go's and batch_golden_test.go's, unchanged.

// cosmosBatchServer is batchServer under the cosmos profile.
func cosmosBatchServer(t testing.TB) *httptest.Server {
	_, hs := batchServerWith(t, Config{InMemory: true, Silent: true, Profile: ProfileCosmos})
	return hs
}

var (
	cosmosRequestID = regexp.MustCompile(`(RequestID:|ActivityId: )[0-9a-f-]{36}`)
	// cosmosHint is tableemu's hint inside a JSON message: "\ntableemu: …"
	// up to the next escaped line break or the string's end.
	cosmosHint = regexp.MustCompile(`\\ntableemu: (?:[^"\\]|\\[^n])*`)
	// cosmosEntity is the body of an entity part, checked on its own:
	// its form is the entity encoder's (docs/cosmos.md).
	cosmosEntity = regexp.MustCompile(`\{"odata\.metadata"[^\r\n]*\}`)
)

// cosmosNormalize is normalize for a Cosmos DB answer: its RequestID and
// ActivityId lines, tableemu's hints and an entity body replaced too.
func cosmosNormalize(t *testing.T, s string) string {
	t.Helper()
	s = cosmosRequestID.ReplaceAllString(s, "${1}ID")
	s = cosmosHint.ReplaceAllString(s, "")
	s = cosmosEntity.ReplaceAllString(s, "{ENTITY}")
	return normalize(t, s)
}

const cosmosPartHead = "--changesetresponse_C\nContent-Type: application/http\nContent-Transfer-Encoding: binary\n\n"

// TestCosmosBatchParts: a change set of every kind of operation answers
// each with Cosmos DB's headers and no others, and Content-ID its 1-based
// position, whatever the request's (.NET BatchInsertAndMergeAndDelete,
// Python test_encoder_batch and test_batch_insert_merge; batchcosmos.go).
func TestCosmosBatchParts(t *testing.T) {
	hs := cosmosBatchServer(t)
	if r := postBatch(t, hs, "multipart/mixed; boundary=batch_s", setupInserts("batchtbl", "m1", "r1", "d1")); r.StatusCode != 202 || r.Header.Get("x-ms-error-code") != "" {
		t.Fatalf("setup: %d %s", r.StatusCode, r.body)
	}
	entity := "http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='%s') HTTP/1.1\n"
	body := changeset(
		"POST "+fmt.Sprintf(entity, "m1")+"If-Match: *\nX-HTTP-Method: MERGE\n\n{\"M\":\"x\"}",
		"DELETE "+fmt.Sprintf(entity, "d1")+"If-Match: *\n",
		"PUT "+fmt.Sprintf(entity, "u1")+"\n{\"U\":1}",
		"MERGE "+fmt.Sprintf(entity, "u2")+"\n{\"U\":2}",
		"PUT "+fmt.Sprintf(entity, "r1")+"If-Match: *\n\n{\"R\":1}",
		insertOp("p", "a1"),
		"POST http://HOST/devstoreaccount1/batchtbl HTTP/1.1\nAccept: application/json;odata=minimalmetadata\n\n{\"PartitionKey\":\"p\",\"RowKey\":\"a2\",\"V\":2}",
	)
	// The Python SDK's Content-ID among the MIME part's headers, 0 and
	// up: answered 1 and up all the same.
	body = strings.Replace(body, "Content-Transfer-Encoding: binary\r\n\r\nPOST", "Content-Transfer-Encoding: binary\r\nContent-ID: 0\r\n\r\nPOST", 1)
	r := postBatch(t, hs, batchCT, body)
	if r.StatusCode != 202 || r.Header.Get("x-ms-error-code") != "" {
		t.Fatalf("%d %q\n%s", r.StatusCode, r.Header.Get("x-ms-error-code"), r.body)
	}
	for _, h := range []string{"Cache-Control", "X-Content-Type-Options", "x-ms-request-id", "x-ms-version"} {
		if v := r.Header.Get(h); v != "" {
			t.Errorf("%s: %q on the 202, want none", h, v)
		}
	}
	etag := "ETag: W/\"datetime'TS'\"\n"
	want := "--batchresponse_B\nContent-Type: multipart/mixed; boundary=changesetresponse_C\n\n" +
		cosmosPartHead + "HTTP/1.1 204 No Content\n" + etag + "Content-ID: 1\n\n\n" +
		cosmosPartHead + "HTTP/1.1 204 No Content\nContent-ID: 2\n\n\n" +
		cosmosPartHead + "HTTP/1.1 204 No Content\n" + etag + "Content-Type: application/json\nContent-ID: 3\n\n\n" +
		cosmosPartHead + "HTTP/1.1 204 No Content\n" + etag + "Content-Type: application/json\nContent-ID: 4\n\n\n" +
		cosmosPartHead + "HTTP/1.1 204 No Content\n" + etag + "Content-ID: 5\n\n\n" +
		cosmosPartHead + "HTTP/1.1 204 No Content\n" + etag + "Preference-Applied: return-no-content\n" +
		"Location: http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='a1')\nContent-ID: 6\n\n\n" +
		cosmosPartHead + "HTTP/1.1 201 Created\n" + etag + "Content-Type: application/json;odata=minimalmetadata\n" +
		"Location: http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='a2')\nContent-ID: 7\n\n{ENTITY}\n" +
		"--changesetresponse_C--\n--batchresponse_B--\n"
	if got := cosmosNormalize(t, r.body); got != want {
		t.Errorf("response differs:\n--- got\n%s\n--- want\n%s", got, want)
	}
	var e map[string]any
	if err := json.Unmarshal([]byte(cosmosEntity.FindString(r.body)), &e); err != nil || e["RowKey"] != "a2" || e["V"] != 2.0 {
		t.Errorf("the 201 part's entity: %v %v", e, err)
	}
	for rk, want := range map[string]int{"m1": 200, "d1": 404, "u1": 200, "u2": 200, "r1": 200, "a1": 200, "a2": 200} {
		if st := entityStatus(t, hs, "batchtbl", "p", rk); st != want {
			t.Errorf("after the batch, %s: %d, want %d", rk, st, want)
		}
	}

	// A lone query (not in the evidence): 200, ETag, its Content-Type,
	// Content-ID 1.
	q := "--batch_q\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
		"GET http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='a2') HTTP/1.1\r\nAccept: application/json;odata=nometadata\r\n\r\n--batch_q--\r\n"
	r = postBatch(t, hs, "multipart/mixed; boundary=batch_q", q)
	if got, want := cosmosNormalize(t, r.body), "--batchresponse_B\nContent-Type: application/http\nContent-Transfer-Encoding: binary\n\n"+
		"HTTP/1.1 200 OK\n"+etag+"Content-Type: application/json;odata=nometadata\nContent-ID: 1\n\n"; r.StatusCode != 202 || !strings.HasPrefix(got, want) {
		t.Errorf("lone query: %d\n--- got\n%s\n--- want prefix\n%s", r.StatusCode, got, want)
	}
}

// TestCosmosBatchFailures: each kind of failure answers 202 with only the
// failed operation's part, as Cosmos DB writes it: the Cosmos DB code,
// full-metadata JSON whatever was asked, no Content-ID, lang en-us, the
// message "<index>:…\n\nRequestID:<id>\n" — the index even alone — but
// for a missing table none (python-cosmos test_new_non_existent_table,
// test_new_delete_nonexistent_entity, test_batch_update_if_doesnt_match;
// .NET BatchError for an index past 0). x-ms-error-code on the 202 names
// the part's code.
func TestCosmosBatchFailures(t *testing.T) {
	hs := cosmosBatchServer(t)
	if r := postBatch(t, hs, batchCT, changeset(insertOp("p", "existing"))); r.StatusCode != 202 || r.Header.Get("x-ms-error-code") != "" {
		t.Fatalf("setup: %d %s", r.StatusCode, r.body)
	}
	part := func(status, code, message string) string {
		return "--batchresponse_B\nContent-Type: multipart/mixed; boundary=changesetresponse_C\n\n" + cosmosPartHead +
			"HTTP/1.1 " + status + "\nContent-Type: application/json;odata=fullmetadata\n\n" +
			`{"odata.error":{"code":"` + code + `","message":{"lang":"en-us","value":"` + message + `RequestID:ID\n"}}}` +
			"\n--changesetresponse_C--\n--batchresponse_B--\n"
	}
	tooMany := make([]string, 101)
	for i := range tooMany {
		tooMany[i] = insertOp("p", fmt.Sprint("many", i))
	}
	for _, c := range []struct {
		name string
		body string
		want string
	}{
		{"missing table", changeset(strings.Replace(insertOp("p", "x"), "batchtbl", "nosuchtable", 1)),
			part("404 Not Found", "ResourceNotFound", `The specified resource does not exist.\n`)},
		{"entity missing, alone", changeset("DELETE http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='nope') HTTP/1.1\nIf-Match: *\n"),
			part("404 Not Found", "ResourceNotFound", `0:The specified resource does not exist.\n\n`)},
		{"If-Match differs", changeset("MERGE http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='existing') HTTP/1.1\n" +
			"If-Match: W/\"datetime'2012-06-15T22%3A51%3A44.9662825Z'\"\n\n{\"A\":1}"),
			part("412 Precondition Failed", "UpdateConditionNotSatisfied", `0:The update condition specified in the request was not satisfied.\n\n`)},
		{"conflict at index 3", changeset(insertOp("p", "c1"), insertOp("p", "c2"), insertOp("p", "c3"), insertOp("p", "existing")),
			part("409 Conflict", "EntityAlreadyExists", `3:The specified entity already exists.\n\n`)},
		{"a value refused", changeset(insertOp("p", "v1"), "POST http://HOST/devstoreaccount1/batchtbl HTTP/1.1\n\n{\"PartitionKey\":\"p\",\"RowKey\":\"v2\",\"N@odata.type\":\"Edm.Int32\",\"N\":\"x\"}"),
			part("400 Bad Request", "InvalidInput", `1:One of the input values is invalid.\n\n`)},
		{"two partitions", changeset(insertOp("p", "t1"), insertOp("q", "t2")),
			part("400 Bad Request", "CommandsInBatchActOnDifferentPartitions", `1:All commands in a batch must operate on same entity group.\n\n`)},
		{"one entity twice", changeset(insertOp("p", "d1"), insertOp("p", "d1")),
			part("400 Bad Request", "InvalidDuplicateRow", `1:The batch request contains multiple changes with same row key. An entity can appear only once in a batch request.\n\n`)},
		{"101 operations", changeset(tooMany...),
			part("400 Bad Request", "InvalidInput", `99:One of the input values is invalid.\n\n`)},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := postBatch(t, hs, batchCT, c.body)
			code := regexp.MustCompile(`"code":"(\w+)"`).FindStringSubmatch(c.want)[1]
			if r.StatusCode != 202 || r.Header.Get("x-ms-error-code") != code {
				t.Fatalf("%d %q, want 202 %q\n%s", r.StatusCode, r.Header.Get("x-ms-error-code"), code, r.body)
			}
			if got := cosmosNormalize(t, r.body); got != c.want {
				t.Errorf("response differs:\n--- got\n%s\n--- want\n%s", got, c.want)
			}
		})
	}
	if st := entityStatus(t, hs, "batchtbl", "p", "c1"); st != 404 {
		t.Errorf("a failed change set wrote its first entity: %d", st)
	}
	// The hint says what Cosmos DB's sentence does not.
	r := postBatch(t, hs, batchCT, changeset(tooMany...))
	if !strings.Contains(r.body, `\ntableemu: a change set holds at most 100 operations`) {
		t.Errorf("101 operations: no hint\n%s", r.body)
	}
}

// TestCosmosBatchMalformed: Cosmos DB refuses a change set with no
// operation outright, 400 InvalidInput "The batch request body is
// malformed. …" with its ActivityId line, full-metadata JSON
// (python-cosmos test_empty_batch), where Table storage answers 202
// (TestBatchEmptyChangeset); a body tableemu cannot read gets the same
// (not in the evidence), what is wrong in the hint.
func TestCosmosBatchMalformed(t *testing.T) {
	hs := cosmosBatchServer(t)
	for name, c := range map[string]struct{ contentType, body, hint string }{
		"python empty change set": {batchCT, "--batch_t\r\nContent-Type: multipart/mixed; boundary=changeset_t\r\n\r\n--changeset_t\r\n\r\n--changeset_t--\r\n\r\n--batch_t--\r\n", "the change set holds no operations"},
		"no part":                 {batchCT, "--batch_t\r\nContent-Type: multipart/mixed; boundary=changeset_t\r\n\r\n--changeset_t--\r\n--batch_t--\r\n", "the change set holds no operations"},
		"no boundary line":        {batchCT, "hello", "the batch request body is malformed"},
		"not multipart":           {"application/json", "{}", "multipart/mixed"},
	} {
		t.Run(name, func(t *testing.T) {
			r := postBatch(t, hs, c.contentType, c.body)
			wantCosmosError(t, name, cosmosReply{r.StatusCode, r.Header, r.body}, 400, "InvalidInput",
				"The batch request body is malformed. Please see https://docs.microsoft.com/en-us/rest/api/storageservices/performing-entity-group-transactions",
				true, "application/json; odata=fullmetadata")
			if r.Header.Get("x-ms-error-code") != "InvalidInput" || !strings.Contains(r.body, `\ntableemu: `) || !strings.Contains(r.body, c.hint) {
				t.Errorf("x-ms-error-code %q, want InvalidInput; want a hint with %q in %s", r.Header.Get("x-ms-error-code"), c.hint, r.body)
			}
		})
	}
}

// TestCosmosBatchTooLarge: "Batches can only have up to 2 MBs" (the Cosmos
// DB for Table FAQ): a body of 2 MiB is served, one byte more is 413
// RequestBodyTooLarge under the profile — and still served without it,
// whose limit is 4 MiB (TestBatchTooLarge).
func TestCosmosBatchTooLarge(t *testing.T) {
	hs := cosmosBatchServer(t)
	_, st := batchServer(t)
	body := func(hs *httptest.Server, prefix string, size int) string {
		host := strings.TrimPrefix(hs.URL, "http://")
		op := func(i, pad int) string {
			return "POST http://" + host + "/devstoreaccount1/batchtbl HTTP/1.1\n\n{\"PartitionKey\":\"" + prefix + "\",\"RowKey\":\"" +
				fmt.Sprintf("%03d", i) + "\",\"A\":\"" + strings.Repeat("a", pad) + "\"}"
		}
		ops := make([]string, 100)
		for i := range ops {
			ops[i] = op(i, 0)
		}
		left := size - len(changeset(ops...))
		for i := range ops {
			ops[i] = op(i, left/100+btoi(i < left%100))
		}
		return changeset(ops...)
	}
	exact := body(hs, "exact", cosmosMaxBatch)
	if len(exact) != cosmosMaxBatch {
		t.Fatalf("test body is %d bytes", len(exact))
	}
	if r := postBatch(t, hs, batchCT, exact); r.StatusCode != 202 || r.Header.Get("x-ms-error-code") != "" {
		t.Fatalf("a batch of exactly 2 MiB: %d %.300s", r.StatusCode, r.body)
	}
	r := postBatch(t, hs, batchCT, body(hs, "over", cosmosMaxBatch+1))
	if r.StatusCode != 413 || r.Header.Get("x-ms-error-code") != "RequestBodyTooLarge" || !strings.Contains(r.body, `"lang":"en-us"`) ||
		!strings.Contains(r.body, "at most 2 MiB (2097152 bytes); this one has 2097153") {
		t.Fatalf("2 MiB + 1: %d %s", r.StatusCode, r.body)
	}
	if r := postBatch(t, st, batchCT, body(st, "over", cosmosMaxBatch+1)); r.StatusCode != 202 || r.Header.Get("x-ms-error-code") != "" {
		t.Fatalf("storage, 2 MiB + 1: %d %.300s", r.StatusCode, r.body)
	}
}
