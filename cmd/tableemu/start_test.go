package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// TestStartAndStopLines: the start-up lines come in order, the readiness
// line last and only once the server answers; a request is logged; SIGTERM
// prints "shutting down" then "stopped" and exits 0. Every line, from
// start to stop, has the one log format.
func TestStartAndStopLines(t *testing.T) {
	dir := t.TempDir()
	p := startProc(t, "", "--tablePort", "0", "--location", dir)
	_, cs := p.ready()
	start := p.lines()
	want := []string{
		"tableemu serves Azure Table storage from " + filepath.Join(dir, "tableemu.sqlite") + " (with its -wal and -shm files)",
		"endpoint http://127.0.0.1:",
		"connection string DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;",
		"data explorer http://127.0.0.1:",
		"Azurite Table service is successfully listening at http://127.0.0.1:",
	}
	if len(start) != len(want) {
		t.Fatalf("start-up lines:\n%s\nwant %d lines", strings.Join(start, "\n"), len(want))
	}
	for i, l := range start {
		if !logLine.MatchString(l) || !strings.HasPrefix(l[25:], want[i]) {
			t.Fatalf("line %d %q, want the time and then %q", i+1, l, want[i])
		}
	}

	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(context.Background(), "startlines", nil); err != nil {
		t.Fatalf("the server that said it was ready does not answer: %v", err)
	}
	p.waitFor("POST /devstoreaccount1/Tables 201 CreateTable")

	p.signal(syscall.SIGTERM)
	if code := p.exit(15 * time.Second); code != 0 {
		t.Fatalf("exit %d after SIGTERM:\n%s", code, p.out)
	}
	all := p.lines()
	n := len(all)
	if n < 2 || !strings.HasSuffix(all[n-2], " shutting down (a second signal exits at once)") || !strings.HasSuffix(all[n-1], " stopped") {
		t.Fatalf("want shutting down, then stopped, last:\n%s", p.out)
	}
	for _, l := range all {
		if !logLine.MatchString(l) {
			t.Errorf("line not in the log format: %q", l)
		}
	}
}

// TestFailedStartsCreateNothing: a port in use, a certificate that does not
// load, a --debug file in a missing directory and a data directory that
// cannot be created each stop the start with exit 1 and a message that
// says what to do; none prints the readiness line or a shutdown line, and
// none creates anything on disk.
func TestFailedStartsCreateNothing(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)

	files := t.TempDir()
	junk := filepath.Join(files, "junk.pem")
	if err := os.WriteFile(junk, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM := selfSigned(t)
	cert, key := filepath.Join(files, "cert.pem"), filepath.Join(files, "key.pem")
	os.WriteFile(cert, certPEM, 0o600)
	os.WriteFile(key, keyPEM, 0o600)
	plainFile := filepath.Join(files, "plain")
	os.WriteFile(plainFile, []byte("x"), 0o600)

	for _, tc := range []struct {
		name string
		args []string
		loc  string // --location; "" for a fresh path under a temporary directory
		want []string
	}{
		{"port in use", []string{"--tablePort", busyPort}, "",
			[]string{"port " + busyPort + " on 127.0.0.1 is in use", "Azurite", "--tablePort"}},
		{"certificate is not PEM", []string{"--tablePort", "0", "--cert", junk, "--key", junk}, "",
			[]string{"--cert " + junk, "cannot use them"}},
		{"key does not match", []string{"--tablePort", "0", "--cert", cert, "--key", junk}, "",
			[]string{"--key " + junk}},
		{"certificate missing", []string{"--tablePort", "0", "--cert", filepath.Join(files, "nope.pem"), "--key", key}, "",
			[]string{"nope.pem", "no such file"}},
		{"debug directory missing", []string{"--tablePort", "0", "--debug", filepath.Join(files, "nodir", "debug.log")}, "",
			[]string{"--debug", "does not exist"}},
		{"debug file is a directory", []string{"--tablePort", "0", "--debug", files}, "",
			[]string{"--debug", "a directory, not a file"}},
		{"data directory under a file", []string{"--tablePort", "0"}, filepath.Join(plainFile, "data"),
			[]string{"cannot create data directory " + filepath.Join(plainFile, "data") + ": mkdir " + plainFile + ": not a directory",
				"; start with --location naming a directory you can write, or --inMemoryPersistence to keep the data in memory"}},
		{"data directory is a file", []string{"--tablePort", "0"}, plainFile,
			[]string{"--location " + plainFile + " is a file", "tableemu.sqlite", "or --inMemoryPersistence"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			loc := tc.loc
			if loc == "" {
				loc = filepath.Join(root, "data")
			}
			beforeRoot, beforeFiles := snapshot(t, root), snapshot(t, files)
			p := startProc(t, root, append(tc.args, "--location", loc)...)
			if code := p.exit(15 * time.Second); code != 1 {
				t.Fatalf("exit %d, want 1:\n%s", code, p.out)
			}
			out := p.out.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("no %q in:\n%s", w, out)
				}
			}
			lines := p.lines()
			if len(lines) != 1 || !logLine.MatchString(lines[0]) || !strings.Contains(lines[0], " error: ") {
				t.Errorf("want one error line in the log format, got:\n%s", out)
			}
			for _, bad := range []string{"listening", "shutting down", "stopped"} {
				if strings.Contains(out, bad) {
					t.Errorf("a failed start printed %q:\n%s", bad, out)
				}
			}
			if after := snapshot(t, root); after != beforeRoot {
				t.Errorf("the failed start changed its directory:\nbefore\n%s\nafter\n%s", beforeRoot, after)
			}
			if after := snapshot(t, files); after != beforeFiles {
				t.Errorf("the failed start changed the files it was given:\nbefore\n%s\nafter\n%s", beforeFiles, after)
			}
		})
	}
}

// TestSecondProcessRefused: a second tableemu on a held data directory
// exits 1 at once, naming the directory, the holder's PID and port, and
// changes nothing there. After the holder is killed with SIGKILL a new one
// starts at once, with the data.
func TestSecondProcessRefused(t *testing.T) {
	dir := t.TempDir()
	first := startProc(t, "", "--tablePort", "0", "--location", dir, "--silent")
	port, cs := first.ready()
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(context.Background(), "keptacrosskill", nil); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)

	began := time.Now()
	second := startProc(t, "", "--tablePort", "0", "--location", dir)
	if code := second.exit(10 * time.Second); code != 1 {
		t.Fatalf("second process: exit %d, want 1:\n%s", code, second.out)
	}
	took := time.Since(began)
	msg := second.out.String()
	for _, w := range []string{dir, "another tableemu", "PID " + strconv.Itoa(first.cmd.Process.Pid), "port " + port, "--location"} {
		if !strings.Contains(msg, w) {
			t.Errorf("no %q in the second process's message:\n%s", w, msg)
		}
	}
	if strings.Contains(msg, "listening") {
		t.Errorf("the refused process printed a readiness line:\n%s", msg)
	}
	if after := snapshot(t, dir); after != before {
		t.Errorf("the refused process changed the directory:\nbefore\n%s\nafter\n%s", before, after)
	}
	t.Logf("refused in %s", took)

	first.signal(syscall.SIGKILL)
	first.exit(10 * time.Second)
	third := startProc(t, "", "--tablePort", "0", "--location", dir, "--silent")
	_, cs = third.ready()
	svc, err = aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.NewClient("keptacrosskill").GetAccessPolicy(context.Background(), nil); err != nil {
		t.Fatalf("the table written before the kill: %v", err)
	}
}

// selfSigned makes a certificate and key for 127.0.0.1, in PEM.
func selfSigned(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
}

// TestTwoStartedTogether: two tableemu started at the same moment on a
// fresh directory: one serves, the other exits 1 saying the directory is
// in use (it used to die in the migrations with "table tables already
// exists", or "database is locked").
func TestTwoStartedTogether(t *testing.T) {
	for round := range 3 {
		dir := filepath.Join(t.TempDir(), "fresh")
		a := startProc(t, "", "--tablePort", "0", "--location", dir, "--silent")
		b := startProc(t, "", "--tablePort", "0", "--location", dir, "--silent")
		var refused, serving *proc
		deadline := time.Now().Add(30 * time.Second)
		for refused == nil && time.Now().Before(deadline) {
			select {
			case <-a.done:
				refused, serving = a, b
			case <-b.done:
				refused, serving = b, a
			case <-time.After(20 * time.Millisecond):
			}
		}
		if refused == nil {
			t.Fatalf("round %d: both are running:\n%s\n%s", round, a.out, b.out)
		}
		if refused.code != 1 || !strings.Contains(refused.out.String(), "is in use by another tableemu") {
			t.Fatalf("round %d: the second: exit %d:\n%s", round, refused.code, refused.out)
		}
		serving.ready()
		serving.signal(syscall.SIGTERM)
		if code := serving.exit(15 * time.Second); code != 0 {
			t.Fatalf("round %d: the one serving: exit %d:\n%s", round, code, serving.out)
		}
	}
}

// TestSecondSignal: SIGINT (Ctrl-C) shuts down as SIGTERM does, waiting
// for a request in flight; a second SIGINT ends the process at once, by
// that signal, without the "stopped" line of a clean stop.
func TestSecondSignal(t *testing.T) {
	p := startProc(t, "", "--tablePort", "0", "--inMemoryPersistence", "--silent")
	port, _ := p.ready()
	// A request whose headers have not all arrived keeps its connection
	// active: the graceful shutdown waits for it (up to the server's
	// ReadHeaderTimeout, 10 s).
	c, err := net.Dial("tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("GET /devstoreaccount1/Tables HTTP/1.1\r\nHost: 127.0.0.1\r\n")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // let the server read the first bytes
	p.signal(syscall.SIGINT)
	p.waitFor(" shutting down (a second signal exits at once)")
	select {
	case <-p.done:
		t.Fatalf("exited (%d) with a request in flight:\n%s", p.code, p.out)
	case <-time.After(500 * time.Millisecond):
	}
	p.signal(syscall.SIGINT)
	if code := p.exit(5 * time.Second); code != -1 {
		t.Fatalf("exit %d after the second SIGINT, want death by the signal:\n%s", code, p.out)
	}
	if strings.Contains(p.out.String(), "stopped") {
		t.Errorf("the second signal let the clean stop finish:\n%s", p.out)
	}
}

// TestCosmosProfileStartLine: under --profile cosmos the first start-up
// line names the service tableemu answers as (docs/cosmos.md).
func TestCosmosProfileStartLine(t *testing.T) {
	p := startProc(t, "", "--profile", "cosmos", "--tablePort", "0", "--inMemoryPersistence")
	p.ready()
	start := p.lines()
	const want = "tableemu serves Azure Cosmos DB for Table (--profile cosmos) from memory (nothing is written to disk)"
	if len(start) == 0 || !strings.HasSuffix(start[0], want) {
		t.Fatalf("start-up lines:\n%s\nwant the first to end %q", strings.Join(start, "\n"), want)
	}
}
