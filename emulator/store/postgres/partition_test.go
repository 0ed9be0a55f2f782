package postgres

import (
	"context"
	"crypto/tls"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/store/postgres/pgtest"
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
// (emulator/store/postgres/pgtest.Proxy), queries past their deadline return at the
// deadline, and the connections they leave behind, which will never
// answer, do not keep their places in the pool — neither the ones whose
// query was cancelled (release) nor the one the pool found dead with its
// ping before lending it, whose closing — a cancel request, Terminate,
// waiting for the server to close — ends within closeWait (sockets)
// instead of pgx's 15 s. Once the partition ends, the store
// serves at once, and no goroutine is left behind. The same over TLS,
// where pgx (since v5.10) sends its cancel requests over TLS too.
func TestPartitionedConnectionsLeaveThePool(t *testing.T) {
	t.Run("plain", func(t *testing.T) { partitionPool(t, pgtest.URL(t), false) })
	t.Run("TLS", func(t *testing.T) { partitionPool(t, pgtest.TLS(t, pgtest.URL(t)), true) })
}

func partitionPool(t *testing.T, dbURL string, wantTLS bool) {
	dbURL, px := pgtest.Through(t, dbURL)
	e, err := openEngine(context.Background(), Options{URL: dbURL + "&pool_max_conns=2"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	<-e.sweepDone // its connection is not under test
	c, err := e.pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, isTLS := c.Conn().PgConn().Conn().(*tls.Conn); isTLS != wantTLS {
		t.Fatalf("the connection is a %T, want TLS %v", c.Conn().PgConn().Conn(), wantTLS)
	}
	c.Release()
	timedView := func(d time.Duration) (time.Duration, error) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		start := time.Now()
		err := e.View(ctx, lookup)
		return time.Since(start), err
	}

	// Queries in flight when the partition starts.
	warm(t, e, 2)
	before := pgtest.CountGoroutines()
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
	// pgxpool counts a connection it is destroying as acquired until pgx
	// has closed it; nothing else holds one now. (A connection the pool
	// began to make meanwhile waits for the partition or its connect
	// timeout: that place is not in question here.)
	start := time.Now()
	for e.pool.Stat().AcquiredConns() > 0 && time.Since(start) < 20*time.Second {
		time.Sleep(20 * time.Millisecond)
	}
	if took := time.Since(start); took > closeWait+time.Second {
		t.Errorf("the connection the ping found dead kept its place in the pool for %v, want at most %v", took, closeWait)
	}
	px.Partition(false)
	took, err := timedView(time.Second)
	if err != nil {
		t.Fatalf("after the partition: %v", err)
	}
	t.Logf("first query after the partition: %v", took)

	// No goroutine is left behind: pgx closes the connections the
	// partition broke in the background (pgconn's asyncClose), within
	// closeWait, and leaks none (pgx before v5.9 left one per cancelled
	// batch, waiting forever in pgconn/ctxwatch).
	after, waited := pgtest.SettleGoroutines(before, 0, 20*time.Second)
	if after.Total > before.Total || after.Pgx > before.Pgx {
		t.Errorf("%d goroutines (%d in pgx) %v after the partition, %d (%d) before it; pgx's:\n%s",
			after.Total, after.Pgx, waited.Round(time.Millisecond), before.Total, before.Pgx, after.Stacks)
	}
	t.Logf("goroutines: %d (%d in pgx) before the partition, %d (%d) %v after it",
		before.Total, before.Pgx, after.Total, after.Pgx, waited.Round(time.Millisecond))
}
