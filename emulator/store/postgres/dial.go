package postgres

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Dead connections. A connection to a server that stopped answering — a
// network partition, a host that died without closing its sockets — looks
// alive to the operating system until TCP gives up on it, which by
// default takes minutes (Linux retransmits unacknowledged data for about
// 15 minutes; Go's default keep-alive probes an idle connection after 15 s
// and gives up after 9 more probes 15 s apart). Meanwhile the pool would
// lend it again and again, and every request that got it would wait until
// its deadline. So tableemu dials with
//
//   - TCP keep-alive after deadIdle of silence, probing every deadInterval
//     and giving up after deadProbes unanswered probes: an idle connection
//     to a vanished server is closed by the kernel within about 11 s, and
//     the next request that takes it from the pool finds it closed at once
//     (the pool pings a connection that was idle for over a second before
//     lending it, pgxpool's ShouldPing default) and gets a fresh one;
//   - TCP_USER_TIMEOUT (Linux; RFC 5482) of deadUnacked: a connection whose
//     sent data stays unacknowledged that long is closed, including the
//     cancel requests and Terminate messages pgx sends when it closes a
//     connection whose query was cancelled;
//   - a dial timeout: the connect timeout (10 s unless the URL's
//     connect_timeout says otherwise) bounds every connection's dial;
//     pgx's cancel requests, which its connect timeout does not cover,
//     get closeWait (sockets, below).
//
// A query in flight is bounded by the request's deadline instead
// (emulator/deadline.go): pgx cancels it by setting a deadline on the
// socket (pgconn.DeadlineContextWatcherHandler, its default), so the
// request returns at once, without waiting for the server (but for a
// COMMIT, whose end it awaits a moment: settle, below); pgx then
// closes the connection in the background (pgconn's asyncClose): it
// sends the server a cancel request over a new connection, then a
// Terminate message, and reads what the server still sends until it
// closes (since pgx v5.11, so that the server sees a clean close), all
// within 15 s. Such a connection leaves the pool at once (release), and
// its closing ends within closeWait (sockets), so that a partition does
// not leave the pool full of connections that never answer.
//
// A server that is up but slow is not affected: keep-alive probes are
// answered by its kernel, and its acknowledgements arrive.
const (
	deadIdle     = 5 * time.Second
	deadInterval = 2 * time.Second
	deadProbes   = 3
	deadUnacked  = 10 * time.Second
)

// configureDial installs the dialer above on cfg's connections, each
// with its own sockets.
func configureDial(cfg *pgxpool.Config) {
	d := &net.Dialer{
		Timeout: cfg.ConnConfig.ConnectTimeout,
		KeepAliveConfig: net.KeepAliveConfig{
			Enable: true, Idle: deadIdle, Interval: deadInterval, Count: deadProbes,
		},
		Control: func(network, _ string, rc syscall.RawConn) error {
			if !strings.HasPrefix(network, "tcp") {
				return nil // a Unix socket: no TCP options
			}
			var serr error
			if err := rc.Control(func(fd uintptr) { serr = setUserTimeout(fd, deadUnacked) }); err != nil {
				return err
			}
			return serr
		},
	}
	// pgxpool calls BeforeConnect with a copy of the configuration for
	// each connection it makes, and pgx dials that connection's cancel
	// requests with the DialFunc of the same copy (PgConn.CancelRequest).
	prev := cfg.BeforeConnect
	cfg.BeforeConnect = func(ctx context.Context, cc *pgx.ConnConfig) error {
		s := &sockets{dialer: d}
		cc.DialFunc = s.dial
		cc.BuildContextWatcherHandler = s.connected
		if prev != nil {
			return prev(ctx, cc)
		}
		return nil
	}
}

// closeWait bounds how long pgx's closing of a connection it gave up on
// takes, from its cancel request on: a live server answers a cancel
// request in a round trip and closes a connection that sent Terminate at
// once, and one that does not answer in this time will not answer in
// pgx's 15 s either.
const closeWait = 2 * time.Second

// sockets are the network connections of one pgx connection: its own
// (main), and those pgx dials afterwards to send the server a cancel
// request. pgx sends one only when it closes a connection whose query it
// gave up on (the default context watcher interrupts a query by the
// socket's deadline, not by a cancel request), and pgxpool keeps the
// closed connection's place until that closing ends: without a bound,
// each connection a partition broke (the one its ping found dead, say)
// would hold its place for pgx's 15 s. So a dial made once the
// connection is up (pgx has called BuildContextWatcherHandler, which it
// does once the server is ready for queries) and while its socket is
// still open is a cancel request: from then, it and the connection's own
// socket have closeWait. pgx says no other way which dials are cancel
// requests, nor lets its 15 s be changed (the context watcher handlers'
// delays are about interrupting a query, not closing); this way holds
// over TLS (pgx v5.10 sends cancel requests over TLS when the connection
// uses it, so their bytes cannot be recognised) and whatever the
// protocol version (3.2 lengthens the cancel request's key).
type sockets struct {
	dialer *net.Dialer
	mu     sync.Mutex
	main   *socket // the connection's own, once dialed
	up     bool    // the connection is ready for queries
}

// connected is the connection's BuildContextWatcherHandler: pgx's default
// handler, noting that the connection is up.
func (s *sockets) connected(pc *pgconn.PgConn) ctxwatch.Handler {
	s.mu.Lock()
	s.up = true
	s.mu.Unlock()
	return &pgconn.DeadlineContextWatcherHandler{Conn: pc.Conn()}
}

func (s *sockets) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	s.mu.Lock()
	main := s.main
	cancelReq := s.up && main != nil && !main.closed.Load()
	if !cancelReq {
		s.up = false // a new attempt (another host, or without TLS)
	}
	s.mu.Unlock()
	if !cancelReq {
		c, err := s.dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		sc := &socket{Conn: c}
		s.mu.Lock()
		s.main = sc
		s.mu.Unlock()
		return sc, nil
	}
	by := main.closeBy(time.Now().Add(closeWait))
	ctx, cancel := context.WithDeadline(ctx, by)
	defer cancel()
	c, err := s.dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c.SetDeadline(by)
	return c, nil
}

// socket is a connection's own network connection: once pgx is closing
// the connection (closeBy), no deadline it sets reaches past the bound.
type socket struct {
	net.Conn
	by     atomic.Int64 // Unix nanoseconds; 0 until closeBy
	closed atomic.Bool
}

// closeBy bounds the socket at t, or at the bound it has already (pgx
// tries a second cancel request on a Unix socket whose first dial
// failed), and returns the bound.
func (c *socket) closeBy(t time.Time) time.Time {
	c.by.CompareAndSwap(0, t.UnixNano())
	by := time.Unix(0, c.by.Load())
	c.Conn.SetDeadline(by)
	return by
}

func (c *socket) bound(t time.Time) time.Time {
	if by := c.by.Load(); by != 0 && (t.IsZero() || t.UnixNano() > by) {
		return time.Unix(0, by)
	}
	return t
}

func (c *socket) SetDeadline(t time.Time) error      { return c.Conn.SetDeadline(c.bound(t)) }
func (c *socket) SetReadDeadline(t time.Time) error  { return c.Conn.SetReadDeadline(c.bound(t)) }
func (c *socket) SetWriteDeadline(t time.Time) error { return c.Conn.SetWriteDeadline(c.bound(t)) }

func (c *socket) Close() error {
	c.closed.Store(true)
	return c.Conn.Close()
}

// release returns conn to the pool; a connection pgx closed (a cancelled
// query, a broken socket) leaves the pool at once instead. pgxpool keeps
// a closed connection's place until pgx's closing of it ends (pgconn's
// asyncClose, up to closeWait here, above): hijacked, the place is free
// at once and pgx finishes closing in the background.
func release(conn *pgxpool.Conn) {
	if conn.Conn().IsClosed() {
		conn.Hijack() // closed already: nothing left to do with it
		return
	}
	conn.Release()
}

// settle waits, after the request's deadline cut a commit short, until
// the server has finished with the transaction, for at most settleWait.
// pgx gives up on the connection at the deadline and closes it in the
// background (above), while the server may still be running the COMMIT
// it was sent, which it finishes (or, met by pgx's cancel request first,
// rolls back) before it reads the Terminate that follows and closes its
// end; pgx's closing ends then (pgconn's asyncClose reads until the
// server closes). Answering before then let the commit take effect after
// the answer: a client whose delete timed out read its entity still
// there, and then gone, and its retry failed on the state the first try
// left (storetest's IsolationInterrupted: "snapshot not found" under
// load; TestDeadlineAtCommitSettles). The bound keeps a server that does
// not answer (a partition) from holding the answer past the deadline for
// long: its commit's outcome stays unknown, as docs/postgres.md says.
func (tx *Tx) settle() {
	pc := tx.conn.Conn().PgConn()
	if !pc.IsClosed() {
		// pgx did not give up on the connection: the server answered,
		// or COMMIT was not sent (pgx checks the context first, and the
		// pool closes a connection left inside a transaction).
		return
	}
	t := time.NewTimer(settleWait)
	defer t.Stop()
	select {
	case <-pc.CleanupDone():
	case <-t.C:
	}
}

// settleWait bounds settle: a live server ends a COMMIT, answers pgx's
// cancel request and closes the connection in a few round trips and a
// disk flush.
const settleWait = 500 * time.Millisecond
