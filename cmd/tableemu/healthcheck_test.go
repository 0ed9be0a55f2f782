package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu/emulator"
)

// startEmulator serves an in-memory tableemu on a loopback port.
func startEmulator(t *testing.T, tls bool) (hs *httptest.Server, port string) {
	t.Helper()
	srv, err := emulator.New(emulator.Config{InMemory: true, Silent: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	if tls {
		hs = httptest.NewTLSServer(srv)
	} else {
		hs = httptest.NewServer(srv)
	}
	t.Cleanup(hs.Close)
	u, err := url.Parse(hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	return hs, u.Port()
}

func runHealthcheck(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = healthcheck(args, &o, &e)
	return code, o.String(), e.String()
}

func TestHealthcheckUp(t *testing.T) {
	_, port := startEmulator(t, false)
	for _, args := range [][]string{
		{"--tablePort", port},
		// The server's own container command line: 0.0.0.0 is probed on
		// loopback, and flags that do not move the server are ignored.
		{"--tableHost", "0.0.0.0", "--tablePort", port, "--location", "/data", "--loose", "--silent"},
		{"--tableHost", "::", "--tablePort", port},
		{"--tableHost", "localhost", "--tablePort", port},
	} {
		code, out, errOut := runHealthcheck(args...)
		if code != 0 || !strings.Contains(out, "up") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 0 and up", args, code, out, errOut)
		}
	}
}

func TestHealthcheckHTTPS(t *testing.T) {
	_, port := startEmulator(t, true)
	// The files are not read: --cert and --key only say the server
	// speaks HTTPS, and the probe does not check its certificate.
	code, out, errOut := runHealthcheck("--tablePort", port, "--cert", "cert.pem", "--key", "key.pem")
	if code != 0 || !strings.Contains(out, "https://127.0.0.1:"+port) {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0 over https", code, out, errOut)
	}
}

// TestHealthcheckDown: with nothing listening, one line names the address
// probed and says what to do: start tableemu, or give the flags the server
// was started with.
func TestHealthcheckDown(t *testing.T) {
	hs, port := startEmulator(t, false)
	hs.Close()
	for _, tc := range []struct {
		args []string
		says []string
	}{
		{[]string{"--tablePort", port}, nil},
		{[]string{"--tableHost", "0.0.0.0", "--tablePort", port}, []string{"(--tableHost 0.0.0.0 is probed on 127.0.0.1)"}},
		{[]string{"--tablePort", port, "--cert", "c.pem", "--key", "k.pem"}, nil},
	} {
		code, out, errOut := runHealthcheck(tc.args...)
		if code != 1 || out != "" || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 1 and one line", tc.args, code, out, errOut)
			continue
		}
		for _, s := range append([]string{"tableemu healthcheck: down: nothing listens on 127.0.0.1:" + port + " (connection refused)",
			"Start tableemu", "--tableHost and --tablePort the server was started with"}, tc.says...) {
			if !strings.Contains(errOut, s) {
				t.Errorf("%q: no %q in %q", tc.args, s, errOut)
			}
		}
	}
}

// TestHealthcheckCertAgainstPlainServer: with --cert, a plain HTTP server
// at the address is down, and the line says why.
func TestHealthcheckCertAgainstPlainServer(t *testing.T) {
	_, port := startEmulator(t, false)
	code, out, errOut := runHealthcheck("--tablePort", port, "--cert", "c.pem", "--key", "k.pem")
	if code != 1 || out != "" || !strings.Contains(errOut, "127.0.0.1:"+port+" answered in plain HTTP, but --cert says it serves HTTPS") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// A server that accepts connections but never answers is unhealthy, and
// the probe says so within its timeout rather than hanging.
func TestHealthcheckSilentServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // hold it open, say nothing
		}
	}()
	old := healthTimeout
	healthTimeout = 300 * time.Millisecond
	defer func() { healthTimeout = old }()

	_, port, _ := net.SplitHostPort(ln.Addr().String())
	start := time.Now()
	code, _, errOut := runHealthcheck("--tablePort", port)
	if code != 1 || !strings.Contains(errOut, "down: no answer from 127.0.0.1:"+port) || !strings.Contains(errOut, "within 300ms") {
		t.Fatalf("exit %d, stderr %q; want 1, down and no answer from the address", code, errOut)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v; the timeout is %v", d, healthTimeout)
	}
}

func TestHealthcheckBadArguments(t *testing.T) {
	for _, args := range [][]string{
		{"--tablePort", "0"},
		{"--tablePort", "http"},
		{"--tablePrt", "10002"},
		{"extra"},
	} {
		code, out, errOut := runHealthcheck(args...)
		if code != 1 || out != "" || errOut == "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 1 with a message", args, code, out, errOut)
		}
	}
}

func TestProbeHost(t *testing.T) {
	for in, want := range map[string]string{
		"0.0.0.0":   "127.0.0.1",
		"::":        "127.0.0.1",
		"localhost": "127.0.0.1",
		"127.0.0.1": "127.0.0.1",
		"::1":       "::1",
		"10.1.2.3":  "10.1.2.3",
	} {
		if got := probeHost(in); got != want {
			t.Errorf("probeHost(%q) = %q, want %q", in, got, want)
		}
	}
}

// The image's HEALTHCHECK has no flags, so against a server started with
// --cert/--key it probes with plain HTTP; Go's TLS server answers that with
// a 400, which still proves the server is up.
func TestHealthcheckPlainProbeOfHTTPS(t *testing.T) {
	_, port := startEmulator(t, true)
	code, out, errOut := runHealthcheck("--tablePort", port)
	if code != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0", code, out, errOut)
	}
}

// plainServer serves plain HTTP on a loopback port as servers other than
// Go's do, and meets a TLS hello (a first byte of 0x16, a TLS handshake
// record) as onHello says:
//   - "close": closes the connection, as a server that drops what it
//     cannot parse does;
//   - "page": writes an error page with no status line and closes, as
//     Python's http.server does for a request line it cannot read;
//   - "wait": reads on for the end of the request's headers, which a TLS
//     hello never sends, until the client gives up.
//
// A request in HTTP gets 200 "ok".
func plainServer(t *testing.T, onHello string) (port string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	serve := func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		first, err := br.Peek(1)
		if err != nil {
			return
		}
		if first[0] == 0x16 {
			switch onHello {
			case "close":
				return
			case "page":
				io.WriteString(c, "<html><body><h1>Error response</h1><p>Error code: 400</p></body></html>\n")
				return
			}
		}
		var last [4]byte // the end of the headers: a blank line
		for string(last[:]) != "\r\n\r\n" {
			b, err := br.ReadByte()
			if err != nil {
				return
			}
			last = [4]byte{last[1], last[2], last[3], b}
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	_, port, _ = net.SplitHostPort(ln.Addr().String())
	return port
}

// TestHealthcheckPlainServers: the image's check (no flags) finds any
// plain HTTP server up, as its help says, not only one that answers a TLS
// hello in HTTP as Go's do (it used to exit 1 against the others), within
// its time; with --cert each is down, and the line says the server does
// not speak TLS.
func TestHealthcheckPlainServers(t *testing.T) {
	for _, onHello := range []string{"close", "page", "wait"} {
		t.Run(onHello, func(t *testing.T) {
			port := plainServer(t, onHello)
			start := time.Now()
			code, out, errOut := runHealthcheck("--tablePort", port)
			if code != 0 || out != "tableemu healthcheck: up (http://127.0.0.1:"+port+"/ answered 200)\n" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 0, up over http", code, out, errOut)
			}
			if d := time.Since(start); d > healthTimeout {
				t.Errorf("took %v; the probe's time is %v", d, healthTimeout)
			}
			code, out, errOut = runHealthcheck("--tablePort", port, "--cert", "c.pem", "--key", "k.pem")
			if code != 1 || out != "" || !strings.Contains(errOut, "the server on 127.0.0.1:"+port+" does not speak TLS, but --cert says it serves HTTPS") {
				t.Errorf("--cert: exit %d, stdout %q, stderr %q; want 1 and does not speak TLS", code, out, errOut)
			}
		})
	}
}

// TestHealthcheckPythonServer: the same against a real plain HTTP server
// other than Go's, Python's http.server, when python3 is installed.
func TestHealthcheckPythonServer(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a free port for it
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	cmd := exec.Command(python, "-m", "http.server", port, "--bind", "127.0.0.1", "--directory", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("python3 -m http.server does not listen after 30 s")
		}
	}
	code, out, errOut := runHealthcheck("--tablePort", port)
	if code != 0 || out != "tableemu healthcheck: up (http://127.0.0.1:"+port+"/ answered 200)\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0, up over http", code, out, errOut)
	}
}

// TestHealthcheckCosmosProfile: under the cosmos profile, by flag or by
// TABLEEMU_PROFILE as a container would set it, the probe goes to port
// 8902, where such a server listens by default (docs/cosmos.md). Whether
// something answers there is not this test's business: the line names the
// address either way.
func TestHealthcheckCosmosProfile(t *testing.T) {
	check := func(how string, args ...string) {
		t.Helper()
		code, out, errOut := runHealthcheck(args...)
		if !strings.Contains(out+errOut, "127.0.0.1:8902") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want the probe at 127.0.0.1:8902", how, code, out, errOut)
		}
	}
	check("--profile cosmos", "--profile", "cosmos")
	t.Setenv("TABLEEMU_PROFILE", "cosmos")
	check("TABLEEMU_PROFILE=cosmos")
}
