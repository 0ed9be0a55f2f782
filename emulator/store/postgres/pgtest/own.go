package pgtest

import (
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"
)

// Cluster is a PostgreSQL server of one test's own, for tests that stop
// and restart it under load (the shared server of Server must stay up for
// the others). It needs initdb installed: TABLEEMU_TEST_POSTGRES cannot
// serve, since the test must control the server's process.
type Cluster struct {
	c    *cluster
	bin  string
	port int
	// URL is the maintenance database's URL, where databases may be
	// created (Database does).
	URL string
}

// Own starts a cluster for t, removed when t ends; it skips t when
// PostgreSQL is not installed.
func Own(t testing.TB) *Cluster {
	t.Helper()
	bin := findBin()
	if bin == "" {
		t.Skip("needs PostgreSQL's own binaries (initdb) to restart a server: install Debian's postgresql package")
	}
	c, err := start(bin)
	if err != nil {
		t.Fatalf("pgtest: start a cluster: %v", err)
	}
	cl := &Cluster{c: c, bin: bin, URL: c.url}
	t.Cleanup(func() { cl.c.stop() })
	return cl
}

// Database creates an empty database and returns its URL.
func (cl *Cluster) Database(t testing.TB) string {
	t.Helper()
	return NewDatabase(t, cl.URL)
}

// Stop shuts the server down as a restart does (SIGINT: PostgreSQL's fast
// shutdown, which ends every session with admin_shutdown and checkpoints),
// keeping its data.
func (cl *Cluster) Stop(t testing.TB) {
	t.Helper()
	cl.c.cmd.Process.Signal(os.Interrupt)
	select {
	case <-cl.c.done:
	case <-time.After(60 * time.Second):
		t.Fatal("pgtest: PostgreSQL did not stop within a minute of SIGINT")
	}
}

// Start starts the stopped server again on the same port, with its data.
func (cl *Cluster) Start(t testing.TB) {
	t.Helper()
	port := portOf(cl.URL)
	if err := cl.c.run(cl.bin, port); err != nil {
		t.Fatalf("pgtest: restart PostgreSQL on port %d: %v", port, err)
	}
}

// portOf is the port of a postgres://…@127.0.0.1:PORT/… URL.
func portOf(raw string) int {
	u, err := url.Parse(raw)
	if err != nil {
		return 0
	}
	port, _ := strconv.Atoi(u.Port())
	return port
}
