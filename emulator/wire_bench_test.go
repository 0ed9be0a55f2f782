package emulator

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The wire benchmarks send tablebench's requests (cmd/tablebench) over one
// keep-alive connection from a client that allocates nothing per request,
// so that -benchmem's B/op and allocs/op are the server's own: net/http's
// parsing and tableemu's handling together. cmd/tablebare has the same
// benchmarks (its bench_test.go), the figures to compare against.
//
//	go test ./emulator -run '^$' -bench 'Wire' -benchmem

// processCPU is the CPU time (user and system) the process has used so
// far: a wire benchmark reports it per request as cpu-ns/op, server and
// the (small) client together, GC included.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs op b.N times and reports the process CPU per op.
func measure(b *testing.B, op func(i int)) {
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for i := 0; i < b.N; i++ {
		op(i)
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
}

// rawClient is an HTTP/1.1 client for benchmarks: requests are bytes the
// caller prepared, responses are read into one reused buffer.
type rawClient struct {
	conn net.Conn
	br   *bufio.Reader
	body []byte
}

func dialRaw(b *testing.B, addr string) *rawClient {
	b.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return &rawClient{conn: c, br: bufio.NewReaderSize(c, 64<<10), body: make([]byte, 0, 64<<10)}
}

// do sends req and returns the status and the body (valid until the next
// call). It understands Content-Length and chunked bodies.
func (rc *rawClient) do(b *testing.B, req []byte) (int, []byte) {
	if _, err := rc.conn.Write(req); err != nil {
		b.Fatal(err)
	}
	line, err := rc.br.ReadSlice('\n')
	if err != nil || len(line) < 12 {
		b.Fatalf("status line %q: %v", line, err)
	}
	status := int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
	n, chunked := -1, false
	for {
		line, err = rc.br.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		if len(line) <= 2 {
			break
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok {
			v = bytes.TrimSpace(v)
			switch {
			case bytes.EqualFold(k, []byte("Content-Length")):
				n = atoiBytes(v)
			case bytes.EqualFold(k, []byte("Transfer-Encoding")):
				chunked = bytes.EqualFold(v, []byte("chunked"))
			}
		}
	}
	rc.body = rc.body[:0]
	switch {
	case chunked:
		for {
			line, err = rc.br.ReadSlice('\n')
			if err != nil {
				b.Fatal(err)
			}
			size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
			if err != nil {
				b.Fatal(err)
			}
			if size == 0 {
				rc.br.ReadSlice('\n')
				break
			}
			rc.body = rc.read(b, rc.body, int(size))
			rc.br.ReadSlice('\n')
		}
	case n > 0:
		rc.body = rc.read(b, rc.body, n)
	}
	return status, rc.body
}

func (rc *rawClient) read(b *testing.B, dst []byte, n int) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, n)...) // grows only past the largest body so far
	if _, err := ioReadFull(rc.br, dst[start:]); err != nil {
		b.Fatal(err)
	}
	return dst
}

func ioReadFull(r *bufio.Reader, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := r.Read(p[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func atoiBytes(b []byte) int {
	n := 0
	for _, c := range b {
		n = n*10 + int(c-'0')
	}
	return n
}

// wireRequest appends a request as tablebench sends it (client.go: the
// same headers, Shared Key Lite over the date and the path) to dst.
// path is below the account; body may be nil.
func wireRequest(dst []byte, host, method, path, date, auth string, hdr []string, body []byte) []byte {
	dst = append(dst, method...)
	dst = append(dst, " /"+DevAccount...)
	dst = append(dst, path...)
	dst = append(dst, " HTTP/1.1\r\nHost: "...)
	dst = append(dst, host...)
	dst = append(dst, "\r\nUser-Agent: Go-http-client/1.1\r\n"...)
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	dst = append(dst, "\r\nAccept: application/json;odata=minimalmetadata\r\nAuthorization: "...)
	dst = append(dst, auth...)
	dst = append(dst, "\r\nDataServiceVersion: 3.0\r\n"...)
	if body != nil && (len(hdr) == 0 || hdr[0] != "Content-Type") {
		dst = append(dst, "Content-Type: application/json\r\n"...)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		dst = append(dst, hdr[i]...)
		dst = append(dst, ": "...)
		dst = append(dst, hdr[i+1]...)
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, "X-Ms-Date: "...)
	dst = append(dst, date...)
	dst = append(dst, "\r\nX-Ms-Version: 2019-02-02\r\nAccept-Encoding: gzip\r\n\r\n"...)
	return append(dst, body...)
}

// wireAuth is the Shared Key Lite Authorization value for path (below the
// account) at date.
func wireAuth(date, path string) string {
	key, _ := base64.StdEncoding.DecodeString(DevKey)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(date + "\n/" + DevAccount + "/" + DevAccount + path))
	return "SharedKeyLite " + DevAccount + ":" + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// wireEntity appends tablebench's ~1 KiB entity i of partition pk.
func wireEntity[S string | []byte](dst []byte, pk S, i int) []byte {
	dst = append(dst, `{"PartitionKey":"`...)
	dst = append(dst, pk...)
	dst = append(dst, `","RowKey":"r`...)
	dst = appendPadded(dst, i, 7)
	dst = append(dst, `","Name":"name`...)
	dst = strconv.AppendInt(dst, int64(i), 10)
	dst = append(dst, `","Age":`...)
	dst = strconv.AppendInt(dst, int64(i%100), 10)
	dst = append(dst, `,"Score":`...)
	dst = strconv.AppendInt(dst, int64(i), 10)
	dst = append(dst, `.5,"Flag":`...)
	dst = strconv.AppendBool(dst, i%2 == 0)
	dst = append(dst, `,"Pad":"`...)
	dst = append(dst, wirePad...)
	dst = append(dst, `","Tag":"t`...)
	dst = strconv.AppendInt(dst, int64(i%1000), 10)
	return append(dst, `"}`...)
}

var wirePad = strings.Repeat("x", 900)

func appendPadded(dst []byte, n, width int) []byte {
	var tmp [20]byte
	s := strconv.AppendInt(tmp[:0], int64(n), 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// wireBench is a server with table "tbw" holding 1000 entities in 10
// partitions, and a client connected to it.
type wireBench struct {
	rc   *rawClient
	host string
	date string
	buf  []byte
}

func newWireBench(b *testing.B, cfg Config) *wireBench {
	b.Helper()
	s, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(s)
	b.Cleanup(func() { hs.Close(); s.Close() })
	host := strings.TrimPrefix(hs.URL, "http://")
	wb := &wireBench{rc: dialRaw(b, host), host: host, date: time.Now().UTC().Format(http.TimeFormat)}
	wb.send(b, "POST", "/Tables", []string{"Prefer", "return-no-content"}, []byte(`{"TableName":"tbw"}`), 204)
	for p := range 10 {
		var body []byte
		body = wireBatchBody(body, wb.host, fmt.Appendf(nil, "p%03d", p), p*100, 100)
		wb.send(b, "POST", "/$batch", []string{"Content-Type", "multipart/mixed; boundary=batch_tb"}, body, 202)
	}
	return wb
}

// send sends one request and checks its status.
func (wb *wireBench) send(b *testing.B, method, path string, hdr []string, body []byte, want int) {
	wb.buf = wireRequest(wb.buf[:0], wb.host, method, path, wb.date, wireAuth(wb.date, path), hdr, body)
	if st, rb := wb.rc.do(b, wb.buf); st != want {
		b.Fatalf("%s %s: status %d, want %d: %.300s", method, path, st, want, rb)
	}
}

// wireBatchBody appends a $batch of n inserts into tbw, partition pk, rows
// from first on, as tablebench sends it.
func wireBatchBody(dst []byte, host string, pk []byte, first, n int) []byte {
	dst = append(dst, "--batch_tb\r\nContent-Type: multipart/mixed; boundary=changeset_tb\r\n\r\n"...)
	var e []byte
	for i := first; i < first+n; i++ {
		e = wireEntity(e[:0], pk, i)
		dst = append(dst, "--changeset_tb\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nPOST http://"...)
		dst = append(dst, host...)
		dst = append(dst, "/"+DevAccount+"/tbw HTTP/1.1\r\nPrefer: return-no-content\r\n"...)
		dst = append(dst, "Accept: application/json;odata=minimalmetadata\r\nContent-Type: application/json\r\nDataServiceVersion: 3.0\r\nContent-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(e)), 10)
		dst = append(dst, "\r\n\r\n"...)
		dst = append(dst, e...)
		dst = append(dst, "\r\n"...)
	}
	return append(dst, "--changeset_tb--\r\n\r\n--batch_tb--\r\n"...)
}

// pointRequests are the presigned point reads of the 1000 entities.
func (wb *wireBench) pointRequests() [][]byte {
	reqs := make([][]byte, 1000)
	for i := range reqs {
		path := fmt.Sprintf("/tbw(PartitionKey='p%03d',RowKey='r%07d')", i/100, i)
		reqs[i] = wireRequest(nil, wb.host, "GET", path, wb.date, wireAuth(wb.date, path), nil, nil)
	}
	return reqs
}

// mergeRequests are presigned merges (If-Match: *) of the 1000 entities.
func (wb *wireBench) mergeRequests() [][]byte {
	reqs := make([][]byte, 1000)
	for i := range reqs {
		path := fmt.Sprintf("/tbw(PartitionKey='p%03d',RowKey='r%07d')", i/100, i)
		body := fmt.Appendf(nil, `{"Score":%d.25,"Seen":true}`, i*7919%1000000)
		reqs[i] = wireRequest(nil, wb.host, "MERGE", path, wb.date, wireAuth(wb.date, path), []string{"If-Match", "*"}, body)
	}
	return reqs
}

func BenchmarkWirePoint(b *testing.B) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"plain", Config{InMemory: true, Silent: true}},
		{"insights+throttle", Config{InMemory: true, Silent: true, Insights: true, Throttle: true}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			wb := newWireBench(b, tc.cfg)
			reqs := wb.pointRequests()
			measure(b, func(i int) {
				if st, body := wb.rc.do(b, reqs[i%len(reqs)]); st != 200 {
					b.Fatalf("status %d: %s", st, body)
				}
			})
		})
	}
}

func BenchmarkWireMerge(b *testing.B) {
	wb := newWireBench(b, Config{InMemory: true, Silent: true})
	reqs := wb.mergeRequests()
	measure(b, func(i int) {
		if st, body := wb.rc.do(b, reqs[i%len(reqs)]); st != 204 {
			b.Fatalf("status %d: %s", st, body)
		}
	})
}

func BenchmarkWireInsert(b *testing.B) {
	wb := newWireBench(b, Config{InMemory: true, Silent: true})
	auth := wireAuth(wb.date, "/tbw")
	hdr := []string{"Prefer", "return-no-content"}
	var body, req []byte
	measure(b, func(i int) {
		body = wireEntity(body[:0], "q", 10_000_000+i)
		req = wireRequest(req[:0], wb.host, "POST", "/tbw", wb.date, auth, hdr, body)
		if st, rb := wb.rc.do(b, req); st != 204 {
			b.Fatalf("status %d: %s", st, rb)
		}
	})
}

// BenchmarkWireBatch: one op is a $batch of 100 inserts.
func BenchmarkWireBatch(b *testing.B) {
	wb := newWireBench(b, Config{InMemory: true, Silent: true})
	auth := wireAuth(wb.date, "/$batch")
	hdr := []string{"Content-Type", "multipart/mixed; boundary=batch_tb"}
	var pk, body, req []byte
	measure(b, func(i int) {
		pk = append(pk[:0], 'b')
		pk = strconv.AppendInt(pk, int64(i), 10)
		body = wireBatchBody(body[:0], wb.host, pk, 0, 100)
		req = wireRequest(req[:0], wb.host, "POST", "/$batch", wb.date, auth, hdr, body)
		if st, rb := wb.rc.do(b, req); st != 202 || bytes.Contains(rb, []byte("odata.error")) {
			b.Fatalf("status %d: %.300s", st, rb)
		}
	})
}
