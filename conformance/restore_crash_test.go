package conformance

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// Resets and restores killed mid-way (docs/isolation.md): the real binary,
// an account of tens of thousands of entities, and restores between two
// snapshots with different tables (so each copies every entity) and
// resets, each cut by SIGKILL at a random moment. After every restart the
// database passes integrity_check and the account is exactly one of the
// three states — snapshot a, snapshot b, empty — never a mix; an answered
// restore or reset is never lost; and the tables the operations retired
// are deleted by the collector in the end, leaving no entity of no table
// behind (the tables a reset parks for a restore stay).

// isoCall sends a signed request to one of p's isolation endpoints (the
// development account's, Shared Key Lite) and returns the status, or an
// error when no answer came.
func isoCall(p *proc, method, path string) (int, string, error) {
	base, account, _ := strings.Cut(strings.TrimPrefix(p.endpoint, "http://"), "/")
	req, err := http.NewRequest(method, "http://"+base+path, nil)
	if err != nil {
		return 0, "", err
	}
	date := time.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("Authorization", "SharedKeyLite "+account+":"+devSign(date+"\n/"+account+path))
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

func devSign(s string) string {
	key, _ := base64.StdEncoding.DecodeString("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==")
	m := hmac.New(sha256.New, key)
	io.WriteString(m, s)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// accountState is the development account as the database file holds it:
// each table's name, entity count and the sum of its Timestamps (which a
// restore keeps, so the sum tells the snapshot the entities came from).
func accountState(t *testing.T, dir string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "tableemu.sqlite")+"?mode=ro&_pragma=busy_timeout(10000)")
	must(t, err)
	defer db.Close()
	rows, err := db.Query(`SELECT t.name, count(e.tid), coalesce(sum(e.ts % 1000003), 0) FROM tables t LEFT JOIN entities e ON e.tid = t.id
		WHERE t.account = 'devstoreaccount1' GROUP BY t.id ORDER BY t.lname`)
	must(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		var n, sum int64
		must(t, rows.Scan(&name, &n, &sum))
		out = append(out, fmt.Sprintf("%s:%d:%d", name, n, sum))
	}
	must(t, rows.Err())
	return strings.Join(out, " ")
}

// garbage counts what the collector has yet to delete: retired tables
// without a base (parked ones, kept for a restore, are not garbage),
// tables of deleted snapshots, and entity rows of no table in place or
// parked.
func garbage(t *testing.T, dir string) (retired, orphaned, stray int) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "tableemu.sqlite")+"?mode=ro&_pragma=busy_timeout(10000)")
	must(t, err)
	defer db.Close()
	must(t, db.QueryRow(`SELECT (SELECT count(*) FROM tables WHERE account = '' AND base IS NULL),
		(SELECT count(*) FROM snapshot_tables WHERE sid IS NULL),
		(SELECT count(*) FROM entities WHERE tid NOT IN (SELECT id FROM tables WHERE account <> '' OR base IS NOT NULL))`).Scan(&retired, &orphaned, &stray))
	return
}

// loadTable fills a table with n entities of about 300 bytes, in batches.
func loadTable(t *testing.T, c *aztables.Client, n int, tag string) {
	t.Helper()
	if _, err := c.CreateTable(ctx(), nil); err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 250)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := w; b*100 < n; b += 8 {
				var acts []aztables.TransactionAction
				for i := b * 100; i < (b+1)*100 && i < n; i++ {
					e := fmt.Sprintf(`{"PartitionKey":"p%04d","RowKey":"r%06d","Tag":"%s","Pad":"%s"}`, b, i, tag, pad)
					acts = append(acts, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: []byte(e)})
				}
				if _, err := c.SubmitTransaction(context.Background(), acts, nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestRestoreCrash(t *testing.T) {
	skipUnderRace(t, "it kills a binary built without -race")
	bin := buildBinary(t)
	dir := t.TempDir()
	cycles := 8
	if v := os.Getenv("TABLEEMU_CRASH_CYCLES"); v != "" {
		cycles, _ = strconv.Atoi(v)
	}
	n := 25_000
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, %d cycles, tables of %d entities", seed, cycles, n)
	rng := rand.New(rand.NewPCG(seed, 7))

	p, err := startBinary(t, bin, dir)
	must(t, err)
	loadTable(t, p.table(t, "Keep"), n, "a")
	loadTable(t, p.table(t, "OnlyA"), n, "a")
	snap := func(name string) string {
		if code, body, err := isoCall(p, "PUT", "/_tableemu/accounts/devstoreaccount1/snapshots/"+name); err != nil || code/100 != 2 {
			t.Fatalf("save %s: %d %s %v", name, code, body, err)
		}
		return accountState(t, dir)
	}
	stateA := snap("a")
	if _, err := p.table(t, "OnlyA").Delete(ctx(), nil); err != nil {
		t.Fatal(err)
	}
	loadTable(t, p.table(t, "OnlyB"), n, "b")
	stateB := snap("b")
	states := map[string]string{stateA: "a", stateB: "b", "": "empty"}
	t.Logf("a: %s; b: %s", stateA, stateB)

	// How long a restore takes here, to aim the kills inside it.
	start := time.Now()
	if code, _, err := isoCall(p, "POST", "/_tableemu/accounts/devstoreaccount1/snapshots/a/restore"); err != nil || code != 200 {
		t.Fatalf("restore: %d %v", code, err)
	}
	took := time.Since(start)
	t.Logf("a restore of %d entities takes %v", 2*n, took)
	current := "a"

	var cutOld, cutNew, answered int
	for cycle := 1; cycle <= cycles; cycle++ {
		target, path := "empty", "/_tableemu/accounts/devstoreaccount1/reset"
		if r := rng.IntN(5); r > 0 {
			target = map[string]string{"a": "b", "b": "a", "empty": "a"}[current]
			path = "/_tableemu/accounts/devstoreaccount1/snapshots/" + target + "/restore"
		}
		done := make(chan int, 1)
		sent := time.Now()
		var answeredIn time.Duration
		go func() {
			code, _, err := isoCall(p, "POST", path)
			answeredIn = time.Since(sent)
			if err != nil {
				code = 0
			}
			done <- code
		}()
		kill := time.Duration(rng.Int64N(int64(took)))
		time.Sleep(kill)
		p.kill()
		code := <-done
		if testing.Verbose() {
			t.Logf("cycle %d: %s killed after %v, answer %d after %v", cycle, path, kill, code, answeredIn)
		}
		if p, err = startBinary(t, bin, dir); err != nil {
			t.Fatalf("cycle %d: restart: %v", cycle, err)
		}
		integrityCheck(t, dir)
		got, ok := states[accountState(t, dir)]
		switch {
		case !ok:
			t.Fatalf("cycle %d: after kill -9 during %s the account is none of a, b, empty: %s", cycle, path, accountState(t, dir))
		case code == 200 && got != target:
			t.Fatalf("cycle %d: %s answered 200, but after the restart the account is %s", cycle, path, got)
		case got != target && got != current:
			t.Fatalf("cycle %d: going from %s to %s, the account is %s", cycle, current, target, got)
		}
		switch {
		case code == 200:
			answered++
		case got == target && target != current:
			cutNew++
		default:
			cutOld++
		}
		current = got
	}
	t.Logf("%d cycles: %d operations cut by kill -9 left the old state whole, %d the new one; %d were answered before the kill, and kept",
		cycles, cutOld, cutNew, answered)

	// The collector deletes what the cut and finished operations retired.
	deadline := time.Now().Add(time.Minute)
	for {
		retired, orphaned, stray := garbage(t, dir)
		if retired == 0 && orphaned == 0 {
			if stray != 0 {
				t.Fatalf("no garbage left, but %d entity rows of no table", stray)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a minute %d retired tables and %d deleted snapshot tables remain (%d entity rows); server stderr: %s",
				retired, orphaned, stray, p.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got, ok := states[accountState(t, dir)]; !ok || got != current {
		t.Fatalf("after the collector the account is %q, want %s", accountState(t, dir), current)
	}
	integrityCheck(t, dir)
}
