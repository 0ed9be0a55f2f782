// Package pgtest gives tests a PostgreSQL database of their own.
//
// URL(t) returns the URL of a new, empty database that is dropped when the
// test ends. The server comes from one of two places:
//
//   - TABLEEMU_TEST_POSTGRES, a URL of a server where the harness may
//     CREATE DATABASE (postgres://user:password@host:5432/postgres);
//   - otherwise a throwaway cluster this test process starts once, on the
//     first call, if PostgreSQL's initdb is installed (Debian's postgresql
//     package puts it in /usr/lib/postgresql/N/bin): initdb into a temporary
//     directory, a server listening on 127.0.0.1 only, on a free port, with
//     trust authentication and fsync off (test data need not survive a power
//     cut), offering TLS with a certificate of its own (TLS, tls.go). As
//     root it runs as the postgres user, since PostgreSQL refuses to run
//     as root.
//
// Neither: the test is skipped with a line saying what to install.
//
// The throwaway cluster is stopped and its directory removed by Main, which
// a package using pgtest calls from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// If the test process dies without reaching the end of Main, the server
// still stops: on Linux it is started with the parent-death signal SIGKILL
// (proc_linux.go), so it does not outlive the test binary.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the environment variable of an existing server.
const EnvURL = "TABLEEMU_TEST_POSTGRES"

// skipLine is why a test is skipped when no server can be had.
const skipLine = "PostgreSQL not available: install Debian's postgresql package or set " + EnvURL + "=postgres://…"

var (
	once    sync.Once
	cl      *cluster
	startEr error
	dbSeq   atomic.Int64
)

// Main runs the tests, then stops the throwaway cluster if one was started,
// and exits with the tests' status.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops the throwaway cluster now (Main calls it). Later calls to
// Server start none again: they skip.
func Stop() {
	once.Do(func() { startEr = errors.New("stopped") })
	if cl != nil {
		cl.stop()
		cl = nil
	}
}

// URL returns the URL of a fresh, empty database for t, dropped when t ends.
func URL(t testing.TB) string {
	t.Helper()
	return NewDatabase(t, Server(t))
}

// Server returns the URL of a server where databases may be created (its
// maintenance database "postgres"), starting the throwaway cluster on the
// first call; it skips t if there is neither a server nor initdb.
func Server(t testing.TB) (adminURL string) {
	t.Helper()
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	once.Do(func() {
		bin := findBin()
		if bin == "" {
			startEr = errNoPostgres
			return
		}
		cl, startEr = start(bin)
	})
	if errors.Is(startEr, errNoPostgres) {
		t.Skip(skipLine)
	}
	if startEr != nil {
		t.Fatalf("starting a throwaway PostgreSQL: %v", startEr)
	}
	return cl.url
}

var errNoPostgres = errors.New("no initdb")

// NewDatabase creates an empty database on the server of adminURL and
// returns its URL; it is dropped when t ends (after the cleanups t
// registers later, such as closing the stores that use it).
func NewDatabase(t testing.TB, adminURL string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		t.Fatalf("pgtest: connect to the test server: %v", err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("tableemu_test_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6, dbSeq.Add(1))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() { dropDatabase(t, adminURL, name) })
	u, err := url.Parse(adminURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("pgtest: %s must be a postgres:// URL", EnvURL)
	}
	u.Path = "/" + name
	return u.String()
}

func dropDatabase(t testing.TB, adminURL, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		t.Logf("pgtest: drop database %s: %v", name, err)
		return
	}
	defer conn.Close(ctx)
	// FORCE (PostgreSQL 13+) ends sessions a failed test left open.
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name); err != nil {
			t.Logf("pgtest: drop database %s: %v", name, err)
		}
	}
}

// findBin finds the directory of initdb and postgres: on PATH, or the
// newest /usr/lib/postgresql/N/bin.
func findBin() string {
	if p, err := exec.LookPath("initdb"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	return ""
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// cluster is the throwaway server.
type cluster struct {
	dir  string // removed by stop
	cmd  *exec.Cmd
	done chan struct{}
	url  string
}

func start(bin string) (*cluster, error) {
	// Under /tmp with mode 0755, so that the postgres user can reach its
	// data directory when the tests run as root.
	dir, err := os.MkdirTemp("/tmp", "tableemu-pg-")
	if err != nil {
		dir, err = os.MkdirTemp("", "tableemu-pg-")
		if err != nil {
			return nil, err
		}
	}
	c := &cluster{dir: dir}
	if err := c.init(bin); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// A free port: taken by the kernel, released, then given to the
	// server; another process could take it in between, so try again.
	for try := 0; ; try++ {
		port, err := freePort()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		err = c.run(bin, port)
		if err == nil {
			return c, nil
		}
		if try == 3 {
			os.RemoveAll(dir)
			return nil, err
		}
	}
}

func (c *cluster) init(bin string) error {
	if err := os.Chmod(c.dir, 0o755); err != nil {
		return err
	}
	cred, err := asPostgres(c.dir)
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(bin, "initdb"), "-D", filepath.Join(c.dir, "data"),
		"-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	setCredential(cmd, cred)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %v\n%s", err, out)
	}
	return writeCert(filepath.Join(c.dir, "data"), cred) // for ssl=on (tls.go)
}

func (c *cluster) run(bin string, port int) error {
	logf, err := os.Create(filepath.Join(c.dir, "server.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	cred, err := asPostgres(c.dir)
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", filepath.Join(c.dir, "data"),
		"-c", "listen_addresses=127.0.0.1", "-p", strconv.Itoa(port),
		"-c", "unix_socket_directories="+c.dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300", "-c", "shared_buffers=64MB", "-c", "ssl=on")
	cmd.Stdout, cmd.Stderr = logf, logf
	setCredential(cmd, cred)
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	u := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, u)
		cancel()
		if err == nil {
			conn.Close(context.Background())
			c.cmd, c.done, c.url = cmd, done, u
			return nil
		}
		select {
		case <-done:
			out, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
			return fmt.Errorf("postgres exited: %s", out)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-done
			return fmt.Errorf("postgres did not accept connections within a minute: %v", err)
		}
	}
}

// stop shuts the server down at once (SIGQUIT: immediate shutdown, no
// checkpoint: the data is thrown away) and removes its directory.
func (c *cluster) stop() {
	if c.cmd != nil && c.cmd.Process != nil {
		stopProcess(c.cmd.Process)
		select {
		case <-c.done:
		case <-time.After(30 * time.Second):
			c.cmd.Process.Kill()
			<-c.done
		}
	}
	os.RemoveAll(c.dir)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
