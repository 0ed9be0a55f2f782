package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// The SQLite store reads the tables of a database it opens into its
// filter cache in the background, and a scan of a table being read waits
// for it (emulator/store/sqlite/filtercache/load.go). The store's tests cover
// that with hooks; this one goes through the binary and the Go SDK, as an
// application restarting its emulator does: the answers of non-key
// filter queries right after a restart, from several clients at once,
// must be the answers the process that wrote the data gave, to the byte
// (ETags and Timestamps included) and with the same continuations.
//
// Nothing outside the process tells whether a table is cached or being
// loaded (no log line, header, insights figure or explorer call reports
// it), so the test asserts only the answers; the run with --cacheSize 0
// is the reference through SQLite alone. A start that does not read the
// tables passes too: the first scans then read SQLite and load the table
// themselves, which shows only in their speed. That the clients do arrive
// while the table is being loaded was checked with a temporary counter
// (the store's fc.waits): the first query of each of the four waited in
// every restart with the cache, and a scan made to read the cache without
// waiting for the load fails the test.

// preloadQueries mix what a load must get right: an eq on a string, a
// numeric range, properties only some entity types have, $top small
// enough for several pages, $select, entities whose long values the
// cache leaves out (Bio, Photo: more than 64 bytes, read from SQLite
// when a page returns them) and a filter on such a property, which the
// cache must send to SQLite.
var preloadQueries = []aztables.ListEntitiesOptions{
	{Filter: to.Ptr("EntityType eq 'Department'"), Top: to.Ptr[int32](7)},
	{Filter: to.Ptr("Age ge 30 and Age lt 33"), Top: to.Ptr[int32](40), Select: to.Ptr("FirstName,Age,Bio")},
	{Filter: to.Ptr("Nickname ge 'M'"), Top: to.Ptr[int32](25), Select: to.Ptr("Nickname,LastName,Photo")},
	{Filter: to.Ptr("Budget ge 500000L or Rate gt 80.0"), Top: to.Ptr[int32](9)},
	{Filter: to.Ptr("Hired ge datetime'2019-06-01T00:00:00Z' and Active eq true"), Top: to.Ptr[int32](60)},
	{Filter: to.Ptr("Bio gt 'S'"), Top: to.Ptr[int32](40), Select: to.Ptr("Bio")},
	{Filter: to.Ptr("Level eq 3"), Top: to.Ptr[int32](100)},
}

// TestPreloadAfterRestart: a table of 4,000 entities of four types is
// written and its queries answered, and the process is killed (SIGKILL,
// its writes still in the WAL). It is started again on the same
// --location three times: with the cache after the kill, with the cache
// after a clean stop (SIGTERM), and with --cacheSize 0. As soon as each
// says it is ready, four clients run every query at once; each answer,
// page by page, must equal the one recorded before the kill.
func TestPreloadAfterRestart(t *testing.T) {
	dir := t.TempDir()
	// Without automatic indexes: one built for a filter the first process
	// kept scanning would serve it after the restart instead of the cache.
	args := []string{"--tablePort", "0", "--location", dir, "--silent", "--noAutoIndex"}
	first := startProc(t, "", args...)
	port, cs := first.ready()
	client := tableClient(t, cs)
	if _, err := client.CreateTable(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	writeStaff(t, client)
	want := make([]string, len(preloadQueries))
	for i, q := range preloadQueries {
		want[i] = queryAnswer(context.Background(), client, port, q)
		if strings.Count(want[i], "\npage ") < 2 {
			t.Fatalf("query %d gives one page; the test wants continuations:\n%s", i, want[i])
		}
	}
	first.signal(syscall.SIGKILL)
	if code := first.exit(15 * time.Second); code != -1 {
		t.Fatalf("exit %d after SIGKILL:\n%s", code, first.out)
	}

	for _, run := range []struct {
		how   string
		extra []string
	}{
		{"after SIGKILL, with the cache", nil},
		{"after SIGTERM, with the cache", nil},
		{"with --cacheSize 0", []string{"--cacheSize", "0"}},
	} {
		p := startProc(t, "", append(args, run.extra...)...)
		port, cs := p.ready()
		answersAtOnce(t, tableClient(t, cs), port, want, run.how)
		p.signal(syscall.SIGTERM)
		if code := p.exit(15 * time.Second); code != 0 {
			t.Fatalf("restarted %s: exit %d after SIGTERM:\n%s", run.how, code, p.out)
		}
	}
}

// answersAtOnce runs every query from four goroutines, each starting at a
// different one, and compares each answer with want.
func answersAtOnce(t *testing.T, client *aztables.Client, port string, want []string, how string) {
	t.Helper()
	const clients = 4
	got := make([][]string, clients)
	var wg sync.WaitGroup
	for c := range clients {
		got[c] = make([]string, len(preloadQueries))
		wg.Go(func() {
			for k := range preloadQueries {
				i := (c*2 + k) % len(preloadQueries)
				got[c][i] = queryAnswer(context.Background(), client, port, preloadQueries[i])
			}
		})
	}
	wg.Wait()
	for i := range preloadQueries {
		var wrong []int
		for c := range clients {
			if got[c][i] != want[i] {
				wrong = append(wrong, c)
			}
		}
		if len(wrong) > 0 {
			t.Errorf("restarted %s: query %d (%s): clients %v of %d answer otherwise than before the kill; client %d: %s",
				how, i, *preloadQueries[i].Filter, wrong, clients, wrong[0], firstDiff(got[wrong[0]][i], want[i]))
		}
	}
}

func tableClient(t *testing.T, cs string) *aztables.Client {
	t.Helper()
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return svc.NewClient("staff")
}

// queryAnswer renders every page of a query with full metadata: the
// continuation each page ends with, then its entities as the SDK returns
// them (JSON with sorted keys, odata.etag and Timestamp included). An
// error is part of the answer, so that it shows in the comparison. The
// server's port, which each process picks anew, is left out of odata.id.
func queryAnswer(ctx context.Context, client *aztables.Client, port string, q aztables.ListEntitiesOptions) string {
	endpoint := "http://127.0.0.1:" + port + "/"
	q.Format = to.Ptr(aztables.MetadataFormatFull)
	var b strings.Builder
	pager := client.NewListEntitiesPager(&q)
	for n := 1; pager.More(); n++ {
		page, err := pager.NextPage(ctx)
		if err != nil {
			fmt.Fprintf(&b, "\npage %d: error %v", n, err)
			break
		}
		fmt.Fprintf(&b, "\npage %d: %d entities, next %q %q", n, len(page.Entities), deref(page.NextPartitionKey), deref(page.NextRowKey))
		for _, e := range page.Entities {
			b.WriteString("\n" + strings.ReplaceAll(string(e), endpoint, "http://127.0.0.1:PORT/"))
		}
	}
	return b.String()
}

func deref(s *string) string {
	if s == nil {
		return "(none)"
	}
	return *s
}

// firstDiff shows where two answers part.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d of %d (want %d):\ngot  %s\nwant %s", i, len(g), len(w), gl, wl)
		}
	}
	return "equal"
}

// writeStaff writes 20 partitions (one of them with a key outside ASCII)
// of heterogeneous entities, kept together as the Azure Table storage
// design guide's "heterogeneous entity types" keep a department and its
// staff in one partition: a Department, then 120 Employees and 29
// Contractors, whose properties overlap with different types (Level is
// Int32 for employees and a string for contractors; Age is Int64 for
// contractors). Some have a Bio of 78 to 261 bytes, or one of 56 to 76
// bytes in UTF-8 but fewer than 64 characters (on either side of the
// cache's 64-byte limit), or a 100-byte Photo; the cache leaves the long
// ones out. The other Bios are short.
//
// Before them, an archive partition of 1,000 Documents of 24 KB each,
// which the cache leaves out too, but which a load reads from disk: they
// make the load of the table take 40 to 100 ms on a 2-CPU machine, so
// that the clients started at the readiness line find it under way.
func writeStaff(t *testing.T, client *aztables.Client) {
	t.Helper()
	var docs []map[string]any
	for i := range 1000 {
		docs = append(docs, map[string]any{"PartitionKey": "archive", "RowKey": fmt.Sprintf("doc%04d", i), "EntityType": "Document",
			"Body": fmt.Sprintf("document %d: ", i) + strings.Repeat("lorem ipsum ", 2000)})
	}
	submit(t, client, docs)
	for p := range 20 {
		pk := fmt.Sprintf("dept-%02d", p)
		if p == 7 {
			pk = "dépt-07"
		}
		ents := []map[string]any{{
			"PartitionKey": pk, "RowKey": "D", "EntityType": "Department",
			"Name": fmt.Sprintf("Department %d", p), "Budget": fmt.Sprint(p * 61_000), "Budget@odata.type": "Edm.Int64",
			"Headcount": 149, "Active": p%3 != 0,
		}}
		for i := range 149 {
			n := p*149 + i
			e := map[string]any{
				"PartitionKey": pk, "RowKey": fmt.Sprintf("E%04d", n),
				"FirstName": fmt.Sprintf("First%d", n%97), "LastName": fmt.Sprintf("Last%d", n%53),
				"Active": n%4 != 1,
				"Hired":  time.Date(2010+n%12, time.Month(1+n%12), 1+n%28, 9, 0, 0, 0, time.UTC).Format(time.RFC3339), "Hired@odata.type": "Edm.DateTime",
			}
			if i < 120 {
				e["EntityType"], e["Age"], e["Level"] = "Employee", 20+n%45, n%5
				e["Salary"], e["Salary@odata.type"] = 40_000+float64(n%600)*100.5, "Edm.Double"
				e["Id"], e["Id@odata.type"] = fmt.Sprintf("%08x-0000-4000-8000-%012x", n, n), "Edm.Guid"
			} else {
				e["RowKey"] = fmt.Sprintf("C%04d", n)
				e["EntityType"], e["Level"] = "Contractor", fmt.Sprint(n%5)
				e["Age"], e["Age@odata.type"] = fmt.Sprint(20+n%45), "Edm.Int64"
				e["Rate"], e["Rate@odata.type"] = float64(n%100)+0.25, "Edm.Double"
			}
			if n%7 == 0 {
				e["Nickname"] = fmt.Sprintf("%c-nick%d", 'A'+n%26, n)
			}
			switch n % 9 {
			case 0:
				e["Bio"] = fmt.Sprintf("N%d ", n) + strings.Repeat("long biography ", 5+n%15)
			case 3:
				e["Bio"] = fmt.Sprintf("Z%d ", n) + strings.Repeat("é", 26+n%10)
			case 5:
				e["Bio"] = fmt.Sprintf("K%d short", n)
			}
			if n%11 == 0 {
				photo := make([]byte, 100)
				for j := range photo {
					photo[j] = byte(n + j)
				}
				e["Photo"], e["Photo@odata.type"] = photo, "Edm.Binary" // base64 in JSON
			}
			ents = append(ents, e)
		}
		submit(t, client, ents)
	}
}

// submit inserts entities of one partition in batches of 100.
func submit(t *testing.T, client *aztables.Client, ents []map[string]any) {
	t.Helper()
	for len(ents) > 0 {
		k := min(len(ents), 100)
		var acts []aztables.TransactionAction
		for _, e := range ents[:k] {
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			acts = append(acts, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: b})
		}
		if _, err := client.SubmitTransaction(context.Background(), acts, nil); err != nil {
			t.Fatalf("batch in %s: %v", ents[0]["PartitionKey"], err)
		}
		ents = ents[k:]
	}
}
