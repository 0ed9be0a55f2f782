// Package azuritetest starts a real Azurite table service for tests that
// read what Azurite wrote or copy from it (docs/transfer.md). Azurite is
// installed with npm on first use into the user's cache directory, one
// version (Version) shared by every test and run; TABLEEMU_AZURITE names
// an azurite-table to use instead. Without npm the tests skip, unless
// TABLEEMU_REQUIRE_AZURITE=1 (CI sets it), where they fail.
package azuritetest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Version is the Azurite every test runs: the one docs/benchmarks.md
// compares with.
const Version = "3.37.0"

// Binary returns the path of azurite-table, installing Azurite if needed.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("TABLEEMU_AZURITE"); p != "" {
		return p
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "tableemu-test", "azurite-"+Version)
	bin := filepath.Join(dir, "node_modules", ".bin", "azurite-table")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		missing(t, "npm is not installed")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// One install at a time: test binaries of several packages run at once.
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(bin); err == nil {
		return bin // another test installed it meanwhile
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", dir, "--no-save", "--no-audit", "--no-fund",
		"--loglevel=error", "azurite@"+Version)
	if out, err := cmd.CombinedOutput(); err != nil {
		missing(t, fmt.Sprintf("npm install azurite@%s: %v\n%s", Version, err, out))
	}
	return bin
}

func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("TABLEEMU_REQUIRE_AZURITE") == "1" {
		t.Fatalf("Azurite is required (TABLEEMU_REQUIRE_AZURITE=1): %s", why)
	}
	t.Skipf("no Azurite: %s (install Node.js and npm, or set TABLEEMU_AZURITE to an azurite-table)", why)
}

// Azurite is a running azurite-table.
type Azurite struct {
	// Endpoint is the table service of devstoreaccount1,
	// http://127.0.0.1:<port>/devstoreaccount1.
	Endpoint string
	Port     int
	// Dir is its --location: where it keeps __azurite_db_table__.json.
	Dir string
	cmd *exec.Cmd
	end chan error
}

// ConnectionString is devstoreaccount1's at a.
func (a *Azurite) ConnectionString() string {
	return "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;" +
		"AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;" +
		"TableEndpoint=" + a.Endpoint + ";"
}

// Start runs Azurite's table service on a free loopback port with its data
// in dir (a new temporary directory when ""), extra arguments appended and
// env added to its environment (AZURITE_ACCOUNTS, for instance). It is
// stopped at the test's end if Stop was not called.
func Start(t testing.TB, dir string, env []string, extra ...string) *Azurite {
	t.Helper()
	bin := Binary(t)
	if dir == "" {
		dir = t.TempDir()
	}
	port := freePort(t)
	// --disableTelemetry: besides sending nothing from tests, Azurite
	// with telemetry on (3.37.0's default) sends a stop event on
	// SIGINT and, with no network to send it to, stays alive for half a
	// minute after "successfully closed" (Stop then killed it).
	args := append([]string{"--tableHost", "127.0.0.1", "--tablePort", strconv.Itoa(port), "--location", dir,
		"--silent", "--skipApiVersionCheck", "--disableTelemetry"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := &Azurite{Endpoint: fmt.Sprintf("http://127.0.0.1:%d/devstoreaccount1", port), Port: port, Dir: dir, cmd: cmd, end: make(chan error, 1)}
	go func() { a.end <- cmd.Wait() }()
	t.Cleanup(func() { a.Stop(t) })
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
		if err == nil {
			c.Close()
			return a
		}
		select {
		case err := <-a.end:
			a.end <- err
			t.Fatalf("azurite-table ended before listening: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("azurite-table did not listen on %d within 60 s", port)
		}
	}
}

// Stop ends Azurite as a user's Ctrl-C does (SIGINT), which has it save
// its database to Dir before exiting, and waits for it (at most 30 s, then
// it is killed and the test fails). Stopping twice is harmless.
func (a *Azurite) Stop(t testing.TB) {
	t.Helper()
	select {
	case err := <-a.end: // ended already
		a.end <- err
		return
	default:
	}
	a.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-a.end:
		a.end <- err
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Errorf("azurite-table: %v", err)
		}
	case <-time.After(30 * time.Second):
		a.cmd.Process.Kill()
		a.end <- <-a.end
		t.Errorf("azurite-table did not end within 30 s of SIGINT: killed")
	}
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
