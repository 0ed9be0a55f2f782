package emulator

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/auth"
)

// handler is an operation: it reads c and either writes a success response
// or returns an error for the one error writer.
type handler func(c *call) error

// routes is the one route table: method, resource kind, the matcher that
// distinguishes look-alike operations, the operation (which is also what
// authorization checks, docs/protocol.md 9.6/9.7) and its handler — one per line.
// jsonBody wraps the handlers whose body is a JSON table or entity: its
// Content-Type is checked first (contenttype.go).
func (s *Server) routes() *mux.Router {
	r := mux.NewRouter().UseEncodedPath().SkipClean(true)
	type route struct {
		methods []string
		kind    resKind
		match   mux.MatcherFunc // nil: none
		query   []string        // pairs of query key/value the route needs
		op      auth.Op
		h       handler
		xml     bool
	}
	table := []route{
		{[]string{"GET"}, kTables, nil, nil, auth.QueryTables, s.queryTables, false},
		{[]string{"POST"}, kTables, nil, nil, auth.CreateTable, jsonBody(s.createTable), false},
		{[]string{"GET"}, kTable, nil, nil, auth.GetTable, s.getTable, false},
		{[]string{"DELETE"}, kTable, nil, nil, auth.DeleteTable, s.deleteTable, false},
		{[]string{"GET"}, kEntities, nil, []string{"comp", "acl"}, auth.GetTableACL, s.getTableACL, true},
		{[]string{"PUT"}, kEntities, nil, []string{"comp", "acl"}, auth.SetTableACL, s.setTableACL, true},
		{[]string{"GET"}, kEntities, nil, nil, auth.QueryEntities, s.queryEntities, false},
		{[]string{"POST"}, kEntities, nil, nil, auth.InsertEntity, jsonBody(s.insertEntity), false},
		{[]string{"GET"}, kEntity, nil, nil, auth.GetEntity, s.getEntity, false},
		{[]string{"PUT"}, kEntity, ifMatchPresent, nil, auth.UpdateEntity, jsonBody(s.writeEntity(opReplace)), false},
		{[]string{"PUT"}, kEntity, noIfMatch, nil, auth.InsertOrReplaceEntity, jsonBody(s.writeEntity(opInsertOrReplace)), false},
		{[]string{"MERGE", "PATCH"}, kEntity, ifMatchPresent, nil, auth.MergeEntity, jsonBody(s.writeEntity(opMerge)), false},
		{[]string{"MERGE", "PATCH"}, kEntity, noIfMatch, nil, auth.InsertOrMergeEntity, jsonBody(s.writeEntity(opInsertOrMerge)), false},
		{[]string{"DELETE"}, kEntity, nil, nil, auth.DeleteEntity, s.deleteEntity, false},
		{[]string{"POST"}, kBatch, nil, nil, auth.Batch, s.batch, false},
		{[]string{"GET"}, kService, nil, []string{"restype", "service", "comp", "properties"}, auth.GetServiceProperties, s.getServiceProperties, true},
		{[]string{"PUT"}, kService, nil, []string{"restype", "service", "comp", "properties"}, auth.SetServiceProperties, s.setServiceProperties, true},
		{[]string{"GET"}, kService, nil, []string{"restype", "service", "comp", "stats"}, auth.GetServiceStats, s.getServiceStats, true},
		{[]string{"POST"}, kService, nil, []string{"restype", "service", "comp", "userdelegationkey"}, auth.GetUserDelegationKey, s.getUserDelegationKey, true},
		// Below a table name (undertable.go).
		{[]string{"POST"}, kUnderTableTables, nil, nil, auth.InsertEntity, jsonBody(s.insertEntity), false},
		{[]string{"GET"}, kUnderTableTables, nil, nil, auth.QueryEntities, s.underTableQuery, false},
		{[]string{"GET"}, kUnderTableTable, nil, nil, auth.GetEntity, s.underTableKeys, false},
		{[]string{"DELETE"}, kUnderTableTable, nil, nil, auth.DeleteEntity, s.underTableKeys, false},
		{[]string{"PUT"}, kUnderTableTable, nil, nil, auth.InsertOrReplaceEntity, s.underTableKeys, false},
		{[]string{"MERGE", "PATCH"}, kUnderTableTable, nil, nil, auth.InsertOrMergeEntity, s.underTableKeys, false},
		{[]string{"POST"}, kUnderTableBatch, nil, nil, auth.Batch, s.underTableBatch, false},
		{[]string{"GET"}, kUnderTableService, nil, []string{"restype", "service", "comp", "properties"}, auth.GetServiceProperties, s.underTableService, true},
		{[]string{"PUT"}, kUnderTableService, nil, []string{"restype", "service", "comp", "properties"}, auth.SetServiceProperties, s.underTableService, true},
		{[]string{"GET"}, kUnderTableService, nil, []string{"restype", "service", "comp", "stats"}, auth.GetServiceStats, s.underTableService, true},
		{[]string{"POST"}, kUnderTableService, nil, []string{"restype", "service", "comp", "userdelegationkey"}, auth.GetUserDelegationKey, s.underTableService, true},
	}
	for _, rt := range table {
		m := r.Methods(rt.methods...).MatcherFunc(kind(rt.kind))
		if rt.match != nil {
			m = m.MatcherFunc(rt.match)
		}
		if rt.query != nil {
			m = m.Queries(rt.query...)
		}
		m.Handler(&operation{s, rt.op, rt.h, rt.xml})
	}
	// CORS preflight needs no credentials; it is answered from the
	// account's CORS rules (cors.go, docs/protocol.md 3.7).
	// (A method matcher here would turn every unmatched request into a
	// method mismatch, 405, instead of 400 InvalidUri.)
	r.MatcherFunc(func(req *http.Request, _ *mux.RouteMatch) bool { return req.Method == http.MethodOptions }).
		Handler(&operation{s, auth.Preflight, s.preflight, false})
	// route tells these two apart by the match's error; they are set so
	// that Match reports them as it would to the router's ServeHTTP.
	r.MethodNotAllowedHandler = unrouted
	r.NotFoundHandler = unrouted
	return r
}

// route finds c's operation in the route table and runs it: 405
// UnsupportedHttpVerb when a route matched all but the method, 400
// InvalidUri when none did.
//
// The router's own ServeHTTP would copy the request three times (for the
// call in the context, then for the route and its variables, which no
// handler reads). Match alone copies nothing; the matchers that need the
// call (kind) find it as the match's Handler, which Match keeps until a
// route has matched, and the matched operation is the Route's handler.
func (s *Server) route(c *call) {
	m := &c.match
	*m = mux.RouteMatch{Handler: (*routing)(c), Vars: c.vars}
	s.router.Match(c.r, m)
	switch {
	case m.Route != nil:
		m.Route.GetHandler().(*operation).serve(c)
	case m.MatchErr == mux.ErrMethodMismatch:
		c.writeError(tableemu.New(tableemu.UnsupportedHttpVerb))
	default:
		c.writeError(tableemu.New(tableemu.InvalidUri))
	}
}

// routing is a call while the router matches it (route).
type routing call

// ServeHTTP is never called: route runs the operation itself.
func (*routing) ServeHTTP(http.ResponseWriter, *http.Request) { panic("tableemu: routing.ServeHTTP") }

// unrouted is the router's NotFound and MethodNotAllowed handler, which
// route answers itself; it only makes Match report the two cases.
var unrouted = http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("tableemu: unrouted") })

// operation is a route's handler with what every operation shares:
// authorization for the operation, then content negotiation.
type operation struct {
	s   *Server
	op  auth.Op
	h   handler
	xml bool
}

// ServeHTTP is never called: route runs serve.
func (*operation) ServeHTTP(http.ResponseWriter, *http.Request) {
	panic("tableemu: operation.ServeHTTP")
}

func (o *operation) serve(c *call) {
	s := o.s
	c.op, c.xml = o.op, o.xml
	if c.dlErr != nil {
		c.writeError(c.dlErr)
		return
	}
	if err := s.authorize(c); err != nil {
		c.writeError(err)
		return
	}
	if s.flt != nil {
		if err := s.flt.Inject(c.op); err != nil {
			c.fail(err) // addons.go
			return
		}
	}
	// Preflight and the outer $batch request never answer 415
	// (docs/protocol.md 0.1); the batch's parts negotiate on their own.
	if !o.xml && o.op != auth.Preflight && o.op != auth.Batch {
		lvl, err := negotiate(c.r, c.query())
		if err != nil {
			c.writeError(err)
			return
		}
		c.level = lvl
	}
	if err := o.h(c); err != nil {
		c.writeError(err)
	}
}
