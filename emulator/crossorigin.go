package emulator

import (
	"net/http"
	"strings"

	"github.com/tableemu/tableemu"
)

// Cross-site request forgery of tableemu's own endpoints (docs/security.md).
//
// Over loopback, the reset and snapshot endpoints take unsigned requests
// for a devstoreaccount1 with its public key, so that curl works on the
// default set-up (isolation/http.go). A web page on any other site can
// make the browser send such a request too: a form post, a no-cors fetch
// or sendBeacon is a "simple" request, which the browser sends without
// asking the server first (a CORS preflight); only reading the answer is
// forbidden. So every request under /_tableemu/ that may change state
// — any method but GET, HEAD and OPTIONS, the methods RFC 9110 9.2.1
// calls safe, which change nothing here — passes this check first,
// which refuses what such a page can send. It layers the three defences
// the OWASP Cross-Site Request Forgery Prevention Cheat Sheet describes for
// a stateless API
// (https://cheatsheetseries.owasp.org/cheatsheets/Cross-Site_Request_Forgery_Prevention_Cheat_Sheet.html):
//
//  1. Fetch Metadata: a browser says in Sec-Fetch-Site where the request
//     comes from (https://www.w3.org/TR/fetch-metadata/); anything but
//     "same-origin" (the explorer, served here) or "none" (typed by the
//     user) is refused. A page cannot set the header.
//  2. Origin: a browser sends Origin with every POST, PUT and DELETE; one
//     that is not this server's own origin is refused — "null" (a
//     sandboxed frame, a file:// page, a redirect) included. The Origin's
//     host[:port] is compared with the request's Host, as Go's
//     net/http.CrossOriginProtection does: a modern browser's
//     Sec-Fetch-Site already compares the scheme, and one port serves one
//     scheme here, while a proxy that terminates TLS in front of tableemu
//     changes the scheme but keeps the host.
//  3. A header a page cannot send without a preflight (which gets 405:
//     /_tableemu/ answers no CORS): Authorization — every first-party
//     client signs with the account key (the CLI, the npm and Python test
//     helpers, the explorer) — or, for an unsigned request, the header
//     Tableemu-Request (any value). This one also holds where a browser
//     sends neither header above (an older one; Sec-Fetch-* reach only
//     https and loopback URLs, so not a plain-HTTP host name). A header of
//     its own rather than a JSON Content-Type: these endpoints take no
//     body, and a name that says what it is for reads better in a script
//     (the cheat sheet's "Employing Custom Request Headers"; its check is
//     the header's presence).
//
// The Host header is checked elsewhere, against DNS rebinding: an unsigned
// request is served only under a loopback host name (auth.Loopback).
// The Table API is not checked here: it wants a signature or a SAS, as the
// service does (docs/security.md says what that leaves open).

// toolRequestHeader is the header an unsigned state-changing request under
// /_tableemu/ carries: curl -H 'Tableemu-Request: 1'.
const toolRequestHeader = "Tableemu-Request"

// isToolPath reports whether p is tableemu's own: /_tableemu or below it
// (the explorer, the insights report, the isolation endpoints).
func isToolPath(p string) bool {
	return strings.HasPrefix(p, "/_tableemu") && (len(p) == len("/_tableemu") || p[len("/_tableemu")] == '/')
}

// checkCrossOrigin refuses a request under /_tableemu/ that may change
// state and that a page on another origin could have sent, with 403
// AuthorizationFailure: the service's code when a request is refused for
// where it comes from rather than for its credentials (a storage
// firewall's network rules, https://learn.microsoft.com/azure/storage/common/storage-network-security).
func checkCrossOrigin(r *http.Request) error {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	for _, site := range r.Header["Sec-Fetch-Site"] {
		if !strings.EqualFold(site, "same-origin") && !strings.EqualFold(site, "none") {
			return crossOriginRefusal(r, "Sec-Fetch-Site: "+site)
		}
	}
	for _, o := range r.Header["Origin"] {
		if !sameOrigin(o, r.Host) {
			return crossOriginRefusal(r, "Origin: "+o)
		}
	}
	if len(r.Header["Authorization"]) == 0 && len(r.Header[toolRequestHeader]) == 0 {
		return tableemu.New(tableemu.AuthorizationFailure).WithDetail(
			"an unsigned %s %s without %s", r.Method, r.URL.EscapedPath(), toolRequestHeader).WithHint(
			"an unsigned %s under /_tableemu/ must carry the header %s (any value, e.g. curl -H '%s: 1'), "+
				"which a web page on another site cannot send; unsigned requests are served only over loopback, "+
				"for devstoreaccount1 with its public key. Otherwise sign it with the account key (Shared Key), "+
				"as tableemu reset and the test helpers do (docs/security.md).",
			r.Method, toolRequestHeader, toolRequestHeader)
	}
	return nil
}

func crossOriginRefusal(r *http.Request, what string) error {
	return tableemu.New(tableemu.AuthorizationFailure).WithDetail(
		"a cross-origin %s %s (%s, Host: %s)", r.Method, r.URL.EscapedPath(), clipText(what), clipText(r.Host)).WithHint(
		"a web page on another origin may not change tableemu's state: this request came with %s, and this server is %s. "+
			"Use the explorer served here, tableemu reset or snapshot, or the test helpers; or send the request without that "+
			"header, signed with the account key or with %s: 1 (docs/security.md).", clipText(what), clipText(r.Host), toolRequestHeader)
}

// sameOrigin reports whether the Origin header value origin names the
// server at host (the request's Host): an http or https origin whose
// host[:port] is host. "null" and anything else is not.
func sameOrigin(origin, host string) bool {
	scheme, rest, ok := strings.Cut(origin, "://")
	if !ok || !(strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https")) {
		return false
	}
	return rest != "" && host != "" && strings.EqualFold(rest, host)
}
