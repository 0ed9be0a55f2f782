package emulator

import (
	"net/http"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/auth"
	"github.com/tableemu/tableemu/emulator/explorer"
	"github.com/tableemu/tableemu/emulator/isolation"
	"github.com/tableemu/tableemu/emulator/transfer"
)

// tableemu's own endpoints under /_tableemu/, beside the Table API: the
// insights report (emulator/insights), reset and snapshots
// (emulator/isolation), import and export (emulator/transfer), and the
// data explorer's files (emulator/explorer), each an add-on of its own.
// The server mounts them here (serveTool), checks once what every one of
// them needs checked (crossorigin.go), and lends them what they need of
// it: Shared Key verification (verifySharedKey), the account a loopback
// client may use unsigned (publicDevAccount), and the one error writer
// (serveWith).

// serveTool answers tableemu's own endpoints under /_tableemu/: the
// insights report, reset and snapshots, import and export, the explorer's
// files. None of them is the Table API, so none passes checkRequest; a
// request that may change state first passes the cross-origin check
// (crossorigin.go), once for all.
func (s *Server) serveTool(c *call) {
	r := c.r
	if err := checkCrossOrigin(r); err != nil {
		c.writeError(err)
		return
	}
	switch p := r.URL.Path; {
	case p == "/_tableemu/insights":
		if s.ins == nil {
			c.writeError(tableemu.New(tableemu.ResourceNotFound).WithHint("start it with --insights to collect design insights."))
			return
		}
		s.serveWith(c, s.ins) // emulator/insights
	case transfer.IsPath(p):
		// Before isolation, whose prefix it shares and which answers
		// InvalidUri for the paths it does not know.
		s.serveWith(c, s.xfer) // import and export (transfer.go)
	case isolation.IsPath(p):
		s.serveWith(c, s.iso) // reset and snapshots (isolation.go)
	default:
		s.explorer.ServeHTTP(&c.sw, r)
	}
}

// tool serves some of tableemu's own endpoints under /_tableemu/ (the
// insights report: emulator/insights; reset and snapshots:
// emulator/isolation; import and export: emulator/transfer). It writes
// its answer to w, or returns the error for the one error writer
// (errors.go), so that its failures look like the service's; note is for
// the access log line.
type tool interface {
	ServeTool(w http.ResponseWriter, r *http.Request) (note string, err error)
}

// serveWith answers c with t. A failure on the server's side (5xx: the
// database full or locked, a timeout) is logged as a storage fault of the
// Table API is (writeError).
func (s *Server) serveWith(c *call, t tool) {
	note, err := t.ServeTool(c.w, c.r)
	c.note = note
	if err == nil {
		return
	}
	if e := tableemu.From(err); e.Status >= 500 {
		err = &storageFault{e}
	}
	c.writeError(err)
}

// verifySharedKey checks that r, a request to one of tableemu's own
// endpoints, is signed with account's key exactly as a Table API request
// is (package auth): the canonicalized resource is the account, then the
// path as sent. The account must be one of the server's.
func (s *Server) verifySharedKey(r *http.Request, account string) error {
	req := &auth.Request{
		Method:         r.Method,
		Header:         r.Header,
		Query:          r.URL.Query(),
		CanonicalPaths: auth.CanonicalPaths(account, r.URL.EscapedPath()),
		Secure:         r.TLS != nil,
		RemoteIP:       remoteIP(r),
		Now:            s.now(),
	}
	_, err := auth.VerifySharedKey(req, s.accounts[account])
	return err
}

// publicDevAccount returns the development account's name when it is
// configured with its well-known (public) key, else "": then, and only
// then, a loopback client needs no credentials to see its data through
// the explorer or the insights report.
func publicDevAccount(accounts []Account) string {
	for _, a := range accounts {
		if a.Name == DevAccount && len(a.Keys) > 0 && a.Keys[0] == DevKey {
			return a.Name
		}
	}
	return ""
}

// ExplorerURL is the data explorer's address on a server listening at
// addr: http://127.0.0.1:10002/_tableemu/ (printed at start-up).
func ExplorerURL(scheme, addr string) string {
	return explorer.URL(scheme, addr)
}
