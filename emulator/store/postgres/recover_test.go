package postgres

import (
	"context"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/store/postgres/pgtest"
)

// proxy forwards TCP connections to a server until it is cut: then it
// closes every connection and refuses new ones, as a server that went away
// (or a network that failed) would.
type proxy struct {
	target string
	mu     sync.Mutex
	l      net.Listener
	conns  []net.Conn
}

func startProxy(t *testing.T, target, addr string) *proxy {
	t.Helper()
	p := &proxy{target: target}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	p.l = l
	go p.serve(l)
	t.Cleanup(p.cut)
	return p
}

func (p *proxy) serve(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go func() { io.Copy(s, c); s.Close() }()
		go func() { io.Copy(c, s); c.Close() }()
	}
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.l.Close()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestServerGoneAndBack: while the server cannot be reached every
// transaction fails with FaultUnavailable (the emulator's 503); once it
// can, the pool replaces its dead connections by itself.
func TestServerGoneAndBack(t *testing.T) {
	raw := pgtest.URL(t)
	u, _ := url.Parse(raw)
	p := startProxy(t, u.Host, "127.0.0.1:0")
	addr := p.l.Addr().String()
	via := *u
	via.Host = addr
	s := openURL(t, via.String())
	var tb store.Table
	update(t, s, func(tx *store.Tx) error { var err error; tb, err = tx.CreateTable("a", "t"); return err })
	// Several connections in the pool, all about to die.
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); put(s, tb, string(rune('a'+i))) }()
	}
	wg.Wait()
	p.cut()
	err := put(s, tb, "x")
	if store.FaultOf(err) != store.FaultUnavailable {
		t.Fatalf("Update with the server gone: %v (fault %v), want FaultUnavailable", err, store.FaultOf(err))
	}
	err = s.View(context.Background(), func(tx *store.Tx) error { _, err := tx.GetTable("a", "t"); return err })
	if store.FaultOf(err) != store.FaultUnavailable {
		t.Fatalf("View with the server gone: %v, want FaultUnavailable", err)
	}
	startProxy(t, u.Host, addr)
	for i := range 8 {
		if err := put(s, tb, "y"); err != nil {
			t.Fatalf("Update %d once the server is back: %v", i, err)
		}
		if err := s.ViewPoint(context.Background(), func(tx *store.Tx) error { _, err := tx.GetEntity(tb, "p", "y"); return err }); err != nil {
			t.Fatalf("ViewPoint %d once the server is back: %v", i, err)
		}
	}
}

// TestBackendsTerminated: the server ends every session (a restart, a
// failover, an administrator's pg_terminate_backend); the next requests
// succeed on new connections.
func TestBackendsTerminated(t *testing.T) {
	admin := pgtest.Server(t)
	raw := pgtest.NewDatabase(t, admin)
	s := openURL(t, raw)
	var tb store.Table
	update(t, s, func(tx *store.Tx) error { var err error; tb, err = tx.CreateTable("a", "t"); return err })
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); put(s, tb, string(rune('a'+i))) }()
	}
	wg.Wait()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	u, _ := url.Parse(raw)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1`, u.Path[1:]).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no session to terminate")
	}
	for i := range 8 {
		if err := put(s, tb, "z"); err != nil {
			t.Fatalf("Update %d after the sessions were ended: %v", i, err)
		}
		if err := s.View(ctx, func(tx *store.Tx) error { _, err := tx.GetEntity(tb, "p", "z"); return err }); err != nil {
			t.Fatalf("View %d after the sessions were ended: %v", i, err)
		}
	}
}
