package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/store/sqlite"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// TestInsightsServiceViewWithIndex: the shape and the entities scanned are
// the service's, before and after an automatic index serves the filter —
// per response and in /_tableemu/insights — while x-tableemu-index and
// x-tableemu-entities-read (entitiesRead, indexedQueries in the totals)
// show what tableemu itself did.
func TestInsightsServiceViewWithIndex(t *testing.T) {
	s, err := New(Config{InMemory: true, Silent: true, Insights: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer func() { hs.Close(); s.Close() }()
	if r := send(t, signedTB(t, "POST", hs.URL, "/devstoreaccount1/Tables", `{"TableName":"people"}`)); r.StatusCode != http.StatusCreated {
		t.Fatalf("create table: %d", r.StatusCode)
	}
	const n = 400
	ctx := context.Background()
	var tb store.Table
	err = s.store.Update(ctx, func(tx *store.Tx) error {
		if tb, err = tx.GetTable(DevAccount, "people"); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			e := &edm.Entity{PartitionKey: fmt.Sprintf("p%d", i%10), RowKey: fmt.Sprintf("r%04d", i),
				Properties: []edm.Property{{Name: "LastName", Value: edm.NewString([]string{"Jones", "Smith", "Brown", "Lee"}[i%4])}}}
			if err := tx.InsertEntity(tb, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	queries := []string{"LastName eq 'Jones'", "LastName eq 'Lee' and PartitionKey ge 'p5'", "PartitionKey eq 'p3' and LastName eq 'Smith'"}
	headers := func() (service, own []string) {
		for _, f := range queries {
			for _, top := range []string{"", "&$top=7"} {
				r := send(t, signedTB(t, "GET", hs.URL, "/devstoreaccount1/people()?$filter="+url.QueryEscape(f)+top, ""))
				if r.StatusCode != http.StatusOK {
					t.Fatalf("%s: %d %s", f, r.StatusCode, r.body)
				}
				h := r.Header
				service = append(service, fmt.Sprintf("%s%s: %s scanned=%s returned=%s next=%s/%s", f, top, h.Get("x-tableemu-query-shape"),
					h.Get("x-tableemu-entities-scanned"), h.Get("x-tableemu-entities-returned"),
					h.Get("x-ms-continuation-NextPartitionKey"), h.Get("x-ms-continuation-NextRowKey")))
				own = append(own, fmt.Sprintf("index=%s read=%s", h.Get("x-tableemu-index"), h.Get("x-tableemu-entities-read")))
			}
		}
		return service, own
	}
	type totals struct {
		Tables []struct {
			QueryShapes map[string]struct {
				Queries  int `json:"queries"`
				Scanned  int `json:"entitiesScanned"`
				Returned int `json:"entitiesReturned"`
				Read     int `json:"entitiesRead"`
				Indexed  int `json:"indexedQueries"`
			} `json:"queryShapes"`
		} `json:"tables"`
	}
	report := func() (tot totals) {
		resp, err := http.Get(hs.URL + "/_tableemu/insights")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(&tot); err != nil || len(tot.Tables) != 1 {
			t.Fatalf("insights: %v %+v", err, tot)
		}
		return tot
	}
	scanBefore, ownBefore := headers()
	before := report().Tables[0].QueryShapes
	for _, f := range queries[:2] {
		expr, err := odata.ParseFilter(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := sqlite.IndexNow(ctx, s.store, tb, expr); err != nil {
			t.Fatal(err)
		}
	}
	scanAfter, ownAfter := headers()
	after := report().Tables[0].QueryShapes
	if strings.Join(scanAfter, "\n") != strings.Join(scanBefore, "\n") {
		t.Fatalf("the service's view changed with the index:\nbefore\n%s\nafter\n%s", strings.Join(scanBefore, "\n"), strings.Join(scanAfter, "\n"))
	}
	// The first query, unpaged: all 400 scanned, 100 returned; through
	// the index tableemu read the 100.
	if !strings.HasSuffix(scanBefore[0], "table-scan scanned=400 returned=100 next=/") || ownBefore[0] != "index= read=400" ||
		!strings.HasPrefix(ownAfter[0], "index=auto_") || !strings.HasSuffix(ownAfter[0], " read=100") {
		t.Fatalf("first query: %s; %s, then %s", scanBefore[0], ownBefore[0], ownAfter[0])
	}
	for shape, b := range before {
		a := after[shape]
		if a.Queries != 2*b.Queries || a.Scanned != 2*b.Scanned || a.Returned != 2*b.Returned {
			t.Errorf("%s: totals before the index %+v, after twice the queries %+v", shape, b, a)
		}
	}
	if ts := after["table-scan"]; ts.Indexed != 2 || after["partition-range-scan"].Indexed != 2 || ts.Read >= 2*before["table-scan"].Read || before["table-scan"].Indexed != 0 {
		t.Errorf("table scans: tableemu's own work before %+v, after %+v", before["table-scan"], ts)
	}
}

// TestInsightsAccessLogNote: a query's insights reach its access log line
// (the note is written when the line is, from what the query recorded).
func TestInsightsAccessLogNote(t *testing.T) {
	s, err := New(Config{InMemory: true, Insights: true})
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	s.access = &log
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.Close(); s.Close() })
	for _, r := range []struct {
		method, target, body string
		want                 int
	}{
		{"POST", "/devstoreaccount1/Tables", `{"TableName":"notes"}`, 201},
		{"POST", "/devstoreaccount1/notes", `{"PartitionKey":"p","RowKey":"r"}`, 201},
		{"GET", "/devstoreaccount1/notes(PartitionKey='p',RowKey='r')", "", 200},
	} {
		resp, err := http.DefaultClient.Do(signed(t, r.method, hs.URL, r.target, r.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != r.want {
			t.Fatalf("%s %s: %d", r.method, r.target, resp.StatusCode)
		}
		if r.method == "GET" && resp.Header.Get("x-tableemu-query-shape") != "point-query" {
			t.Errorf("x-tableemu-query-shape %q", resp.Header.Get("x-tableemu-query-shape"))
		}
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasSuffix(last, " shape=point-query scanned=1 returned=1") {
		t.Errorf("access log line %q lacks the query's note", last)
	}
}

// TestThrottledOnTimeline: with --insights and --throttle, a request the
// throttle refuses is on the insights timeline — the server hands the
// one add-on's refusals to the other (New), which know nothing of each
// other.
func TestThrottledOnTimeline(t *testing.T) {
	s, err := New(Config{InMemory: true, Silent: true, Insights: true, Throttle: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.Close(); s.Close() })
	// One more entity than a partition's budget of a second: refused.
	if err := s.thr.Admit(DevAccount, "orders", "hot", true, 2001); tableemu.From(err).Code != tableemu.ServerBusy {
		t.Fatalf("Admit: %v, want ServerBusy", err)
	}
	resp, err := http.Get(hs.URL + "/_tableemu/insights")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var report struct {
		Timeline struct {
			Tables []struct {
				Table  string `json:"table"`
				Total  int    `json:"throttledRequests"`
				Recent []struct {
					PartitionKey string `json:"partitionKey"`
				} `json:"throttledRecent"`
			} `json:"tables"`
		} `json:"timeline"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&report); resp.StatusCode != 200 || err != nil {
		t.Fatalf("GET /_tableemu/insights: %d %v", resp.StatusCode, err)
	}
	if tl := report.Timeline.Tables; len(tl) != 1 || tl[0].Table != "orders" || tl[0].Total != 1 ||
		len(tl[0].Recent) != 1 || tl[0].Recent[0].PartitionKey != "hot" {
		t.Errorf("timeline %+v: want one refusal of partition hot of orders", tl)
	}
}
