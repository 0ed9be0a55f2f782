package conformance

import (
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

func testCreateTable(t *testing.T, tg *target) {
	svc := tg.service(t)
	name := tableName()
	resp, err := svc.CreateTable(ctx(), name, nil)
	must(t, err)
	t.Cleanup(func() { svc.DeleteTable(ctx(), name, nil) })
	if resp.TableName == nil || *resp.TableName != name {
		t.Fatalf("created table name %v, want %s", resp.TableName, name)
	}

	t.Run("duplicate", func(t *testing.T) {
		_, err := svc.CreateTable(ctx(), name, nil)
		wantCode(t, err, 409, "TableAlreadyExists")
	})
	t.Run("duplicate in another case", func(t *testing.T) {
		// Table storage keeps one table a name whatever its case: 409.
		// Cosmos DB's table names are case-sensitive (its FAQ): it
		// creates another table, and so does the profile
		// (docs/cosmos.md, "table names").
		upper := strings.ToUpper(name)
		_, err := svc.CreateTable(ctx(), upper, nil)
		if tg.cosmos {
			must(t, err)
			svc.DeleteTable(ctx(), upper, nil)
			return
		}
		wantCode(t, err, 409, "TableAlreadyExists")
	})
	t.Run("bad names", func(t *testing.T) {
		for _, tc := range []struct{ name, code string }{
			{"invalid_table_name", "InvalidResourceName"},
			{"1nvalid", "InvalidResourceName"},
			{"t", "OutOfRangeInput"},
			{"tt", "OutOfRangeInput"},
			{"t" + strings.Repeat("a", 63), "OutOfRangeInput"},
			{"tables", "InvalidInput"},
		} {
			_, err := svc.CreateTable(ctx(), tc.name, nil)
			wantCode(t, err, 400, tc.code)
		}
	})
}

func TestCreateTable(t *testing.T) { testCreateTable(t, shared) }

func testCreateTableWire(t *testing.T, tg *target) {
	name := tableName()
	t.Cleanup(func() { tg.service(t).DeleteTable(ctx(), name, nil) })
	body := []byte(`{"TableName":"` + name + `"}`)

	// No Prefer: 201 with the table, Location, no Preference-Applied
	// (docs/protocol.md 3.2).
	r := tg.raw(t, "POST", "/Tables", nil, body)
	if r.StatusCode != 201 {
		t.Fatalf("status %d: %s", r.StatusCode, r.body)
	}
	m := jsonBody(t, r)
	if m["TableName"] != name || !strings.HasSuffix(m["odata.metadata"].(string), "/$metadata#Tables/@Element") {
		t.Fatalf("body %s", r.body)
	}
	if r.Header.Get("Preference-Applied") != "" {
		t.Fatal("Preference-Applied without Prefer")
	}
	if !strings.HasSuffix(r.Header.Get("Location"), "/Tables('"+name+"')") {
		t.Fatalf("Location %q", r.Header.Get("Location"))
	}

	// Prefer: return-no-content gives 204, and errors echo the preference.
	name2 := tableName()
	t.Cleanup(func() { tg.service(t).DeleteTable(ctx(), name2, nil) })
	r = tg.raw(t, "POST", "/Tables", map[string]string{"Prefer": "return-no-content"}, []byte(`{"TableName":"`+name2+`"}`))
	if r.StatusCode != 204 || r.Header.Get("Preference-Applied") != "return-no-content" || r.Header.Get("DataServiceId") == "" {
		t.Fatalf("status %d headers %v", r.StatusCode, r.Header)
	}
	r = tg.raw(t, "POST", "/Tables", map[string]string{"Prefer": "return-no-content"}, []byte(`{"TableName":"`+name2+`"}`))
	wantRawCode(t, r, 409, "TableAlreadyExists")
	if r.Header.Get("Preference-Applied") != "return-no-content" {
		t.Fatal("error response lost Preference-Applied")
	}

	// Full metadata adds odata.type, odata.id, odata.editLink.
	name3 := tableName()
	t.Cleanup(func() { tg.service(t).DeleteTable(ctx(), name3, nil) })
	r = tg.raw(t, "POST", "/Tables", map[string]string{"Accept": "application/json;odata=fullmetadata"}, []byte(`{"TableName":"`+name3+`"}`))
	m = jsonBody(t, r)
	if m["odata.type"] != tg.account+".Tables" || m["odata.editLink"] != "Tables('"+name3+"')" || !strings.HasSuffix(m["odata.id"].(string), "/Tables('"+name3+"')") {
		t.Fatalf("full metadata body %s", r.body)
	}

	// No metadata: just the name.
	name4 := tableName()
	t.Cleanup(func() { tg.service(t).DeleteTable(ctx(), name4, nil) })
	r = tg.raw(t, "POST", "/Tables", map[string]string{"Accept": "application/json;odata=nometadata"}, []byte(`{"TableName":"`+name4+`"}`))
	if string(r.body) != `{"TableName":"`+name4+`"}` {
		t.Fatalf("nometadata body %s", r.body)
	}
}

func TestCreateTableWire(t *testing.T) { testCreateTableWire(t, shared) }

func testGetTableByName(t *testing.T, tg *target) {
	// The legacy SDKs check existence with GET /Tables('name')
	// (docs/protocol.md 0.1).
	_, name := tg.newNamedTable(t)
	r := tg.raw(t, "GET", "/Tables('"+name+"')", nil, nil)
	if r.StatusCode != 200 || jsonBody(t, r)["TableName"] != name {
		t.Fatalf("status %d body %s", r.StatusCode, r.body)
	}
	r = tg.raw(t, "GET", "/Tables('"+tableName()+"')", nil, nil)
	wantRawCode(t, r, 404, "ResourceNotFound")
}

func TestGetTableByName(t *testing.T) { testGetTableByName(t, shared) }

func testDeleteTable(t *testing.T, tg *target) {
	svc := tg.service(t)
	name := tableName()
	_, err := svc.CreateTable(ctx(), name, nil)
	must(t, err)
	c := svc.NewClient(name)
	_, err = c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r"}), nil)
	must(t, err)

	// Names are case-insensitive: deleting by another case works. Not
	// under Cosmos DB, whose names are case-sensitive (its FAQ; "another
	// case" below).
	del := strings.ToUpper(name)
	if tg.cosmos {
		del = name
	}
	_, err = svc.DeleteTable(ctx(), del, nil)
	must(t, err)

	_, err = c.GetEntity(ctx(), "p", "r", nil)
	wantCode(t, err, 404, tg.tableNotFound())
	_, err = svc.DeleteTable(ctx(), name, nil)
	wantCode(t, err, 404, "ResourceNotFound")
	_, err = svc.DeleteTable(ctx(), "no_such-table", nil)
	wantCode(t, err, 404, "ResourceNotFound")

	// A recreated table starts empty.
	_, err = svc.CreateTable(ctx(), name, nil)
	must(t, err)
	defer svc.DeleteTable(ctx(), name, nil)
	_, err = c.GetEntity(ctx(), "p", "r", nil)
	wantCode(t, err, 404, "ResourceNotFound")

	t.Run("another case", func(t *testing.T) {
		_, err := svc.DeleteTable(ctx(), strings.ToUpper(name), nil)
		if tg.cosmos {
			wantCode(t, err, 404, "ResourceNotFound")
			return
		}
		must(t, err)
	})
}

func TestDeleteTable(t *testing.T) { testDeleteTable(t, shared) }

func testListTables(t *testing.T, tg *target) {
	svc := tg.service(t)
	prefix := tableName()[:9]
	var names []string
	for _, suffix := range []string{"Alpha", "beta", "Gamma", "delta", "epsilon"} {
		name := prefix + suffix
		_, err := svc.CreateTable(ctx(), name, nil)
		must(t, err)
		names = append(names, name)
		t.Cleanup(func() { svc.DeleteTable(ctx(), name, nil) })
	}
	list := func(opts *aztables.ListTablesOptions) (got []string, pages int) {
		p := svc.NewListTablesPager(opts)
		for p.More() {
			page, err := p.NextPage(ctx())
			must(t, err)
			pages++
			for _, tb := range page.Tables {
				got = append(got, *tb.Name)
			}
		}
		return got, pages
	}

	t.Run("eq", func(t *testing.T) {
		f := "TableName eq '" + names[2] + "'"
		got, _ := list(&aztables.ListTablesOptions{Filter: &f})
		if len(got) != 1 || got[0] != names[2] {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("prefix range, paged", func(t *testing.T) {
		// The usual prefix query: TableName ge 'p' and TableName lt 'p{'.
		f := "TableName ge '" + prefix + "' and TableName lt '" + prefix + "{'"
		top := int32(2)
		got, pages := list(&aztables.ListTablesOptions{Filter: &f, Top: &top})
		if pages != 3 {
			t.Fatalf("%d pages, want 3", pages)
		}
		want := append([]string(nil), names...)
		// Ordinal order of names as created: upper-case letters first.
		sort.Strings(want)
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("got %v want %v", got, want)
		}
	})
	t.Run("bad top", func(t *testing.T) {
		r := tg.raw(t, "GET", "/Tables?$top=-1", nil, nil)
		wantRawCode(t, r, 400, "InvalidInput")
		// Under the profile too: tableemu lifts the cap of 1000 for
		// entities only (docs/cosmos.md, "$top").
		r = tg.raw(t, "GET", "/Tables?$top=1001", nil, nil)
		wantRawCode(t, r, 400, "InvalidInput")
	})
	t.Run("continuation header only when more", func(t *testing.T) {
		f := "TableName eq '" + names[0] + "'"
		r := tg.raw(t, "GET", "/Tables?$filter="+urlQueryEscape(f), nil, nil)
		if r.StatusCode != http.StatusOK || r.Header.Get("x-ms-continuation-NextTableName") != "" {
			t.Fatalf("status %d, continuation %q", r.StatusCode, r.Header.Get("x-ms-continuation-NextTableName"))
		}
	})
}

func TestListTables(t *testing.T) { testListTables(t, shared) }
