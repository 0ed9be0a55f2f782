package emulator

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header        { return w.h }
func (w *nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *nopWriter) WriteHeader(int)             {}

func BenchmarkZZServePoint(b *testing.B) {
	s, err := New(Config{InMemory: true, Silent: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	mk := func(method, path, body string) *http.Request {
		req := httptest.NewRequest(method, "http://127.0.0.1/"+DevAccount+path, strings.NewReader(body))
		req.URL.Opaque = "/" + DevAccount + path
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json;odata=minimalmetadata")
		req.Header.Set("x-ms-version", "2019-02-02")
		req.Header.Set("DataServiceVersion", "3.0")
		signLiteForBench(req)
		return req
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, mk("POST", "/Tables", `{"TableName":"pread"}`))
	for i := 0; i < 100; i++ {
		s.ServeHTTP(httptest.NewRecorder(), mk("POST", "/pread", benchEntity(i, "x")))
	}
	r0 := httptest.NewRecorder()
	s.ServeHTTP(r0, mk("GET", "/pread(PartitionKey='p001',RowKey='r0000001')", ""))
	if r0.Code != 200 {
		b.Fatalf("%d %s", r0.Code, r0.Body)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		req := mk("GET", fmt.Sprintf("/pread(PartitionKey='p%03d',RowKey='r%07d')", i%100, i%100), "")
		w := &nopWriter{h: http.Header{}}
		b.StartTimer()
		s.ServeHTTP(w, req)
	}
}
