package emulator

import (
	"net/http"
	"strconv"

	"github.com/tableemu/tableemu/auth"
	"github.com/tableemu/tableemu/emulator/insights"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata/edm"
)

// The add-ons as the server sees them. Each thing a user switches on or
// off lives in a package of its own under emulator/ (docs/development.md)
// that does not import this one; the server calls it through the
// interfaces below, which it owns, and hands it only values: the
// operation, the account, the table, the keys. A Server field of one of
// these types is nil when its add-on is off, and the request path then
// pays one nil check.

// injector fails a request on purpose after authorization, before its
// operation runs (emulator/faults.Faults, --faults). Inject returns nil,
// the error to answer with, or http.ErrAbortHandler to close the
// connection without an answer.
type injector interface {
	Inject(op auth.Op) error
}

// limiter holds requests to the service's scalability targets
// (emulator/faults.Throttle, --throttle). Admit pays cost entities from
// the partition's (when hasPK) and the account's budgets or refuses with
// the service's 503 ServerBusy; a query, admitted with cost 0, is billed
// afterwards by Charge for the entities it examined.
type limiter interface {
	Admit(account, table, pk string, hasPK bool, cost int) error
	Charge(account, table, pk string, hasPK bool, n int)
}

// observer hears what the service would count (emulator/insights.Insights,
// --insights): each page of a query, whose figures it also sets in the
// response's headers h; the entities each write touched; the batches
// refused for spanning partitions; the requests --throttle refused. It
// serves its report at /_tableemu/insights (tool).
type observer interface {
	tool
	Query(h http.Header, account, table, filter string, res store.ScanResult, returned int)
	Writes(account, table string, es []*edm.Entity)
	CrossPartitionBatch(account, table string, pks []string)
	Throttled(account, table, pk string, hasPK bool)
}

// noteQuery tells the observer of a page of c's query, and keeps the
// figures for the access log line (queryNote).
func (s *Server) noteQuery(c *call, table, filter string, res store.ScanResult, returned int) {
	s.ins.Query(c.w.Header(), c.res.account, table, filter, res, returned)
	c.queried = queryNote{set: true, shape: res.Shape, scanned: res.Scanned, returned: returned, read: insights.Read(res), index: res.Index}
}

// noteWrites tells the observer of entities c wrote to table; stubs stand
// for deleted entities (only their keys count).
func (s *Server) noteWrites(c *call, table string, es ...*edm.Entity) {
	if s.ins != nil {
		s.ins.Writes(c.res.account, table, es)
	}
}

// queryNote is what a query page adds to its access log line with
// --insights, formatted only if a line is written (logNote).
type queryNote struct {
	set                     bool
	shape                   store.Shape
	scanned, returned, read int
	index                   string
}

func (n *queryNote) String() string {
	s := "shape=" + string(n.shape) + " scanned=" + strconv.Itoa(n.scanned) + " returned=" + strconv.Itoa(n.returned)
	if n.index != "" {
		s += " index=" + n.index + " read=" + strconv.Itoa(n.read)
	}
	return s
}

// fail answers c with an add-on's error, or for http.ErrAbortHandler
// (--faults kinds=drop) closes the connection without an answer: hijacked
// and closed where the connection allows, else by net/http, which closes
// it when a handler panics with http.ErrAbortHandler (ServeHTTP lets that
// panic through).
func (c *call) fail(err error) {
	if err != http.ErrAbortHandler {
		c.writeError(err)
		return
	}
	c.note = "fault=drop"
	if h, ok := c.sw.ResponseWriter.(http.Hijacker); ok {
		if conn, _, err := h.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}
