package conformance

import (
	"bufio"
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	_ "modernc.org/sqlite" // integrity_check of the database file
)

// The real tableemu binary for the tests that run it as a process (the
// crash test, shutdown, hostile clients, the data directory's faults):
// building it, starting and killing it, and checking its database file.

// buildBinary builds cmd/tableemu for the tests that run the real binary.
func buildBinary(t *testing.T) string {
	t.Helper()
	needInProcess(t)
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	if runtime.GOOS == "windows" {
		t.Skip("signals")
	}
	skipUnderRace(t, "it runs a binary built without -race")
	bin := filepath.Join(t.TempDir(), "tableemu")
	build := exec.Command("go", "build", "-o", bin, "../cmd/tableemu")
	build.Stderr = os.Stderr
	must(t, build.Run())
	return bin
}

// proc is a running tableemu.
type proc struct {
	cmd      *exec.Cmd
	cs       string // connection string it printed
	endpoint string // table endpoint, e.g. http://127.0.0.1:1234/devstoreaccount1
	stderr   *lockedBuffer
	done     chan struct{} // closed when the process has exited
	err      error         // Wait's result, valid after done
	// shutting is closed when the process has printed that it is
	// shutting down: it then takes the next signal's default action
	// (cmd/tableemu/main.go restores it just before the line).
	shutting chan struct{}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startBinary runs bin with --location dir on a free port and waits for
// its connection string. If the process exits first, it returns the
// process (done closed, stderr filled) and an error.
func startBinary(t *testing.T, bin, dir string, args ...string) (*proc, error) {
	t.Helper()
	return startBinaryCmd(t, bin, dir, nil, args...)
}

// startBinaryCmd is startBinary with mod applied to the command first
// (to run it as another user, say).
func startBinaryCmd(t *testing.T, bin, dir string, mod func(*exec.Cmd), args ...string) (*proc, error) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--tablePort", "0", "--silent", "--location", dir}, args...)...)
	if mod != nil {
		mod(cmd)
	}
	p := &proc{cmd: cmd, stderr: &lockedBuffer{}, done: make(chan struct{}), shutting: make(chan struct{})}
	cmd.Stderr = p.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		shutting := false
		for sc.Scan() {
			if rest, ok := cutLogLine(sc.Text(), "connection string "); ok {
				lines <- rest
			}
			if !shutting && strings.Contains(sc.Text(), "shutting down") {
				shutting = true
				close(p.shutting)
			}
		}
		close(lines)
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.kill() })
	select {
	case cs, ok := <-lines:
		if !ok {
			<-p.done
			return p, fmt.Errorf("tableemu exited before serving (%v): %s", p.err, p.stderr)
		}
		p.cs = cs
		for _, part := range strings.Split(cs, ";") {
			if v, ok := strings.CutPrefix(part, "TableEndpoint="); ok {
				p.endpoint = v
			}
		}
		go func() {
			for range lines {
			}
		}()
		return p, nil
	case <-time.After(30 * time.Second):
		p.kill()
		return p, fmt.Errorf("tableemu printed no connection string in 30 s: %s", p.stderr)
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Kill()
	<-p.done
}

// exitWithin waits for the process to exit on its own.
func (p *proc) exitWithin(d time.Duration) (exited bool) {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

func (p *proc) table(t testing.TB, name string) *aztables.Client {
	t.Helper()
	svc, err := aztables.NewServiceClientFromConnectionString(p.cs, clientOptions())
	if err != nil {
		t.Fatal(err)
	}
	return svc.NewClient(name)
}

// integrityCheck runs SQLite's PRAGMA integrity_check on the database
// file through a read-only connection of this process (the server may be
// running: WAL lets a second process read a snapshot).
func integrityCheck(t *testing.T, dir string) {
	t.Helper()
	problems, err := integrityProblems(dir)
	must(t, err)
	if len(problems) != 1 || problems[0] != "ok" {
		t.Fatalf("integrity_check: %s", strings.Join(problems, "\n"))
	}
}

// integrityProblems is the output of PRAGMA integrity_check: "ok" alone
// for a sound database.
func integrityProblems(dir string) ([]string, error) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "tableemu.sqlite")+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.Query("PRAGMA integrity_check")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		problems = append(problems, s)
	}
	return problems, rows.Err()
}
