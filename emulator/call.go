package emulator

import (
	"io"
	"net/http"
	"net/url"
	"sync"

	"github.com/gorilla/mux"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/auth"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/wire"
	"github.com/tableemu/tableemu/odata/edm"
)

// call carries one request through middleware, authorization and its
// handler.
type call struct {
	s     *Server
	w     http.ResponseWriter
	r     *http.Request
	reqID string
	res   resource
	acct  *auth.Account
	verb  string // the method as sent, before X-HTTP-Method; it is signed
	op    auth.Op
	grant *auth.Grant
	level wire.Level
	xml   bool // the operation answers in XML (errors too)
	// uncached: the answer goes without Cache-Control, as the service
	// sends the errors of its request parser (errors.go parserError).
	uncached bool
	// frontEnd: the error is the one the service's front end answers
	// before the Table service proper sees the request (errors.go,
	// frontEndError).
	frontEnd bool

	q url.Values // the query, parsed once (query)

	// dl is the request's deadline (deadline.go), set before routing;
	// dlErr a timeout parameter that could not be read.
	dl    *deadlineCtx
	dlErr error

	status  int
	errCode tableemu.Code
	note    string    // added to the access log line (insights, faults)
	queried queryNote // insights of a query, for the note when logged

	// Storage reused with the call (callPool): the response writer and
	// the router's match.
	sw      statusWriter
	match   mux.RouteMatch
	vars    map[string]string // match.Vars, empty: no route has variables
	noQuery url.Values        // query() of a request without one
	body    limitedBody       // the request body within maxBody
	authReq auth.Request      // authRequest
	paths   [4]string         // authReq.CanonicalPaths
	scratch []byte            // authReq.Scratch
	// Response header values (safe to reuse: see release).
	idHdr, etagHdr, locHdr [1]string

	// A point read's closures (its transaction, and the callback that
	// encodes the entity the store lends) and what they share
	// (getEntity), made once per call: a closure made per request is an
	// allocation, and so are the variables it captures.
	pointRead   func(*store.Tx) error
	pointEncode func(*edm.Entity) error
	point       struct {
		hidden bool
		sel    []string
		t      store.Table
		ts     int64  // the entity's Timestamp, for the ETag
		body   []byte // the response, encoded in the transaction
	}
}

// callPool keeps calls between requests: a call and what it holds were a
// tenth of a point read's allocation. A call goes back only once its
// request is answered (release), so nothing of net/http still reads it.
var callPool = sync.Pool{New: func() any {
	c := &call{vars: map[string]string{}, scratch: make([]byte, 0, 512)}
	c.pointRead, c.pointEncode = c.readPoint, c.encodePoint
	return c
}}

// newCall takes a call from the pool, cleared but for its reusable parts.
func newCall(s *Server, w http.ResponseWriter, r *http.Request) *call {
	c := callPool.Get().(*call)
	*c = call{s: s, r: r, reqID: newRequestID(), verb: r.Method,
		vars: c.vars, noQuery: c.noQuery, scratch: c.scratch, pointRead: c.pointRead, pointEncode: c.pointEncode}
	c.sw.ResponseWriter = w
	c.w = &c.sw
	return c
}

// release returns c to the pool once its response has been written, and
// with it its header values: net/http copies the header map when the
// handler writes the status (Header.Clone at WriteHeader) and sends the
// copy, so it no longer reads c's arrays, where a response not yet begun
// would read them after the handler returned. The caller must not use c
// afterwards.
func (c *call) release() {
	if !c.sw.wrote {
		return
	}
	// Drop what the request referenced.
	*c = call{vars: c.vars, noQuery: c.noQuery, scratch: c.scratch, pointRead: c.pointRead, pointEncode: c.pointEncode}
	callPool.Put(c)
}

// limitedBody is http.MaxBytesReader without its allocation (it lives in
// the call): past n bytes a read fails with *http.MaxBytesError, which
// readBody answers with 413. MaxBytesReader would also tell the server to
// close the connection, but only through net/http's own ResponseWriter,
// which the handlers never had (statusWriter wraps it), so neither does
// this.
type limitedBody struct {
	r   io.ReadCloser
	n   int64 // bytes still allowed
	err error // sticky
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	// Read one byte past the limit, to tell a body of exactly n bytes
	// from a longer one.
	if int64(len(p))-1 > l.n {
		p = p[:l.n+1]
	}
	n, err := l.r.Read(p)
	if int64(n) <= l.n {
		l.n -= int64(n)
		l.err = err
		return n, err
	}
	n = int(l.n)
	l.n = 0
	l.err = &http.MaxBytesError{Limit: maxBody}
	return n, l.err
}

func (l *limitedBody) Close() error { return l.r.Close() }
