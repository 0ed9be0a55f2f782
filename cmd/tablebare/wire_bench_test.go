package main

import (
	"bytes"
	"fmt"
	"github.com/tableemu/tableemu/cmd/tablebench/wireclient"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The wire benchmarks of emulator/wire_bench_test.go against the bare
// server: the same requests from the same allocation-free client (copied
// here, since a test file cannot be imported), so that B/op and allocs/op
// are what net/http and SQLite alone cost per request.
//
//	go test ./cmd/tablebare -run '^$' -bench 'Wire' -benchmem

// wireBench is a server with table "tbw" holding 1000 entities in 10
// partitions, and a client connected to it.
type wireBench struct {
	rc   *wireclient.RawClient
	host string
	date string
	buf  []byte
}

func newWireBench(b *testing.B) *wireBench {
	b.Helper()
	// On /dev/shm where there is one, as tableemu's InMemory keeps its
	// database in the emulator's wire benchmarks.
	dir := b.TempDir()
	if d, err := os.MkdirTemp("/dev/shm", "tablebare-bench"); err == nil {
		dir = d
		b.Cleanup(func() { os.RemoveAll(d) })
	}
	s, err := open(dir, false)
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(s)
	b.Cleanup(hs.Close)
	s.base = hs.URL + "/" + "devstoreaccount1"
	host := strings.TrimPrefix(hs.URL, "http://")
	wb := &wireBench{rc: wireclient.DialRaw(b, host), host: host, date: time.Now().UTC().Format(http.TimeFormat)}
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
	wb.buf = wireclient.Request(wb.buf[:0], wb.host, method, path, wb.date, wireclient.Auth(wb.date, path), hdr, body)
	if st, rb := wb.rc.Do(b, wb.buf); st != want {
		b.Fatalf("%s %s: status %d, want %d: %.300s", method, path, st, want, rb)
	}
}

// wireBatchBody appends a $batch of n inserts into tbw, partition pk, rows
// from first on, as tablebench sends it.
func wireBatchBody(dst []byte, host string, pk []byte, first, n int) []byte {
	dst = append(dst, "--batch_tb\r\nContent-Type: multipart/mixed; boundary=changeset_tb\r\n\r\n"...)
	var e []byte
	for i := first; i < first+n; i++ {
		e = wireclient.Entity(e[:0], pk, i)
		dst = append(dst, "--changeset_tb\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nPOST http://"...)
		dst = append(dst, host...)
		dst = append(dst, "/"+"devstoreaccount1"+"/tbw HTTP/1.1\r\nPrefer: return-no-content\r\n"...)
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
		reqs[i] = wireclient.Request(nil, wb.host, "GET", path, wb.date, wireclient.Auth(wb.date, path), nil, nil)
	}
	return reqs
}

// mergeRequests are presigned merges (If-Match: *) of the 1000 entities.
func (wb *wireBench) mergeRequests() [][]byte {
	reqs := make([][]byte, 1000)
	for i := range reqs {
		path := fmt.Sprintf("/tbw(PartitionKey='p%03d',RowKey='r%07d')", i/100, i)
		body := fmt.Appendf(nil, `{"Score":%d.25,"Seen":true}`, i*7919%1000000)
		reqs[i] = wireclient.Request(nil, wb.host, "MERGE", path, wb.date, wireclient.Auth(wb.date, path), []string{"If-Match", "*"}, body)
	}
	return reqs
}

func BenchmarkWirePoint(b *testing.B) {
	wb := newWireBench(b)
	reqs := wb.pointRequests()
	wireclient.Measure(b, func(i int) {
		if st, body := wb.rc.Do(b, reqs[i%len(reqs)]); st != 200 {
			b.Fatalf("status %d: %s", st, body)
		}
	})
}

func BenchmarkWireMerge(b *testing.B) {
	wb := newWireBench(b)
	reqs := wb.mergeRequests()
	wireclient.Measure(b, func(i int) {
		if st, body := wb.rc.Do(b, reqs[i%len(reqs)]); st != 204 {
			b.Fatalf("status %d: %s", st, body)
		}
	})
}

func BenchmarkWireInsert(b *testing.B) {
	wb := newWireBench(b)
	auth := wireclient.Auth(wb.date, "/tbw")
	hdr := []string{"Prefer", "return-no-content"}
	var body, req []byte
	wireclient.Measure(b, func(i int) {
		body = wireclient.Entity(body[:0], "q", 10_000_000+i)
		req = wireclient.Request(req[:0], wb.host, "POST", "/tbw", wb.date, auth, hdr, body)
		if st, rb := wb.rc.Do(b, req); st != 204 {
			b.Fatalf("status %d: %s", st, rb)
		}
	})
}

// BenchmarkWireBatch: one op is a $batch of 100 inserts.
func BenchmarkWireBatch(b *testing.B) {
	wb := newWireBench(b)
	auth := wireclient.Auth(wb.date, "/$batch")
	hdr := []string{"Content-Type", "multipart/mixed; boundary=batch_tb"}
	var pk, body, req []byte
	wireclient.Measure(b, func(i int) {
		pk = append(pk[:0], 'b')
		pk = strconv.AppendInt(pk, int64(i), 10)
		body = wireBatchBody(body[:0], wb.host, pk, 0, 100)
		req = wireclient.Request(req[:0], wb.host, "POST", "/$batch", wb.date, auth, hdr, body)
		if st, rb := wb.rc.Do(b, req); st != 202 || bytes.Contains(rb, []byte("odata.error")) {
			b.Fatalf("status %d: %.300s", st, rb)
		}
	})
}
