package conformance

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/emulator"
)

// Storage faults: a read-only or full data directory, and a damaged
// database file. Each is a clear start-up error or a 500/503 with the
// service's error body — never a crash, never a corrupted database.

// openDir is a directory other users can reach (t.TempDir is 0700), so
// that a test running as root can run the binary as nobody.
func openDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "tableemu-faults-")
	must(t, err)
	t.Cleanup(func() {
		filepath.Walk(d, func(p string, _ os.FileInfo, _ error) error { os.Chmod(p, 0o755); return nil })
		os.RemoveAll(d)
	})
	must(t, os.Chmod(d, 0o755))
	return d
}

// asUnprivileged returns a command modifier that drops root, because root
// ignores file permissions; nil when the test does not run as root.
func asUnprivileged() func(*exec.Cmd) {
	if os.Geteuid() != 0 {
		return nil
	}
	return func(c *exec.Cmd) {
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
}

func copyFile(t *testing.T, dst, src string) {
	t.Helper()
	b, err := os.ReadFile(src)
	must(t, err)
	must(t, os.WriteFile(dst, b, 0o644))
}

// serviceError checks that err is a service error with one of the statuses
// and carries its code in both places, and returns the code and message.
func serviceError(t *testing.T, err error, statuses ...int) (string, string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("want a service error, got %v", err)
	}
	ok := false
	for _, s := range statuses {
		ok = ok || re.StatusCode == s
	}
	body, _ := runtime.Payload(re.RawResponse)
	r := &rawResponse{Response: re.RawResponse, body: body}
	if !ok || re.ErrorCode == "" || errorCodeInBody(r) != re.ErrorCode {
		t.Fatalf("want status %v with a code in header and body, got %d %q: %s", statuses, re.StatusCode, re.ErrorCode, body)
	}
	var j struct {
		Err struct {
			Message struct{ Value string } `json:"message"`
		} `json:"odata.error"`
	}
	json.Unmarshal(body, &j)
	msg, _, _ := strings.Cut(j.Err.Message.Value, "\n")
	return re.ErrorCode, msg
}

func TestReadOnlyDataDirectory(t *testing.T) {
	built := buildBinary(t)
	base := openDir(t)
	bin := filepath.Join(base, "tableemu") // where nobody can run it
	copyFile(t, bin, built)
	must(t, os.Chmod(bin, 0o755))
	asUser := asUnprivileged()

	// A fresh directory nobody may write: a clear start-up error.
	ro := filepath.Join(base, "ro")
	must(t, os.Mkdir(ro, 0o555))
	for _, loc := range []string{ro, filepath.Join(ro, "sub")} {
		p, err := startBinaryCmd(t, bin, loc, asUser)
		if p == nil {
			t.Fatal(err)
		}
		if err == nil {
			t.Fatalf("started on read-only %s", loc)
		}
		if p.err == nil || !strings.Contains(p.stderr.String(), loc) {
			t.Fatalf("start-up error does not name %s: %v %s", loc, p.err, p.stderr)
		}
		t.Logf("read-only %s: %v: %s", filepath.Base(loc), p.err, strings.TrimSpace(p.stderr.String()))
	}

	// An existing database made read-only, file and directory.
	data := filepath.Join(base, "data")
	must(t, os.Mkdir(data, 0o755))
	if asUser != nil {
		must(t, os.Chown(data, 65534, 65534))
	}
	p, err := startBinaryCmd(t, bin, data, asUser)
	must(t, err)
	c := p.table(t, "kept")
	_, err = c.CreateTable(ctx(), nil)
	must(t, err)
	_, err = c.AddEntity(ctx(), entityJSON(t, "p", "r", "V", "v"), nil)
	must(t, err)
	must(t, p.cmd.Process.Signal(syscall.SIGTERM))
	if !p.exitWithin(10*time.Second) || p.err != nil {
		t.Fatalf("stop: %v %s", p.err, p.stderr)
	}
	must(t, os.Chmod(filepath.Join(data, "tableemu.sqlite"), 0o444))
	must(t, os.Chmod(data, 0o555))
	p, err = startBinaryCmd(t, bin, data, asUser)
	if err != nil {
		if !strings.Contains(p.stderr.String(), "tableemu.sqlite") {
			t.Fatalf("start-up error does not name the file: %s", p.stderr)
		}
		t.Logf("read-only database: start-up error: %s", strings.TrimSpace(p.stderr.String()))
	} else {
		c := p.table(t, "kept")
		_, err := c.AddEntity(ctx(), entityJSON(t, "p", "r2"), nil)
		code, msg := serviceError(t, err, 500, 503)
		t.Logf("read-only database: served; a write answers %s %q", code, msg)
		integrityCheck(t, data)
	}
	must(t, os.Chmod(data, 0o755))
	must(t, os.Chmod(filepath.Join(data, "tableemu.sqlite"), 0o644))
	p.kill()
	integrityCheck(t, data)
}

// TestDiskFull runs the binary on a 4 MiB tmpfs (root only), fills it,
// checks that writes are refused with the service's error body while reads
// go on, frees space, and checks that every acknowledged write is there and
// the database is sound.
func TestDiskFull(t *testing.T) {
	bin := buildBinary(t)
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	mnt := openDir(t)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	var p *proc
	t.Cleanup(func() {
		if p != nil {
			p.kill()
		}
		exec.Command("umount", mnt).Run()
	})
	filler := filepath.Join(mnt, "filler")
	must(t, os.WriteFile(filler, make([]byte, 1<<20), 0o644))
	data := filepath.Join(mnt, "data")
	var err error
	p, err = startBinary(t, bin, data)
	must(t, err)
	c := p.table(t, "full")
	_, err = c.CreateTable(ctx(), nil)
	must(t, err)

	acked := 0
	var codes []string
	big := strings.Repeat("x", 30000)
	for i := 0; i < 400 && len(codes) < 5; i++ {
		rk := fmt.Sprintf("r%04d", i)
		_, err := c.AddEntity(ctx(), entityJSON(t, "p", rk, "A", big, "B", big), nil)
		if err == nil {
			if len(codes) > 0 {
				t.Fatalf("%s acknowledged after a disk-full refusal; fine, but the test assumed none", rk)
			}
			acked++
			continue
		}
		code, msg := serviceError(t, err, 500, 503)
		codes = append(codes, code+": "+msg)
	}
	if len(codes) == 0 {
		t.Fatal("the disk never filled")
	}
	t.Logf("disk full after %d inserts of 60 KB; then: %s", acked, codes[0])
	// A batch is refused whole, at the top level.
	var acts []aztables.TransactionAction
	for i := 0; i < 20; i++ {
		acts = append(acts, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: entityJSON(t, "p", fmt.Sprintf("b%02d", i), "A", big)})
	}
	_, err = c.SubmitTransaction(ctx(), acts, nil)
	code, msg := serviceError(t, err, 500, 503)
	t.Logf("a batch on the full disk: %s %q", code, msg)
	// Reads go on.
	if _, err := c.GetEntity(ctx(), "p", "r0000", nil); err != nil {
		t.Fatalf("read on a full disk: %v", err)
	}
	if n := countEntities(t, c); n != acked {
		t.Fatalf("%d entities on a full disk, %d acknowledged", n, acked)
	}
	integrityCheck(t, data)

	// Killed while the disk is full, restarted while it still is.
	p.kill()
	p, err = startBinary(t, bin, data)
	if err != nil {
		t.Logf("restart on the full disk: %v", err)
	} else {
		c = p.table(t, "full")
		if n := countEntities(t, c); n != acked {
			t.Fatalf("after a kill on a full disk: %d entities, %d acknowledged", n, acked)
		}
		_, err := c.AddEntity(ctx(), entityJSON(t, "p", "again", "A", big, "B", big), nil)
		if err == nil {
			acked++
		} else {
			code, msg := serviceError(t, err, 500, 503)
			t.Logf("restarted on the full disk: serves reads; a write answers %s %q", code, msg)
		}
		p.kill()
	}

	// Space freed: writes work again, nothing acknowledged is lost.
	must(t, os.Remove(filler))
	p, err = startBinary(t, bin, data)
	must(t, err)
	c = p.table(t, "full")
	_, err = c.AddEntity(ctx(), entityJSON(t, "p", "afterfree", "A", big), nil)
	must(t, err)
	acked++
	if n := countEntities(t, c); n != acked {
		t.Fatalf("after freeing space: %d entities, %d acknowledged", n, acked)
	}
	must(t, p.cmd.Process.Signal(syscall.SIGTERM))
	if !p.exitWithin(10*time.Second) || p.err != nil {
		t.Fatalf("stop: %v %s", p.err, p.stderr)
	}
	integrityCheck(t, data)
}

func countEntities(t *testing.T, c *aztables.Client) int {
	t.Helper()
	n := 0
	pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Select: strPtr("RowKey")})
	for pager.More() {
		page, err := pager.NextPage(ctx())
		must(t, err)
		n += len(page.Entities)
	}
	return n
}

func strPtr(s string) *string { return &s }

// TestDamagedDatabase starts the binary on database files damaged in
// different ways: a clear start-up error, or a server that answers the
// statements meeting the damage with 500 InternalError and goes on
// serving, never a crash.
func TestDamagedDatabase(t *testing.T) {
	bin := buildBinary(t)
	good := t.TempDir()
	p, err := startBinary(t, bin, good)
	must(t, err)
	c := p.table(t, "damaged")
	_, err = c.CreateTable(ctx(), nil)
	must(t, err)
	pad := strings.Repeat("d", 1000)
	for b := 0; b < 30; b++ {
		var acts []aztables.TransactionAction
		for i := 0; i < 100; i++ {
			acts = append(acts, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
				Entity: entityJSON(t, fmt.Sprintf("p%02d", b), fmt.Sprintf("r%03d", i), "Pad", pad)})
		}
		_, err := c.SubmitTransaction(ctx(), acts, nil)
		must(t, err)
	}
	must(t, p.cmd.Process.Signal(syscall.SIGTERM))
	if !p.exitWithin(10*time.Second) || p.err != nil {
		t.Fatalf("stop: %v %s", p.err, p.stderr)
	}
	src := filepath.Join(good, "tableemu.sqlite")
	fi, err := os.Stat(src)
	must(t, err)
	size := fi.Size()
	const page = 4096

	for _, tc := range []struct {
		name   string
		damage func(f *os.File)
	}{
		{"not a database", func(f *os.File) { f.Truncate(0); io.WriteString(f, strings.Repeat("this is not SQLite\n", 500)) }},
		{"header", func(f *os.File) { f.WriteAt(randomBytes(100), 0) }},
		{"schema page", func(f *os.File) { f.WriteAt(randomBytes(page-100), 100) }},
		{"middle pages", func(f *os.File) { f.WriteAt(randomBytes(16*page), (size/page/2)*page) }},
		{"last pages", func(f *os.File) { f.WriteAt(randomBytes(8*page), size-8*page) }},
		{"truncated", func(f *os.File) { f.Truncate(size / 3 / page * page) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			dst := filepath.Join(dir, "tableemu.sqlite")
			copyFile(t, dst, src)
			f, err := os.OpenFile(dst, os.O_RDWR, 0)
			must(t, err)
			tc.damage(f)
			must(t, f.Close())
			problems, ierr := integrityProblems(dir)
			if ierr == nil && len(problems) == 1 && problems[0] == "ok" {
				t.Fatal("the damage went unnoticed by integrity_check: not a test of anything")
			}
			p, err := startBinary(t, bin, dir)
			if err != nil {
				msg := strings.TrimSpace(p.stderr.String())
				if !strings.Contains(msg, dst) || !(strings.Contains(msg, "damaged") || strings.Contains(msg, "not a SQLite database")) {
					t.Fatalf("unclear start-up error: %s", msg)
				}
				t.Logf("start-up error: %s", msg)
				return
			}
			// Served: every statement meeting the damage is a coded 500.
			c := p.table(t, "damaged")
			errs, okReads := 0, 0
			var first string
			for b := 0; b < 30; b++ {
				filter := fmt.Sprintf("PartitionKey eq 'p%02d'", b)
				pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter})
				for pager.More() {
					if _, err := pager.NextPage(ctx()); err != nil {
						code, msg := serviceError(t, err, 500)
						if first == "" {
							first = code + " " + msg
						}
						errs++
						break
					}
					okReads++
				}
			}
			// The process is alive and answers what is not damaged.
			if p.exitWithin(0) {
				t.Fatalf("the server exited: %v %s", p.err, p.stderr)
			}
			_, werr := c.AddEntity(context.Background(), entityJSON(t, "new", "r"), nil)
			if werr != nil {
				serviceError(t, werr, 500, 503)
			}
			if errs == 0 {
				t.Logf("served; all 30 partitions read without an error (damage in pages no query reached)")
			} else {
				t.Logf("served; %d partitions read, %d answered %s", okReads, errs, first)
			}
			if !strings.Contains(p.stderr.String(), "damaged") && errs > 0 {
				t.Errorf("the damage is not in the log: %s", p.stderr)
			}
		})
	}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// TestGracefulShutdown: the first SIGTERM lets an in-flight request
// finish, refuses new connections, closes the database (no WAL left
// behind) and exits 0; a second signal exits at once.
func TestGracefulShutdown(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	p, err := startBinary(t, bin, dir)
	must(t, err)
	c := p.table(t, "graceful")
	_, err = c.CreateTable(ctx(), nil)
	must(t, err)

	// An insert whose body is half sent when the signal arrives.
	body := marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "inflight", "A": strings.Repeat("x", 30000), "B": strings.Repeat("y", 30000)})
	pr, pw := io.Pipe()
	req, err := http.NewRequest("POST", p.endpoint+"/graceful", pr)
	must(t, err)
	req.ContentLength = int64(len(body))
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json;odata=nometadata")
	req.Header.Set("Prefer", "return-no-content")
	tg := &target{endpoint: p.endpoint, account: emulator.DevAccount, key: emulator.DevKey}
	tg.signLite(t, req)
	type result struct {
		status int
		body   string
		err    error
	}
	resc := make(chan result, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			resc <- result{err: err}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resc <- result{status: resp.StatusCode, body: string(b)}
	}()
	_, err = pw.Write(body[:len(body)/2])
	must(t, err)
	time.Sleep(200 * time.Millisecond) // the server is reading the body
	must(t, p.cmd.Process.Signal(syscall.SIGTERM))
	time.Sleep(300 * time.Millisecond)
	if p.exitWithin(0) {
		t.Fatalf("exited with a request in flight: %v %s", p.err, p.stderr)
	}
	// New connections are refused while the old request finishes.
	if resp, err := http.Get(p.endpoint + "/Tables"); err == nil {
		resp.Body.Close()
		t.Fatalf("a new connection was served during shutdown: %d", resp.StatusCode)
	}
	_, err = pw.Write(body[len(body)/2:])
	must(t, err)
	pw.Close()
	r := <-resc
	if r.err != nil || r.status != http.StatusNoContent {
		t.Fatalf("in-flight insert during shutdown: %d %v %s", r.status, r.err, r.body)
	}
	if !p.exitWithin(10 * time.Second) {
		t.Fatal("no exit 10 s after the in-flight request finished")
	}
	if p.err != nil {
		t.Fatalf("exit: %v\n%s", p.err, p.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "tableemu.sqlite-wal")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the database was not closed: the WAL file is still there (%v)", err)
	}
	integrityCheck(t, dir)
	p, err = startBinary(t, bin, dir)
	must(t, err)
	if _, err := p.table(t, "graceful").GetEntity(ctx(), "p", "inflight", nil); err != nil {
		t.Fatalf("the insert finished during shutdown is not there: %v", err)
	}

	// A second signal does not wait for a request that never finishes.
	pr2, pw2 := io.Pipe()
	defer pw2.Close()
	req2, _ := http.NewRequest("POST", p.endpoint+"/graceful", pr2)
	req2.ContentLength = 1000
	req2.Header.Set("x-ms-version", "2019-02-02")
	tg.signLite(t, req2)
	go func() {
		if resp, err := http.DefaultClient.Do(req2); err == nil {
			resp.Body.Close()
		}
	}()
	_, err = pw2.Write([]byte(`{"PartitionKey":`))
	must(t, err)
	time.Sleep(200 * time.Millisecond)
	must(t, p.cmd.Process.Signal(syscall.SIGTERM))
	// Once it says it is shutting down, the next signal is not caught
	// (on a busy machine that took more than a fixed 300 ms in CI).
	select {
	case <-p.shutting:
	case <-time.After(10 * time.Second):
		t.Fatal("no \"shutting down\" line within 10 s of SIGTERM")
	}
	if p.exitWithin(100 * time.Millisecond) {
		t.Fatal("exited with a request in flight after one signal")
	}
	sent := time.Now()
	must(t, p.cmd.Process.Signal(syscall.SIGTERM))
	if !p.exitWithin(2 * time.Second) {
		t.Fatal("a second SIGTERM did not exit at once")
	}
	t.Logf("second SIGTERM: exited after %s (%v)", time.Since(sent).Round(time.Millisecond), p.err)
	integrityCheck(t, dir)
}
