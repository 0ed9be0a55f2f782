package emulator

import (
	"net/http"
	"slices"
	"strings"

	"github.com/tableemu/tableemu"
)

// CORS (docs/protocol.md 3.7): the rules are the account's Table service
// properties (service.go); OPTIONS preflight requests are answered here
// without credentials, and actual requests carrying an Origin get the
// Access-Control headers of the first rule that allows their origin and
// method.

// preflight answers OPTIONS on any path. Origin and
// Access-Control-Request-Method are required (the DOC answers 400 without
// them; the code is Azurite's, InvalidHeaderValue); the first rule that
// allows the origin, the method and every requested header wins, and its
// answer echoes what was asked plus the rule's max age. No rule, or no
// match, is 403 CorsPreflightFailure.
func (s *Server) preflight(c *call) error {
	if s.cosmos {
		return c.cosmosUnsupported("CORS (a preflight request)")
	}
	origin := c.r.Header.Get("Origin")
	method := c.r.Header.Get("Access-Control-Request-Method")
	if origin == "" || method == "" {
		return tableemu.New(tableemu.InvalidHeaderValue).WithHint(
			"a CORS preflight request needs Origin and Access-Control-Request-Method.")
	}
	requested := strings.Join(c.r.Header.Values("Access-Control-Request-Headers"), ",")
	for _, r := range s.corsRules(c) {
		if !r.allowsOrigin(origin) || !r.allowsMethod(method) || !r.allowsHeaders(requested) {
			continue
		}
		h := c.w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Methods", method)
		if strings.TrimSpace(requested) != "" {
			h.Set("Access-Control-Allow-Headers", requested)
		}
		h.Set("Access-Control-Max-Age", itoa(r.maxAge()))
		h.Set("Access-Control-Allow-Credentials", "true")
		h.Set("Content-Length", "0")
		c.w.WriteHeader(http.StatusOK)
		return nil
	}
	return tableemu.New(tableemu.CorsPreflightFailure).WithDetail("no CORS rule allows origin %q, method %q and headers %q", origin, method, requested)
}

// corsRules returns the CORS rules of the account c addresses; none for an
// account tableemu does not serve (no store read for arbitrary names).
func (s *Server) corsRules(c *call) []corsRule {
	if s.accounts[c.res.account] == nil {
		return nil
	}
	p, err := s.props.get(c.ctx(), s.store, c.res.account)
	if err != nil {
		s.logf("request %s: reading service properties for CORS: %v", c.reqID, err)
		return nil
	}
	if p.Cors == nil {
		return nil
	}
	return p.Cors.Rules
}

// applyCORS adds the CORS response headers to an actual (non-OPTIONS)
// request; ServeHTTP calls it before routing, so error responses get them
// too and a browser can read the error. Per the service's CORS page
// (docs/protocol.md 2.2, 3.7):
//
//   - no rules: nothing;
//   - a rule allowing the origin and method: Access-Control-Allow-Origin
//     ("*" when the rule allows every origin, otherwise the origin with
//     Access-Control-Allow-Credentials: true and Vary: Origin), and
//     Access-Control-Expose-Headers, computed when the response headers are
//     known;
//   - a GET/HEAD without Origin: with a "*" rule allowing the method, as
//     for any origin ("*" and Access-Control-Expose-Headers); without one,
//     Vary: Origin only;
//   - rules but no match: Vary: Origin only, so caches keep responses per
//     origin.
//
// A stored document that cannot be read is logged and the request served
// without CORS headers.
func (s *Server) applyCORS(c *call) {
	if c.verb == http.MethodOptions || s.cosmos {
		// (Cosmos DB for Table has no CORS rules: "CORS isn't
		// currently supported", learn.microsoft.com/azure/cosmos-db/table/faq.)
		return
	}
	rules := s.corsRules(c)
	if len(rules) == 0 {
		return
	}
	h := c.w.Header()
	origin := c.r.Header.Get("Origin")
	getLike := c.verb == http.MethodGet || c.verb == http.MethodHead
	if origin == "" {
		if !getLike {
			return
		}
		// A "*" rule answers a GET or HEAD without Origin as it would any
		// origin (live, in the Java SDK's recordings: docs/protocol.md 3.7).
		if i := slices.IndexFunc(rules, func(r corsRule) bool { return r.anyOrigin() && r.allowsMethod(c.verb) }); i >= 0 {
			h.Set("Access-Control-Allow-Origin", "*")
			c.w = &corsWriter{ResponseWriter: c.w, exposed: splitList(deref(rules[i].ExposedHeaders))}
			return
		}
		addVary(h)
		return
	}
	for _, r := range rules {
		if !r.allowsOrigin(origin) || !r.allowsMethod(c.verb) {
			continue
		}
		if r.anyOrigin() {
			h.Set("Access-Control-Allow-Origin", "*")
		} else {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
			addVary(h)
		}
		c.w = &corsWriter{ResponseWriter: c.w, exposed: splitList(deref(r.ExposedHeaders))}
		return
	}
	addVary(h)
}

func addVary(h http.Header) {
	for _, v := range h.Values("Vary") {
		for _, item := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(item), "Origin") {
				return
			}
		}
	}
	h.Add("Vary", "Origin")
}

func (r corsRule) anyOrigin() bool { return strings.TrimSpace(deref(r.AllowedOrigins)) == "*" }

func (r corsRule) maxAge() int {
	if r.MaxAgeInSeconds == nil {
		return 0
	}
	return *r.MaxAgeInSeconds
}

// deref reads an optional rule field. Rules are validated when set, so
// every field is present; reading defensively keeps a damaged stored
// document from ever panicking a request.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// allowsOrigin compares origins without regard to case (docs/protocol.md 3.7).
func (r corsRule) allowsOrigin(origin string) bool {
	origin = strings.TrimSpace(origin)
	for _, o := range splitList(deref(r.AllowedOrigins)) {
		if o == "*" || strings.EqualFold(o, origin) {
			return true
		}
	}
	return false
}

// allowsMethod: methods match exactly (docs/protocol.md 3.7).
func (r corsRule) allowsMethod(method string) bool {
	return slices.Contains(splitList(deref(r.AllowedMethods)), strings.TrimSpace(method))
}

// allowsHeaders reports whether every header of a comma-separated
// Access-Control-Request-Headers value is allowed: by name without regard
// to case, by a prefix ending in '*', or by a lone "*" (docs/protocol.md 3.7).
func (r corsRule) allowsHeaders(requested string) bool {
	allowed := splitList(deref(r.AllowedHeaders))
	for _, h := range splitList(requested) {
		if !slices.ContainsFunc(allowed, func(a string) bool { return headerMatches(a, h) }) {
			return false
		}
	}
	return true
}

// headerMatches matches a header name against one rule entry: a literal
// name, or a prefix followed by '*' ("x-ms-meta-*", or "*" for all).
func headerMatches(entry, name string) bool {
	if prefix, ok := strings.CutSuffix(entry, "*"); ok {
		return len(name) >= len(prefix) && strings.EqualFold(name[:len(prefix)], prefix)
	}
	return strings.EqualFold(entry, name)
}

// corsWriter sets Access-Control-Expose-Headers just before the response
// headers go out, when they are known: the names of the response's headers
// that the rule's ExposedHeaders match, then the rule's literal names not
// among them (the live service lists the response's own header names,
// docs/protocol.md 2.2; Azurite computes the same list).
type corsWriter struct {
	http.ResponseWriter
	exposed []string
	done    bool
}

func (w *corsWriter) WriteHeader(code int) {
	w.expose()
	w.ResponseWriter.WriteHeader(code)
}

func (w *corsWriter) Write(b []byte) (int, error) {
	w.expose()
	return w.ResponseWriter.Write(b)
}

func (w *corsWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *corsWriter) expose() {
	if w.done {
		return
	}
	w.done = true
	h := w.Header()
	var names []string
	add := func(name string) {
		if !strings.HasPrefix(name, "access-control-") && !slices.Contains(names, name) &&
			slices.ContainsFunc(w.exposed, func(e string) bool { return headerMatches(e, name) }) {
			names = append(names, name)
		}
	}
	for k := range h {
		add(strings.ToLower(k))
	}
	// net/http adds Date to every answer, and Content-Length to one it
	// holds whole, after these headers (ServeHTTP keeps them out of the
	// map): they are the response's too.
	add("date")
	add("content-length")
	slices.Sort(names)
	for _, e := range w.exposed {
		if !strings.HasSuffix(e, "*") && !slices.Contains(names, strings.ToLower(e)) {
			names = append(names, strings.ToLower(e))
		}
	}
	h.Set("Access-Control-Expose-Headers", strings.Join(names, ","))
}
