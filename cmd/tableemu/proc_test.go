package main

import (
	"github.com/tableemu/tableemu/emulator/store/postgres/pgtest"

	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Process tests: the real binary, built once, run as a user runs it. Every
// one listens on 127.0.0.1 with port 0 (the server prints the port it got)
// or on a port a test has just taken from the system.

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// binary builds cmd/tableemu once per test run.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	if runtime.GOOS == "windows" {
		t.Skip("signals")
	}
	if raceEnabled {
		// The detector sees only this process; the binary is built
		// without -race, so a test that runs it gives it nothing.
		t.Skip("not under the race detector: it runs a binary built without -race")
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tableemu-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "tableemu")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop() // postgres_test.go's throwaway PostgreSQL, if one was started
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// logLine is the one format of every line the server writes once started.
var logLine = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \S`)

// syncBuffer collects a process's output; stdout and stderr share it (and
// one pipe), so lines keep the order the process wrote them in.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is a running tableemu.
type proc struct {
	t    *testing.T
	cmd  *exec.Cmd
	out  *syncBuffer // stdout and stderr, interleaved as written
	done chan struct{}
	code int // exit code, valid once done is closed; -1 if killed by a signal
}

// command is the binary with args, to run in dir (the current directory of
// the process; "" for a fresh one), without the caller's AZURITE_ACCOUNTS.
func command(t *testing.T, dir string, args ...string) *exec.Cmd {
	if dir == "" {
		dir = t.TempDir()
	}
	cmd := exec.Command(binary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AZURITE_ACCOUNTS=")
	return cmd
}

// startProc runs the binary with args in dir (the current directory of the
// process; "" for a fresh one).
func startProc(t *testing.T, dir string, args ...string) *proc {
	t.Helper()
	return startCmd(t, command(t, dir, args...))
}

// startCmd starts cmd, a command from command (perhaps changed), as a proc.
func startCmd(t *testing.T, cmd *exec.Cmd) *proc {
	t.Helper()
	p := &proc{t: t, cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := cmd.Wait()
		p.code = cmd.ProcessState.ExitCode()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			p.code = -2
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// lines is the output so far, split into lines.
func (p *proc) lines() []string {
	s := strings.TrimSuffix(p.out.String(), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// waitFor waits for a line containing sub and returns it; it fails the
// test if the process exits first or nothing comes within 30 s.
func (p *proc) waitFor(sub string) string {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, l := range p.lines() {
			if strings.Contains(l, sub) {
				return l
			}
		}
		select {
		case <-p.done:
			for _, l := range p.lines() {
				if strings.Contains(l, sub) {
					return l
				}
			}
			p.t.Fatalf("tableemu exited (%d) before printing %q:\n%s", p.code, sub, p.out)
		case <-time.After(20 * time.Millisecond):
		}
	}
	p.t.Fatalf("no %q in 30 s:\n%s", sub, p.out)
	return ""
}

// ready waits for the readiness line and returns the port and the
// connection string printed.
func (p *proc) ready() (port, cs string) {
	p.t.Helper()
	l := p.waitFor("successfully listening at ")
	m := regexp.MustCompile(`:(\d+) \(tableemu`).FindStringSubmatch(l)
	if m == nil {
		p.t.Fatalf("no port in %q", l)
	}
	_, cs, _ = strings.Cut(p.waitFor(" connection string "), " connection string ")
	return m[1], cs
}

// exit waits up to limit for the process to end and returns its code.
func (p *proc) exit(limit time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(limit):
		p.t.Fatalf("still running after %s:\n%s", limit, p.out)
		return 0
	}
}

func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
}

// runProc runs the binary to completion (at most 30 s) and returns its exit
// code, stdout and stderr separately.
func runProc(t *testing.T, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := command(t, dir, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	cmd.Wait()
	return cmd.ProcessState.ExitCode(), o.String(), e.String()
}

// snapshot lists every path under dir with its size, to show that a
// failed start changed nothing; a missing dir is "(absent)".
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out = append(out, fmt.Sprintf("%s %v %d", rel, fi.Mode(), fi.Size()))
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return "(absent)"
	}
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
