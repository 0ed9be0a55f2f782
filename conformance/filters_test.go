package conformance

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// testFiltersOnEveryType runs filters on every EDM type through the SDK
// (the literal forms of docs/protocol.md 6.2) and checks which entities match.
func testFiltersOnEveryType(t *testing.T, tg *target) {
	c := tg.newTable(t)
	guids := []string{"11111111-1111-1111-1111-111111111111", "22222222-2222-2222-2222-222222222222", "33333333-3333-3333-3333-333333333333"}
	for i := 0; i < 3; i++ {
		e := aztables.EDMEntity{
			Entity: aztables.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)},
			Properties: map[string]any{
				"S": []string{"apple", "Banana", "cherry"}[i],
				"I": int32(i * 10),
				"L": aztables.EDMInt64(int64(i) << 40),
				"D": float64(i) + 0.5,
				"B": i == 1,
				"T": aztables.EDMDateTime(time.Date(2020+i, 1, 1, 0, 0, 0, 100*i, time.UTC)),
				"G": aztables.EDMGUID(guids[i]),
				"X": aztables.EDMBinary([]byte{byte(i), 0xff}),
			},
		}
		_, err := c.AddEntity(ctx(), marshal(t, e), nil)
		must(t, err)
	}
	for _, tc := range []struct {
		filter string
		want   string // RowKeys, in order
	}{
		{"S eq 'apple'", "0"},
		{"S gt 'apple'", "2"}, // ordinal: 'B' < 'a'
		{"S lt 'a'", "1"},
		{"I ge 10", "12"},
		{"10 le I", "12"}, // the literal may come first
		{"I eq 10 or I eq 0", "01"},
		{"not (I eq 10)", "02"},
		{"L gt 1099511627776L", "2"},
		{"L ge 1", "12"}, // Int64 property, Int32 literal: numeric
		{"D lt 1.5", "0"},
		{"D ge 1", "12"}, // Double property, Int32 literal: numeric
		{"B eq true", "1"},
		{"B", "1"},
		{"B eq false and I gt 0", "2"},
		{"T ge datetime'2021-01-01T00:00:00.0000001Z'", "12"},
		{"T lt datetime'2021-01-01T00:00:00.0000001Z'", "0"},
		{"G eq guid'" + guids[2] + "'", "2"},
		{"G ne guid'" + guids[2] + "'", "01"},
		{"X eq X'01ff'", "1"},
		{"X gt binary'00ff'", "12"},
		{"Missing eq 1", ""},
		{"Missing ne 1", ""},          // missing: every comparison is false
		{"not (Missing eq 1)", "012"}, // not flips it
		{"S eq 1", ""},                // type mismatch: eq false
		{"S ne 1", "012"},             // mismatch: ne true
		{"I eq 10L", ""},              // Int32 property, Int64 literal: mismatch
		{"PartitionKey eq 'p' and RowKey ge '1'", "12"},
		{"Timestamp gt datetime'2000-01-01T00:00:00Z'", "012"},
		// true and false are conditions (docs/protocol.md 0.1); True is
		// a property name, missing here.
		{"true", "012"},
		{"false", ""},
		{"(true and RowKey eq '1')", "1"},
		{"not false and I gt 0", "12"},
		{"false or B", "1"},
		{"True", ""},
		{"not True", "012"},
	} {
		f := tc.filter
		rows, _ := listAll(t, c, &aztables.ListEntitiesOptions{Filter: &f})
		var got string
		for _, r := range rows {
			got += r.RowKey
		}
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.filter, got, tc.want)
		}
	}
	for _, bad := range []string{"S eq", "S eq 'x", "S EQ 'x'", "(S eq 'x'", "I eq 99999999999", "S eq null"} {
		r := tg.raw(t, "GET", "/"+tableNameOf(t, c)+"()?$filter="+urlQueryEscape(bad), nil, nil)
		wantRawCode(t, r, 400, "InvalidInput")
	}
	// Two properties, or two literals, stay unsupported.
	for _, ni := range []string{"I eq D", "1 eq 2", "true eq false"} {
		r := tg.raw(t, "GET", "/"+tableNameOf(t, c)+"()?$filter="+urlQueryEscape(ni), nil, nil)
		wantRawCode(t, r, 501, "NotImplemented")
	}
}

func TestFiltersOnEveryType(t *testing.T) { testFiltersOnEveryType(t, shared) }

// tableNameOf is the table name of a client made by newTable (the SDK
// does not expose it).
func tableNameOf(t *testing.T, c *aztables.Client) string {
	t.Helper()
	name, ok := clientNames[c]
	if !ok {
		t.Fatal("table name unknown: create the table with newTable")
	}
	return name
}

var clientNames = map[*aztables.Client]string{}

// testPagingSeesEveryEntityOnce: keyset paging gives an SDK pager every
// entity exactly once, even while entities are inserted and deleted
// between pages, and pages a 2,500-entity table as 1000, 1000, 500.
func testPagingSeesEveryEntityOnce(t *testing.T, tg *target) {
	c := tg.newTable(t)
	for i := 0; i < 2500; i++ {
		_, err := c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": fmt.Sprintf("p%d", i%3), "RowKey": fmt.Sprintf("r%05d", i)}), nil)
		must(t, err)
	}
	p := c.NewListEntitiesPager(nil)
	var sizes []int
	seen := map[string]int{}
	inserted := 0
	for p.More() {
		page, err := p.NextPage(ctx())
		must(t, err)
		sizes = append(sizes, len(page.Entities))
		for _, raw := range page.Entities {
			var r row
			must(t, json.Unmarshal(raw, &r))
			seen[r.PartitionKey+"/"+r.RowKey]++
		}
		if !p.More() {
			break
		}
		// Between pages: delete an entity already seen, and insert one
		// behind the cursor and one ahead of it.
		_, err = c.DeleteEntity(ctx(), "p0", fmt.Sprintf("r%05d", 3*inserted), nil)
		must(t, err)
		_, err = c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p0", "RowKey": fmt.Sprintf("a%d", inserted)}), nil)
		must(t, err)
		_, err = c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p9", "RowKey": fmt.Sprintf("z%d", inserted)}), nil)
		must(t, err)
		inserted++
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("%s seen %d times", k, n)
		}
	}
	for i := 0; i < 2500; i++ {
		if seen[fmt.Sprintf("p%d/r%05d", i%3, i)] != 1 {
			t.Fatalf("entity %d not seen", i)
		}
	}
	if tg.cosmos {
		// Which of the entities written between pages a pager sees
		// depends on the order, which Cosmos DB does not promise (its
		// FAQ): the rest is Table storage's.
		return
	}
	// Entities inserted after the cursor (partition p9) are seen; those
	// inserted behind it are not.
	late := 0
	for k := range seen {
		if strings.HasPrefix(k, "p9/") {
			late++
		}
	}
	if late != inserted {
		t.Fatalf("saw %d of %d entities inserted ahead of the cursor", late, inserted)
	}
	// 2,500 entities page as 1000, 1000, 500, plus those inserted ahead.
	if fmt.Sprint(sizes) != fmt.Sprint([]int{1000, 1000, 500 + inserted}) {
		t.Fatalf("page sizes %v, want 1000, 1000, %d", sizes, 500+inserted)
	}
}

func TestPagingSeesEveryEntityOnce(t *testing.T) { testPagingSeesEveryEntityOnce(t, shared) }

// testPagingAwkwardKeys: continuation tokens survive any key characters.
func testPagingAwkwardKeys(t *testing.T, tg *target) {
	c := tg.newTable(t)
	var want []string
	for i, k := range []string{"it's", "a b", "100%", "+plus", "&amp", "ü", "日本", "😀", "\uE000", "(x)", "=", ""} {
		for j := 0; j < 3; j++ {
			rk := fmt.Sprintf("%s%d%s", k, j, k)
			_, err := c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": k + "pk", "RowKey": rk, "I": i}), nil)
			must(t, err)
			want = append(want, k+"pk/"+rk)
		}
	}
	top := int32(1)
	rows, pages := listAll(t, c, &aztables.ListEntitiesOptions{Top: &top})
	var got []string
	for _, r := range rows {
		got = append(got, r.PartitionKey+"/"+r.RowKey)
	}
	sort.Strings(got)
	sort.Strings(want)
	if pages != len(want) || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("%d pages; got %q, want %q", pages, got, want)
	}
}

func TestPagingAwkwardKeys(t *testing.T) { testPagingAwkwardKeys(t, shared) }
