package conformance

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/emulator"
)

// TestCosmosPagingOnBackend: under --profile cosmos, on the backend under
// test (SQLite, or PostgreSQL in .ci/postgres.sh), the Go SDK pages through
// a query with Cosmos DB for Table's continuation tokens, takes $top past
// 1000 in one page, and a page ends early, with a continuation, at the
// profile's 4 MB (docs/cosmos.md, "Queries and paging"; emulator
// TestCosmosPaging and TestCosmosTop check the forms in memory).
func TestCosmosPagingOnBackend(t *testing.T) {
	needInProcess(t)
	tg, stop, err := startInProcess(onBackend(t, emulator.Config{InMemory: true, Silent: true, Profile: emulator.ProfileCosmos}))
	must(t, err)
	defer stop()

	// Many pages, across partitions, keys a token must carry.
	c := tg.newTable(t)
	var want []string
	for _, pk := range []string{"a", "b'1", "c é", "d+=&"} {
		for i := range 5 {
			rk := fmt.Sprintf("r%d%s", i, strings.Repeat("+", i))
			want = append(want, pk+"|"+rk)
			_, err := c.AddEntity(ctx(), entityJSON(t, pk, rk), nil)
			must(t, err)
		}
	}
	var got []string
	pages := 0
	pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: to.Ptr[int32](3)})
	for pager.More() {
		page, err := pager.NextPage(ctx())
		must(t, err)
		pages++
		if page.NextPartitionKey != nil && (*page.NextRowKey != "NA" || !strings.Contains(*page.NextPartitionKey, `"range":{"min":"","max":"FF"}`)) {
			t.Errorf("page %d: NextPartitionKey %q, NextRowKey %q: not Cosmos DB's form", pages, *page.NextPartitionKey, *page.NextRowKey)
		}
		for _, raw := range page.Entities {
			var e aztables.Entity
			must(t, json.Unmarshal(raw, &e))
			got = append(got, e.PartitionKey+"|"+e.RowKey)
		}
	}
	if pages != 7 || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%d pages, %q; want 7, %q", pages, got, want)
	}

	// $top past 1000: one page.
	many := tg.newTable(t)
	const n = 1100
	for b := 0; b < n; b += 100 {
		var batch []aztables.TransactionAction
		for i := b; i < b+100; i++ {
			batch = append(batch, action(t, aztables.TransactionTypeAdd, "p", fmt.Sprintf("%05d", i)))
		}
		_, err := many.SubmitTransaction(ctx(), batch, nil)
		must(t, err)
	}
	page, err := many.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: to.Ptr[int32](5000)}).NextPage(ctx())
	must(t, err)
	if len(page.Entities) != n || page.NextPartitionKey != nil {
		t.Errorf("$top 5000: %d entities, NextPartitionKey %v; want %d and none", len(page.Entities), page.NextPartitionKey, n)
	}

	// 16 entities of 390 KB: more than 4 MB, so two pages.
	big := tg.newTable(t)
	filler := strings.Repeat("x", 30000)
	for i := range 16 {
		props := map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprintf("%02d", i)}
		for j := range 13 {
			props[fmt.Sprintf("S%d", j)] = filler
		}
		_, err := big.AddEntity(ctx(), pgEntity(t, props), nil)
		must(t, err)
	}
	var sizes []int
	total := 0
	bp := big.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: to.Ptr[int32](5000)})
	for bp.More() {
		page, err := bp.NextPage(ctx())
		must(t, err)
		sizes = append(sizes, len(page.Entities))
		total += len(page.Entities)
	}
	if len(sizes) < 2 || total != 16 || sizes[0] > 4<<20/390_000 {
		t.Errorf("pages of %v entities; want pages of at most 4 MB, 16 entities in all", sizes)
	}
}
