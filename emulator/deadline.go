package emulator

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tableemu/tableemu"
)

// Deadlines. The service bounds every operation: a request may name its
// own limit in the timeout query parameter, in whole seconds; the Table
// service's limit is 30 seconds, which is also its default, and "reduces
// any timeouts larger than 30 seconds to the 30-second maximum"; when the
// time runs out it answers 500 OperationTimedOut ("Setting timeouts for
// Table service operations",
// learn.microsoft.com/rest/api/storageservices/setting-timeouts-for-table-service-operations;
// docs/protocol.md 2.3). tableemu gives every request a deadline —
// its timeout parameter if given, else --requestTimeout — and carries it in
// the context the store's work runs under: a PostgreSQL query in flight is
// cancelled, a SQLite write waiting for the writer stops waiting, and the
// client gets OperationTimedOut instead of a hang.

// MaxRequestTimeout is the Table service's limit on one operation: longer
// timeout parameters are cut to it, and --requestTimeout may not exceed it.
const MaxRequestTimeout = 30 * time.Second

// DefaultRequestTimeout is Config.RequestTimeout when zero: the service's
// default for writes, and its limit.
const DefaultRequestTimeout = MaxRequestTimeout

// parseRequestTimeout reads --requestTimeout: seconds, fractions allowed
// (tests use short ones), more than 0 and at most the service's 30.
func parseRequestTimeout(v string) (time.Duration, error) {
	sec, err := strconv.ParseFloat(v, 64)
	if err != nil || !(sec > 0) || sec > MaxRequestTimeout.Seconds() {
		return 0, fmt.Errorf("--requestTimeout %q: want seconds, more than 0 and at most 30 (the Table service's limit)", v)
	}
	return max(time.Duration(sec*float64(time.Second)), time.Millisecond), nil
}

// requestTimeout is how long c may take: its timeout parameter, cut to the
// service's 30 s, else the server's default. A timeout that is not a whole
// number of seconds is 400 InvalidQueryParameterValue, the service's
// answer to a query parameter it cannot read (the REST specification
// declares timeout an integer of at least 0). The docs do not say what 0
// means; tableemu reads it as no timeout given, the server's default, so
// that it never fails every request at once. An empty value is read the
// same way.
func (s *Server) requestTimeout(c *call) (time.Duration, error) {
	def := min(s.cfg.RequestTimeout, MaxRequestTimeout) // a Config made in Go is not checked by LoadConfig
	if def <= 0 {
		def = DefaultRequestTimeout
	}
	if c.r.URL.RawQuery == "" {
		return def, nil // no query to parse, as for most point reads
	}
	v, ok := c.query()["timeout"]
	if !ok || len(v) == 0 || v[0] == "" {
		return def, nil
	}
	var sec int64
	for i := 0; i < len(v[0]); i++ {
		d := v[0][i]
		if d < '0' || d > '9' {
			return def, tableemu.New(tableemu.InvalidQueryParameterValue).WithHint(
				"timeout=%s: the timeout parameter is a whole number of seconds; the Table service uses at most 30.", v[0])
		}
		if sec < 1<<20 { // past that, only "more than 30" matters
			sec = sec*10 + int64(d-'0')
		}
	}
	switch {
	case sec == 0:
		return def, nil
	case sec > int64(MaxRequestTimeout/time.Second):
		return MaxRequestTimeout, nil
	}
	return time.Duration(sec) * time.Second, nil
}

// deadlineCtx is a request's context: the connection's (so a client that
// hangs up still cancels its work) with the request's deadline. It costs
// one small allocation per request, where context.WithDeadline costs a
// timer, a cancellation record in the parent and their allocations: a
// point read on SQLite only ever asks Err, which compares the clock with
// the deadline. The first caller of Done — a PostgreSQL query, a write
// waiting for SQLite's writer — gets a real context.WithDeadline, made then
// and released when the request ends (stop).
//
// It carries no values: nothing below the handlers reads any, and
// answering none keeps context.Cause and context.WithCancel from mistaking
// the connection's context for this one.
type deadlineCtx struct {
	parent context.Context
	at     time.Time
	mu     sync.Mutex // making armed
	armed  atomic.Pointer[armedCtx]
}

type armedCtx struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func newDeadline(parent context.Context, at time.Time) *deadlineCtx {
	return &deadlineCtx{parent: parent, at: at}
}

func (d *deadlineCtx) Deadline() (time.Time, bool) { return d.at, true }
func (d *deadlineCtx) Value(any) any               { return nil }
func (d *deadlineCtx) Done() <-chan struct{}       { return d.arm().Done() }

func (d *deadlineCtx) Err() error {
	if a := d.armed.Load(); a != nil {
		return a.ctx.Err() // consistent with the Done it handed out
	}
	if err := d.parent.Err(); err != nil {
		return err
	}
	if !time.Now().Before(d.at) {
		return context.DeadlineExceeded
	}
	return nil
}

func (d *deadlineCtx) arm() context.Context {
	if a := d.armed.Load(); a != nil {
		return a.ctx
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if a := d.armed.Load(); a != nil {
		return a.ctx
	}
	ctx, cancel := context.WithDeadline(d.parent, d.at)
	d.armed.Store(&armedCtx{ctx, cancel})
	return ctx
}

// stop releases the timer Done started, once the request is answered.
func (d *deadlineCtx) stop() {
	if d == nil {
		return
	}
	if a := d.armed.Load(); a != nil {
		a.cancel()
	}
}

// detached is the deadline without the connection's cancellation: for
// work that must not be cut short by a client hanging up ($batch), but
// must still end in time.
func (d *deadlineCtx) detached() *deadlineCtx {
	return newDeadline(context.Background(), d.at)
}

// ctx is the context the store's work for c runs under: the request's
// deadline once ServeHTTP set it, else the connection's.
func (c *call) ctx() context.Context {
	if c.dl != nil {
		return c.dl
	}
	return c.r.Context()
}

// timedOut reports whether err is the request's deadline passing rather
// than a failure of the store.
func timedOut(err error) bool {
	return errors.Is(err, context.DeadlineExceeded)
}

// timeoutError is the answer to a request whose deadline passed: 500
// OperationTimedOut, which the SDKs retry. A write that met it may or may
// not have been applied, as on the service (docs/durability.md).
func timeoutError(err error) error {
	return &storageFault{tableemu.New(tableemu.OperationTimedOut).WithHint(
		"the store did not finish within the request's time limit (its timeout parameter, else --requestTimeout; at most 30 s). "+
			"A write may or may not have been applied: read it back, or retry it with If-Match, before assuming either.").
		WithDetail("%v", err)}
}
