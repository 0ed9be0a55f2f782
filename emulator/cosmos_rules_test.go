package emulator

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu"
)

// TestCosmosProfileRules: under --profile cosmos, what Azure Cosmos DB for
// Table refuses or does not support is refused as it refuses it (as
// recorded from it where the recordings show it; docs/cosmos.md says
// which answers are tableemu's choice), on single requests and inside
// batches; under the default profile Table storage's answers stay.
func TestCosmosProfileRules(t *testing.T) {
	hs := newProfileServer(t, ProfileCosmos)
	st := newProfileServer(t, "")
	mustStatus := func(where string, r cosmosReply, status int) {
		t.Helper()
		if r.status != status {
			t.Fatalf("%s: %d %s, want %d", where, r.status, r.body, status)
		}
	}
	mustStatus("create", cosmosDo(t, hs, "POST", "/Tables", `{"TableName":"rules"}`, nil), 201)
	mustStatus("storage create", cosmosDo(t, st, "POST", "/Tables", `{"TableName":"rules"}`, nil), 201)

	// Empty keys: 400 PropertiesNeedValue, on insert and on an upsert
	// addressed by URL (python-cosmos test_insert_entity_empty_string_pk
	// and …test_insert_entity_empty_string_rk, both in the corpus).
	const empty = "PartitionKey/RowKey cannot be empty"
	full := "application/json; odata=fullmetadata"
	wantCosmosError(t, "empty PartitionKey", cosmosDo(t, hs, "POST", "/rules", `{"PartitionKey":"","RowKey":"rk"}`, nil), 400, "PropertiesNeedValue", empty, true, full)
	wantCosmosError(t, "empty RowKey", cosmosDo(t, hs, "POST", "/rules", `{"PartitionKey":"pk","RowKey":""}`, nil), 400, "PropertiesNeedValue", empty, true, full)
	wantCosmosError(t, "upsert, empty RowKey", cosmosDo(t, hs, "PUT", "/rules(PartitionKey='pk',RowKey='')", `{}`, nil), 400, "PropertiesNeedValue", empty, true, full)
	mustStatus("storage, empty PartitionKey", cosmosDo(t, st, "POST", "/rules", `{"PartitionKey":"","RowKey":"rk"}`, nil), 201)

	// Key sizes: RowKey up to 255 bytes (FAQ), PartitionKey up to 1024
	// bytes, counted in UTF-8.
	insert := func(srv string, pk, rk string, props string) cosmosReply {
		b := `{"PartitionKey":"` + pk + `","RowKey":"` + rk + `"` + props + `}`
		if srv == "storage" {
			return cosmosDo(t, st, "POST", "/rules", b, nil)
		}
		return cosmosDo(t, hs, "POST", "/rules", b, nil)
	}
	mustStatus("RowKey of 255 bytes", insert("cosmos", "p", strings.Repeat("r", 255), ""), 201)
	mustStatus("PartitionKey of 1024 bytes", insert("cosmos", strings.Repeat("p", 1024), "r", ""), 201)
	for name, r := range map[string]cosmosReply{
		"RowKey of 256 bytes":                  insert("cosmos", "p", strings.Repeat("r", 256), ""),
		"RowKey of 128 two-byte characters":    insert("cosmos", "p", strings.Repeat("é", 128), ""),
		"PartitionKey of 1025 bytes":           insert("cosmos", strings.Repeat("p", 1025), "r", ""),
		"PartitionKey of 342 three-byte runes": insert("cosmos", strings.Repeat("€", 342), "r", ""),
	} {
		wantCosmosError(t, name, r, 400, "PropertyValueTooLarge", tableemu.New(tableemu.PropertyValueTooLarge).Message, false, full)
	}
	mustStatus("storage, RowKey of 256 bytes", insert("storage", "p", strings.Repeat("r", 256), ""), 201)

	// Reserved property names (FAQ), as spelt there, but etag, in Cosmos
	// DB's PropertyNameInvalid message, which names the property
	// (python-cosmos …test_encoder_create_entity_atypical_values, "123").
	for _, name := range []string{"ID", "rid", "ResourceId"} {
		wantCosmosError(t, "property "+name, insert("cosmos", "p", "reserved", `,"`+name+`":1`), 400, "PropertyNameInvalid",
			"The property name '"+name+"' is invalid. See https://docs.microsoft.com/en-us/rest/api/storageservices/Understanding-the-Table-Service-Data-Model", true, full)
		mustStatus("storage, property "+name, insert("storage", "p", "reserved"+name, `,"`+name+`":1`), 201)
	}
	mustStatus("property Id", insert("cosmos", "p", "Id", `,"Id":1,"Rid":2,"ETag":3`), 201)

	// etag: accepted, and of the names etag in any case the first alone is
	// kept, on insert and on merge (python-cosmos
	// …test_etag_duplicate_field); storage keeps them all.
	mustStatus("insert etag and Etag", insert("cosmos", "p", "etag", `,"etag":"bar","Etag":"baz"`), 201)
	mustBody := func(where string, r cosmosReply, want string) {
		t.Helper()
		if r.status != 200 || !strings.Contains(r.body, want) || strings.Contains(r.body, `"Etag"`) {
			t.Fatalf("%s: %d %s, want %s and no Etag", where, r.status, r.body, want)
		}
	}
	nometa := map[string]string{"Accept": "application/json;odata=nometadata"}
	mustBody("read etag", cosmosDo(t, hs, "GET", "/rules(PartitionKey='p',RowKey='etag')", "", nometa), `"RowKey":"etag","etag":"bar","Timestamp"`)
	mustStatus("merge etag and Etag", cosmosDo(t, hs, "MERGE", "/rules(PartitionKey='p',RowKey='etag')", `{"etag":"two","Etag":"three"}`, map[string]string{"If-Match": "*"}), 204)
	mustBody("read merged etag", cosmosDo(t, hs, "GET", "/rules(PartitionKey='p',RowKey='etag')", "", nometa), `"RowKey":"etag","etag":"two","Timestamp"`)
	mustStatus("storage, insert ETag, etag and Etag", insert("storage", "p", "etag", `,"ETag":"foo","etag":"bar","Etag":"baz"`), 201)
	if r := cosmosDo(t, st, "GET", "/rules(PartitionKey='p',RowKey='etag')", "", nometa); !strings.Contains(r.body, `"ETag":"foo","etag":"bar","Etag":"baz"`) {
		t.Fatalf("storage, read: %d %s", r.status, r.body)
	}

	// Keys annotated with another type than Edm.String in a body whose
	// entity the URL names: 400 InvalidInput, with or without If-Match
	// (python-cosmos …test_encoder_update_entity_complex_keys,
	// …upsert_entity_complex_keys); Edm.String passes; storage takes them
	// all (TestInsertTypedKeys).
	const invalid = "One of the input values is invalid."
	typedURL := "/rules(PartitionKey='2022-04-01T09%3A30%3A45.000000Z',RowKey='38ab7d22-23d9-4fd5-bf0b-693dcbff3e11')"
	for _, body := range []string{
		`{"PartitionKey@odata.type":"Edm.DateTime","PartitionKey":"2022-04-01T09:30:45.000000Z","RowKey@odata.type":"Edm.Guid","RowKey":"38ab7d22-23d9-4fd5-bf0b-693dcbff3e11","Data":true}`,
		`{"PartitionKey@odata.type":"Edm.Binary","PartitionKey":"YmluYXJ5ZGF0YQ==","RowKey":"1234","Data":1}`,
		`{"PartitionKey":"x","RowKey@odata.type":"Edm.Int64","RowKey":"1"}`,
	} {
		for _, method := range []string{"PUT", "MERGE", "PATCH"} {
			for _, hdr := range []map[string]string{nil, {"If-Match": "*"}} {
				where := fmt.Sprintf("%s %v %s", method, hdr, body)
				wantCosmosError(t, where, cosmosDo(t, hs, method, typedURL, body, hdr), 400, "InvalidInput", invalid, true, full)
				mustStatus("storage, "+where, cosmosDo(t, st, method, typedURL, body, hdr), 204)
			}
		}
	}
	mustStatus("keys annotated Edm.String", cosmosDo(t, hs, "PUT", typedURL,
		`{"PartitionKey@odata.type":"Edm.String","PartitionKey":"x","RowKey@odata.type":"Edm.String","RowKey":"y"}`, nil), 204)
	// Inside a batch, the part fails as the request alone does (not in
	// the evidence).
	typedOp := "PATCH http://HOST/devstoreaccount1" + typedURL + " HTTP/1.1\nIf-Match: *\n\n" +
		`{"PartitionKey@odata.type":"Edm.Binary","PartitionKey":"YmluYXJ5ZGF0YQ==","RowKey":"1234"}`
	typedBatch := strings.ReplaceAll(changeset(typedOp), "HOST", strings.TrimPrefix(hs.URL, "http://"))
	r0 := cosmosDo(t, hs, "POST", "/$batch", typedBatch, map[string]string{"Content-Type": batchCT})
	if parts := partStatus.FindAllStringSubmatch(r0.body, -1); r0.status != 202 || len(parts) != 1 || parts[0][1] != "400" ||
		!strings.Contains(r0.body, `"code":"InvalidInput"`) || !strings.Contains(r0.body, `"value":"0:`+invalid) {
		t.Fatalf("batch, a merge with a Binary PartitionKey: %d %s", r0.status, r0.body)
	}

	// Inside a batch: the operation fails with the same code.
	batch := changeset(strings.ReplaceAll(insertOp("p", ""), "batchtbl", "rules"))
	body := strings.ReplaceAll(batch, "HOST", strings.TrimPrefix(hs.URL, "http://"))
	r := cosmosDo(t, hs, "POST", "/$batch", body, map[string]string{"Content-Type": batchCT})
	if parts := partStatus.FindAllStringSubmatch(r.body, -1); r.status != 202 || len(parts) != 1 || parts[0][1] != "400" || !strings.Contains(r.body, `"code":"PropertiesNeedValue"`) {
		t.Fatalf("batch, empty RowKey: %d %s", r.status, r.body)
	}
}

// TestCosmosProfileUnsupported: the operations Cosmos DB for Table does
// not support — service properties, stats, table ACLs, CORS preflight —
// answer 405 MethodNotAllowed "The requested operation is not
// supported.", in JSON even to a request for XML (python-cosmos
// test_too_many_cors_rules, test_retention_too_long; the others are the
// FAQ's list, with the same answer: docs/cosmos.md).
func TestCosmosProfileUnsupported(t *testing.T) {
	hs := newProfileServer(t, ProfileCosmos)
	st := newProfileServer(t, "")
	const sentence = "The requested operation is not supported."
	xml := map[string]string{"Content-Type": "application/xml", "Accept": "application/xml"}
	props := `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors/></StorageServiceProperties>`
	full := "application/json; odata=fullmetadata"
	for _, tc := range []struct {
		name, method, target, body string
		hdr                        map[string]string
		ctype                      string
	}{
		{"Set Service Properties", "PUT", "/?restype=service&comp=properties", props, xml, full},
		{"Get Service Properties", "GET", "/?restype=service&comp=properties", "", xml, full},
		{"Get Service Properties, JSON asked", "GET", "/?restype=service&comp=properties", "", map[string]string{"Accept": "application/json;odata=nometadata"}, "application/json; odata=nometadata"},
		{"Get Service Stats", "GET", "-secondary/?restype=service&comp=stats", "", xml, full},
		{"Get Table ACL", "GET", "/acltbl?comp=acl", "", xml, full},
		{"Set Table ACL", "PUT", "/acltbl?comp=acl", `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers/>`, xml, full},
		{"CORS preflight", "OPTIONS", "/acltbl", "", map[string]string{"Origin": "http://example.com", "Access-Control-Request-Method": "GET"}, full},
	} {
		r := cosmosDoComp(t, hs, tc.method, tc.target, tc.body, tc.hdr)
		wantCosmosError(t, tc.name, r, 405, "MethodNotAllowed", sentence, true, tc.ctype)
	}
	// Table storage serves them.
	r := cosmosDoComp(t, st, "GET", "/?restype=service&comp=properties", "", xml)
	if r.status != 200 || !strings.Contains(r.body, "<StorageServiceProperties>") {
		t.Fatalf("storage Get Service Properties: %d %s", r.status, r.body)
	}
	// No CORS headers under the profile, whatever rules the data holds.
	sp := cosmosDoComp(t, st, "PUT", "/?restype=service&comp=properties",
		`<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><AllowedHeaders/><ExposedHeaders/><MaxAgeInSeconds>5</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>`, xml)
	if sp.status != 202 {
		t.Fatalf("storage Set Service Properties: %d %s", sp.status, sp.body)
	}
	if r := cosmosDo(t, st, "GET", "/Tables", "", map[string]string{"Origin": "http://example.com"}); r.h.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("storage with a CORS rule: %v", r.h)
	}
}

// TestCosmosProfileSASKeyRange: a SAS that names a key range is refused
// outright, 405 MethodNotAllowed "Shared access signature with
// PartitionKey or RowKey are not supported", at the metadata level asked
// for (python-cosmos test_sas_add_outside_range); Table storage checks
// the range.
func TestCosmosProfileSASKeyRange(t *testing.T) {
	hs := newProfileServer(t, ProfileCosmos)
	st := newProfileServer(t, "")
	for _, srv := range []string{"cosmos", "storage"} {
		s := hs
		if srv == "storage" {
			s = st
		}
		if r := cosmosDo(t, s, "POST", "/Tables", `{"TableName":"sastbl"}`, nil); r.status != 201 {
			t.Fatalf("%s create: %d %s", srv, r.status, r.body)
		}
	}
	sas := func(spk, epk string) string {
		se := time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05Z")
		q := url.Values{"sv": {"2019-02-02"}, "tn": {"sastbl"}, "sp": {"a"}, "se": {se}}
		if spk != "" {
			q.Set("spk", spk)
			q.Set("epk", epk)
		}
		sts := strings.Join([]string{"a", "", se, "/table/devstoreaccount1/sastbl", "", "", "", "2019-02-02", spk, "", epk, ""}, "\n")
		key, _ := base64.StdEncoding.DecodeString(DevKey)
		m := hmac.New(sha256.New, key)
		io.WriteString(m, sts)
		q.Set("sig", base64.StdEncoding.EncodeToString(m.Sum(nil)))
		return q.Encode()
	}
	post := func(s string, query string) cosmosReply {
		srv := hs
		if s == "storage" {
			srv = st
		}
		req := signed(t, "POST", srv.URL, "/"+DevAccount+"/sastbl?"+query, `{"PartitionKey":"p","RowKey":"r"}`)
		req.Header.Del("Authorization")
		req.Header.Set("Accept", "application/json;odata=minimalmetadata")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return cosmosReply{resp.StatusCode, resp.Header, string(b)}
	}
	wantCosmosError(t, "SAS with a key range", post("cosmos", sas("a", "z")), 405, "MethodNotAllowed", tableemu.CosmosSASKeyRange, true, "application/json; odata=minimalmetadata")
	if r := post("cosmos", sas("", "")); r.status != 201 {
		t.Fatalf("SAS without a range: %d %s", r.status, r.body)
	}
	if r := post("storage", sas("a", "z")); r.status != 201 {
		t.Fatalf("storage, SAS with a range the entity is in: %d %s", r.status, r.body)
	}
}

// TestCosmosProfileTableNameCase: Cosmos DB for Table's table names are
// case-sensitive (FAQ): a name in another case than the table's names no
// table, 404, and Create Table of it makes a second table beside the
// first, each with its own entities (the store opened with
// ExactTableNames, docs/cosmos.md). Table storage finds the table in any
// case and refuses the second, 409.
func TestCosmosProfileTableNameCase(t *testing.T) {
	hs := newProfileServer(t, ProfileCosmos)
	st := newProfileServer(t, "")
	for _, s := range []struct {
		name string
		do   func(method, target, body string) cosmosReply
	}{
		{"cosmos", func(m, tg, b string) cosmosReply { return cosmosDo(t, hs, m, tg, b, nil) }},
		{"storage", func(m, tg, b string) cosmosReply { return cosmosDo(t, st, m, tg, b, nil) }},
	} {
		if r := s.do("POST", "/Tables", `{"TableName":"CaseTbl"}`); r.status != 201 {
			t.Fatalf("%s create: %d %s", s.name, r.status, r.body)
		}
		if r := s.do("POST", "/CaseTbl", `{"PartitionKey":"p","RowKey":"r"}`); r.status != 201 {
			t.Fatalf("%s insert: %d %s", s.name, r.status, r.body)
		}
	}
	minimal := "application/json; odata=minimalmetadata"
	notFound := tableemu.New(tableemu.ResourceNotFound).Message
	wantCosmosError(t, "query casetbl", cosmosDo(t, hs, "GET", "/casetbl()", "", nil), 404, "ResourceNotFound", notFound, false, minimal)
	wantCosmosError(t, "get entity in casetbl", cosmosDo(t, hs, "GET", "/casetbl(PartitionKey='p',RowKey='r')", "", nil), 404, "ResourceNotFound", notFound, false, minimal)
	wantCosmosError(t, "insert into CASETBL", cosmosDo(t, hs, "POST", "/CASETBL", `{"PartitionKey":"p","RowKey":"s"}`, nil), 404, "ResourceNotFound", notFound, false, "application/json; odata=fullmetadata")
	wantCosmosError(t, "Get Table casetbl", cosmosDo(t, hs, "GET", "/Tables('casetbl')", "", nil), 404, "ResourceNotFound", notFound, false, minimal)
	wantCosmosError(t, "Delete Table casetbl", cosmosDo(t, hs, "DELETE", "/Tables('casetbl')", "", nil), 404, "ResourceNotFound", notFound, false, "application/json; odata=fullmetadata")

	// "casetbl" beside "CaseTbl", each holding its own entities.
	if r := cosmosDo(t, hs, "POST", "/Tables", `{"TableName":"casetbl"}`, nil); r.status != 201 {
		t.Fatalf("Create Table casetbl beside CaseTbl: %d %s", r.status, r.body)
	}
	r := cosmosDo(t, hs, "POST", "/Tables", `{"TableName":"casetbl"}`, nil)
	wantCosmosError(t, "Create Table casetbl again", r, 409, "TableAlreadyExists", "The specified table: [] already exists.", false, minimal)
	if r := cosmosDo(t, hs, "POST", "/casetbl", `{"PartitionKey":"p","RowKey":"lower"}`, nil); r.status != 201 {
		t.Fatalf("insert into casetbl: %d %s", r.status, r.body)
	}
	for tbl, want := range map[string]string{"CaseTbl": `"RowKey":"r"`, "casetbl": `"RowKey":"lower"`} {
		r := cosmosDo(t, hs, "GET", "/"+tbl+"()", "", nil)
		if r.status != 200 || !strings.Contains(r.body, want) || strings.Count(r.body, `"RowKey"`) != 1 {
			t.Errorf("query %s: %d %s, want its one entity (%s)", tbl, r.status, r.body, want)
		}
	}
	if r := cosmosDo(t, hs, "GET", "/Tables", "", nil); r.status != 200 || !strings.Contains(r.body, `"TableName":"CaseTbl"`) || !strings.Contains(r.body, `"TableName":"casetbl"`) {
		t.Errorf("Query Tables: %d %s, want both tables", r.status, r.body)
	}
	if r := cosmosDo(t, hs, "GET", "/Tables?$filter="+url.QueryEscape("TableName eq 'casetbl'"), "", nil); r.status != 200 || strings.Count(r.body, `"TableName"`) != 1 || !strings.Contains(r.body, `"TableName":"casetbl"`) {
		t.Errorf("Query Tables TableName eq 'casetbl': %d %s", r.status, r.body)
	}
	if r := cosmosDo(t, hs, "DELETE", "/Tables('CaseTbl')", "", nil); r.status != 204 {
		t.Fatalf("Delete Table CaseTbl: %d %s", r.status, r.body)
	}
	if r := cosmosDo(t, hs, "GET", "/casetbl(PartitionKey='p',RowKey='lower')", "", nil); r.status != 200 {
		t.Fatalf("casetbl after deleting CaseTbl: %d %s", r.status, r.body)
	}

	// Storage: one table per name, in any case.
	if r := cosmosDo(t, st, "GET", "/casetbl(PartitionKey='p',RowKey='r')", "", nil); r.status != 200 {
		t.Fatalf("storage, another case: %d %s", r.status, r.body)
	}
	if r := cosmosDo(t, st, "POST", "/Tables", `{"TableName":"casetbl"}`, nil); r.status != 409 || r.h.Get("x-ms-error-code") != "TableAlreadyExists" {
		t.Fatalf("storage, Create Table casetbl beside CaseTbl: %d %v %s", r.status, r.h.Get("x-ms-error-code"), r.body)
	}
}

// TestCosmosProfileTableNameWrittenWithout: a database written without the
// profile and opened with it: a table created there keeps its name in
// every case from a lower-case create, which is refused with a hint saying
// why (docs/cosmos.md, "table names"); its exact name still finds it.
func TestCosmosProfileTableNameWrittenWithout(t *testing.T) {
	dir := t.TempDir()
	open := func(profile string) (*Server, *httptest.Server) {
		s, err := New(Config{Location: dir, Silent: true, Profile: profile})
		if err != nil {
			t.Fatal(err)
		}
		return s, httptest.NewServer(s)
	}
	s, hs := open("")
	if r := cosmosDo(t, hs, "POST", "/Tables", `{"TableName":"OldTbl"}`, nil); r.status != 201 {
		t.Fatalf("storage create: %d %s", r.status, r.body)
	}
	hs.Close()
	s.Close()
	s, hs = open(ProfileCosmos)
	t.Cleanup(func() { hs.Close(); s.Close() })
	r := cosmosDo(t, hs, "POST", "/Tables", `{"TableName":"oldtbl"}`, nil)
	wantCosmosError(t, "Create Table oldtbl", r, 409, "TableAlreadyExists", "The specified table: [] already exists.", false, "application/json; odata=minimalmetadata")
	if !strings.Contains(r.body, "without --profile cosmos") {
		t.Errorf("Create Table oldtbl: %s, want a hint saying why", r.body)
	}
	if r := cosmosDo(t, hs, "GET", "/Tables('OldTbl')", "", nil); r.status != 200 {
		t.Errorf("Get Table OldTbl: %d %s", r.status, r.body)
	}
	if r := cosmosDo(t, hs, "POST", "/Tables", `{"TableName":"OLDTBL"}`, nil); r.status != 201 {
		t.Errorf("Create Table OLDTBL: %d %s", r.status, r.body)
	}
}

// TestCosmosProfileThrottle: --throttle under the profile answers as Cosmos
// DB does beyond its throughput, 429 TooManyRequests with
// x-ms-retry-after-ms, where Table storage's is 503 ServerBusy.
func TestCosmosProfileThrottle(t *testing.T) {
	for _, profile := range []string{ProfileCosmos, ""} {
		s, err := New(Config{InMemory: true, Silent: true, Profile: profile, Throttle: true})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(s)
		t.Cleanup(func() { hs.Close(); s.Close() })
		if r := cosmosDo(t, hs, "POST", "/Tables", `{"TableName":"thr"}`, nil); r.status != 201 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		// The partition's bucket 100,000 entities in debt: 50 s at
		// 2,000 a second.
		s.thr.Charge(DevAccount, "thr", "hot", true, 100_000)
		r := cosmosDo(t, hs, "POST", "/thr", `{"PartitionKey":"hot","RowKey":"r"}`, nil)
		if profile == "" {
			if r.status != 503 || r.h.Get("x-ms-error-code") != "ServerBusy" || r.h.Get("x-ms-retry-after-ms") != "" {
				t.Fatalf("storage: %d %v %s", r.status, r.h, r.body)
			}
			continue
		}
		wantCosmosError(t, "throttled", r, 429, "TooManyRequests", tableemu.New(tableemu.TooManyRequests).Message, true, "application/json; odata=fullmetadata")
		ms, err := strconv.Atoi(r.h.Get("x-ms-retry-after-ms"))
		if err != nil || ms < 45_000 || ms > 50_001 {
			t.Fatalf("x-ms-retry-after-ms %q, want about 50000", r.h.Get("x-ms-retry-after-ms"))
		}
	}
}

// cosmosDoComp is cosmosDo for a target whose query names comp=, which
// Shared Key Lite signs (signComp).
func cosmosDoComp(t *testing.T, hs *httptest.Server, method, target, body string, hdr map[string]string) cosmosReply {
	t.Helper()
	req := signed(t, method, hs.URL, "/"+DevAccount+target, body)
	path, query, _ := strings.Cut("/"+DevAccount+target, "?")
	if q, _ := url.ParseQuery(query); q.Get("comp") != "" {
		signComp(req, path, q.Get("comp"))
	}
	return cosmosSend(t, hs, req, hdr)
}
