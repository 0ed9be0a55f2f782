package emulator

import (
	"regexp"
	"testing"
)

// TestBatchSharesOneTimestamp: the entities one change set writes come
// back with one ETag, as live answers (docs/protocol.md 7.3), while two
// single inserts get two; a later write of one of them gets a new one.
func TestBatchSharesOneTimestamp(t *testing.T) {
	_, hs := batchServer(t)
	etag := regexp.MustCompile(`(?m)^ETag: (.*)\r$`)
	r := postBatch(t, hs, batchCT, changeset(insertOp("p", "a"), insertOp("p", "b"), insertOp("p", "c")))
	tags := etag.FindAllStringSubmatch(r.body, -1)
	if r.StatusCode != 202 || len(tags) != 3 {
		t.Fatalf("batch: %d, %d ETags: %s", r.StatusCode, len(tags), r.body)
	}
	if tags[0][1] != tags[1][1] || tags[1][1] != tags[2][1] {
		t.Errorf("one change set, ETags %s, %s, %s; want one", tags[0][1], tags[1][1], tags[2][1])
	}
	one := send(t, signedTB(t, "POST", hs.URL, "/devstoreaccount1/batchtbl", `{"PartitionKey":"p","RowKey":"d"}`))
	two := send(t, signedTB(t, "POST", hs.URL, "/devstoreaccount1/batchtbl", `{"PartitionKey":"p","RowKey":"e"}`))
	if one.StatusCode != 201 || two.StatusCode != 201 {
		t.Fatalf("inserts: %d, %d", one.StatusCode, two.StatusCode)
	}
	if a, b := one.Header.Get("ETag"), two.Header.Get("ETag"); a == b || a == tags[0][1] {
		t.Errorf("single inserts: ETags %s, %s after the batch's %s; want each its own", a, b, tags[0][1])
	}
}
