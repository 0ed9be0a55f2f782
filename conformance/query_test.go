package conformance

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

type row struct {
	PartitionKey, RowKey string
	N                    int
	Tag                  string
}

func listAll(t *testing.T, c *aztables.Client, opts *aztables.ListEntitiesOptions) (rows []row, pages int) {
	t.Helper()
	p := c.NewListEntitiesPager(opts)
	for p.More() {
		page, err := p.NextPage(ctx())
		must(t, err)
		pages++
		for _, e := range page.Entities {
			var r row
			must(t, json.Unmarshal(e, &r))
			rows = append(rows, r)
		}
	}
	return rows, pages
}

func testQueryPaging(t *testing.T, tg *target) {
	c, name := tg.newNamedTable(t)
	const n = 2500
	// Insert out of order; results come back by PartitionKey, RowKey
	// from Table storage. Cosmos DB promises no order across partitions
	// (its FAQ): under the profile the order is not checked.
	for i := n - 1; i >= 0; i-- {
		e := map[string]any{"PartitionKey": fmt.Sprintf("p%d", i%5), "RowKey": fmt.Sprintf("r%05d", i), "N": i, "Tag": []string{"a", "b"}[i%2]}
		_, err := c.AddEntity(ctx(), marshal(t, e), nil)
		must(t, err)
	}
	rows, pages := listAll(t, c, nil)
	if len(rows) != n || pages != 3 {
		t.Fatalf("%d rows in %d pages, want %d in 3", len(rows), pages, n)
	}
	if !tg.cosmos && !sort.SliceIsSorted(rows, func(i, j int) bool {
		if rows[i].PartitionKey != rows[j].PartitionKey {
			return rows[i].PartitionKey < rows[j].PartitionKey
		}
		return rows[i].RowKey < rows[j].RowKey
	}) {
		t.Fatal("results not ordered by PartitionKey, RowKey")
	}

	t.Run("top", func(t *testing.T) {
		top := int32(333)
		rows, pages := listAll(t, c, &aztables.ListEntitiesOptions{Top: &top})
		if len(rows) != n || pages != 8 {
			t.Fatalf("%d rows in %d pages, want %d in 8", len(rows), pages, n)
		}
	})
	t.Run("top over 1000", func(t *testing.T) {
		// Table storage refuses it; Cosmos DB does not cap $top at
		// 1000 (its FAQ), and the page holds that many (docs/cosmos.md).
		r := tg.raw(t, "GET", "/"+name+"()?$top=2000", nil, nil)
		if !tg.cosmos {
			wantRawCode(t, r, 400, "InvalidInput")
			return
		}
		var page struct{ Value []json.RawMessage }
		if r.StatusCode != 200 || json.Unmarshal(r.body, &page) != nil || len(page.Value) != 2000 {
			t.Fatalf("$top=2000: %d, %d entities", r.StatusCode, len(page.Value))
		}
	})
	t.Run("partition", func(t *testing.T) {
		f := "PartitionKey eq 'p3'"
		rows, _ := listAll(t, c, &aztables.ListEntitiesOptions{Filter: &f})
		if len(rows) != n/5 {
			t.Fatalf("%d rows", len(rows))
		}
		for _, r := range rows {
			if r.PartitionKey != "p3" {
				t.Fatalf("row %v", r)
			}
		}
	})
	t.Run("point", func(t *testing.T) {
		f := "PartitionKey eq 'p3' and RowKey eq 'r00013'"
		rows, _ := listAll(t, c, &aztables.ListEntitiesOptions{Filter: &f})
		if len(rows) != 1 || rows[0].N != 13 {
			t.Fatalf("rows %v", rows)
		}
	})
	t.Run("key range and property", func(t *testing.T) {
		f := "PartitionKey eq 'p1' and RowKey ge 'r00100' and RowKey lt 'r00200' and Tag eq 'b'"
		rows, _ := listAll(t, c, &aztables.ListEntitiesOptions{Filter: &f})
		// i%5==1 in [100,200) -> 101,106,...,196 (20); of those odd -> 10.
		if len(rows) != 10 {
			t.Fatalf("%d rows: %v", len(rows), rows)
		}
	})
	t.Run("select", func(t *testing.T) {
		f := "PartitionKey eq 'p0'"
		sel := "RowKey,N"
		top := int32(3)
		p := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &f, Select: &sel, Top: &top})
		page, err := p.NextPage(ctx())
		must(t, err)
		var m map[string]any
		must(t, json.Unmarshal(page.Entities[0], &m))
		if _, ok := m["Tag"]; ok || m["RowKey"] == nil || m["N"] == nil {
			t.Fatalf("selected entity %v", m)
		}
		if _, ok := m["PartitionKey"]; ok {
			t.Fatalf("PartitionKey returned without being selected: %v", m)
		}
	})
	t.Run("continuation headers", func(t *testing.T) {
		r := tg.raw(t, "GET", "/"+name+"()?$top=1000", nil, nil)
		npk, nrk := r.Header.Get("x-ms-continuation-NextPartitionKey"), r.Header.Get("x-ms-continuation-NextRowKey")
		if npk == "" || nrk == "" {
			t.Fatalf("first page: NextPartitionKey %q NextRowKey %q", npk, nrk)
		}
		t.Run("form", func(t *testing.T) {
			// Cosmos DB's whole position is in NextPartitionKey, a JSON
			// document {"token":…,"range":{…}} (or a list of them);
			// NextRowKey says NA (python-cosmos
			// test_query_entities_with_top_and_next).
			var tok []struct {
				Token string          `json:"token"`
				Range json.RawMessage `json:"range"`
			}
			doc := npk
			if !strings.HasPrefix(doc, "[") {
				doc = "[" + doc + "]"
			}
			isJSON := json.Unmarshal([]byte(doc), &tok) == nil && len(tok) > 0 && tok[0].Token != "" && len(tok[0].Range) > 0
			if tg.cosmos != (nrk == "NA") || tg.cosmos != isJSON {
				t.Fatalf("NextPartitionKey %q NextRowKey %q", npk, nrk)
			}
		})
		// Resuming from a saved token gives the same page again.
		q := "?$top=1000&NextPartitionKey=" + urlQueryEscape(npk) + "&NextRowKey=" + urlQueryEscape(nrk)
		a := tg.raw(t, "GET", "/"+name+"()"+q, nil, nil)
		b := tg.raw(t, "GET", "/"+name+"()"+q, nil, nil)
		if string(a.body) != string(b.body) {
			t.Fatal("the same continuation gave different pages")
		}
		last := tg.raw(t, "GET", "/"+name+"()?$filter="+urlQueryEscape("PartitionKey eq 'p4'"), nil, nil)
		if last.Header.Get("x-ms-continuation-NextPartitionKey") != "" || last.Header.Get("x-ms-continuation-NextRowKey") != "" {
			t.Fatal("continuation headers on the last page")
		}
		bad := tg.raw(t, "GET", "/"+name+"()?NextPartitionKey=garbage", nil, nil)
		wantRawCode(t, bad, 400, "InvalidInput")
	})
}

func TestQueryPaging(t *testing.T) { testQueryPaging(t, shared) }

func testQueryMetadataLevels(t *testing.T, tg *target) {
	c, name := tg.newNamedTable(t)
	_, err := c.AddEntity(ctx(), []byte(`{"PartitionKey":"p","RowKey":"r","L@odata.type":"Edm.Int64","L":"5","I":1}`), nil)
	must(t, err)
	for _, tc := range []struct {
		format      aztables.MetadataFormat
		metadata    bool
		annotations bool
		full        bool
	}{
		{aztables.MetadataFormatNone, false, false, false},
		{aztables.MetadataFormatMinimal, true, true, false},
		{aztables.MetadataFormatFull, true, true, true},
	} {
		f := tc.format
		r := tg.raw(t, "GET", "/"+name+"()?$format="+urlQueryEscape(string(f)), nil, nil)
		body := string(r.body)
		has := func(s string) bool { return strings.Contains(body, s) }
		if has(`"odata.metadata"`) != tc.metadata || has(`"L@odata.type"`) != tc.annotations ||
			has(`"odata.etag"`) != tc.metadata || has(`"odata.editLink"`) != tc.full || has(`"Timestamp@odata.type"`) != tc.full {
			t.Errorf("%s: %s", f, body)
		}
		if ct := r.Header.Get("Content-Type"); !strings.Contains(ct, strings.TrimPrefix(string(f), "application/json;")) {
			t.Errorf("%s: Content-Type %s", f, ct)
		}
		// Through the SDK every level reads back.
		rows, _ := listAll(t, c, &aztables.ListEntitiesOptions{Format: &f})
		if len(rows) != 1 {
			t.Errorf("%s: %d rows", f, len(rows))
		}
	}
}

func TestQueryMetadataLevels(t *testing.T) { testQueryMetadataLevels(t, shared) }

func testQueryOrdinalOrder(t *testing.T, tg *target) {
	// The service orders keys by UTF-16 code unit: a supplementary
	// character (surrogates 0xD800-) sorts before U+E000-U+FFFF, although
	// its UTF-8 bytes sort after (docs/protocol.md 6.3).
	c := tg.newTable(t)
	keys := []string{"\uFF21", "😀", "\uE000", "z", "A", "a", "é"}
	for _, k := range keys {
		_, err := c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": k}), nil)
		must(t, err)
	}
	rows, _ := listAll(t, c, nil)
	var got []string
	for _, r := range rows {
		got = append(got, r.RowKey)
	}
	want := []string{"A", "a", "z", "é", "😀", "\uE000", "\uFF21"}
	if tg.cosmos {
		t.Run("creation order", func(t *testing.T) {
			// Cosmos DB answers a partition in the order its entities
			// were created (docs/cosmos.md, "order of query results").
			if strings.Join(got, " ") != strings.Join(keys, " ") {
				t.Fatalf("order %q, want %q", got, keys)
			}
		})
		// Its FAQ promises no order: every key, in any order.
		got, want = slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("order %q, want %q", got, want)
	}
	f := "RowKey gt '\uD7FF' and RowKey lt '\uE000'"
	rows, _ = listAll(t, c, &aztables.ListEntitiesOptions{Filter: &f})
	if len(rows) != 1 || rows[0].RowKey != "😀" {
		t.Fatalf("range between U+D7FF and U+E000: %v", rows)
	}
}

func TestQueryOrdinalOrder(t *testing.T) { testQueryOrdinalOrder(t, shared) }
