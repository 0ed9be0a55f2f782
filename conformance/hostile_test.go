package conformance

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/emulator"
)

// Hostile input on a live server: oversized headers and bodies are refused
// early, slow and idle clients are timed out, thousands of connections keep
// memory bounded, malformed bodies get 400 with a code — and afterwards the
// server still answers ordinary requests.

// liveServer serves an in-memory tableemu through the http.Server the
// binary runs (Server.HTTPServer), with tweak applied to it first.
func liveServer(t *testing.T, tweak func(*http.Server)) (*target, string) {
	t.Helper()
	needInProcess(t)
	srv, err := emulator.New(emulator.Config{InMemory: true, Silent: true})
	must(t, err)
	hs := srv.HTTPServer()
	if tweak != nil {
		tweak(hs)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close(); srv.Close() })
	addr := ln.Addr().String()
	return &target{endpoint: "http://" + addr + "/" + emulator.DevAccount, account: emulator.DevAccount, key: emulator.DevKey}, addr
}

// stillServes checks that ordinary SDK traffic works.
func stillServes(t *testing.T, tg *target) {
	t.Helper()
	svc := tg.service(t)
	name := tableName()
	_, err := svc.CreateTable(ctx(), name, nil)
	must(t, err)
	c := svc.NewClient(name)
	_, err = c.AddEntity(ctx(), entityJSON(t, "p", "r", "V", "after"), nil)
	must(t, err)
	m, _ := getProps(t, c, "p", "r")
	if m["V"] != "after" {
		t.Fatalf("read back %v", m)
	}
	_, err = svc.DeleteTable(ctx(), name, nil)
	must(t, err)
}

// rawRoundTrip writes a request on a new connection and reads one
// response; the writer goroutine keeps sending while the response is read.
func rawRoundTrip(t *testing.T, addr string, head string, body io.Reader) (*http.Response, []byte, int64) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	must(t, err)
	defer conn.Close()
	var sent atomic.Int64
	go func() {
		n, _ := io.WriteString(conn, head)
		sent.Add(int64(n))
		if body != nil {
			buf := make([]byte, 32<<10)
			for {
				k, err := body.Read(buf)
				if k > 0 {
					w, werr := conn.Write(buf[:k])
					sent.Add(int64(w))
					if werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}
	}()
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response (%d bytes sent): %v", sent.Load(), err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, b, sent.Load()
}

// endless is an io.Reader of n bytes of c.
type endless struct {
	c byte
	n int64
}

func (e *endless) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), e.n)
	for i := range p[:k] {
		p[i] = e.c
	}
	e.n -= k
	return int(k), nil
}

func signedHead(t *testing.T, tg *target, method, path string, hdr map[string]string) string {
	req, _ := http.NewRequest(method, tg.endpoint+path, nil)
	req.Header.Set("x-ms-version", "2019-02-02")
	tg.signLite(t, req)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, req.URL.RequestURI(), req.URL.Host)
	for k, v := range req.Header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v[0])
	}
	for k, v := range hdr {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	return b.String()
}

func TestHostileSizes(t *testing.T) {
	tg, addr := liveServer(t, nil)
	name := tableName()
	c := tg.service(t).NewClient(name)
	_, err := c.CreateTable(ctx(), nil)
	must(t, err)
	table := "/" + name

	t.Run("oversized header", func(t *testing.T) {
		// 64 MiB of header, refused after MaxHeaderBytes (64 KiB, plus
		// net/http's 4 KiB of slack) without being read whole.
		head := "GET /" + emulator.DevAccount + "/Tables HTTP/1.1\r\nHost: x\r\nX-Big: "
		resp, body, sent := rawRoundTrip(t, addr, head, &endless{'a', 64 << 20})
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("want 431, got %d %s", resp.StatusCode, body)
		}
		if sent >= 64<<20 {
			t.Fatal("the whole header was read before the refusal")
		}
		// net/http writes this response itself, before any handler: it
		// carries no x-ms-error-code (docs/protocol.md 0.1 wants one).
		t.Logf("431 after %d KiB sent; x-ms-error-code %q; body %q", sent>>10, resp.Header.Get("x-ms-error-code"), body)
		// A legal request with 48 KiB of headers is served.
		r := tg.raw(t, "GET", "/Tables", map[string]string{"X-Pad": strings.Repeat("p", 48<<10)}, nil)
		if r.StatusCode != 200 {
			t.Fatalf("48 KiB of headers: %d %s", r.StatusCode, r.body)
		}
	})

	t.Run("oversized body by Content-Length", func(t *testing.T) {
		// Refused from the header alone: no body byte is ever sent.
		start := time.Now()
		head := "POST /" + emulator.DevAccount + table + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 104857600\r\n\r\n"
		resp, body, _ := rawRoundTrip(t, addr, head, nil)
		wantRawCode(t, &rawResponse{resp, body}, 413, "RequestBodyTooLarge")
		t.Logf("413 for Content-Length 100 MiB in %s with no body sent", time.Since(start).Round(time.Microsecond))
	})

	for _, path := range []string{table, "/$batch"} {
		t.Run("oversized chunked body "+path, func(t *testing.T) {
			ct := "application/json"
			if path == "/$batch" {
				ct = "multipart/mixed; boundary=batch_x"
			}
			head := signedHead(t, tg, "POST", path, map[string]string{"Transfer-Encoding": "chunked", "Content-Type": ct, "Accept": "application/json;odata=nometadata"})
			// 64 MiB in 32 KiB chunks: refused once the limit is crossed.
			chunk := fmt.Sprintf("%x\r\n%s\r\n", 32<<10, strings.Repeat(" ", 32<<10))
			resp, body, sent := rawRoundTrip(t, addr, head, &repeatReader{s: chunk, n: 2048})
			wantRawCode(t, &rawResponse{resp, body}, 413, "RequestBodyTooLarge")
			if sent >= 64<<20 {
				t.Fatal("the whole body was read before the refusal")
			}
			t.Logf("chunked %s: 413 after %d KiB sent", path, sent>>10)
		})
	}

	// The limit is 4 MiB for every body, $batch included, sent with a
	// Content-Length or chunked (docs/protocol.md 0.1): one byte more is
	// 413 with its code; exactly 4 MiB is read (and refused here only
	// because spaces are not an entity or a batch).
	for _, path := range []string{table, "/$batch"} {
		for _, chunked := range []bool{false, true} {
			for _, size := range []int{4 << 20, 4<<20 + 1} {
				t.Run(fmt.Sprintf("%s chunked=%v %d bytes", strings.TrimPrefix(path, "/"+name), chunked, size), func(t *testing.T) {
					ct := "application/json"
					if path == "/$batch" {
						ct = "multipart/mixed; boundary=batch_x"
					}
					hdr := map[string]string{"Content-Type": ct, "Accept": "application/json;odata=nometadata"}
					var body io.Reader = &endless{' ', int64(size)}
					if chunked {
						hdr["Transfer-Encoding"] = "chunked"
						body = io.MultiReader(
							&repeatReader{s: fmt.Sprintf("%x\r\n%s\r\n", 32<<10, strings.Repeat(" ", 32<<10)), n: 128},
							strings.NewReader(strings.Repeat("1\r\n \r\n", size-4<<20)+"0\r\n\r\n"))
					} else {
						hdr["Content-Length"] = strconv.Itoa(size)
					}
					resp, b, _ := rawRoundTrip(t, addr, signedHead(t, tg, "POST", path, hdr), body)
					if size > 4<<20 {
						wantRawCode(t, &rawResponse{resp, b}, 413, "RequestBodyTooLarge")
					} else if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") == "" {
						t.Fatalf("exactly 4 MiB: %d %s %.200s", resp.StatusCode, resp.Header.Get("x-ms-error-code"), b)
					}
				})
			}
		}
	}

	t.Run("largest legal requests pass", func(t *testing.T) {
		// A legal ~0.95 MiB entity (15 strings of 32,752 characters)
		// written with \u escapes is ~2.9 MB of JSON (docs/protocol.md 0.1).
		var b bytes.Buffer
		b.WriteString(`{"PartitionKey":"p","RowKey":"escaped"`)
		for i := 0; i < 15; i++ {
			fmt.Fprintf(&b, `,"S%02d":"%s"`, i, strings.Repeat(`\u00e9`, 32*1024-16))
		}
		b.WriteString("}")
		_, err := c.AddEntity(ctx(), b.Bytes(), nil)
		if err != nil {
			t.Fatalf("a legal entity as %d bytes of JSON: %v", b.Len(), err)
		}
		// A batch of 100 inserts just under 4 MiB with the SDK's framing
		// (the service's limit counts the whole body, docs/protocol.md 7.4).
		var acts []aztables.TransactionAction
		payload := 0
		for i := 0; i < 100; i++ {
			e := marshal(t, map[string]any{"PartitionKey": "big", "RowKey": fmt.Sprintf("r%03d", i),
				"A": strings.Repeat("a", 20400), "B": strings.Repeat("b", 20400)})
			payload += len(e)
			acts = append(acts, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: e})
		}
		if _, err := c.SubmitTransaction(ctx(), acts, nil); err != nil {
			t.Fatalf("a batch of %d bytes of entities: %v", payload, err)
		}
		t.Logf("accepted: an entity as %d bytes of JSON; a batch of %d bytes of entities", b.Len(), payload)
	})

	stillServes(t, tg)
}

type repeatReader struct {
	s   string
	n   int
	off int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := copy(p, r.s[r.off:])
	r.off += k
	if r.off == len(r.s) {
		r.off, r.n = 0, r.n-1
	}
	return k, nil
}

// TestHostileMalformedBodies: invalid UTF-8 and deeply nested JSON get 400
// with a code, wherever they arrive.
func TestHostileMalformedBodies(t *testing.T) {
	tg, _ := liveServer(t, nil)
	name := tableName()
	c := tg.service(t).NewClient(name)
	_, err := c.CreateTable(ctx(), nil)
	must(t, err)
	table := "/" + name
	deepArray := `{"PartitionKey":"p","RowKey":"r","A":` + strings.Repeat("[", 1<<20) + strings.Repeat("]", 1<<20) + "}"
	deepObject := `{"PartitionKey":"p","RowKey":"r","A":` + strings.Repeat(`{"a":`, 200000) + "1" + strings.Repeat("}", 200000) + "}"
	for _, tc := range []struct {
		name, method, path, body string
	}{
		{"invalid UTF-8 value", "POST", table, "{\"PartitionKey\":\"p\",\"RowKey\":\"r\",\"S\":\"a\xffb\"}"},
		{"invalid UTF-8 name", "POST", table, "{\"PartitionKey\":\"p\",\"RowKey\":\"r\",\"N\xc3\":1}"},
		{"invalid UTF-8 key", "POST", table, "{\"PartitionKey\":\"\xed\xa0\x80\",\"RowKey\":\"r\"}"},
		{"overlong UTF-8", "POST", table, "{\"PartitionKey\":\"p\",\"RowKey\":\"r\",\"S\":\"\xc0\xaf\"}"},
		{"deep array", "POST", table, deepArray},
		{"deep object", "POST", table, deepObject},
		{"deep merge", "MERGE", table + "(PartitionKey='p',RowKey='r')", deepObject},
		{"deep table name", "POST", "/Tables", `{"TableName":` + strings.Repeat("[", 100000) + "}"},
		{"invalid UTF-8 table name", "POST", "/Tables", "{\"TableName\":\"t\xff\xfe\"}"},
		{"invalid UTF-8 in $filter", "GET", table + "()?$filter=S%20eq%20'%FF%FE'", ""},
		{"invalid UTF-8 in key URL", "GET", table + "(PartitionKey='%FF',RowKey='r')", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tc.method == "MERGE" {
				hdr["If-Match"] = "*"
			}
			var body []byte
			if tc.body != "" {
				body = []byte(tc.body)
			}
			r := tg.raw(t, tc.method, tc.path, hdr, body)
			if tc.name == "invalid UTF-8 in $filter" && r.StatusCode == 200 {
				// A literal that matches nothing is a legal answer.
				return
			}
			if tc.name == "invalid UTF-8 in key URL" && r.StatusCode == 404 {
				return
			}
			if r.StatusCode != 400 {
				t.Fatalf("want 400, got %d: %.300s", r.StatusCode, r.body)
			}
			code := r.Header.Get("x-ms-error-code")
			if code == "" || errorCodeInBody(r) != code {
				t.Fatalf("400 without matching codes: header %q body %.300s", code, r.body)
			}
			t.Logf("%d %s", r.StatusCode, code)
		})
	}
	// Inside a batch: the failed part is 400, nothing is written.
	body := "--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_c\r\n\r\n" +
		"--changeset_c\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
		"POST " + tg.endpoint + table + " HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json;odata=nometadata\r\n\r\n" +
		`{"PartitionKey":"p","RowKey":"ok"}` + "\r\n" +
		"--changeset_c\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
		"POST " + tg.endpoint + table + " HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json;odata=nometadata\r\n\r\n" +
		deepArray + "\r\n--changeset_c--\r\n--batch_b--\r\n"
	r := tg.raw(t, "POST", "/$batch", map[string]string{"Content-Type": "multipart/mixed; boundary=batch_b"}, []byte(body))
	if r.StatusCode != 202 || !strings.Contains(string(r.body), "HTTP/1.1 400") || strings.Contains(string(r.body), "HTTP/1.1 201") {
		t.Fatalf("batch with a deeply nested entity: %d %.500s", r.StatusCode, r.body)
	}
	if _, err := c.GetEntity(ctx(), "p", "ok", nil); err == nil {
		t.Fatal("the valid operation of the refused batch was committed")
	}
	stillServes(t, tg)
}

// TestSlowClients: a client that trickles its headers, never sends a
// request, idles after one, or stalls inside its body is cut off by the
// server's timeouts. The test shortens them; the binary's values are
// checked for being set.
func TestSlowClients(t *testing.T) {
	needInProcess(t)
	if testing.Short() {
		t.Skip("waits for timeouts")
	}
	srv, err := emulator.New(emulator.Config{InMemory: true, Silent: true})
	must(t, err)
	defaults := srv.HTTPServer()
	srv.Close()
	if defaults.ReadHeaderTimeout <= 0 || defaults.ReadHeaderTimeout > 30*time.Second ||
		defaults.IdleTimeout <= 0 || defaults.ReadTimeout <= 0 || defaults.WriteTimeout <= 0 ||
		defaults.MaxHeaderBytes <= 0 || defaults.MaxHeaderBytes > 1<<20 {
		t.Fatalf("the binary's http.Server lacks a bound: %+v", defaults)
	}
	t.Logf("binary: ReadHeaderTimeout %s, ReadTimeout %s, WriteTimeout %s, IdleTimeout %s, MaxHeaderBytes %d",
		defaults.ReadHeaderTimeout, defaults.ReadTimeout, defaults.WriteTimeout, defaults.IdleTimeout, defaults.MaxHeaderBytes)

	const hdrTO, readTO, idleTO = 500 * time.Millisecond, 1500 * time.Millisecond, time.Second
	tg, addr := liveServer(t, func(hs *http.Server) {
		hs.ReadHeaderTimeout, hs.ReadTimeout, hs.IdleTimeout = hdrTO, readTO, idleTO
	})
	// closedAfter measures how long the server keeps conn open, reading
	// (and discarding) whatever it sends; trickle, if set, runs meanwhile.
	closedAfter := func(conn net.Conn, trickle func() error) (time.Duration, string) {
		start := time.Now()
		stop := make(chan struct{})
		defer close(stop)
		if trickle != nil {
			go func() {
				for {
					select {
					case <-stop:
						return
					case <-time.After(100 * time.Millisecond):
						if trickle() != nil {
							return
						}
					}
				}
			}()
		}
		conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		got, _ := io.ReadAll(conn)
		first, _, _ := strings.Cut(string(got), "\r\n")
		return time.Since(start), first
	}
	within := func(what string, d, want time.Duration) {
		t.Helper()
		if d < want-100*time.Millisecond || d > want+2*time.Second {
			t.Fatalf("%s: closed after %s, want about %s", what, d, want)
		}
		t.Logf("%s: connection closed after %s (timeout %s)", what, d.Round(time.Millisecond), want)
	}

	t.Run("headers trickled", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		must(t, err)
		defer conn.Close()
		io.WriteString(conn, "GET /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\n")
		d, _ := closedAfter(conn, func() error { _, err := io.WriteString(conn, "X-A: b\r\n"); return err })
		within("headers trickled one line per 100 ms", d, hdrTO)
	})
	t.Run("silent connection", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		must(t, err)
		defer conn.Close()
		d, _ := closedAfter(conn, nil)
		within("connected, sent nothing", d, hdrTO)
	})
	t.Run("idle keep-alive", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		must(t, err)
		defer conn.Close()
		io.WriteString(conn, signedHead(t, tg, "GET", "/Tables", nil))
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		must(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("first request: %d", resp.StatusCode)
		}
		start := time.Now()
		conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		io.Copy(io.Discard, br)
		within("idle after one request", time.Since(start), idleTO)
	})
	t.Run("body stalled", func(t *testing.T) {
		table := tableName()
		_, err := tg.service(t).CreateTable(ctx(), table, nil)
		must(t, err)
		conn, err := net.Dial("tcp", addr)
		must(t, err)
		defer conn.Close()
		start := time.Now()
		io.WriteString(conn, signedHead(t, tg, "POST", "/"+table, map[string]string{"Content-Type": "application/json", "Content-Length": "1000"}))
		io.WriteString(conn, `{"PartitionKey":"p",`)
		_, first := closedAfter(conn, nil)
		d := time.Since(start) // ReadTimeout counts from the request's start
		within("body stalled after 20 bytes", d, readTO)
		t.Logf("body stalled: answered %q", first)
		if first != "" && !strings.HasPrefix(first, "HTTP/1.1 4") {
			t.Fatalf("a stalled body answered %q", first)
		}
	})
	stillServes(t, tg)
}

// TestManyConnections holds thousands of connections to the real binary,
// half of them idle after a request (kept alive) and half that never sent
// one, measures the process's resident memory, and checks that ordinary
// requests are served meanwhile and afterwards.
func TestManyConnections(t *testing.T) {
	bin := buildBinary(t)
	p, err := startBinary(t, bin, t.TempDir())
	must(t, err)
	tg := &target{endpoint: p.endpoint, account: emulator.DevAccount, key: emulator.DevKey}
	n := 2000
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil && lim.Cur < uint64(n+200) {
		n = int(lim.Cur) - 200
		t.Logf("RLIMIT_NOFILE %d: holding %d connections", lim.Cur, n)
	}
	stillServes(t, tg) // warm up
	before := rssKiB(t, p.cmd.Process.Pid)
	addr := strings.TrimPrefix(strings.TrimSuffix(p.endpoint, "/"+emulator.DevAccount), "http://")
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	head := "GET /" + emulator.DevAccount + "/Tables HTTP/1.1\r\nHost: x\r\nx-ms-version: 2019-02-02\r\n\r\n"
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	var failed atomic.Int64
	start := time.Now()
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				failed.Add(1)
				return
			}
			if i%2 == 0 {
				// A request (refused: no credentials), then idle.
				io.WriteString(c, head)
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil || resp.StatusCode != 401 {
					failed.Add(1)
				} else {
					io.Copy(io.Discard, resp.Body)
				}
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d of %d connections failed", failed.Load(), n)
	}
	// Never-speaking connections are closed at ReadHeaderTimeout (10 s):
	// measure well before that.
	if el := time.Since(start); el > 8*time.Second {
		t.Fatalf("opening %d connections took %s", n, el)
	}
	held := rssKiB(t, p.cmd.Process.Pid)
	stillServes(t, tg)
	growth := held - before
	t.Logf("%d connections held (%d after a request, %d silent): RSS %d KiB before, %d KiB with them held (+%d KiB, %.1f KiB per connection)",
		len(conns), (len(conns)+1)/2, len(conns)/2, before, held, growth, float64(growth)/float64(len(conns)))
	if growth > int64(len(conns))*64 {
		t.Fatalf("memory grew %d KiB for %d idle connections", growth, len(conns))
	}
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	stillServes(t, tg)
}

func rssKiB(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err == nil {
				return n
			}
		}
	}
	t.Fatal("no VmRSS")
	return 0
}
