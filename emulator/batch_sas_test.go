package emulator

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu/auth"
)

// TestBatchServiceSAS: with a table SAS, each operation needs its own
// permission and must be inside the key range; a refusal is that
// operation's failure (docs/protocol.md 0.1, 7.4). The handler is called with
// the grant the SAS yields, as authorize would set it.
func TestBatchServiceSAS(t *testing.T) {
	s, hs := batchServer(t)
	grant := func(perms, spk, epk string) *auth.Grant {
		q := url.Values{"sv": {"2019-02-02"}, "tn": {"batchtbl"}, "sp": {perms}, "se": {time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05Z")}}
		if spk != "" {
			q.Set("spk", spk)
			q.Set("epk", epk)
		}
		sts := strings.Join([]string{perms, "", q.Get("se"), "/table/devstoreaccount1/batchtbl", "", "", "", "2019-02-02", spk, "", epk, ""}, "\n")
		key, _ := base64.StdEncoding.DecodeString(DevKey)
		m := hmac.New(sha256.New, key)
		io.WriteString(m, sts)
		q.Set("sig", base64.StdEncoding.EncodeToString(m.Sum(nil)))
		g, err := auth.Authenticate(&auth.Request{Method: "POST", Header: http.Header{}, Query: q}, &auth.Account{Name: DevAccount, Keys: [][]byte{key}}, auth.VerifyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	var lastBody string
	run := func(g *auth.Grant, body string) outcome {
		body = strings.ReplaceAll(body, "HOST", strings.TrimPrefix(hs.URL, "http://"))
		req := httptest.NewRequest("POST", hs.URL+"/devstoreaccount1/$batch", strings.NewReader(body))
		req.Header.Set("Content-Type", batchCT)
		res, aerr := s.parseResource(req.Host, req.RequestURI)
		if aerr != nil {
			t.Fatal(aerr)
		}
		rec := httptest.NewRecorder()
		c := &call{s: s, w: rec, r: req, reqID: "00000000-0000-0000-0000-000000000000", res: res, verb: "POST", op: auth.Batch, grant: g}
		if err := s.batch(c); err != nil {
			t.Fatal(err)
		}
		lastBody = rec.Body.String()
		return outcomeOf(&sent{rec.Result(), lastBody})
	}
	// Add only: inserts pass, a delete is refused at its index.
	if o := run(grant("a", "", ""), changeset(insertOp("k", "1"), insertOp("k", "2"))); o.errorCode != "" {
		t.Fatalf("%+v", o)
	}
	o := run(grant("a", "", ""), changeset(insertOp("k", "3"), "DELETE http://HOST/devstoreaccount1/batchtbl(PartitionKey='k',RowKey='1') HTTP/1.1\nIf-Match: *\n\n"))
	if o.code != "AuthorizationPermissionMismatch" || o.index != 1 || o.parts[0] != 403 {
		t.Fatalf("%+v", o)
	}
	// Upserts need add and update.
	o = run(grant("a", "", ""), changeset("PUT http://HOST/devstoreaccount1/batchtbl(PartitionKey='k',RowKey='9') HTTP/1.1\n\n{}"))
	if o.code != "AuthorizationPermissionMismatch" || o.index != 0 {
		t.Fatalf("%+v", o)
	}
	// Another table than the SAS's.
	o = run(grant("raud", "", ""), changeset("POST http://HOST/devstoreaccount1/other HTTP/1.1\n\n{\"PartitionKey\":\"k\",\"RowKey\":\"x\"}"))
	if o.code != "AuthorizationFailure" || o.index != 0 {
		t.Fatalf("%+v", o)
	}
	// Outside the key range [a, j].
	o = run(grant("raud", "a", "j"), changeset(insertOp("z", "1")))
	if o.code != "AuthorizationFailure" || o.index != 0 || o.parts[0] != 403 {
		t.Fatalf("%+v", o)
	}
	if o := run(grant("raud", "a", "j"), changeset(insertOp("b", "1"), insertOp("b", "2"))); o.errorCode != "" {
		t.Fatalf("%+v", o)
	}
	if st := entityStatus(t, hs, "batchtbl", "k", "3"); st != 404 {
		t.Fatalf("a refused batch wrote an entity: %d", st)
	}
	// A point read outside the range finds nothing, although (k, 1)
	// exists: 404 ResourceNotFound, as live answers a single Get Entity
	// (docs/protocol.md 0.1); its part carries the level it asked for.
	get := func(pk, rk string) string {
		return crlf("--batch_t\nContent-Type: application/http\n\nGET http://HOST/devstoreaccount1/batchtbl(PartitionKey='" + pk +
			"',RowKey='" + rk + "') HTTP/1.1\nAccept: application/json;odata=nometadata\n\n--batch_t--\n")
	}
	if o := run(grant("r", "a", "j"), get("k", "1")); o.code != "ResourceNotFound" || len(o.parts) != 1 || o.parts[0] != 404 {
		t.Fatalf("%+v\n%s", o, lastBody)
	}
	if !strings.Contains(lastBody, "Content-Type: application/json;odata=nometadata;") {
		t.Fatalf("the failed part does not carry the level it asked for:\n%s", lastBody)
	}
	if o := run(grant("r", "a", "z"), get("k", "1")); o.errorCode != "" || len(o.parts) != 1 || o.parts[0] != 200 {
		t.Fatalf("%+v\n%s", o, lastBody)
	}
	// A refusal by permission, found before the operation's level is
	// used, carries that level too.
	if o := run(grant("a", "", ""), get("k", "1")); o.code != "AuthorizationPermissionMismatch" {
		t.Fatalf("%+v\n%s", o, lastBody)
	}
	if !strings.Contains(lastBody, "Content-Type: application/json;odata=nometadata;") {
		t.Fatalf("the refused part does not carry the level it asked for:\n%s", lastBody)
	}
}
