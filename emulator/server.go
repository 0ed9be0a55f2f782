// Package emulator serves the Azure Table service REST API: the route
// table, middleware, one file per group of operations, and the one error
// writer. Storage is package store, credentials package auth, the $filter
// language package odata, the entity JSON codec package wire.
//
// A request's path, file by file, in the order it runs:
//
//   - server.go: ServeHTTP, the middleware (recover, common headers, the
//     access log), with call.go (the per-request state, reused); paths
//     under /_tableemu/ go to tools.go instead (with crossorigin.go's
//     check), and the rest of this list is the Table API's;
//   - checkRequest (server.go): version, body limit, method, and
//     resource.go (the account, table and keys from the URL); deadline.go:
//     the request's time limit; cors.go: the account's CORS rules;
//   - routes.go: the route table (contenttype.go wraps the handlers that
//     read a JSON body; undertable.go answers paths below a table name),
//     then operation.serve: authorization (authz.go, with oauth.go for
//     bearer tokens), the faults add-on, content negotiation (format.go),
//     and the operation's handler;
//   - the operations: tables.go (tables), entities.go (single entities),
//     query.go (queries and continuation) with cosmospaging.go (the
//     continuation tokens of the cosmos profile), batch.go with
//     batchparse.go and batchfail.go ($batch) and batchcosmos.go (a $batch
//     answer under the cosmos profile), acl.go (stored access policies),
//     service.go (service properties and stats), delegation.go (user
//     delegation keys);
//   - the answer: format.go (headers and JSON, with bufpool.go's buffers)
//     or errors.go (the one error writer, with hints.go's hints).
//
// Around that path: config.go, usage.go and run.go (the configuration,
// --help, listening), store.go and database.go (opening the engine),
// log.go; and the faces of the add-ons the server calls: addons.go (a hook
// per request, per query page, per write) and isolation.go (reset and
// snapshots from Go). docs/development.md, "Layout", places the packages.
package emulator

import (
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/auth"
	"github.com/tableemu/tableemu/emulator/explorer"
	"github.com/tableemu/tableemu/emulator/faults"
	"github.com/tableemu/tableemu/emulator/insights"
	"github.com/tableemu/tableemu/emulator/isolation"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/transfer"
)

// Server is the Table service as an http.Handler. Create it with New and
// release it with Close.
type Server struct {
	cfg      Config
	cosmos   bool // cfg.Cosmos(): answer as Azure Cosmos DB for Table (docs/cosmos.md)
	store    *store.Store
	accounts map[string]*auth.Account
	router   *mux.Router
	now      func() time.Time
	props    propsCache           // service properties per account, read by CORS (service.go)
	ins      observer             // nil unless --insights (addons.go)
	thr      limiter              // nil unless --throttle (addons.go)
	flt      injector             // nil unless --faults (addons.go)
	iso      *isolation.Isolation // reset and snapshots (isolation.go)
	xfer     *transfer.Transfer   // import and export (transfer.go)
	tls      *tls.Config          // nil unless --cert (run.go)

	explorer http.Handler            // the data explorer at /_tableemu/ (tools.go)
	lastBase atomic.Pointer[baseURL] // call.baseURL's last answer

	logMu  sync.Mutex
	access io.Writer // access log; io.Discard when --silent
	debug  io.Writer // --debug file, or nil
	closer io.Closer // the debug file
}

// New opens the store the configuration names and builds the server. It
// checks what can be checked before creating anything on disk: a
// certificate that does not load, or a --debug file in a directory that
// does not exist, fails here with the data directory untouched.
func New(cfg Config) (*Server, error) {
	if len(cfg.Accounts) == 0 {
		cfg.Accounts = cfg.DefaultAccounts()
	}
	tlsConfig, err := loadTLS(cfg) // run.go
	if err != nil {
		return nil, err
	}
	cfg.InMemory = cfg.InMemory || cfg.Location == "" && cfg.Database == "" // the zero Config writes nothing (config.go)
	if abs, err := filepath.Abs(cfg.Location); err == nil && !cfg.InMemory && cfg.Database == "" {
		cfg.Location = abs // so that DatabasePath and errors name the directory in full
	}
	s := &Server{cfg: cfg, cosmos: cfg.Cosmos(), now: time.Now, access: os.Stdout, accounts: map[string]*auth.Account{}, tls: tlsConfig}
	for _, a := range cfg.Accounts {
		s.accounts[a.Name] = &auth.Account{Name: a.Name, Keys: a.RawKeys}
	}
	if cfg.Silent {
		s.access = io.Discard
	}
	if cfg.Debug != "" {
		if err := checkDebugPath(cfg.Debug); err != nil {
			return nil, err
		}
	}
	st, err := openStore(cfg) // store.go
	if err != nil {
		return nil, err
	}
	s.store = st
	if st.Shared() {
		s.props.ttl = sharedPropsTTL // other instances write too (service.go)
	}
	if cfg.Debug != "" {
		f, err := os.OpenFile(cfg.Debug, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			st.Close()
			return nil, fmt.Errorf("--debug: %w", err)
		}
		s.debug, s.closer = f, f
	}
	if cfg.Insights {
		s.ins = insights.New(insights.Config{Now: s.now, PartitionTarget: faults.PartitionTarget,
			Accounts: s.accounts, DevAccount: publicDevAccount(cfg.Accounts), VerifySharedKey: s.verifySharedKey,
			ExactTableNames: cfg.Cosmos()})
	}
	if cfg.Throttle {
		var refused func(account, table, pk string, hasPK bool)
		if s.ins != nil {
			refused = s.ins.Throttled // the insights timeline
		}
		thr := faults.NewThrottle(s.now, refused)
		thr.Cosmos = s.cosmos // 429 with x-ms-retry-after-ms (docs/cosmos.md)
		s.thr = thr
	}
	if cfg.Faults != "" {
		f, err := faults.Parse(cfg.Faults)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("--faults: %w", err)
		}
		s.flt = f
	}
	s.iso = newIsolation(s)
	s.xfer = newTransfer(s)
	s.router = s.routes()
	s.explorer = explorer.New(explorer.Options{DevAccount: publicDevAccount(cfg.Accounts), Insights: cfg.Insights}) // tools.go
	return s, nil
}

// Close closes the database. Call it after the HTTP server has stopped.
func (s *Server) Close() error {
	err := s.store.Close()
	if s.closer != nil {
		s.closer.Close()
	}
	return err
}

// DatabasePath is the SQLite file in use, ":memory:", or for PostgreSQL
// user@host:port/database (never with the password).
func (s *Server) DatabasePath() string { return s.store.Describe().Where }

// ServeHTTP runs the middleware (outermost first: recover, common headers,
// access log, body limit, resource and method resolution, the deadline)
// and then the route table.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := s.now()
	c := newCall(s, w, r)
	sw := &c.sw
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.logf("panic serving %s %s: %v\n%s", r.Method, r.RequestURI, p, debug.Stack())
			if !sw.wrote {
				c.writeError(tableemu.New(tableemu.InternalError))
			}
			c.dl.stop()
			s.accessLog(c, sw, start)
			return // not released: a panicking handler may have kept c
		}
		c.dl.stop()
		s.accessLog(c, sw, start)
		c.release()
	}()

	// Headers by their canonical names straight in the map (net/http
	// canonicalises every name it reads and writes them so): Get and Set
	// check the name's spelling on every call, and convert — allocate —
	// any other, a measurable part of a point read.
	//
	// The map holds few entries on purpose: past eight, Go's map grows,
	// and net/http copies it at WriteHeader, both allocations of a few
	// hundred bytes. net/http writes Date by itself (from a buffer, not the
	// map), and Content-Length for a body it holds whole (writeJSON).
	h := w.Header()
	// The echoed headers share the request's value, the first as sent
	// (capacity one: an append would copy, not write into the request).
	//
	// Cosmos DB for Table (the cosmos profile) sends none of these: no
	// x-ms-request-id, Server or x-ms-version, and no
	// x-ms-client-request-id even when the client asks for it with
	// x-ms-return-client-request-id (every .NET recording of it,
	// conformance/testdata/recordings/net-cosmos; docs/cosmos.md). The
	// request id still names the request in the log and in an error's
	// RequestID line.
	c.idHdr[0] = c.reqID
	if !s.cosmos {
		h["X-Ms-Request-Id"] = c.idHdr[:]
		h["Server"] = serverHeader
		if v := r.Header["X-Ms-Version"]; len(v) > 0 && v[0] != "" {
			h["X-Ms-Version"] = v[:1:1]
		} else {
			h["X-Ms-Version"] = defaultVersionHeader
		}
		if id := r.Header["X-Ms-Client-Request-Id"]; len(id) > 0 && id[0] != "" {
			h["X-Ms-Client-Request-Id"] = id[:1:1]
		}
	}
	if isToolPath(r.URL.Path) {
		s.serveTool(c)
		return
	}
	if err := s.checkRequest(c); err != nil {
		c.writeError(err)
		return
	}
	// The deadline (deadline.go), before CORS: its rules may be read from
	// the store. A timeout parameter that cannot be read is answered once
	// the operation, and so the error's format, is known (operation.serve).
	timeout, terr := s.requestTimeout(c)
	c.dl, c.dlErr = newDeadline(r.Context(), time.Now().Add(timeout)), terr
	s.applyCORS(c) // CORS headers of actual requests (cors.go, docs/protocol.md 3.7)
	s.route(c)
}

// query returns the request's query parameters, parsed on first use:
// authentication, content negotiation and the operation each read them.
func (c *call) query() url.Values {
	if c.q == nil {
		if c.r.URL.RawQuery != "" {
			c.q = c.r.URL.Query()
		} else {
			// Most requests have no query: the call's own empty map,
			// emptied again should anything have written to it.
			if c.noQuery == nil {
				c.noQuery = url.Values{}
			}
			clear(c.noQuery)
			c.q = c.noQuery
		}
	}
	return c.q
}

// newRequestID returns a random (version 4) UUID for x-ms-request-id. It
// only needs to be unique, not unguessable, so it comes from the runtime's
// per-thread generator: uuid.NewString reads the system's random source,
// a system call on every request.
func newRequestID() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:])
}

// defaultVersion is echoed when a request carries no x-ms-version.
const defaultVersion = "2019-02-02"

// Constant header values, shared: net/http only reads them.
var (
	defaultVersionHeader = []string{defaultVersion}
	serverHeader         = []string{"tableemu"}
)

// header is the first value of the header with canonical name key (see
// ServeHTTP), or "".
func header(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// maxBody is the largest request body accepted, for every operation,
// $batch included: 4 MiB, framing and all (docs/protocol.md 0.1, 7.2, 10).
// A larger body is 413 RequestBodyTooLarge: from Content-Length before any
// of it is read, and for a chunked body as soon as the limit is crossed
// (http.MaxBytesReader, seen by readBody).
const maxBody = 4 << 20

// checkRequest validates what every request shares: the version header,
// the client request id, the body size, the method override and the path.
func (s *Server) checkRequest(c *call) error {
	r := c.r
	if err := s.checkVersion(header(r.Header, "X-Ms-Version")); err != nil {
		return err
	}
	if len(header(r.Header, "X-Ms-Client-Request-Id")) > 1024 {
		return tableemu.New(tableemu.InvalidHeaderValue).WithDetail("x-ms-client-request-id is longer than 1 KiB")
	}
	if r.ContentLength > maxBody {
		return tableemu.New(tableemu.RequestBodyTooLarge)
	}
	c.body = limitedBody{r: r.Body, n: maxBody}
	r.Body = &c.body
	if err := resolveMethod(r); err != nil {
		return err
	}
	res, err := s.parseResource(r.Host, r.RequestURI)
	c.res = res // what was read of it, for the error's hint too (hints.go)
	if err != nil {
		return err
	}
	return nil
}

// checkVersion accepts every x-ms-version real SDKs send: any well-formed
// date from 2013-08-15 on (the legacy SDKs send 2018-03-28, current ones
// 2019-02-02), and no header at all (docs/protocol.md 0.1).
func (s *Server) checkVersion(v string) error {
	if v == "" || s.cfg.SkipAPIVersionCheck {
		return nil
	}
	// Clients send the same version on every request: remember the last
	// good one instead of parsing it each time.
	if last := goodVersion.Load(); last != nil && *last == v {
		return nil
	}
	t, err := time.Parse("2006-01-02", v)
	if err != nil {
		return tableemu.New(tableemu.InvalidHeaderValue).WithDetail("x-ms-version %q is not a version date", v)
	}
	if t.Before(time.Date(2013, 8, 15, 0, 0, 0, 0, time.UTC)) {
		return tableemu.New(tableemu.InvalidHeaderValue).WithHint(
			"x-ms-version %s is older than the oldest version tableemu serves (2013-08-15); --skipApiVersionCheck accepts it.", v)
	}
	good := v // a copy, so that only this path allocates
	goodVersion.Store(&good)
	return nil
}

// goodVersion is the last x-ms-version checkVersion accepted.
var goodVersion atomic.Pointer[string]

// resolveMethod applies X-HTTP-Method, which clients use to send MERGE (and
// sometimes DELETE) through proxies that only pass POST (docs/protocol.md 2.1).
func resolveMethod(r *http.Request) error {
	vals := r.Header["X-Http-Method"] // X-HTTP-Method, canonical
	if len(vals) == 0 {
		return nil
	}
	if len(vals) > 1 {
		return tableemu.New(tableemu.XMethodIncorrectCount)
	}
	if r.Method != http.MethodPost {
		return tableemu.New(tableemu.XMethodNotUsingPost)
	}
	switch m := strings.ToUpper(strings.TrimSpace(vals[0])); m {
	case "MERGE", "PATCH", "DELETE", "PUT", "GET":
		r.Method = m
		return nil
	}
	return tableemu.New(tableemu.XMethodIncorrectValue)
}

// statusWriter records the status for the access log.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.status, w.wrote = http.StatusOK, true
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (s *Server) accessLog(c *call, sw *statusWriter, start time.Time) {
	if s.access == io.Discard && s.debug == nil {
		return // --silent: no line to format
	}
	if c.r.UserAgent() == "tableemu-healthcheck" && s.debug == nil {
		return // the container healthcheck probes every few seconds
	}
	op := "-"
	if c.op != 0 {
		op = c.op.String()
	}
	line := fmt.Sprintf("%s %s %s %d %s %s %s%s\n",
		start.UTC().Format(LogTime), c.r.Method, c.r.RequestURI,
		sw.status, op, orDash(string(c.errCode)), time.Since(start).Round(time.Microsecond), prefixed(" ", c.logNote()))
	s.logMu.Lock()
	defer s.logMu.Unlock()
	io.WriteString(s.access, line)
	if s.debug != nil {
		fmt.Fprintf(s.debug, "%s request-id=%s headers=%v", line[:len(line)-1], c.reqID, redactHeaders(c.r.Header))
		io.WriteString(s.debug, "\n")
	}
}

// logNote is the note of c's access log line.
func (c *call) logNote() string {
	if c.queried.set {
		return c.queried.String()
	}
	return c.note
}

func (s *Server) logf(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	log.Printf(format, args...)
	if s.debug != nil {
		s.debugLine(fmt.Sprintf(format, args...))
	}
}

// debugLine writes msg to the --debug log as one entry in the one log
// format (`<time> <message>`, as Log writes). The caller holds logMu.
func (s *Server) debugLine(msg string) {
	b := s.now().UTC().AppendFormat(make([]byte, 0, len(LogTime)+2+len(msg)), LogTime)
	b = append(b, ' ')
	b = append(b, msg...)
	io.WriteString(s.debug, string(append(b, '\n')))
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func redactHeaders(h http.Header) http.Header {
	c := h.Clone()
	if c.Get("Authorization") != "" {
		c.Set("Authorization", "[redacted]")
	}
	return c
}

// ifMatchPresent reports whether the request has If-Match; PUT and MERGE
// without it are upserts, so it picks the operation (docs/protocol.md 3.11).
func ifMatchPresent(r *http.Request, _ *mux.RouteMatch) bool {
	_, ok := r.Header["If-Match"]
	return ok
}

func noIfMatch(r *http.Request, m *mux.RouteMatch) bool { return !ifMatchPresent(r, m) }

// kind matches the requests for a resource of kind k. The resource was
// parsed before routing; the matcher finds it in the call that route put
// in the match (routes.go).
func kind(k resKind) mux.MatcherFunc {
	return func(_ *http.Request, m *mux.RouteMatch) bool {
		c, ok := m.Handler.(*routing)
		return ok && c.res.kind == k
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
