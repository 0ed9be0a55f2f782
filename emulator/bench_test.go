package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/wire"
)

// benchServer is an in-process server with one table of n ~1 KiB entities
// (100 partitions), loaded once per process and shared by the query
// benchmarks. Set TABLEEMU_BENCH_DIR to keep the database between runs.
var benchOnce sync.Once
var benchHS *httptest.Server

const benchN = 100_000

func benchServer(b *testing.B) *httptest.Server {
	b.Helper()
	benchOnce.Do(func() {
		dir := os.Getenv("TABLEEMU_BENCH_DIR")
		fresh := dir == ""
		if fresh {
			var err error
			if dir, err = os.MkdirTemp("", "tableemu-bench"); err != nil {
				b.Fatal(err)
			}
		}
		s, err := New(Config{Location: dir, Silent: true})
		if err != nil {
			b.Fatal(err)
		}
		benchHS = httptest.NewServer(s)
		if r := benchDo(b, "GET", "/Tables('bench')", ""); r.StatusCode == 200 {
			return
		}
		benchDo(b, "POST", "/Tables", `{"TableName":"bench"}`)
		pad := strings.Repeat("x", 800)
		// Load through the store directly: the benchmarks measure queries.
		err = loadBench(s, benchN, pad)
		if err != nil {
			b.Fatal(err)
		}
	})
	return benchHS
}

func benchEntity(i int, pad string) string {
	e := map[string]any{"PartitionKey": fmt.Sprintf("p%03d", i%100), "RowKey": fmt.Sprintf("r%07d", i),
		"Name": fmt.Sprintf("name%d", i), "Age": i % 100, "Score": float64(i) + 0.5, "Flag": i%2 == 0, "Pad": pad, "Tag": fmt.Sprintf("t%d", i%1000)}
	b, _ := json.Marshal(e)
	return string(b)
}

func benchDo(b *testing.B, method, path, body string) *http.Response {
	b.Helper()
	req, _ := http.NewRequest(method, benchHS.URL, strings.NewReader(body))
	p, q, _ := strings.Cut("/"+DevAccount+path, "?")
	req.URL.Opaque, req.URL.RawQuery = p, q
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	signLiteForBench(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// drain pages through a query to the end and returns the entity count.
func drain(b *testing.B, filter string) (n int) {
	b.Helper()
	q := url.Values{}
	if filter != "" {
		q.Set("$filter", filter)
	}
	for {
		req, _ := http.NewRequest("GET", benchHS.URL, nil)
		req.URL.Opaque, req.URL.RawQuery = "/"+DevAccount+"/bench()", q.Encode()
		signLiteForBench(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		// Count entities without decoding them: the benchmark measures
		// the server, not a client's JSON decoder.
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("%v %d %s", err, resp.StatusCode, body)
		}
		n += bytes.Count(body, []byte(`"odata.etag"`))
		npk := resp.Header.Get("x-ms-continuation-NextPartitionKey")
		if npk == "" {
			return n
		}
		q.Set("NextPartitionKey", npk)
		q.Set("NextRowKey", resp.Header.Get("x-ms-continuation-NextRowKey"))
	}
}

func BenchmarkQuery(b *testing.B) {
	benchServer(b)
	for _, tc := range []struct {
		name, filter string
		want         int
	}{
		{"point", "PartitionKey eq 'p007' and RowKey eq 'r0050007'", 1},
		{"range1000", "PartitionKey eq 'p007' and RowKey ge 'r0000000' and RowKey lt 'r0100000'", 1000},
		{"partition", "PartitionKey eq 'p007'", 1000},
		{"sparse", "Tag eq 't7'", 100}, // through an automatic index after two scans
		{"sparse-range", "Score gt 99899.0", 101},
		{"drain", "", benchN},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if n := drain(b, tc.filter); n != tc.want {
					b.Fatalf("%d entities, want %d", n, tc.want)
				}
			}
		})
	}
}

func loadBench(s *Server, n int, pad string) error {
	const chunk = 1000
	for start := 0; start < n; start += chunk {
		err := s.store.Update(context.Background(), func(tx *store.Tx) error {
			t, err := tx.GetTable(DevAccount, "bench")
			if err != nil {
				return err
			}
			for i := start; i < start+chunk && i < n; i++ {
				d, err := wire.DecodeEntity([]byte(benchEntity(i, pad)))
				if err != nil {
					return err
				}
				if err := tx.InsertEntity(t, &d.Entity); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkInsert measures single-entity inserts from concurrent clients
// against a server writing to disk (synchronous=FULL, group commit).
func BenchmarkInsert(b *testing.B) {
	s, err := New(Config{Location: b.TempDir(), Silent: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	hs := httptest.NewServer(s)
	defer hs.Close()
	mk := func(method, path, body string) *http.Request {
		req, _ := http.NewRequest(method, hs.URL, strings.NewReader(body))
		req.URL.Opaque = "/" + DevAccount + path
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Prefer", "return-no-content")
		signLiteForBench(req)
		return req
	}
	resp, err := http.DefaultClient.Do(mk("POST", "/Tables", `{"TableName":"ins"}`))
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	pad := strings.Repeat("x", 800)
	var seq atomic.Int64
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := http.DefaultClient.Do(mk("POST", "/ins", benchEntity(int(seq.Add(1)), pad)))
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 204 {
				b.Fatalf("status %d", resp.StatusCode)
			}
		}
	})
}

// BenchmarkPointReadInsights compares point reads with the design-insight
// features off (the default) and on: off, they must cost nothing; and
// under the cosmos profile, which must cost nothing either.
func BenchmarkPointReadInsights(b *testing.B) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"off", Config{InMemory: true, Silent: true}},
		{"insights+throttle", Config{InMemory: true, Silent: true, Insights: true, Throttle: true}},
		{"cosmos-profile", Config{InMemory: true, Silent: true, Profile: ProfileCosmos}}, // docs/cosmos.md: fewer headers, no cost
	} {
		b.Run(tc.name, func(b *testing.B) {
			s, err := New(tc.cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			hs := httptest.NewServer(s)
			defer hs.Close()
			send := func(method, path, body string) int {
				req, _ := http.NewRequest(method, hs.URL, strings.NewReader(body))
				req.URL.Opaque = "/" + DevAccount + path
				req.Header.Set("Content-Type", "application/json")
				signLiteForBench(req)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return resp.StatusCode
			}
			if st := send("POST", "/Tables", `{"TableName":"pread"}`); st != 201 {
				b.Fatalf("create table: %d", st)
			}
			for i := 0; i < 100; i++ {
				if st := send("POST", "/pread", benchEntity(i, "x")); st != 201 {
					b.Fatalf("insert: %d", st)
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if st := send("GET", fmt.Sprintf("/pread(PartitionKey='p%03d',RowKey='r%07d')", i%100, i%100), ""); st != 200 {
					b.Fatalf("status %d", st)
				}
			}
		})
	}
}
