// Command tablebare is the reference server of tablebench (docs/benchmarks.md):
// it answers the requests tablebench sends straight from SQLite, with
// nothing else. It checks no signature, validates no key, name, type or
// size, keeps each entity as the JSON text the client sent, understands
// only the filters tablebench uses (key comparisons and string equality
// on a property, joined by "and"), inserts only in batches, and has no
// table ACLs, no automatic indexes, no group commit. It is not an
// emulator; it is the limit — what HTTP and SQLite alone cost on this
// machine for each workload — against which tableemu's full validation
// is measured.
//
// Storage is what tableemu uses: SQLite in WAL mode with
// synchronous=NORMAL (-fsync: FULL), one writer connection, mapped
// readers for queries and unmapped ones for point reads.
//
//	tablebare -port 10124 -location /tmp/bare
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const devKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

func main() {
	host := flag.String("host", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 0, "port (0 picks a free one)")
	dir := flag.String("location", "", "directory of the database file (required)")
	fsync := flag.Bool("fsync", false, "synchronous=FULL instead of NORMAL")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the whole run here at exit")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "tablebare: give -location")
		os.Exit(2)
	}
	s, err := open(*dir, *fsync)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tablebare:", err)
		os.Exit(1)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(*host, strconv.Itoa(*port)))
	if err != nil {
		fmt.Fprintln(os.Stderr, "tablebare:", err)
		os.Exit(1)
	}
	s.base = "http://" + ln.Addr().String() + "/devstoreaccount1"
	fmt.Printf("tablebare: connection string DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=%s;TableEndpoint=%s;\n", devKey, s.base)
	if *profile != "" {
		f, err := os.Create(*profile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "tablebare:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	srv := &http.Server{Handler: s}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		<-sig
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "tablebare:", err)
	}
}

type server struct {
	base   string
	wmu    sync.Mutex
	w      *db  // the writer, under wmu
	query  pool // readers with the file mapped: queries
	point  pool // readers without: point reads
	lastTS atomic.Int64
	bufs   sync.Pool // *bytes.Buffer
}

func open(dir string, fsync bool) (*server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "tablebare.sqlite")
	sync := "NORMAL"
	if fsync {
		sync = "FULL"
	}
	pragmas := []string{"busy_timeout = 10000", "journal_mode = WAL", "synchronous = " + sync}
	s := &server{}
	var err error
	if s.w, err = openDB(path, append(pragmas, "cache_size = -16000")...); err != nil {
		return nil, err
	}
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS tables (name TEXT PRIMARY KEY) WITHOUT ROWID`,
		`CREATE TABLE IF NOT EXISTS entities (t TEXT, pk TEXT, rk TEXT, ts INTEGER, body TEXT, PRIMARY KEY (t, pk, rk)) WITHOUT ROWID`,
	} {
		if err := s.w.exec(q); err != nil {
			return nil, err
		}
	}
	n := max(4, 2*runtime.GOMAXPROCS(0))
	if s.query, err = newPool(n, func() (*db, error) {
		return openDB(path, append(pragmas, "mmap_size = 2147418112", "query_only = 1")...)
	}); err != nil {
		return nil, err
	}
	s.point, err = newPool(8, func() (*db, error) { return openDB(path, append(pragmas, "query_only = 1")...) })
	return s, err
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// /account/resource: the account is not checked.
	p := strings.TrimPrefix(r.URL.Path, "/")
	_, res, _ := strings.Cut(p, "/")
	var body []byte
	if r.ContentLength > 0 {
		buf := s.buf()
		defer s.bufs.Put(buf)
		if _, err := buf.ReadFrom(r.Body); err != nil {
			return
		}
		body = buf.Bytes()
	}
	h := w.Header()
	h.Set("x-ms-version", "2019-02-02")
	switch {
	case res == "Tables" && r.Method == "POST":
		s.createTable(w, r, body)
	case strings.HasPrefix(res, "Tables('") && r.Method == "DELETE":
		s.deleteTable(w, strings.TrimSuffix(strings.TrimPrefix(res, "Tables('"), "')"))
	case res == "$batch" && r.Method == "POST":
		s.batch(w, r, body)
	default:
		table, keys, paren := strings.Cut(res, "(")
		keys = strings.TrimSuffix(keys, ")")
		switch {
		case !paren && r.Method == "POST":
			s.insert(w, r, table, body)
		case paren && keys == "" && r.Method == "GET":
			s.queryEntities(w, r, table)
		default:
			pk, rk, ok := parseKeys(keys)
			if !ok {
				fail(w, 400, "InvalidInput")
				return
			}
			switch r.Method {
			case "GET":
				s.get(w, table, pk, rk)
			case "MERGE", "PATCH":
				s.merge(w, table, pk, rk, body)
			case "DELETE":
				s.write(w, 204, "ResourceNotFound", `DELETE FROM entities WHERE t = ? AND pk = ? AND rk = ?`, table, pk, rk)
			default:
				fail(w, 501, "NotImplemented")
			}
		}
	}
}

func (s *server) buf() *bytes.Buffer {
	if b, ok := s.bufs.Get().(*bytes.Buffer); ok {
		b.Reset()
		return b
	}
	return new(bytes.Buffer)
}

func fail(w http.ResponseWriter, status int, code string) {
	w.Header().Set("x-ms-error-code", code)
	w.Header().Set("Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"odata.error":{"code":"%s","message":{"lang":"en-US","value":"%s"}}}`, code, code)
}

// parseKeys reads PartitionKey='a',RowKey='b' (a quote inside doubled).
func parseKeys(s string) (pk, rk string, ok bool) {
	a, b, ok := strings.Cut(s, ",")
	if !ok {
		return "", "", false
	}
	pk, ok1 := quoted(strings.TrimPrefix(a, "PartitionKey="))
	rk, ok2 := quoted(strings.TrimPrefix(b, "RowKey="))
	return pk, rk, ok1 && ok2
}

func quoted(s string) (string, bool) {
	if len(s) < 2 || s[0] != '\'' || s[len(s)-1] != '\'' {
		return "", false
	}
	return strings.ReplaceAll(s[1:len(s)-1], "''", "'"), true
}

// stringField finds "name":"value" in a JSON object without parsing it
// (values with escapes are not expected from tablebench).
func stringField(body []byte, name string) (string, bool) {
	key := `"` + name + `":"`
	i := bytes.Index(body, []byte(key))
	if i < 0 {
		return "", false
	}
	v := body[i+len(key):]
	j := bytes.IndexByte(v, '"')
	if j < 0 {
		return "", false
	}
	return string(v[:j]), true
}

// now is a Timestamp (Unix nanoseconds), unique and increasing.
func (s *server) now() int64 {
	for {
		last, t := s.lastTS.Load(), time.Now().UnixNano()
		if t <= last {
			t = last + 1
		}
		if s.lastTS.CompareAndSwap(last, t) {
			return t
		}
	}
}

func etag(ts int64) string {
	return `W/"datetime'` + time.Unix(0, ts).UTC().Format("2006-01-02T15:04:05.0000000Z") + `'"`
}

func (s *server) createTable(w http.ResponseWriter, r *http.Request, body []byte) {
	name, ok := stringField(body, "TableName")
	if !ok {
		fail(w, 400, "InvalidInput")
		return
	}
	s.wmu.Lock()
	_, err := s.w.run(`INSERT INTO tables (name) VALUES (?)`, name)
	s.wmu.Unlock()
	if err != nil {
		fail(w, 409, "TableAlreadyExists")
		return
	}
	if r.Header.Get("Prefer") == "return-no-content" {
		w.WriteHeader(204)
		return
	}
	w.Header().Set("Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
	w.WriteHeader(201)
	fmt.Fprintf(w, `{"odata.metadata":"%s/$metadata#Tables/@Element","TableName":"%s"}`, s.base, name)
}

func (s *server) deleteTable(w http.ResponseWriter, name string) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	n, err := s.w.run(`DELETE FROM tables WHERE name = ?`, name)
	if err == nil && n == 0 {
		fail(w, 404, "ResourceNotFound")
		return
	}
	if err == nil {
		_, err = s.w.run(`DELETE FROM entities WHERE t = ?`, name)
	}
	if err != nil {
		fail(w, 500, "InternalError")
		return
	}
	w.WriteHeader(204)
}

func (s *server) insert(w http.ResponseWriter, r *http.Request, table string, body []byte) {
	pk, ok1 := stringField(body, "PartitionKey")
	rk, ok2 := stringField(body, "RowKey")
	if !ok1 || !ok2 {
		fail(w, 400, "InvalidInput")
		return
	}
	ts := s.now()
	s.wmu.Lock()
	_, err := s.w.run(`INSERT INTO entities (t, pk, rk, ts, body) VALUES (?, ?, ?, ?, ?)`, table, pk, rk, ts, body)
	s.wmu.Unlock()
	if err != nil {
		fail(w, 409, "EntityAlreadyExists")
		return
	}
	w.Header().Set("ETag", etag(ts))
	if r.Header.Get("Prefer") == "return-no-content" {
		w.Header().Set("Preference-Applied", "return-no-content")
		w.WriteHeader(204)
		return
	}
	out := s.buf()
	defer s.bufs.Put(out)
	s.entity(out, table, true, ts, body)
	w.Header().Set("Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(out.Len()))
	w.WriteHeader(201)
	w.Write(out.Bytes())
}

// write runs one changing statement; no row changed is a 404 with code.
func (s *server) write(w http.ResponseWriter, status int, code, q string, args ...any) {
	s.wmu.Lock()
	n, err := s.w.run(q, args...)
	s.wmu.Unlock()
	switch {
	case err != nil:
		fail(w, 500, "InternalError")
	case n == 0:
		fail(w, 404, code)
	default:
		w.WriteHeader(status)
	}
}

func (s *server) merge(w http.ResponseWriter, table, pk, rk string, body []byte) {
	ts := s.now()
	w.Header().Set("ETag", etag(ts))
	s.write(w, 204, "ResourceNotFound", `UPDATE entities SET body = json_patch(body, ?), ts = ? WHERE t = ? AND pk = ? AND rk = ?`, body, ts, table, pk, rk)
}

func (s *server) get(w http.ResponseWriter, table, pk, rk string) {
	d := <-s.point
	defer s.point.put(d)
	st, err := d.prepare(`SELECT ts, body FROM entities WHERE t = ? AND pk = ? AND rk = ?`, table, pk, rk)
	if err != nil {
		fail(w, 500, "InternalError")
		return
	}
	defer st.reset()
	row, err := st.step()
	if err != nil || !row {
		fail(w, 404, "ResourceNotFound")
		return
	}
	out := s.buf()
	defer s.bufs.Put(out)
	ts := st.int(0)
	s.entity(out, table, true, ts, st.bytes(1))
	h := w.Header()
	h.Set("ETag", etag(ts))
	h.Set("Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(out.Len()))
	w.Write(out.Bytes())
}

// entity writes a stored entity as the service returns it: metadata,
// ETag and Timestamp around the client's own JSON.
func (s *server) entity(out *bytes.Buffer, table string, element bool, ts int64, body []byte) {
	out.WriteByte('{')
	if element {
		out.WriteString(`"odata.metadata":"`)
		out.WriteString(s.base)
		out.WriteString(`/$metadata#`)
		out.WriteString(table)
		out.WriteString(`/@Element",`)
	}
	out.WriteString(`"odata.etag":"`)
	out.WriteString(strings.ReplaceAll(etag(ts), `"`, `\"`))
	out.WriteString(`","Timestamp":"`)
	out.WriteString(time.Unix(0, ts).UTC().Format("2006-01-02T15:04:05.0000000Z"))
	out.WriteString(`"`)
	if inner := bytes.TrimSpace(body); len(inner) > 2 {
		out.WriteByte(',')
		out.Write(inner[1 : len(inner)-1])
	}
	out.WriteByte('}')
}
