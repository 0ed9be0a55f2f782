package postgres

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/internal/pgtest"
)

// lookup is a closure that runs one query (the table is not there).
func lookup(tx store.EngineTx) error {
	_, err := tx.GetTable("a", "missing")
	if errors.Is(err, store.ErrTableNotFound) {
		return nil
	}
	return err
}

// warm leaves n connections idle in e's pool.
func warm(t *testing.T, e *engine, n int) {
	t.Helper()
	var wg sync.WaitGroup
	var ready sync.WaitGroup
	ready.Add(n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := e.View(context.Background(), func(tx store.EngineTx) error {
				err := lookup(tx)
				ready.Done()
				ready.Wait() // all n at once: n connections
				return err
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}

// TestPartitionedConnectionsLeaveThePool: during a network partition
// (internal/pgtest.Proxy), queries past their deadline return at the
// deadline, and the connections they leave behind, which will never
// answer, do not keep their places in the pool — neither the ones whose
// query was cancelled (release) nor the one the pool found dead with its
// ping before lending it, whose cancel request waits at most cancelWait
// (cancelBound) instead of pgx's 15 s. Once the partition ends, the store
// serves at once.
func TestPartitionedConnectionsLeaveThePool(t *testing.T) {
	dbURL, px := pgtest.Through(t, pgtest.URL(t))
	e, err := openEngine(context.Background(), Options{URL: dbURL + "&pool_max_conns=2"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	<-e.sweepDone // its connection is not under test
	timedView := func(d time.Duration) (time.Duration, error) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		start := time.Now()
		err := e.View(ctx, lookup)
		return time.Since(start), err
	}

	// Queries in flight when the partition starts.
	warm(t, e, 2)
	px.Partition(true)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			took, err := timedView(300 * time.Millisecond)
			if !errors.Is(err, context.DeadlineExceeded) || took > 1300*time.Millisecond {
				t.Errorf("a query during the partition: %v after %v, want context.DeadlineExceeded at 300 ms", err, took)
			}
		}()
	}
	wg.Wait()
	if n := e.pool.Stat().TotalConns(); n != 0 {
		st := e.pool.Stat()
		t.Errorf("%d connections left in the pool after their queries were cancelled, want 0 (acquired %d idle %d constructing %d)", n, st.AcquiredConns(), st.IdleConns(), st.ConstructingConns())
	}
	px.Partition(false)

	// Idle connections the pool pings before lending them.
	warm(t, e, 2)
	time.Sleep(1100 * time.Millisecond) // idle for over a second: pgxpool pings
	px.Partition(true)
	if took, err := timedView(300 * time.Millisecond); !errors.Is(err, context.DeadlineExceeded) || took > 1300*time.Millisecond {
		t.Errorf("a query whose connection's ping got no answer: %v after %v, want context.DeadlineExceeded at 300 ms", err, took)
	}
	start := time.Now()
	for e.pool.Stat().TotalConns() > 1 && time.Since(start) < 10*time.Second {
		time.Sleep(20 * time.Millisecond)
	}
	if took := time.Since(start); took > cancelWait+time.Second {
		t.Errorf("the connection the ping found dead kept its place in the pool for %v, want at most %v", took, cancelWait)
	}
	px.Partition(false)
	took, err := timedView(time.Second)
	if err != nil {
		t.Fatalf("after the partition: %v", err)
	}
	t.Logf("first query after the partition: %v", took)
}
