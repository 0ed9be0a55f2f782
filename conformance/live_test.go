package conformance

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// Behaviours of the live service that its recordings and the SDKs' own live
// tests show, where tableemu once answered otherwise (docs/protocol.md 0.1):
// requests below a table name, entity operations on invalid table names,
// annotated keys, and the read-only secondary endpoint.

// TestTableNameBeforeTables: a client given a table's URL as its endpoint
// sends "/<t>/Tables…"; the service reads <t> as the table (the .NET SDK's
// ThrowsWithTableNameInUri recording; azure-data-tables
// test_client_with_url_ends_with_table_name).
func TestTableNameBeforeTables(t *testing.T) {
	_, name := shared.newNamedTable(t)
	createBody := marshal(t, map[string]string{"TableName": name})

	// A create-table request below an existing table is an insert into it
	// whose body lacks the keys; below a missing table, the table is missing.
	wantRawCode(t, shared.raw(t, "POST", "/"+name+"/Tables", nil, createBody), 400, "PropertiesNeedValue")
	wantRawCode(t, shared.raw(t, "POST", "/"+tableName()+"/Tables", nil, createBody), 404, "TableNotFound")
	// As an insert it is one: with keys it inserts into <t>.
	ins := shared.raw(t, "POST", "/"+name+"/Tables", map[string]string{"Prefer": "return-no-content"},
		marshal(t, map[string]string{"PartitionKey": "p", "RowKey": "r"}))
	if ins.StatusCode != http.StatusNoContent {
		t.Fatalf("insert below the table: %d %s", ins.StatusCode, ins.body)
	}
	if _, err := shared.service(t).NewClient(name).GetEntity(ctx(), "p", "r", nil); err != nil {
		t.Fatalf("the insert did not reach %s: %v", name, err)
	}

	wantRawCode(t, shared.raw(t, "GET", "/"+name+"/Tables", nil, nil), 501, "NotImplemented")
	del := shared.raw(t, "DELETE", "/"+name+"/Tables('"+name+"')", nil, nil)
	wantRawCode(t, del, 400, "InvalidInput")
	if want := "The number of keys specified in the URI does not match number of key properties for the resource '" +
		shared.account + "." + name + "'."; !strings.Contains(string(del.body), want) {
		t.Errorf("delete below the table: %s, want the message %q", del.body, want)
	}
	wantRawCode(t, shared.raw(t, "POST", "/"+name+"/$batch", map[string]string{"Content-Type": "multipart/mixed; boundary=batch_x"}, []byte("--batch_x--\r\n")),
		415, "MediaTypeNotSupported")
	for _, q := range []string{"comp=properties", "comp=stats"} {
		wantRawCode(t, shared.raw(t, "GET", "/"+name+"/?restype=service&"+q, nil, nil), 400, "InvalidQueryParameterValue")
	}
	// Other paths below a table name name nothing.
	wantRawCode(t, shared.raw(t, "GET", "/"+name+"/other", nil, nil), 400, "InvalidUri")
	// The table is untouched by all of it.
	if _, err := shared.service(t).NewClient(name).GetEntity(ctx(), "p", "r", nil); err != nil {
		t.Fatal(err)
	}
}

// TestEntityOpsOnInvalidTableNames: insert, upsert, delete, get ACL, query
// and $batch on a table name that breaks the naming rules are 400
// InvalidResourceName ("The specified resource name contains invalid
// characters.") or, for a length outside 3–63, 400 OutOfRangeInput — not
// 404 (azure-data-tables test_table_name_errors, whose SDK maps exactly
// these to its table-name ValueError).
func TestEntityOpsOnInvalidTableNames(t *testing.T) {
	entity := marshal(t, map[string]string{"PartitionKey": "p", "RowKey": "r"})
	for _, tc := range []struct{ name, code, message string }{
		{"1table", "InvalidResourceName", "The specified resource name contains invalid characters."},
		{"my_table", "InvalidResourceName", "The specified resource name contains invalid characters."},
		{"aa", "OutOfRangeInput", "The specified resource name length is not within the permissible limits."},
		{strings.Repeat("a", 64), "OutOfRangeInput", "The specified resource name length is not within the permissible limits."},
	} {
		c := shared.service(t).NewClient(tc.name)
		check := func(op string, err error) {
			t.Helper()
			var re *azcore.ResponseError
			if !errorsAs(err, &re) || re.StatusCode != 400 || re.ErrorCode != tc.code || !strings.Contains(re.Error(), tc.message) {
				t.Errorf("%s on %q: %v, want 400 %s %q", op, tc.name, err, tc.code, tc.message)
			}
		}
		_, err := c.AddEntity(ctx(), entity, nil)
		check("insert", err)
		_, err = c.UpsertEntity(ctx(), entity, nil)
		check("upsert", err)
		_, err = c.DeleteEntity(ctx(), "p", "r", nil)
		check("delete", err)
		_, err = c.GetAccessPolicy(ctx(), nil)
		check("get ACL", err)
		_, err = c.NewListEntitiesPager(nil).NextPage(ctx())
		check("query", err)
		_, err = c.SubmitTransaction(ctx(), []aztables.TransactionAction{{ActionType: aztables.TransactionTypeInsertMerge, Entity: entity}}, nil)
		var te *azcore.ResponseError
		if !errorsAs(err, &te) || te.ErrorCode != tc.code {
			t.Errorf("$batch on %q: %v, want %s", tc.name, err, tc.code)
		}
	}
	// "a//": the path's first segment is "a", too short to be a table.
	wantRawCode(t, shared.raw(t, "POST", "/a//", nil, entity), 400, "OutOfRangeInput")
	// A valid name that does not exist is still 404 TableNotFound.
	_, err := shared.service(t).NewClient(tableName()).AddEntity(ctx(), entity, nil)
	wantCode(t, err, 404, "TableNotFound")
}

// TestAnnotatedKeys: keys annotated with another EDM type, as the Python
// SDK's encoder sends DateTime, Guid and Binary keys, are refused by an
// insert with 400 InvalidInput and accepted by an upsert, which stores them
// as the strings sent (Python SDK recordings
// test_encoder_create_entity_complex_keys, test_encoder_upsert_entity_complex_keys);
// number and boolean keys stay 400 InvalidInput.
func TestAnnotatedKeys(t *testing.T) {
	c, name := shared.newNamedTable(t)
	body := `{"PartitionKey":"2020-01-01T00:00:00.0000000Z","PartitionKey@odata.type":"Edm.DateTime",` +
		`"RowKey":"c9da6455-213d-42c9-9a79-3e9149a57833","RowKey@odata.type":"Edm.Guid","V":1}`
	wantRawCode(t, shared.raw(t, "POST", "/"+name, map[string]string{"Prefer": "return-no-content"}, []byte(body)), 400, "InvalidInput")
	r := shared.raw(t, "PUT", "/"+name+"(PartitionKey='2020-01-01T00%3A00%3A00.0000000Z',RowKey='c9da6455-213d-42c9-9a79-3e9149a57833')", nil, []byte(body))
	if r.StatusCode != http.StatusNoContent {
		t.Fatalf("upsert with annotated keys: %d %s", r.StatusCode, r.body)
	}
	got, err := c.GetEntity(ctx(), "2020-01-01T00:00:00.0000000Z", "c9da6455-213d-42c9-9a79-3e9149a57833", &aztables.GetEntityOptions{Format: to.Ptr(aztables.MetadataFormatFull)})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	must(t, json.Unmarshal(got.Value, &m))
	if _, typed := m["PartitionKey@odata.type"]; typed {
		t.Errorf("the key reads back typed: %s", got.Value)
	}
	if _, typed := m["RowKey@odata.type"]; typed {
		t.Errorf("the key reads back typed: %s", got.Value)
	}
	wantRawCode(t, shared.raw(t, "POST", "/"+name, nil, []byte(`{"PartitionKey":5,"RowKey":"r"}`)), 400, "InvalidInput")
}

// TestSecondaryIsReadOnly: through "<account>-secondary", writes are 403
// InsufficientAccountPermissions "Write operations are not allowed." and
// reads are served (azure-data-tables test_table_client_location_mode).
func TestSecondaryIsReadOnly(t *testing.T) {
	needInProcess(t)
	cred, err := aztables.NewSharedKeyCredential(shared.account, shared.key)
	must(t, err)
	secondary, err := aztables.NewServiceClientWithSharedKey(shared.endpoint+"-secondary/", cred, clientOptions())
	must(t, err)
	name := tableName()
	readOnly := func(op string, err error) {
		t.Helper()
		var re *azcore.ResponseError
		if !errorsAs(err, &re) || re.StatusCode != 403 || re.ErrorCode != "InsufficientAccountPermissions" ||
			!strings.Contains(re.Error(), "Write operations are not allowed.") {
			t.Errorf("%s through the secondary: %v, want 403 InsufficientAccountPermissions", op, err)
		}
	}
	_, err = secondary.CreateTable(ctx(), name, nil)
	readOnly("create table", err)
	if _, err := shared.service(t).CreateTable(ctx(), name, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shared.service(t).DeleteTable(ctx(), name, nil) })
	entity := marshal(t, map[string]string{"PartitionKey": "p", "RowKey": "r"})
	sc := secondary.NewClient(name)
	_, err = sc.AddEntity(ctx(), entity, nil)
	readOnly("insert", err)
	_, err = sc.UpsertEntity(ctx(), entity, nil)
	readOnly("upsert", err)
	_, err = sc.DeleteEntity(ctx(), "p", "r", nil)
	readOnly("delete entity", err)
	_, err = sc.SetAccessPolicy(ctx(), nil)
	readOnly("set ACL", err)
	_, err = sc.SubmitTransaction(ctx(), []aztables.TransactionAction{{ActionType: aztables.TransactionTypeAdd, Entity: entity}}, nil)
	readOnly("$batch", err)
	_, err = secondary.DeleteTable(ctx(), name, nil)
	readOnly("delete table", err)

	// Reads are served: a missing entity is 404, a query answers.
	_, err = sc.GetEntity(ctx(), "p", "r", nil)
	wantCode(t, err, 404, "ResourceNotFound")
	if _, err := sc.NewListEntitiesPager(nil).NextPage(ctx()); err != nil {
		t.Errorf("query through the secondary: %v", err)
	}
	if _, err := shared.service(t).NewClient(name).AddEntity(ctx(), entity, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := sc.GetEntity(ctx(), "p", "r", nil); err != nil {
		t.Errorf("read through the secondary: %v", err)
	}
}
