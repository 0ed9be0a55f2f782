// Package wireclient is the client of the wire benchmarks of tableemu
// (emulator) and of the bare reference server (cmd/tablebare): tablebench's
// requests over one keep-alive connection, built and read without
// allocating per request, so that -benchmem's figures are the server's own.
package wireclient

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The well-known development account every request is signed for.
const (
	devAccount = "devstoreaccount1"
	devKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// ProcessCPU is the CPU time (user and system) the process has used so
// far: a wire benchmark reports it per request as cpu-ns/op, server and
// the (small) client together, GC included.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Measure runs op b.N times and reports the process CPU per op.
func Measure(b *testing.B, op func(i int)) {
	b.ReportAllocs()
	b.ResetTimer()
	cpu := ProcessCPU()
	for i := 0; i < b.N; i++ {
		op(i)
	}
	b.ReportMetric(float64(ProcessCPU()-cpu)/float64(b.N), "cpu-ns/op")
}

// RawClient is an HTTP/1.1 client for benchmarks: requests are bytes the
// caller prepared, responses are read into one reused buffer.
type RawClient struct {
	conn net.Conn
	br   *bufio.Reader
	body []byte
}

func DialRaw(b *testing.B, addr string) *RawClient {
	b.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return &RawClient{conn: c, br: bufio.NewReaderSize(c, 64<<10), body: make([]byte, 0, 64<<10)}
}

// do sends req and returns the status and the body (valid until the next
// call). It understands Content-Length and chunked bodies.
func (rc *RawClient) Do(b *testing.B, req []byte) (int, []byte) {
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
			rc.body = rc.Read(b, rc.body, int(size))
			rc.br.ReadSlice('\n')
		}
	case n > 0:
		rc.body = rc.Read(b, rc.body, n)
	}
	return status, rc.body
}

func (rc *RawClient) Read(b *testing.B, dst []byte, n int) []byte {
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

// Request appends a request as tablebench sends it (client.go: the
// same headers, Shared Key Lite over the date and the path) to dst.
// path is below the account; body may be nil.
func Request(dst []byte, host, method, path, date, auth string, hdr []string, body []byte) []byte {
	dst = append(dst, method...)
	dst = append(dst, " /"+devAccount...)
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

// Auth is the Shared Key Lite Authorization value for path (below the
// account) at date.
func Auth(date, path string) string {
	key, _ := base64.StdEncoding.DecodeString(devKey)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(date + "\n/" + devAccount + "/" + devAccount + path))
	return "SharedKeyLite " + devAccount + ":" + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// Entity appends tablebench's ~1 KiB entity i of partition pk.
func Entity[S string | []byte](dst []byte, pk S, i int) []byte {
	dst = append(dst, `{"PartitionKey":"`...)
	dst = append(dst, pk...)
	dst = append(dst, `","RowKey":"r`...)
	dst = AppendPadded(dst, i, 7)
	dst = append(dst, `","Name":"name`...)
	dst = strconv.AppendInt(dst, int64(i), 10)
	dst = append(dst, `","Age":`...)
	dst = strconv.AppendInt(dst, int64(i%100), 10)
	dst = append(dst, `,"Score":`...)
	dst = strconv.AppendInt(dst, int64(i), 10)
	dst = append(dst, `.5,"Flag":`...)
	dst = strconv.AppendBool(dst, i%2 == 0)
	dst = append(dst, `,"Pad":"`...)
	dst = append(dst, Pad...)
	dst = append(dst, `","Tag":"t`...)
	dst = strconv.AppendInt(dst, int64(i%1000), 10)
	return append(dst, `"}`...)
}

var Pad = strings.Repeat("x", 900)

func AppendPadded(dst []byte, n, width int) []byte {
	var tmp [20]byte
	s := strconv.AppendInt(tmp[:0], int64(n), 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}
