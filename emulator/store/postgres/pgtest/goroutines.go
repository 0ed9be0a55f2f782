package pgtest

import (
	"runtime"
	"strings"
	"time"
)

// Goroutines is a count of the process's goroutines: all of them but
// those this package started (the proxy's, the cluster's), and those with pgx's
// code on their stack (package github.com/jackc/pgx), whose stacks Stacks
// holds. A server left running through network
// partitions must not grow either: pgx before v5.9 leaked a goroutine —
// its context watcher's, stuck in pgconn/ctxwatch — for each batch that
// failed with a read error, such as a query cancelled by its deadline
// (github.com/jackc/pgx/issues/1999).
type Goroutines struct {
	Total, Pgx int
	Stacks     string
}

// CountGoroutines counts the goroutines now.
func CountGoroutines() Goroutines {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var g Goroutines
	var pgx []string
	for _, s := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(s, "created by github.com/tableemu/tableemu/emulator/store/postgres/pgtest.") {
			continue // the test's proxy or cluster, not the code under test
		}
		g.Total++
		if strings.Contains(s, "github.com/jackc/pgx/") {
			pgx = append(pgx, s)
		}
	}
	g.Pgx = len(pgx)
	g.Stacks = strings.Join(pgx, "\n\n")
	return g
}

// SettleGoroutines waits up to limit for the goroutines to come back
// within slack of before (in all, and pgx's within pgx's), and returns
// the last count and how long it waited. Goroutines that end on their own
// — pgx closing a connection in the background, a keep-alive connection
// the client dropped — get the time to end; a leaked one never does.
func SettleGoroutines(before Goroutines, slack int, limit time.Duration) (Goroutines, time.Duration) {
	start := time.Now()
	for {
		g := CountGoroutines()
		if (g.Total <= before.Total+slack && g.Pgx <= before.Pgx) || time.Since(start) > limit {
			return g, time.Since(start)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
