package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/emulator"
	"github.com/tableemu/tableemu/emulator/store/postgres/pgtest"
)

// partitionOp is one request of TestPostgresPartition's load.
type partitionOp struct {
	write      bool
	rk         string
	start, end time.Time
	err        error
}

// TestPostgresPartition: tableemu on PostgreSQL behind a proxy that stops
// forwarding bytes (a network partition) for twice the request deadline,
// under load from concurrent writers and readers through the Go SDK.
// Every request answers within its deadline and a small margin — the ones
// the partition caught with 500 OperationTimedOut — never a hang or a
// dropped connection; every acknowledged write is there afterwards; and
// the instance serves again within a second of the partition ending
// (docs/postgres.md, "When the database does not answer").
func TestPostgresPartition(t *testing.T) {
	const (
		deadline = 2 * time.Second
		// A busy machine's scheduling, and the half second a commit the
		// deadline cut short may wait for the database to end it
		// (emulator/store/postgres/dial.go, settle).
		margin    = 1500 * time.Millisecond
		before    = time.Second
		partition = 2 * deadline
		after     = 2 * time.Second
		writers   = 6
		readers   = 2
	)
	dbURL, px := pgtest.Through(t, pgtest.URL(t))
	srv, err := emulator.New(emulator.Config{Database: dbURL, Silent: true, RequestTimeout: deadline})
	must(t, err)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); srv.Close() })
	acct := emulator.DefaultAccounts()[0]
	tg := &target{endpoint: hs.URL + "/" + acct.Name, account: acct.Name, key: acct.Keys[0]}
	tbl := tg.newTable(t)
	seed := pgEntity(t, map[string]any{"PartitionKey": "r", "RowKey": "seed", "V": 1})
	_, err = tbl.AddEntity(ctx(), seed, nil)
	must(t, err)
	// The goroutines before the load, with no client connection open:
	// the instance comes back to as many once the partition is over.
	hs.CloseClientConnections()
	time.Sleep(100 * time.Millisecond)
	idle := pgtest.CountGoroutines()

	// The load: each worker sends one request after another, each with a
	// client-side limit far past the deadline, so that a hang shows as a
	// failure instead of stalling the test.
	var lateOnce sync.Once
	var lateStacks string
	stop := make(chan struct{})
	results := make(chan []partitionOp, writers+readers)
	worker := func(id int, write bool) {
		var ops []partitionOp
		for n := 0; ; n++ {
			select {
			case <-stop:
				results <- ops
				return
			default:
			}
			op := partitionOp{write: write, start: time.Now()}
			cctx, cancel := context.WithTimeout(context.Background(), deadline+10*time.Second)
			// A request still going past its deadline and the margin:
			// where everything stands then, for the failure's log.
			dump := time.AfterFunc(deadline+margin, func() {
				lateOnce.Do(func() {
					buf := make([]byte, 1<<20)
					lateStacks = string(buf[:runtime.Stack(buf, true)])
				})
			})
			if write {
				op.rk = fmt.Sprintf("w%d-%05d", id, n)
				_, op.err = tbl.AddEntity(cctx, pgEntity(t, map[string]any{"PartitionKey": "w", "RowKey": op.rk, "N": n}), nil)
			} else {
				_, op.err = tbl.GetEntity(cctx, "r", "seed", nil)
			}
			cancel()
			dump.Stop()
			op.end = time.Now()
			ops = append(ops, op)
		}
	}
	for i := range writers + readers {
		go worker(i, i < writers)
	}
	time.Sleep(before)
	cutAt := time.Now()
	px.Partition(true)
	time.Sleep(partition)
	px.Partition(false)
	healedAt := time.Now()
	time.Sleep(after)
	close(stop)
	var ops []partitionOp
	for range writers + readers {
		ops = append(ops, <-results...)
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].start.Before(ops[j].start) })

	var timedOut, duringCut int
	var slowest time.Duration
	firstAfter := time.Duration(-1) // from the heal to the first success that ended after it
	acked := map[string]bool{}
	unsure := map[string]bool{}
	for _, op := range ops {
		took := op.end.Sub(op.start)
		slowest = max(slowest, took)
		if took > deadline+margin {
			t.Errorf("a %s started %v after the partition began took %v, more than the deadline %v and %v: %v", kindOf(op), op.start.Sub(cutAt), took, deadline, margin, op.err)
		}
		if op.start.After(cutAt) && op.start.Before(healedAt) {
			duringCut++
		}
		if op.err == nil {
			if op.write {
				acked[op.rk] = true
			}
			if since := op.end.Sub(healedAt); since >= 0 && (firstAfter < 0 || since < firstAfter) {
				firstAfter = since
			}
			continue
		}
		var re *azcore.ResponseError
		if !errors.As(op.err, &re) || re.StatusCode != 500 || re.ErrorCode != "OperationTimedOut" {
			t.Errorf("a request started %v after the partition began failed otherwise than 500 OperationTimedOut: %v", op.start.Sub(cutAt), op.err)
			continue
		}
		timedOut++
		if op.write {
			unsure[op.rk] = true
		}
		if !op.start.Before(healedAt.Add(time.Second)) {
			t.Errorf("a request started %v after the partition ended timed out", op.start.Sub(healedAt))
		}
	}
	lateOnce.Do(func() {}) // a dump still being taken is finished
	if t.Failed() && lateStacks != "" {
		t.Logf("goroutines when the first request overran:\n%s", lateStacks)
	}
	if timedOut == 0 || duringCut == 0 {
		t.Fatalf("the partition went unnoticed: %d requests during it, %d timed out", duringCut, timedOut)
	}
	if firstAfter < 0 || firstAfter > time.Second {
		t.Errorf("first success %v after the partition ended, want within 1 s", firstAfter)
	}

	// Every acknowledged write is there; of the timed-out ones, some may
	// be (docs/durability.md).
	found := map[string]bool{}
	pager := tbl.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'w'")})
	for pager.More() {
		page, err := pager.NextPage(ctx())
		must(t, err)
		for _, e := range page.Entities {
			var ent aztables.EDMEntity
			must(t, ent.UnmarshalJSON(e))
			found[ent.RowKey] = true
		}
	}
	lost, applied := 0, 0
	for rk := range acked {
		if !found[rk] {
			lost++
			if lost <= 5 {
				t.Errorf("acknowledged write %s is missing", rk)
			}
		}
	}
	for rk := range unsure {
		if found[rk] {
			applied++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged writes are missing", lost, len(acked))
	}

	// Nothing is left behind: a server left running through partitions
	// does not grow goroutines. pgx closes the connections the partition
	// broke in the background, within 2 s (docs/postgres.md), and must
	// leak none (pgx before v5.9 left one per timed-out batch, waiting
	// forever in pgconn/ctxwatch: github.com/jackc/pgx/issues/1999).
	hs.CloseClientConnections()
	settled, waited := pgtest.SettleGoroutines(idle, goroutineSlack, 20*time.Second)
	if settled.Total > idle.Total+goroutineSlack || settled.Pgx > idle.Pgx {
		t.Errorf("%d goroutines (%d running pgx's code) %v after the load ended, %d (%d) before it; pgx's:\n%s",
			settled.Total, settled.Pgx, waited.Round(time.Millisecond), idle.Total, idle.Pgx, settled.Stacks)
	}
	t.Logf("%d requests (%d during the %v partition), %d answered OperationTimedOut, slowest %v (deadline %v); "+
		"first success %v after the partition ended; %d writes acknowledged, all present; %d of %d timed-out writes were applied",
		len(ops), duringCut, partition, timedOut, slowest.Round(time.Millisecond), deadline,
		firstAfter.Round(time.Millisecond), len(acked), applied, len(unsure))
	t.Logf("goroutines: %d (%d running pgx's code) before the load, %d (%d) %v after it ended",
		idle.Total, idle.Pgx, settled.Total, settled.Pgx, waited.Round(time.Millisecond))
}

// goroutineSlack is how many more goroutines than before the load
// TestPostgresPartition lets the idle instance keep, none of them pgx's:
// a client connection whose end the server has yet to notice. pgx runs
// none for an idle connection in the pool.
const goroutineSlack = 2

func kindOf(op partitionOp) string {
	if op.write {
		return "write"
	}
	return "read"
}
