package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu/emulator"
	"github.com/tableemu/tableemu/emulator/store/postgres/pgtest"
)

// TestPostgresIsolationPartition: tableemu's own endpoints under a network
// partition (docs/isolation.md). With PostgreSQL behind a proxy that stops
// forwarding bytes, a restore, a snapshot save and a reset each answer 500
// OperationTimedOut, with tableemu's hint, by their deadline
// (Config.IsolationTimeout) — never a hang or a dropped connection — and
// once the partition is over the account is as the operation leaves it or
// untouched, never in between; then the same request succeeds.
func TestPostgresIsolationPartition(t *testing.T) {
	const (
		limit = 2 * time.Second
		// A busy machine's scheduling, and the half second a commit the
		// deadline cut short may wait for the database to end it
		// (emulator/store/postgres/dial.go, settle).
		margin = 1500 * time.Millisecond
	)
	dbURL, px := pgtest.Through(t, pgtest.URL(t))
	srv, err := emulator.New(emulator.Config{Database: dbURL, Silent: true, RequestTimeout: limit, IsolationTimeout: limit})
	must(t, err)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); srv.Close() })
	acct := emulator.DefaultAccounts()[0]
	tg := &target{endpoint: hs.URL + "/" + acct.Name, account: acct.Name, key: acct.Keys[0]}
	svc := tg.service(t)

	// call sends a request to an isolation endpoint, unsigned over
	// loopback with the header that shows no web page sent it.
	call := func(method, path string) (status int, code, body string, took time.Duration) {
		t.Helper()
		req, err := http.NewRequest(method, hs.URL+"/_tableemu/accounts/"+acct.Name+path, nil)
		must(t, err)
		req.Header.Set("Tableemu-Request", "1")
		start := time.Now()
		resp, err := (&http.Client{Timeout: limit + 10*time.Second}).Do(req)
		took = time.Since(start)
		if err != nil {
			t.Fatalf("%s %s: no answer after %v: %v", method, path, took, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("x-ms-error-code"), string(b), took
	}
	// state is the account: its tables, each with its entities' count
	// and their tags, and its snapshots with their counts.
	state := func() (string, error) {
		var out []string
		pager := svc.NewListTablesPager(nil)
		for pager.More() {
			page, err := pager.NextPage(ctx())
			if err != nil {
				return "", err
			}
			for _, tb := range page.Tables {
				n, tags := 0, map[string]int{}
				ep := svc.NewClient(*tb.Name).NewListEntitiesPager(nil)
				for ep.More() {
					p, err := ep.NextPage(ctx())
					if err != nil {
						return "", err
					}
					for _, e := range p.Entities {
						var m map[string]any
						must(t, json.Unmarshal(e, &m))
						n++
						tags[fmt.Sprint(m["Tag"])]++
					}
				}
				out = append(out, fmt.Sprintf("table %s %d entities, tags %v", *tb.Name, n, tags))
			}
		}
		sort.Strings(out)
		status, _, body, _ := call("GET", "/snapshots")
		if status != 200 {
			return "", fmt.Errorf("list snapshots: %d %s", status, body)
		}
		var list struct {
			Snapshots []struct {
				Name             string
				Tables, Entities int
			}
		}
		must(t, json.Unmarshal([]byte(body), &list))
		for _, sn := range list.Snapshots {
			out = append(out, fmt.Sprintf("snapshot %s: %d tables, %d entities", sn.Name, sn.Tables, sn.Entities))
		}
		return strings.Join(out, "\n"), nil
	}
	// settled is the state once the instance serves again after the
	// partition (within a second or so: TestPostgresPartition).
	settled := func() string {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			s, err := state()
			if err == nil {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("10 s after the partition ended the instance does not serve: %v", err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	fill := func(table, tag string, n int) {
		c := svc.NewClient(table)
		for i := range n {
			_, err := c.UpsertEntity(ctx(), pgEntity(t, map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprintf("%03d", i), "Tag": tag}), nil)
			must(t, err)
		}
	}

	for _, name := range []string{"orders", "people"} {
		_, err := svc.CreateTable(ctx(), name, nil)
		must(t, err)
		fill(name, "a", 20)
	}
	if status, _, body, _ := call("PUT", "/snapshots/fixtures"); status != 201 {
		t.Fatalf("save fixtures: %d %s", status, body)
	}
	fixtures := settled()
	fill("orders", "b", 10)
	_, err = svc.CreateTable(ctx(), "extra", nil)
	must(t, err)
	fill("extra", "b", 5)

	for _, step := range []struct {
		what, method, path string
		applied            func(before string) string // the state the step leaves
	}{
		{"restore", "POST", "/snapshots/fixtures/restore", func(string) string { return fixtures }},
		{"snapshot save", "PUT", "/snapshots/new", func(before string) string {
			// The account's tables and entities, saved as "new".
			tables, entities := 0, 0
			for _, line := range strings.Split(before, "\n") {
				var name string
				var n int
				if _, err := fmt.Sscanf(line, "table %s %d entities", &name, &n); err == nil {
					tables, entities = tables+1, entities+n
				}
			}
			return fmt.Sprintf("%s\nsnapshot new: %d tables, %d entities", before, tables, entities)
		}},
		{"reset", "POST", "/reset", func(before string) string {
			// No table; the snapshots stay.
			return before[strings.Index(before, "snapshot "):]
		}},
	} {
		before := settled()
		applied := step.applied(before)
		if applied == before {
			t.Fatalf("%s: would change nothing", step.what)
		}
		px.Partition(true)
		status, code, body, took := call(step.method, step.path)
		px.Partition(false)
		if status != 500 || code != "OperationTimedOut" || !strings.Contains(body, "tableemu: the "+step.what+" did not finish within 2s") {
			t.Errorf("%s during the partition: %d %s %s, want 500 OperationTimedOut with tableemu's hint", step.what, status, code, body)
		}
		if took > limit+margin {
			t.Errorf("%s during the partition answered after %v, more than its deadline %v and %v", step.what, took, limit, margin)
		}
		switch after := settled(); after {
		case before:
			t.Logf("%s: OperationTimedOut after %v; untouched", step.what, took.Round(time.Millisecond))
		case applied:
			t.Logf("%s: OperationTimedOut after %v; applied whole", step.what, took.Round(time.Millisecond))
		default:
			t.Fatalf("after the %s timed out the account is\n%s\nneither as it was\n%s\nnor as the %s leaves it\n%s",
				step.what, after, before, step.what, applied)
		}
		// Again, the network whole: it succeeds, and leaves the account
		// as said above.
		if status, _, body, _ := call(step.method, step.path); status/100 != 2 {
			t.Fatalf("%s after the partition: %d %s", step.what, status, body)
		}
		if after := settled(); after != applied {
			t.Fatalf("after the %s the account is\n%s\nwant\n%s", step.what, after, applied)
		}
	}
}
