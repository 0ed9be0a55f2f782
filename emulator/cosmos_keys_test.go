package emulator

import (
	"net/http/httptest"
	"regexp"
	"testing"
)

// TestCosmosKeyPlaces: under --profile cosmos the keys are answered where
// the client sent them among the properties (the .NET SDK after them, Go's
// aztables sorted among them), Timestamp last: in the insert echo, Get
// Entity, a query and a batch's 201 part; a replace or an upsert takes
// the new body's places, a merge keeps the stored ones (not in the
// evidence; docs/cosmos.md). Under the default profile the same writes are
// answered as Table storage does, keys first, properties sorted after an
// update. An entity written under one profile is read under the other as
// that one answers.
func TestCosmosKeyPlaces(t *testing.T) {
	type step struct {
		method, target, body string
		hdr                  map[string]string
		status               int
		cosmos, storage      string // member order of the answer, or of the entity read after it
	}
	last := "/keys(PartitionKey='p',RowKey='last')"
	split := "/keys(PartitionKey='p',RowKey='split')"
	ifAny := map[string]string{"If-Match": "*"}
	steps := []step{
		// .NET: the properties, then the keys.
		{"POST", "/keys", `{"b":1,"a":"x","PartitionKey":"p","RowKey":"last"}`, nil, 201,
			"odata.metadata,odata.etag,b,a,PartitionKey,RowKey,Timestamp",
			"odata.metadata,odata.etag,PartitionKey,RowKey,Timestamp,b,a"},
		{"GET", last, "", nil, 200,
			"odata.metadata,odata.etag,b,a,PartitionKey,RowKey,Timestamp",
			"odata.metadata,odata.etag,PartitionKey,RowKey,Timestamp,b,a"},
		// aztables with a map: sorted, "Price" between the keys.
		{"POST", "/keys", `{"Amount":1,"PartitionKey":"p","Price":2.5,"RowKey":"split","name":"x"}`, map[string]string{"Accept": "application/json;odata=nometadata"}, 201,
			"Amount,PartitionKey,Price,RowKey,name,Timestamp",
			"PartitionKey,RowKey,Timestamp,Amount,Price,name"},
		{"GET", "/keys()?$filter=RowKey%20eq%20'split'", "", nil, 200,
			"odata.etag,Amount,PartitionKey,Price,RowKey,name,Timestamp",
			"odata.etag,PartitionKey,RowKey,Timestamp,Amount,Price,name"},
		// A merge keeps the stored places; the new property follows.
		{"MERGE", last, `{"PartitionKey":"p","RowKey":"last","c":true,"a":"y"}`, ifAny, 204,
			"odata.metadata,odata.etag,b,a,PartitionKey,RowKey,c,Timestamp",
			"odata.metadata,odata.etag,PartitionKey,RowKey,Timestamp,a,b,c"},
		// A replace takes the body's: first.
		{"PUT", last, `{"PartitionKey":"p","RowKey":"last","z":1,"y":2}`, ifAny, 204,
			"odata.metadata,odata.etag,PartitionKey,RowKey,z,y,Timestamp",
			"odata.metadata,odata.etag,PartitionKey,RowKey,Timestamp,y,z"},
		// An upsert that replaces: the body's, keys last (RowKey first).
		{"PUT", split, `{"z":1,"RowKey":"split","PartitionKey":"p"}`, nil, 204,
			"odata.metadata,odata.etag,z,RowKey,PartitionKey,Timestamp",
			"odata.metadata,odata.etag,PartitionKey,RowKey,Timestamp,z"},
	}
	for _, profile := range []string{ProfileCosmos, ""} {
		cosmos := profile == ProfileCosmos
		t.Run(map[bool]string{true: "cosmos", false: "storage"}[cosmos], func(t *testing.T) {
			_, hs := batchServerWith(t, Config{Location: t.TempDir(), Silent: true, Profile: profile})
			cosmosDo(t, hs, "POST", "/Tables", `{"TableName":"keys"}`, nil)
			for _, st := range steps {
				r := cosmosDo(t, hs, st.method, st.target, st.body, st.hdr)
				if r.status != st.status {
					t.Fatalf("%s %s: %d %s", st.method, st.target, r.status, r.body)
				}
				if r.status == 204 {
					r = cosmosDo(t, hs, "GET", st.target, "", nil)
				}
				body := r.body
				if r.status == 200 && st.method == "GET" && st.target[len(st.target)-1] != ')' {
					body = valueItem(t, body)
				}
				want := st.storage
				if cosmos {
					want = st.cosmos
				}
				if got := memberOrder(t, body); got != want {
					t.Errorf("%s %s: members %s\nwant %s", st.method, st.target, got, want)
				}
			}
			// A batch's 201 part: the insert echo.
			r := postBatch(t, hs, batchCT, changeset(
				"POST http://HOST/devstoreaccount1/batchtbl HTTP/1.1\nAccept: application/json;odata=nometadata\n\n"+
					`{"V":2,"PartitionKey":"p","RowKey":"b1"}`))
			want := "PartitionKey,RowKey,Timestamp,V"
			if cosmos {
				want = "V,PartitionKey,RowKey,Timestamp"
			}
			if got := memberOrder(t, regexp.MustCompile(`\{"V"[^\r\n]*\}|\{"PartitionKey"[^\r\n]*\}`).FindString(r.body)); r.StatusCode != 202 || got != want {
				t.Errorf("batch insert: %d, members %s, want %s\n%s", r.StatusCode, got, want, r.body)
			}
		})
	}

	// One database, written under the cosmos profile, read under each,
	// one server at a time.
	dir := t.TempDir()
	open := func(profile string) (*Server, *httptest.Server) {
		s, err := New(Config{Location: dir, Silent: true, Profile: profile})
		if err != nil {
			t.Fatal(err)
		}
		return s, httptest.NewServer(s)
	}
	s, hs := open(ProfileCosmos)
	cosmosDo(t, hs, "POST", "/Tables", `{"TableName":"keys"}`, nil)
	cosmosDo(t, hs, "POST", "/keys", `{"b":1,"PartitionKey":"p","RowKey":"last"}`, nil)
	hs.Close()
	s.Close()
	for _, tc := range []struct{ profile, want string }{
		{"", "odata.metadata,odata.etag,PartitionKey,RowKey,Timestamp,b"},
		{ProfileCosmos, "odata.metadata,odata.etag,b,PartitionKey,RowKey,Timestamp"},
	} {
		s, hs := open(tc.profile)
		r := cosmosDo(t, hs, "GET", last, "", nil)
		if got := memberOrder(t, r.body); r.status != 200 || got != tc.want {
			t.Errorf("profile %q reading what cosmos wrote: %d, members %s, want %s", tc.profile, r.status, got, tc.want)
		}
		hs.Close()
		s.Close()
	}
}

// TestCosmosKeyPlacesExport: an export writes the keys first under either
// profile (a JSON Lines file holds data, as storage answers it), so an
// export and import drops where the keys stood: the imported entity
// answers them first (docs/cosmos.md).
func TestCosmosKeyPlacesExport(t *testing.T) {
	_, hs := isoServer(t, Config{Profile: ProfileCosmos})
	acct := "/" + DevAccount
	as(t, hs, DevAccount, "POST", acct+"/Tables", `{"TableName":"Orders"}`, 201)
	as(t, hs, DevAccount, "POST", acct+"/Orders", `{"b":1,"PartitionKey":"p","RowKey":"r"}`, 201)
	line := as(t, hs, DevAccount, "GET", xferPath(DevAccount, "/export/Orders"), "", 200).body
	if got := memberOrder(t, line); got != "PartitionKey,RowKey,Timestamp,b" {
		t.Errorf("export: members %s\n%s", got, line)
	}
	if r := send(t, sharedKeyRequest(t, "POST", hs.URL, xferPath(DevAccount, "/import/Copy"), line, DevAccount, DevAccount, DevKey)); r.StatusCode != 200 {
		t.Fatalf("import: %d %s", r.StatusCode, r.body)
	}
	r := as(t, hs, DevAccount, "GET", acct+"/Copy(PartitionKey='p',RowKey='r')", "", 200)
	if got := memberOrder(t, r.body); got != "PartitionKey,RowKey,b,Timestamp" { // no metadata (as's Accept)
		t.Errorf("imported: members %s\n%s", got, r.body)
	}
}
