package emulator

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
)

// FuzzBatch: no body makes $batch panic or answer 500, and a batch that
// fails leaves the tables exactly as they were — nothing of it is committed
// (docs/protocol.md 7.2: all or nothing). A batch that succeeds answers a 2xx
// part for every operation.
func FuzzBatch(f *testing.F) { fuzzBatch(f, "") }

// FuzzBatchCosmos is FuzzBatch under --profile cosmos, whose answers are
// written apart (batchcosmos.go).
func FuzzBatchCosmos(f *testing.F) { fuzzBatch(f, ProfileCosmos) }

func fuzzBatch(f *testing.F, profile string) {
	const host = "127.0.0.1:1"
	for _, g := range goldens {
		body := strings.ReplaceAll(g.request, "HOST", host)
		if !g.lf {
			body = crlf(body)
		}
		f.Add(g.contentType, []byte(body))
	}
	for _, body := range []string{
		changeset(insertOp("p", "1"), insertOp("p", "2"), "DELETE http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='1') HTTP/1.1\nIf-Match: *\n\n"),
		changeset(insertOp("p", "3"), insertOp("q", "4")),
		changeset("PUT http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='5') HTTP/1.1\n\n{\"A\":1}", "MERGE http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='5') HTTP/1.1\nIf-Match: *\n\n{\"B\":2}"),
		changeset("POST http://HOST/devstoreaccount1/other HTTP/1.1\n\n{\"PartitionKey\":\"p\",\"RowKey\":\"6\"}", insertOp("p", "7")),
		"--batch_t\r\nContent-Type: application/http\r\n\r\nGET http://HOST/devstoreaccount1/batchtbl(PartitionKey='p',RowKey='2') HTTP/1.1\r\n\r\n--batch_t--",
	} {
		f.Add(batchCT, []byte(strings.ReplaceAll(body, "HOST", host)))
	}

	s, err := New(Config{InMemory: true, Silent: true, Profile: profile})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	do := func(req *http.Request, target string) *httptest.ResponseRecorder {
		req.Host, req.RequestURI = host, target
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		return rec
	}
	tables := []string{"batchtbl", "other"}
	reset := func(t testing.TB) {
		for _, name := range tables {
			do(signedTB(t, "DELETE", "http://"+host, "/devstoreaccount1/Tables('"+name+"')", ""), "/devstoreaccount1/Tables('"+name+"')")
			if rec := do(signedTB(t, "POST", "http://"+host, "/devstoreaccount1/Tables", `{"TableName":"`+name+`"}`), "/devstoreaccount1/Tables"); rec.Code != 201 {
				t.Fatalf("create %s: %d", name, rec.Code)
			}
		}
	}
	// snapshot lists every entity of the tables with its ETag.
	snapshot := func(t testing.TB) (string, int) {
		var rows []string
		for _, name := range tables {
			rec := do(signedTB(t, "GET", "http://"+host, "/devstoreaccount1/"+name+"()", ""), "/devstoreaccount1/"+name+"()")
			var page struct {
				Value []map[string]any `json:"value"`
			}
			if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &page) != nil {
				t.Fatalf("query %s: %d %s", name, rec.Code, rec.Body)
			}
			if rec.Header().Get("x-ms-continuation-NextPartitionKey") != "" {
				t.Fatalf("more than a page in %s", name)
			}
			for _, e := range page.Value {
				b, _ := json.Marshal(e)
				rows = append(rows, name+" "+string(b))
			}
		}
		sort.Strings(rows)
		return strings.Join(rows, "\n"), len(rows)
	}
	reset(f)

	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		before, n := snapshot(t)
		if n > 800 {
			reset(t)
			before, _ = snapshot(t)
		}
		req := signedTB(t, "POST", "http://"+host, "/devstoreaccount1/$batch", string(body))
		req.Header.Set("Content-Type", contentType)
		rec := do(req, "/devstoreaccount1/$batch")
		if rec.Code >= 500 {
			t.Fatalf("%d: %s", rec.Code, rec.Body)
		}
		out := rec.Body.String()
		failed := rec.Code != http.StatusAccepted || rec.Header().Get("x-ms-error-code") != ""
		if failed {
			if after, _ := snapshot(t); after != before {
				t.Fatalf("a failed batch (%d %s) changed the tables:\nbefore:\n%s\nafter:\n%s", rec.Code, rec.Header().Get("x-ms-error-code"), before, after)
			}
			return
		}
		statuses := partStatus.FindAllStringSubmatch(out, -1)
		if len(statuses) == 0 || strings.Contains(out, `"odata.error"`) {
			t.Fatalf("a successful batch without operations, or with an error part:\n%s", out)
		}
		for _, m := range statuses {
			if m[1][0] != '2' {
				t.Fatalf("a successful batch has a %s part:\n%s", m[1], out)
			}
		}
	})
}
