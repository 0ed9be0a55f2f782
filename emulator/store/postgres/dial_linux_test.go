package postgres

import (
	"context"
	"net"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tableemu/tableemu/emulator/store/postgres/pgtest"
)

// TestDialSetsKeepAliveAndUserTimeout: the pool's connections carry the
// keep-alive and TCP_USER_TIMEOUT settings that find dead ones (dial.go).
func TestDialSetsKeepAliveAndUserTimeout(t *testing.T) {
	e, err := openEngine(context.Background(), Options{URL: pgtest.URL(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c, err := e.pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	sc, ok := c.Conn().PgConn().Conn().(*socket)
	if !ok {
		t.Fatalf("connection is a %T, want *socket", c.Conn().PgConn().Conn())
	}
	tc, ok := sc.Conn.(*net.TCPConn)
	if !ok {
		t.Fatalf("connection is a %T, want TCP", sc.Conn)
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	rc.Control(func(fd uintptr) {
		for name, opt := range map[string][2]int{
			"SO_KEEPALIVE":     {unix.SOL_SOCKET, unix.SO_KEEPALIVE},
			"TCP_KEEPIDLE":     {unix.IPPROTO_TCP, unix.TCP_KEEPIDLE},
			"TCP_KEEPINTVL":    {unix.IPPROTO_TCP, unix.TCP_KEEPINTVL},
			"TCP_KEEPCNT":      {unix.IPPROTO_TCP, unix.TCP_KEEPCNT},
			"TCP_USER_TIMEOUT": {unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT},
		} {
			v, err := unix.GetsockoptInt(int(fd), opt[0], opt[1])
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			got[name] = v
		}
	})
	want := map[string]int{"SO_KEEPALIVE": 1, "TCP_KEEPIDLE": int(deadIdle.Seconds()), "TCP_KEEPINTVL": int(deadInterval.Seconds()),
		"TCP_KEEPCNT": deadProbes, "TCP_USER_TIMEOUT": int(deadUnacked.Milliseconds())}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}
}
