package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// cosmosFirstToken and cosmosLaterToken are the forms of NextPartitionKey
// under the profile, as Cosmos DB for Table sends them (python-cosmos
// test_query_entities_with_top_and_next): an object on a first page, the
// object in an array on the pages after it.
var (
	cosmosFirstToken = regexp.MustCompile(`^\{"token":"[A-Za-z0-9+/]+=*","range":\{"min":"","max":"FF"\}\}$`)
	cosmosLaterToken = regexp.MustCompile(`^\[\{"token":"[A-Za-z0-9+/]+=*","range":\{"min":"","max":"FF"\}\}\]$`)
	cosmosTableToken = regexp.MustCompile(`^[A-Za-z0-9+/]+=*$`)
)

// pagingKeys are the keys TestCosmosPaging writes: several partitions,
// with characters a token must carry (quotes, slashes, '+', '=', '&',
// non-ASCII).
func pagingKeys() [][2]string {
	var keys [][2]string
	for _, pk := range []string{"a", "b'1", "c é", "d+=&"} {
		for i := range 7 {
			keys = append(keys, [2]string{pk, fmt.Sprintf("r%02d %s", i, strings.Repeat("+", i))})
		}
	}
	return keys
}

// TestCosmosPaging: under the profile a query of entities pages with Cosmos
// DB for Table's continuation (NextPartitionKey an object, then an array;
// NextRowKey "NA"), which the Go SDK sends back and tableemu resumes from,
// page after page, in PartitionKey then creation order (docs/cosmos.md);
// Table storage's form and key order stay without the profile.
func TestCosmosPaging(t *testing.T) {
	for _, profile := range []string{ProfileCosmos, ProfileStorage} {
		t.Run(profile, func(t *testing.T) {
			hs := newProfileServer(t, profile)
			account := DefaultAccounts()[0]
			svc, err := aztables.NewServiceClientFromConnectionString(ConnectionString(account, Endpoint("http", hs.Listener.Addr().String(), account.Name)), nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if _, err := svc.CreateTable(ctx, "paging", nil); err != nil {
				t.Fatal(err)
			}
			tc := svc.NewClient("paging")
			keys := pagingKeys()
			// Inserted last key first: in creation order each partition
			// comes backwards.
			for _, k := range slices.Backward(keys) {
				e, _ := json.Marshal(map[string]string{"PartitionKey": k[0], "RowKey": k[1]})
				if _, err := tc.AddEntity(ctx, e, nil); err != nil {
					t.Fatal(err)
				}
			}
			pager := tc.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: to.Ptr[int32](3)})
			var got [][2]string
			pages := 0
			for pager.More() {
				page, err := pager.NextPage(ctx)
				if err != nil {
					t.Fatalf("page %d: %v", pages+1, err)
				}
				pages++
				for _, raw := range page.Entities {
					var e aztables.Entity
					if err := json.Unmarshal(raw, &e); err != nil {
						t.Fatal(err)
					}
					got = append(got, [2]string{e.PartitionKey, e.RowKey})
				}
				if page.NextPartitionKey == nil {
					continue
				}
				npk, nrk := *page.NextPartitionKey, *page.NextRowKey
				switch {
				case profile == ProfileStorage:
					if !strings.HasPrefix(npk, "1!") || !strings.HasPrefix(nrk, "1!") {
						t.Errorf("page %d: storage tokens %q, %q", pages, npk, nrk)
					}
				case pages == 1 && !cosmosFirstToken.MatchString(npk), pages > 1 && !cosmosLaterToken.MatchString(npk), nrk != "NA":
					t.Errorf("page %d: NextPartitionKey %q, NextRowKey %q: not Cosmos DB's form", pages, npk, nrk)
				}
			}
			want := keys
			if profile == ProfileCosmos {
				want = nil
				for i := 0; i < len(keys); i += 7 {
					for j := i + 6; j >= i; j-- {
						want = append(want, keys[j])
					}
				}
			}
			if pages != (len(keys)+2)/3 || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%d pages: %q\nwant %d pages: %q", pages, got, (len(keys)+2)/3, want)
			}
		})
	}
}

// TestCosmosContinuationRefused: a continuation tableemu did not issue,
// or one of the other profile, is 400 InvalidInput, in Cosmos DB's words
// under the profile (what Cosmos DB answers one is not in the evidence:
// docs/cosmos.md).
func TestCosmosContinuationRefused(t *testing.T) {
	hs := newProfileServer(t, ProfileCosmos)
	if r := cosmosDo(t, hs, "POST", "/Tables", `{"TableName":"tokens"}`, nil); r.status != 201 {
		t.Fatalf("Create Table: %d %s", r.status, r.body)
	}
	// A token tableemu issued, taken apart.
	for i := range 3 {
		cosmosDo(t, hs, "POST", "/tokens", fmt.Sprintf(`{"PartitionKey":"p","RowKey":"r%d"}`, i), nil)
	}
	r := cosmosDo(t, hs, "GET", "/tokens()?$top=1", "", nil)
	good := r.h.Get("x-ms-continuation-NextPartitionKey")
	if !cosmosFirstToken.MatchString(good) || r.h.Get("x-ms-continuation-NextRowKey") != "NA" {
		t.Fatalf("first page: %q, %q", good, r.h.Get("x-ms-continuation-NextRowKey"))
	}
	var tok struct{ Token string }
	json.Unmarshal([]byte(good), &tok)
	ok := cosmosDo(t, hs, "GET", "/tokens()?$top=1&NextPartitionKey="+url.QueryEscape(good), "", nil) // NextRowKey absent
	if ok.status != 200 || !strings.Contains(ok.body, `"RowKey":"r1"`) || !cosmosLaterToken.MatchString(ok.h.Get("x-ms-continuation-NextPartitionKey")) {
		t.Fatalf("second page without NextRowKey: %d %s %v", ok.status, ok.body, ok.h)
	}
	const hint, oldHint = "tableemu: send back the x-ms-continuation", "tableemu: queries under --profile cosmos now answer in creation order"
	for name, q := range map[string]string{
		"not JSON":            "NextPartitionKey=" + url.QueryEscape("qd5zAMLeWPQCAAAAAAAAAA==") + "&NextRowKey=NA",
		"Cosmos DB's own":     "NextPartitionKey=" + url.QueryEscape(`{"token":"qd5zAMLeWPQCAAAAAAAAAA==","range":{"min":"","max":"FF"}}`) + "&NextRowKey=NA",
		"another range":       "NextPartitionKey=" + url.QueryEscape(strings.Replace(good, `"max":"FF"`, `"max":"7F"`, 1)) + "&NextRowKey=NA",
		"two ranges":          "NextPartitionKey=" + url.QueryEscape("["+good+","+good+"]") + "&NextRowKey=NA",
		"NextRowKey not NA":   "NextPartitionKey=" + url.QueryEscape(good) + "&NextRowKey=1!4!cjE",
		"a storage token":     "NextPartitionKey=1!4!cA&NextRowKey=1!4!cjE",
		"token not base64":    "NextPartitionKey=" + url.QueryEscape(strings.Replace(good, tok.Token, "@@@@", 1)) + "&NextRowKey=NA",
		"another version":     "NextPartitionKey=" + url.QueryEscape(strings.Replace(good, tok.Token, "AwFw", 1)) + "&NextRowKey=NA",
		"length past the end": "NextPartitionKey=" + url.QueryEscape(strings.Replace(good, tok.Token, "AgVw", 1)) + "&NextRowKey=NA",
		"no sequence":         "NextPartitionKey=" + url.QueryEscape(strings.Replace(good, tok.Token, "AgFw", 1)) + "&NextRowKey=NA",
		"NextTableName junk":  "NextTableName=" + url.QueryEscape("BoZsAPosJ6A="),
		// Version 1 (p, r1), issued before the creation order.
		"version 1": "NextPartitionKey=" + url.QueryEscape(strings.Replace(good, tok.Token, "AQFwcjE=", 1)) + "&NextRowKey=NA",
	} {
		target := "/tokens()?$top=1&" + q
		if strings.HasPrefix(q, "NextTableName") {
			target = "/Tables?$top=1&" + q
		}
		r := cosmosDo(t, hs, "GET", target, "", nil)
		wantCosmosError(t, name, r, 400, "InvalidInput", "One of the input values is invalid.", true, "application/json; odata=minimalmetadata")
		want := hint
		if name == "version 1" {
			want = oldHint
		}
		if !strings.Contains(r.body, want) {
			t.Errorf("%s: %s, want tableemu's hint %q", name, r.body, want)
		}
	}
	// Without the profile, Cosmos DB's form is refused as any token
	// tableemu did not issue.
	st := newProfileServer(t, ProfileStorage)
	cosmosDo(t, st, "POST", "/Tables", `{"TableName":"tokens"}`, nil)
	r = cosmosDo(t, st, "GET", "/tokens()?NextPartitionKey="+url.QueryEscape(good)+"&NextRowKey=NA", "", nil)
	if r.status != 400 || r.h.Get("x-ms-error-code") != "InvalidInput" {
		t.Errorf("storage, a Cosmos token: %d %s", r.status, r.body)
	}
}

// TestCosmosTablePaging: Query Tables pages under the profile with a
// NextTableName in standard base64, as Cosmos DB's, which tableemu takes
// back, every table once (in tableemu's order; Cosmos DB's follows no rule
// the recordings show: docs/cosmos.md).
func TestCosmosTablePaging(t *testing.T) {
	hs := newProfileServer(t, ProfileCosmos)
	var want []string
	for i, prefix := range []string{"list", "List", "LIST", "lisT", "liSt"} {
		// Names in several cases: Cosmos DB's are case-sensitive.
		name := fmt.Sprintf("%s%d", prefix, i)
		want = append(want, name)
		if r := cosmosDo(t, hs, "POST", "/Tables", `{"TableName":"`+name+`"}`, nil); r.status != 201 {
			t.Fatalf("Create Table: %d %s", r.status, r.body)
		}
	}
	var got []string
	target := "/Tables?$top=2"
	for pages := 1; ; pages++ {
		r := cosmosDo(t, hs, "GET", target, "", nil)
		var page struct{ Value []struct{ TableName string } }
		if r.status != 200 || json.Unmarshal([]byte(r.body), &page) != nil {
			t.Fatalf("page %d: %d %s", pages, r.status, r.body)
		}
		for _, v := range page.Value {
			got = append(got, v.TableName)
		}
		next := r.h.Get("x-ms-continuation-NextTableName")
		if next == "" {
			break
		}
		if !cosmosTableToken.MatchString(next) {
			t.Fatalf("page %d: NextTableName %q, not base64", pages, next)
		}
		target = "/Tables?$top=2&NextTableName=" + url.QueryEscape(next)
	}
	slices.Sort(got)
	slices.Sort(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("tables %v, want %v, each once", got, want)
	}
}

// TestCosmosTop: under the profile $top is not capped at 1000 (FAQ); a page
// holds up to $top entities and ends early, with a continuation, past 4 MB
// of answer (Cosmos DB's response size limit). Without the profile $top
// above 1000 stays 400 InvalidInput.
func TestCosmosTop(t *testing.T) {
	hs := newProfileServer(t, ProfileCosmos)
	account := DefaultAccounts()[0]
	svc, err := aztables.NewServiceClientFromConnectionString(ConnectionString(account, Endpoint("http", hs.Listener.Addr().String(), account.Name)), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	svc.CreateTable(ctx, "many", nil)
	svc.CreateTable(ctx, "big", nil)
	many := svc.NewClient("many")
	const n = 1200
	for b := 0; b < n; b += 100 {
		var batch []aztables.TransactionAction
		for i := b; i < b+100; i++ {
			e, _ := json.Marshal(map[string]string{"PartitionKey": "p", "RowKey": fmt.Sprintf("%05d", i)})
			batch = append(batch, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: e})
		}
		if _, err := many.SubmitTransaction(ctx, batch, nil); err != nil {
			t.Fatal(err)
		}
	}
	r := cosmosDo(t, hs, "GET", "/many()?$top=1500", "", nil)
	var page struct{ Value []json.RawMessage }
	if r.status != 200 || json.Unmarshal([]byte(r.body), &page) != nil || len(page.Value) != n || r.h.Get("x-ms-continuation-NextPartitionKey") != "" {
		t.Fatalf("$top=1500: %d, %d entities, NextPartitionKey %q", r.status, len(page.Value), r.h.Get("x-ms-continuation-NextPartitionKey"))
	}
	r = cosmosDo(t, hs, "GET", "/many()", "", nil) // no $top: 1000, as Table storage
	if json.Unmarshal([]byte(r.body), &page) != nil || len(page.Value) != 1000 || r.h.Get("x-ms-continuation-NextRowKey") != "NA" {
		t.Errorf("no $top: %d entities, %v", len(page.Value), r.h)
	}
	r = cosmosDo(t, hs, "GET", "/many()?$top=2147483648", "", nil)
	wantCosmosError(t, "$top past Int32", r, 400, "InvalidInput", "Request url is invalid.", true, "application/json; odata=minimalmetadata")

	// 20 entities of 300 KB: 6 MB, more than a page holds.
	big := svc.NewClient("big")
	filler := strings.Repeat("x", 30000)
	for i := range 20 {
		props := map[string]string{"PartitionKey": "p", "RowKey": fmt.Sprintf("%02d", i)}
		for j := range 10 {
			props[fmt.Sprintf("S%d", j)] = filler
		}
		e, _ := json.Marshal(props)
		if _, err := big.AddEntity(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
	}
	pager := big.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: to.Ptr[int32](5000)})
	var sizes []int
	total := 0
	for pager.More() {
		p, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(p.Entities))
		total += len(p.Entities)
	}
	t.Logf("pages of %v entities", sizes)
	if len(sizes) < 2 || total != 20 || sizes[0]*300_000 > cosmosMaxPage {
		t.Errorf("pages of %v entities, want at least two of at most 4 MB, 20 in all", sizes)
	}

	st := newProfileServer(t, ProfileStorage)
	cosmosDo(t, st, "POST", "/Tables", `{"TableName":"many"}`, nil)
	if r := cosmosDo(t, st, "GET", "/many()?$top=1001", "", nil); r.status != 400 || r.h.Get("x-ms-error-code") != "InvalidInput" {
		t.Errorf("storage, $top=1001: %d %s", r.status, r.body)
	}
}
