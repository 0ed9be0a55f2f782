package postgres

import (
	"context"
	"encoding/binary"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

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
//     connect_timeout says otherwise) bounds every dial, pgx's cancel
//     requests included, which its connect timeout does not cover.
//
// A query in flight is bounded by the request's deadline instead
// (emulator/deadline.go): pgx v5.7 cancels it by setting a deadline on the
// socket (pgconn.DeadlineContextWatcherHandler, its default), so the
// request returns at once, without waiting for the server; pgx then
// closes the connection, sending the server a cancel request in the
// background. Such a connection leaves the pool at once (release), and
// its cancel request waits at most cancelWait (cancelBound), so that a
// partition does not leave the pool full of connections that never
// answer.
//
// A server that is up but slow is not affected: keep-alive probes are
// answered by its kernel, and its acknowledgements arrive.
const (
	deadIdle     = 5 * time.Second
	deadInterval = 2 * time.Second
	deadProbes   = 3
	deadUnacked  = 10 * time.Second
)

// configureDial installs the dialer above on cfg's connections.
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
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &cancelBound{Conn: c}, nil
	}
}

// cancelWait bounds how long a cancel request waits for the server's
// answer (it closes the connection once it has the request): a live server
// answers in a round trip, and one that does not answer in this time will
// not answer the cancel in pgx's 15 s either.
const cancelWait = 2 * time.Second

// cancelBound is a connection that, if it turns out to carry a cancel
// request, gives up waiting for the answer after cancelWait. pgx closes a
// connection whose query was cancelled by first sending the server a
// cancel request over a new connection, then waiting up to 15 s for the
// server to close it (pgconn's CancelRequest, from asyncClose), and
// pgxpool keeps the closed connection's place until then: without a
// bound, connections that failed during a partition would hold the pool
// for 15 s each. pgx does not say which dials are for cancel requests, so
// the first message tells: a CancelRequest is 16 bytes, its length then
// the code 80877102 (PostgreSQL's protocol, "CancelRequest"); every
// other connection starts with a StartupMessage, SSLRequest or
// GSSENCRequest, whose codes differ.
type cancelBound struct {
	net.Conn
	started atomic.Bool
}

func (c *cancelBound) Write(b []byte) (int, error) {
	if !c.started.Load() {
		c.started.Store(true)
		if len(b) == 16 && binary.BigEndian.Uint32(b) == 16 && binary.BigEndian.Uint32(b[4:]) == 80877102 {
			c.Conn.SetDeadline(time.Now().Add(cancelWait))
		}
	}
	return c.Conn.Write(b)
}

// release returns conn to the pool; a connection pgx closed (a cancelled
// query, a broken socket) leaves the pool at once instead. pgxpool keeps
// a closed connection's place until pgx's cleanup of it ends, and that
// cleanup first sends the server a cancel request over a new connection,
// waiting up to 15 s for an answer (pgconn's asyncClose): during a
// partition, every request that timed out would hold a place in the pool
// for that long, and the pool would be full of connections that never
// answer after the partition ended. Hijacked, the place is free and pgx
// finishes closing in the background.
func release(conn *pgxpool.Conn) {
	if conn.Conn().IsClosed() {
		conn.Hijack() // closed already: nothing left to do with it
		return
	}
	conn.Release()
}
