package emulator

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSelectEcho: odata.metadata echoes the $select a query or a point read
// was sent, decoded and escaped again, not the names read from it — live
// answers "&$select=age,%20sex" to $select=age,%20sex and "&$select=age,sex"
// to $select=age%2Csex (docs/protocol.md 3.9).
func TestSelectEcho(t *testing.T) {
	_, hs := newTestServer(t)
	if r := send(t, signed(t, "POST", hs.URL, "/devstoreaccount1/Tables", `{"TableName":"echo"}`)); r.StatusCode != 201 {
		t.Fatalf("create table: %d %s", r.StatusCode, r.body)
	}
	if r := send(t, signed(t, "POST", hs.URL, "/devstoreaccount1/echo", `{"PartitionKey":"p","RowKey":"r","age":1,"sex":"f"}`)); r.StatusCode != 201 {
		t.Fatalf("insert: %d %s", r.StatusCode, r.body)
	}
	for _, tt := range []struct{ target, want string }{
		{"/devstoreaccount1/echo()?$select=age,%20sex", "#echo&$select=age,%20sex"},
		{"/devstoreaccount1/echo()?$select=age%2Csex", "#echo&$select=age,sex"},
		{"/devstoreaccount1/echo(PartitionKey='p',RowKey='r')?$select=age,%20sex", "#echo/@Element&$select=age,%20sex"},
	} {
		r := send(t, signed(t, "GET", hs.URL, tt.target, ""))
		var doc struct {
			Metadata string `json:"odata.metadata"`
		}
		if r.StatusCode != 200 || json.Unmarshal([]byte(r.body), &doc) != nil {
			t.Fatalf("%s: %d %s", tt.target, r.StatusCode, r.body)
		}
		if !strings.HasSuffix(doc.Metadata, tt.want) {
			t.Errorf("%s: odata.metadata %q, want …%s", tt.target, doc.Metadata, tt.want)
		}
	}
}
