package emulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
)

// testCosmosEntityForm is TestCosmosProfileAnswers' part on the form of
// entities and of queries of entities (docs/cosmos.md): under --profile
// cosmos, Timestamp last, full metadata's annotations in Cosmos DB's order,
// odata.metadata of one entity naming the table in its path and no
// $select, DateTime with seven digits, odata.metadata after value, and the
// properties of an update, merge or upsert as sent; under the default
// profile, Table storage's form.
func testCosmosEntityForm(t *testing.T) {
	for _, profile := range []string{ProfileCosmos, ""} {
		cosmos := profile == ProfileCosmos
		t.Run(map[bool]string{true: "cosmos", false: "storage"}[cosmos], func(t *testing.T) {
			hs := newProfileServer(t, profile)
			base := hs.URL + "/" + DevAccount
			// pick is the Cosmos DB answer or the storage one.
			pick := func(c, s string) string {
				if cosmos {
					return c
				}
				return s
			}
			do := func(method, target, body string, hdr map[string]string, status int) cosmosReply {
				t.Helper()
				r := cosmosDo(t, hs, method, target, body, hdr)
				if r.status != status {
					t.Fatalf("%s %s: %d %s, want %d", method, target, r.status, r.body, status)
				}
				return r
			}
			wantOrder := func(where string, r cosmosReply, want string) {
				t.Helper()
				if got := memberOrder(t, r.body); got != want {
					t.Errorf("%s: members %s\nwant %s\n%s", where, got, want, r.body)
				}
			}
			wantMember := func(where string, r cosmosReply, name, want string) {
				t.Helper()
				var m map[string]any
				if err := json.Unmarshal([]byte(r.body), &m); err != nil || fmt.Sprint(m[name]) != want {
					t.Errorf("%s: %s = %v, want %s (%v)", where, name, m[name], want, err)
				}
			}
			do("POST", "/Tables", `{"TableName":"form1"}`, nil, 201)
			entity := "/form1(PartitionKey='p',RowKey='r')"

			// The insert echo and a read: the properties in the order
			// sent; Timestamp after RowKey, or last.
			r := do("POST", "/form1", `{"PartitionKey":"p","RowKey":"r","b":1,"a@odata.type":"Edm.DateTime","a":"2020-01-01T01:02:00Z"}`, nil, 201)
			wantOrder("insert echo", r, pick(
				"odata.metadata,odata.etag,PartitionKey,RowKey,b,a@odata.type,a,Timestamp",
				"odata.metadata,odata.etag,PartitionKey,RowKey,Timestamp,b,a@odata.type,a"))
			wantMember("insert echo", r, "odata.metadata", pick(base+"/form1/$metadata#form1/@Element", base+"/$metadata#form1/@Element"))
			wantMember("insert echo", r, "a", pick("2020-01-01T01:02:00.0000000Z", "2020-01-01T01:02:00Z"))

			r = do("GET", entity+"?$format=application%2Fjson%3Bodata%3Dfullmetadata", "", nil, 200)
			wantOrder("full metadata", r, pick(
				"odata.type,odata.id,odata.editLink,odata.metadata,odata.etag,PartitionKey,RowKey,b,a@odata.type,a,Timestamp@odata.type,Timestamp",
				"odata.metadata,odata.type,odata.id,odata.etag,odata.editLink,PartitionKey,RowKey,Timestamp@odata.type,Timestamp,b,a@odata.type,a"))
			wantMember("full metadata", r, "odata.metadata", pick(base+"/form1/$metadata#form1/@Element", base+"/$metadata#form1/@Element"))

			r = do("GET", entity+"?$format=application%2Fjson%3Bodata%3Dnometadata", "", nil, 200)
			wantOrder("no metadata", r, pick("PartitionKey,RowKey,b,a,Timestamp", "PartitionKey,RowKey,Timestamp,b,a"))

			r = do("GET", entity+"?$select=b,a", "", nil, 200)
			wantOrder("$select", r, "odata.metadata,odata.etag,b,a@odata.type,a")
			wantMember("$select", r, "odata.metadata", pick(base+"/form1/$metadata#form1/@Element", base+"/$metadata#form1/@Element&$select=b,a"))

			// A merge into the entity: the stored properties where they
			// were, the new one after them (Cosmos DB), or all sorted.
			do("MERGE", entity, `{"z":"new","b":2}`, map[string]string{"If-Match": "*"}, 204)
			r = do("GET", entity, "", nil, 200)
			wantOrder("after a merge", r, pick(
				"odata.metadata,odata.etag,PartitionKey,RowKey,b,a@odata.type,a,z,Timestamp",
				"odata.metadata,odata.etag,PartitionKey,RowKey,Timestamp,a@odata.type,a,b,z"))

			// An update, and an upsert as an insert: the order sent.
			do("PUT", entity, `{"y":1,"x":2}`, map[string]string{"If-Match": "*"}, 204)
			do("PUT", "/form1(PartitionKey='p',RowKey='s')", `{"y":1,"x":2}`, nil, 204)
			for _, rk := range []string{"r", "s"} {
				r = do("GET", "/form1(PartitionKey='p',RowKey='"+rk+"')", "", nil, 200)
				wantOrder("after a PUT to "+rk, r, pick(
					"odata.metadata,odata.etag,PartitionKey,RowKey,y,x,Timestamp",
					"odata.metadata,odata.etag,PartitionKey,RowKey,Timestamp,x,y"))
			}

			// A batch merge into an existing entity, as a single one.
			target := "http://" + strings.TrimPrefix(hs.URL, "http://") + "/" + DevAccount + "/form1(PartitionKey='p',RowKey='s')"
			req := signed(t, "POST", hs.URL, "/"+DevAccount+"/$batch", rawChangeset(
				"MERGE "+target+" HTTP/1.1\nContent-Type: application/json\nIf-Match: *\n\n{\"w\":1,\"y\":3}"))
			req.Header.Set("Content-Type", batchCT)
			resp, err := hs.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 202 {
				t.Fatalf("batch: %d", resp.StatusCode)
			}
			r = do("GET", "/form1(PartitionKey='p',RowKey='s')", "", nil, 200)
			wantOrder("after a batch merge", r, pick(
				"odata.metadata,odata.etag,PartitionKey,RowKey,y,x,w,Timestamp",
				"odata.metadata,odata.etag,PartitionKey,RowKey,Timestamp,w,x,y"))

			// An insert echoed inside a batch answer, as a single
			// one's (test_encoder_cosmos…test_encoder_batch, 2024, in
			// Azure/azure-sdk-assets: docs/cosmos.md).
			req = signed(t, "POST", hs.URL, "/"+DevAccount+"/$batch", rawChangeset(
				"POST http://"+strings.TrimPrefix(hs.URL, "http://")+"/"+DevAccount+"/form1 HTTP/1.1\nContent-Type: application/json\n"+
					"Accept: application/json;odata=minimalmetadata\n\n{\"PartitionKey\":\"p\",\"RowKey\":\"t\",\"d@odata.type\":\"Edm.DateTime\",\"d\":\"2022-04-01T09:30:45Z\",\"c\":1}"))
			req.Header.Set("Content-Type", batchCT)
			resp, err = hs.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			echo := batchEntityJSON.Find(raw)
			if resp.StatusCode != 202 || echo == nil {
				t.Fatalf("batch insert: %d %s", resp.StatusCode, raw)
			}
			r = cosmosReply{body: string(echo)}
			wantOrder("batch insert echo", r, pick(
				"odata.metadata,odata.etag,PartitionKey,RowKey,d@odata.type,d,c,Timestamp",
				"odata.metadata,odata.etag,PartitionKey,RowKey,Timestamp,d@odata.type,d,c"))
			wantMember("batch insert echo", r, "odata.metadata", pick(base+"/form1/$metadata#form1/@Element", base+"/$metadata#form1/@Element"))
			wantMember("batch insert echo", r, "d", pick("2022-04-01T09:30:45.0000000Z", "2022-04-01T09:30:45Z"))

			// A query: odata.metadata after value, or first; its form
			// as storage's; each entity as in a read.
			r = do("GET", "/form1()?$filter=RowKey%20eq%20'r'", "", nil, 200)
			wantOrder("query", r, pick("value,odata.metadata", "odata.metadata,value"))
			wantMember("query", r, "odata.metadata", base+"/$metadata#form1")
			wantOrder("query's entity", cosmosReply{body: valueItem(t, r.body)}, pick(
				"odata.etag,PartitionKey,RowKey,y,x,Timestamp",
				"odata.etag,PartitionKey,RowKey,Timestamp,x,y"))
			r = do("GET", "/form1()?$select=x", "", nil, 200)
			wantMember("query $select", r, "odata.metadata", pick(base+"/$metadata#form1", base+"/$metadata#form1&$select=x"))
			r = do("GET", "/form1()?$format=application%2Fjson%3Bodata%3Dnometadata", "", nil, 200)
			wantOrder("query, no metadata", r, "value")
		})
	}
}

// batchEntityJSON is the entity a batch answer's part holds.
var batchEntityJSON = regexp.MustCompile(`\{"odata\.metadata"[^\r\n]*\}`)

// memberOrder is the names of a JSON object's members, in order, joined
// with commas.
func memberOrder(t *testing.T, body string) string {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(body))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %s", body)
	}
	var names []string
	for d.More() {
		name, err := d.Token()
		if err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		names = append(names, name.(string))
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
	}
	return strings.Join(names, ",")
}

// valueItem is the first entity of a query answer, as JSON.
func valueItem(t *testing.T, body string) string {
	t.Helper()
	var q struct{ Value []json.RawMessage }
	if err := json.Unmarshal([]byte(body), &q); err != nil || len(q.Value) == 0 {
		t.Fatalf("no entity in %s (%v)", body, err)
	}
	return string(bytes.TrimSpace(q.Value[0]))
}
