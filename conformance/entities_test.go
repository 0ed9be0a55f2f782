package conformance

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

func getProps(t *testing.T, c *aztables.Client, pk, rk string) (map[string]any, azcore.ETag) {
	t.Helper()
	resp, err := c.GetEntity(ctx(), pk, rk, nil)
	must(t, err)
	var m map[string]any
	must(t, json.Unmarshal(resp.Value, &m))
	return m, resp.ETag
}

func testInsertEntity(t *testing.T, tg *target) {
	c, name := tg.newNamedTable(t)
	e := map[string]any{"PartitionKey": "p", "RowKey": "r", "Name": "x", "N": 5}
	resp, err := c.AddEntity(ctx(), marshal(t, e), nil)
	must(t, err)
	if resp.ETag == "" {
		t.Fatal("no ETag")
	}
	m, etag := getProps(t, c, "p", "r")
	if etag != resp.ETag || m["Name"] != "x" || m["N"] != float64(5) {
		t.Fatalf("got %v etag %v", m, etag)
	}
	// The client's Timestamp is ignored; the server's has 7 digits.
	ts := m["Timestamp"].(string)
	if len(ts) != len("2021-09-08T18:58:49.7704959Z") || !strings.HasSuffix(ts, "Z") {
		t.Fatalf("Timestamp %q", ts)
	}

	t.Run("duplicate", func(t *testing.T) {
		_, err := c.AddEntity(ctx(), marshal(t, e), nil)
		wantCode(t, err, 409, "EntityAlreadyExists")
	})
	t.Run("missing table", func(t *testing.T) {
		other := tg.service(t).NewClient(tableName())
		_, err := other.AddEntity(ctx(), marshal(t, e), nil)
		wantCode(t, err, 404, tg.tableNotFound())
	})
	t.Run("missing keys", func(t *testing.T) {
		// The SDK replaces the server's error with its own after the
		// request fails (docs/protocol.md 13), so the code is read raw.
		_, err := c.AddEntity(ctx(), []byte(`{"PartitionKey":"p","Name":"x"}`), nil)
		if err == nil {
			t.Fatal("insert without RowKey succeeded")
		}
		for _, body := range []string{`{"PartitionKey":"p","Name":"x"}`, `{"RowKey":"p"}`, `{}`} {
			r := tg.raw(t, "POST", "/"+name, nil, []byte(body))
			wantRawCode(t, r, 400, "PropertiesNeedValue")
		}
	})
	t.Run("empty PartitionKey", func(t *testing.T) {
		// Table storage takes it; Cosmos DB refuses it, 400
		// PropertiesNeedValue "PartitionKey/RowKey cannot be empty"
		// (python-cosmos test_insert_entity_empty_string_pk).
		r := tg.raw(t, "POST", "/"+name, map[string]string{"Prefer": "return-no-content"}, []byte(`{"PartitionKey":"","RowKey":"rk"}`))
		if tg.cosmos {
			wantRawCode(t, r, 400, "PropertiesNeedValue")
		} else if r.StatusCode != 204 {
			t.Fatalf("an empty PartitionKey: %d %s", r.StatusCode, r.body)
		}
	})
	t.Run("client Timestamp ignored", func(t *testing.T) {
		type withTS struct {
			aztables.Entity
			V int
		}
		_, err := c.AddEntity(ctx(), marshal(t, withTS{Entity: aztables.Entity{PartitionKey: "p", RowKey: "ts"}, V: 1}), nil)
		must(t, err)
		m, _ := getProps(t, c, "p", "ts")
		if strings.HasPrefix(m["Timestamp"].(string), "0001") {
			t.Fatalf("stored the client's Timestamp: %v", m["Timestamp"])
		}
	})
}

func TestInsertEntity(t *testing.T) { testInsertEntity(t, shared) }

func testInsertEntityWire(t *testing.T, tg *target) {
	_, name := tg.newNamedTable(t)
	// Without Prefer the service answers 201 with the entity; odata.etag
	// equals the ETag header, and Location names the entity (docs/protocol.md 0.1).
	r := tg.raw(t, "POST", "/"+name, nil, []byte(`{"PartitionKey":"p","RowKey":"a b","X":1}`))
	if r.StatusCode != 201 || r.Header.Get("Preference-Applied") != "" {
		t.Fatalf("status %d, Preference-Applied %q: %s", r.StatusCode, r.Header.Get("Preference-Applied"), r.body)
	}
	m := jsonBody(t, r)
	if m["odata.etag"] != r.Header.Get("ETag") || m["X"] != json.Number("1") || m["RowKey"] != "a b" {
		t.Fatalf("body %s, ETag %s", r.body, r.Header.Get("ETag"))
	}
	if !strings.HasSuffix(m["odata.metadata"].(string), "/$metadata#"+name+"/@Element") {
		t.Fatalf("odata.metadata %v", m["odata.metadata"])
	}
	t.Run("odata.metadata", func(t *testing.T) {
		// Cosmos DB names the table before $metadata too
		// (python-cosmos test_insert_entity_dictionary).
		want := "/" + tg.account + "/$metadata#" + name + "/@Element"
		if tg.cosmos {
			want = "/" + tg.account + "/" + name + "/$metadata#" + name + "/@Element"
		}
		if !strings.HasSuffix(m["odata.metadata"].(string), want) {
			t.Fatalf("odata.metadata %v, want …%s", m["odata.metadata"], want)
		}
	})
	if loc := r.Header.Get("Location"); !strings.Contains(loc, "/"+name+"(PartitionKey='p',RowKey='a") {
		t.Fatalf("Location %q", loc)
	}
	if ct := r.Header.Get("Content-Type"); ct != tg.jsonContentType("minimalmetadata") {
		t.Fatalf("Content-Type %q", ct)
	}

	// Cosmos DB sends no DataServiceId, and Content-Type
	// application/json on the 204 (net-cosmos TableQueryableWithInvalidQuery).
	r = tg.raw(t, "POST", "/"+name, map[string]string{"Prefer": "return-no-content"}, []byte(`{"PartitionKey":"p","RowKey":"2"}`))
	if r.StatusCode != 204 || r.Header.Get("Preference-Applied") != "return-no-content" ||
		r.Header.Get("ETag") == "" || (r.Header.Get("DataServiceId") == "") != tg.cosmos || len(r.body) != 0 ||
		tg.cosmos && r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d headers %v body %q", r.StatusCode, r.Header, r.body)
	}
	r = tg.raw(t, "POST", "/"+name, map[string]string{"Prefer": "return-content"}, []byte(`{"PartitionKey":"p","RowKey":"3"}`))
	if r.StatusCode != 201 || r.Header.Get("Preference-Applied") != "return-content" {
		t.Fatalf("status %d headers %v", r.StatusCode, r.Header)
	}
}

func TestInsertEntityWire(t *testing.T) { testInsertEntityWire(t, shared) }

func testGetEntity(t *testing.T, tg *target) {
	c, name := tg.newNamedTable(t)
	_, err := c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "A": 1, "B": "b"}), nil)
	must(t, err)
	_, err = c.GetEntity(ctx(), "p", "nope", nil)
	wantCode(t, err, 404, "ResourceNotFound")

	// $select returns only the listed properties (plus odata.etag); a
	// listed property the entity lacks comes back as null (docs/protocol.md 6.4).
	r := tg.raw(t, "GET", entityPath(name, "p", "r")+"?$select=B,Missing", nil, nil)
	m := jsonBody(t, r)
	if _, ok := m["A"]; ok || m["B"] != "b" || m["Missing"] != nil || m["odata.etag"] == nil {
		t.Fatalf("select body %s", r.body)
	}
	if _, ok := m["Missing"]; !ok {
		t.Fatalf("selected missing property not returned as null: %s", r.body)
	}
	if _, ok := m["PartitionKey"]; ok {
		t.Fatalf("unselected PartitionKey returned: %s", r.body)
	}
	t.Run("odata.metadata", func(t *testing.T) {
		// Cosmos DB names the table before $metadata, and not the
		// $select (python-cosmos test_get_entity_with_select).
		want := "/" + tg.account + "/$metadata#" + name + "/@Element&$select=B,Missing"
		if tg.cosmos {
			want = "/" + tg.account + "/" + name + "/$metadata#" + name + "/@Element"
		}
		if !strings.HasSuffix(m["odata.metadata"].(string), want) {
			t.Fatalf("odata.metadata %v, want …%s", m["odata.metadata"], want)
		}
	})
}

func TestGetEntity(t *testing.T) { testGetEntity(t, shared) }

func testUpdateEntity(t *testing.T, tg *target) {
	c := tg.newTable(t)
	resp, err := c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "A": 1, "B": "b"}), nil)
	must(t, err)
	first := resp.ETag

	// Replace with the current ETag: 204, a new ETag, B is gone.
	up, err := c.UpdateEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "A": 2}),
		&aztables.UpdateEntityOptions{IfMatch: &first, UpdateMode: aztables.UpdateModeReplace})
	must(t, err)
	if up.ETag == "" || up.ETag == first {
		t.Fatalf("ETag after replace %q (was %q)", up.ETag, first)
	}
	m, etag := getProps(t, c, "p", "r")
	if _, ok := m["B"]; ok || m["A"] != float64(2) || etag != up.ETag {
		t.Fatalf("after replace %v", m)
	}

	t.Run("stale etag", func(t *testing.T) {
		_, err := c.UpdateEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r"}),
			&aztables.UpdateEntityOptions{IfMatch: &first, UpdateMode: aztables.UpdateModeReplace})
		wantCode(t, err, 412, "UpdateConditionNotSatisfied")
		_, err = c.UpdateEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r"}),
			&aztables.UpdateEntityOptions{IfMatch: &first, UpdateMode: aztables.UpdateModeMerge})
		wantCode(t, err, 412, "UpdateConditionNotSatisfied")
	})
	t.Run("missing entity", func(t *testing.T) {
		// UpdateEntity sends If-Match: * (docs/protocol.md 13): no upsert.
		for _, mode := range []aztables.UpdateMode{aztables.UpdateModeReplace, aztables.UpdateModeMerge} {
			_, err := c.UpdateEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "nope"}),
				&aztables.UpdateEntityOptions{UpdateMode: mode})
			wantCode(t, err, 404, "ResourceNotFound")
		}
	})
	t.Run("merge", func(t *testing.T) {
		_, err := c.UpdateEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "C": "c", "A": "now a string"}),
			&aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge})
		must(t, err)
		m, _ := getProps(t, c, "p", "r")
		if m["A"] != "now a string" || m["C"] != "c" {
			t.Fatalf("after merge %v", m)
		}
	})
	t.Run("missing table", func(t *testing.T) {
		other := tg.service(t).NewClient(tableName())
		_, err := other.UpdateEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r"}), nil)
		wantCode(t, err, 404, tg.tableNotFound())
	})
}

func TestUpdateEntity(t *testing.T) { testUpdateEntity(t, shared) }

func testMergeVerbs(t *testing.T, tg *target) {
	// Merge arrives as MERGE (documented), PATCH (Go SDK) or POST with
	// X-HTTP-Method: MERGE (the SDKs in their Cosmos mode) (docs/protocol.md 1.2).
	c, name := tg.newNamedTable(t)
	_, err := c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "Keep": 1}), nil)
	must(t, err)
	for i, v := range []struct{ method, xmethod string }{{"MERGE", ""}, {"PATCH", ""}, {"POST", "MERGE"}} {
		prop := "P" + string(rune('0'+i))
		hdr := map[string]string{"If-Match": "*"}
		if v.xmethod != "" {
			hdr["X-HTTP-Method"] = v.xmethod
		}
		r := tg.raw(t, v.method, entityPath(name, "p", "r"), hdr, []byte(`{"`+prop+`":true}`))
		if r.StatusCode != 204 || r.Header.Get("ETag") == "" {
			t.Fatalf("%s: status %d: %s", v.method, r.StatusCode, r.body)
		}
	}
	m, _ := getProps(t, c, "p", "r")
	if m["Keep"] != float64(1) || m["P0"] != true || m["P1"] != true || m["P2"] != true {
		t.Fatalf("after merges %v", m)
	}
	// Without If-Match, POST with X-HTTP-Method: MERGE is Insert Or Merge:
	// how the SDKs in their Cosmos mode (a localhost endpoint on a port
	// other than 10002, docs/cosmos.md) upsert with merge. Without
	// --profile cosmos tableemu takes it too (issue 41).
	r := tg.raw(t, "POST", entityPath(name, "p", "new"), map[string]string{"X-HTTP-Method": "MERGE"}, []byte(`{"Up":true}`))
	if r.StatusCode != 204 || r.Header.Get("ETag") == "" {
		t.Fatalf("POST X-HTTP-Method MERGE without If-Match: status %d: %s", r.StatusCode, r.body)
	}
	if m, _ := getProps(t, c, "p", "new"); m["Up"] != true {
		t.Fatalf("after the upsert %v", m)
	}
	r = tg.raw(t, "PUT", entityPath(name, "p", "r"), map[string]string{"X-HTTP-Method": "MERGE"}, []byte(`{}`))
	wantRawCode(t, r, 400, "XMethodNotUsingPost")
	r = tg.raw(t, "POST", entityPath(name, "p", "r"), map[string]string{"X-HTTP-Method": "FROB"}, []byte(`{}`))
	wantRawCode(t, r, 400, "XMethodIncorrectValue")
}

func TestMergeVerbs(t *testing.T) { testMergeVerbs(t, shared) }

func testUpsertEntity(t *testing.T, tg *target) {
	c := tg.newTable(t)
	// Upserts send no If-Match: they create a missing entity...
	for _, mode := range []aztables.UpdateMode{aztables.UpdateModeReplace, aztables.UpdateModeMerge} {
		rk := "r" + string(mode)
		_, err := c.UpsertEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": rk, "A": 1, "B": 1}), &aztables.UpsertEntityOptions{UpdateMode: mode})
		must(t, err)
		// ...and replace or merge an existing one.
		_, err = c.UpsertEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": rk, "A": 2}), &aztables.UpsertEntityOptions{UpdateMode: mode})
		must(t, err)
		m, _ := getProps(t, c, "p", rk)
		_, hasB := m["B"]
		if m["A"] != float64(2) || hasB != (mode == aztables.UpdateModeMerge) {
			t.Fatalf("%s upsert: %v", mode, m)
		}
	}
}

func TestUpsertEntity(t *testing.T) { testUpsertEntity(t, shared) }

func testDeleteEntity(t *testing.T, tg *target) {
	c, name := tg.newNamedTable(t)
	resp, err := c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r"}), nil)
	must(t, err)
	_, err = c.UpdateEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": 2}), nil)
	must(t, err)
	stale := resp.ETag
	_, err = c.DeleteEntity(ctx(), "p", "r", &aztables.DeleteEntityOptions{IfMatch: &stale})
	wantCode(t, err, 412, "UpdateConditionNotSatisfied")
	_, cur := getProps(t, c, "p", "r")
	_, err = c.DeleteEntity(ctx(), "p", "r", &aztables.DeleteEntityOptions{IfMatch: &cur})
	must(t, err)
	_, err = c.DeleteEntity(ctx(), "p", "r", nil)
	wantCode(t, err, 404, "ResourceNotFound")
	other := tg.service(t).NewClient(tableName())
	_, err = other.DeleteEntity(ctx(), "p", "r", nil)
	wantCode(t, err, 404, tg.tableNotFound())

	// If-Match is required on Delete Entity.
	r := tg.raw(t, "DELETE", entityPath(name, "p", "r"), nil, nil)
	wantRawCode(t, r, 400, "MissingRequiredHeader")
	// A malformed ETag is 400 InvalidInput (docs/protocol.md 3.11).
	r = tg.raw(t, "DELETE", entityPath(name, "p", "r"), map[string]string{"If-Match": "garbage"}, nil)
	wantRawCode(t, r, 400, "InvalidInput")
}

func TestDeleteEntity(t *testing.T) { testDeleteEntity(t, shared) }

// testIfMatchForms: If-Match takes "*" or a weak ETag, its W/ prefix in
// either case; a weak ETag that matches nothing is 412, a strong one (even
// the entity's own without W/) or any other text 400 InvalidInput, for
// replace, merge and delete alike (docs/protocol.md 0.1).
func testIfMatchForms(t *testing.T, tg *target) {
	c, name := tg.newNamedTable(t)
	_, err := c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": 1}), nil)
	must(t, err)
	_, cur := getProps(t, c, "p", "r")
	strong := strings.TrimPrefix(string(cur), "W/")
	body := []byte(`{"V":2}`)
	for _, tc := range []struct {
		ifMatch string
		status  int
		code    string
	}{
		{`W/"wrong"`, 412, "UpdateConditionNotSatisfied"},
		{`w/"wrong"`, 412, "UpdateConditionNotSatisfied"},
		{`W/""`, 412, "UpdateConditionNotSatisfied"},
		{`W/"datetime'2000-01-01T00%3A00%3A00.0000000Z'"`, 412, "UpdateConditionNotSatisfied"},
		{`"wrong"`, 400, "InvalidInput"},
		{strong, 400, "InvalidInput"},
		{`W/wrong`, 400, "InvalidInput"},
		{`wrong`, 400, "InvalidInput"},
	} {
		for _, method := range []string{"PUT", "MERGE", "DELETE"} {
			b := body
			if method == "DELETE" {
				b = nil
			}
			r := tg.raw(t, method, entityPath(name, "p", "r"), map[string]string{"If-Match": tc.ifMatch, "Content-Type": "application/json"}, b)
			if r.StatusCode != tc.status || r.Header.Get("x-ms-error-code") != tc.code {
				t.Errorf("%s If-Match %s: %d %s, want %d %s", method, tc.ifMatch, r.StatusCode, r.Header.Get("x-ms-error-code"), tc.status, tc.code)
			}
		}
	}
	if m, etag := getProps(t, c, "p", "r"); m["V"] != float64(1) || etag != cur {
		t.Fatalf("a refused write changed the entity: %v %s", m, etag)
	}
	// The entity's own ETag with a lower-case w/ matches.
	r := tg.raw(t, "MERGE", entityPath(name, "p", "r"), map[string]string{"If-Match": "w/" + strong, "Content-Type": "application/json"}, body)
	if r.StatusCode != 204 {
		t.Fatalf("merge with w/ and the current ETag: %d %s", r.StatusCode, r.body)
	}
	if m, _ := getProps(t, c, "p", "r"); m["V"] != float64(2) {
		t.Fatalf("after merge: %v", m)
	}
}

func TestIfMatchForms(t *testing.T) { testIfMatchForms(t, shared) }

func testETagsUniquePerWrite(t *testing.T, tg *target) {
	c := tg.newTable(t)
	seen := map[azcore.ETag]bool{}
	e := marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": 1})
	resp, err := c.AddEntity(ctx(), e, nil)
	must(t, err)
	seen[resp.ETag] = true
	for i := 0; i < 50; i++ {
		up, err := c.UpsertEntity(ctx(), e, nil)
		must(t, err)
		if seen[up.ETag] {
			t.Fatalf("write %d reused ETag %s", i, up.ETag)
		}
		seen[up.ETag] = true
	}
}

func TestETagsUniquePerWrite(t *testing.T) { testETagsUniquePerWrite(t, shared) }

func testAwkwardKeys(t *testing.T, tg *target) {
	c := tg.newTable(t)
	keys := []string{"it's", "a''b", "sp ace", "per%cent", "plus+sign", "amp&er=sand", "ümlaut", "日本語", "emoji😀", "(paren)", "comma,key", "", "dollar$", "at@colon:", "\uE000private", "tab-less~"}
	if tg.cosmos {
		// Cosmos DB refuses an empty key (TestInsertEntity, "empty
		// PartitionKey"; docs/cosmos.md).
		keys = slices.DeleteFunc(keys, func(k string) bool { return k == "" })
	}
	for i, k := range keys {
		// map entities: EDMEntity doubles quotes in body keys (docs/protocol.md 13).
		_, err := c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "pk" + k, "RowKey": k, "I": i}), nil)
		if err != nil {
			t.Fatalf("insert key %q: %v", k, err)
		}
	}
	for i, k := range keys {
		m, etag := getProps(t, c, "pk"+k, k)
		if m["RowKey"] != k || m["PartitionKey"] != "pk"+k || m["I"] != float64(i) {
			t.Fatalf("key %q read back %v", k, m)
		}
		_, err := c.UpdateEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "pk" + k, "RowKey": k, "J": 1}),
			&aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: aztables.UpdateModeMerge})
		if err != nil {
			t.Fatalf("merge key %q: %v", k, err)
		}
		f := "PartitionKey eq '" + strings.ReplaceAll("pk"+k, "'", "''") + "' and RowKey eq '" + strings.ReplaceAll(k, "'", "''") + "'"
		p := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &f})
		n := 0
		for p.More() {
			page, err := p.NextPage(ctx())
			must(t, err)
			n += len(page.Entities)
		}
		if n != 1 {
			t.Fatalf("filter on key %q found %d entities", k, n)
		}
	}
	for _, k := range keys {
		_, err := c.DeleteEntity(ctx(), "pk"+k, k, nil)
		if err != nil {
			t.Fatalf("delete key %q: %v", k, err)
		}
	}
}

func TestAwkwardKeys(t *testing.T) { testAwkwardKeys(t, shared) }

func testForbiddenKeyCharacters(t *testing.T, tg *target) {
	c, name := tg.newNamedTable(t)
	for _, bad := range []string{"a/b", `a\b`, "a#b", "a?b", "tab\tkey", "nl\nkey", "del\x7fkey", "c1\u0085key"} {
		_, err := c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": bad}), nil)
		wantCode(t, err, 400, "OutOfRangeInput")
		_, err = c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": bad, "RowKey": "r"}), nil)
		wantCode(t, err, 400, "OutOfRangeInput")
	}
	// Addressed in the URL: '/' and '\' break the service's URL parsing,
	// the others are out of range (docs/protocol.md 1.5).
	r := tg.raw(t, "PUT", entityPath(name, "p", "a/b"), nil, []byte(`{}`))
	wantRawCode(t, r, 400, "InvalidInput")
	r = tg.raw(t, "PUT", entityPath(name, "p", "a#b"), nil, []byte(`{}`))
	wantRawCode(t, r, 400, "OutOfRangeInput")
	// Nothing was stored.
	p := c.NewListEntitiesPager(nil)
	for p.More() {
		page, err := p.NextPage(ctx())
		must(t, err)
		if len(page.Entities) != 0 {
			t.Fatalf("stored %d entities with bad keys", len(page.Entities))
		}
	}
}

func TestForbiddenKeyCharacters(t *testing.T) { testForbiddenKeyCharacters(t, shared) }
