package emulator

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/auth"
	"github.com/tableemu/tableemu/emulator/explorer"
)

// The isolation endpoints (isolation.go, docs/isolation.md):
//
//	POST   /_tableemu/accounts/{account}/reset
//	GET    /_tableemu/accounts/{account}/snapshots
//	GET    /_tableemu/accounts/{account}/snapshots/{name}
//	PUT    /_tableemu/accounts/{account}/snapshots/{name}          (save; replaces)
//	DELETE /_tableemu/accounts/{account}/snapshots/{name}
//	POST   /_tableemu/accounts/{account}/snapshots/{name}/restore
//
// They answer JSON, and fail with the service's JSON errors and codes of
// the root error table. Who may call them is decided as for the insights
// report (insights_access.go), with the account the URL names: unsigned
// only over loopback for a devstoreaccount1 with its public key, otherwise
// signed with that account's key (Shared Key over the canonicalized
// resource /<account><path>, the path as sent). A request that changes
// state has first passed the cross-origin check (crossorigin.go): signed,
// or carrying Tableemu-Request, and not sent by a page of another origin.
// They never pass through the Table API's routes, so no throttle bucket
// or insight counts them.

// isolationPrefix starts every isolation path.
const isolationPrefix = "/_tableemu/accounts/"

func isIsolationPath(p string) bool {
	return p == strings.TrimSuffix(isolationPrefix, "/") || strings.HasPrefix(p, isolationPrefix)
}

// isolationUsage is the hint of a path or method that is not an endpoint.
const isolationUsage = "tableemu's isolation endpoints are POST /_tableemu/accounts/<account>/reset, " +
	"GET /_tableemu/accounts/<account>/snapshots, GET|PUT|DELETE /_tableemu/accounts/<account>/snapshots/<name> " +
	"and POST /_tableemu/accounts/<account>/snapshots/<name>/restore (docs/isolation.md)."

// isolationRoute is a parsed isolation path: the operation, its method,
// the account and the snapshot name.
type isolationRoute struct {
	op, method, account, name string
}

func parseIsolationPath(escaped string) (isolationRoute, bool) {
	rest, ok := strings.CutPrefix(escaped, isolationPrefix)
	if !ok {
		return isolationRoute{}, false
	}
	segs := strings.Split(rest, "/")
	for i, s := range segs {
		u, err := url.PathUnescape(s)
		if err != nil || u == "" {
			return isolationRoute{}, false
		}
		segs[i] = u
	}
	r := isolationRoute{account: segs[0]}
	switch {
	case len(segs) == 2 && segs[1] == "reset":
		r.op, r.method = "reset", http.MethodPost
	case len(segs) == 2 && segs[1] == "snapshots":
		r.op, r.method = "list", http.MethodGet
	case len(segs) == 3 && segs[1] == "snapshots":
		r.op, r.name = "snapshot", segs[2]
	case len(segs) == 4 && segs[1] == "snapshots" && segs[3] == "restore":
		r.op, r.method, r.name = "restore", http.MethodPost, segs[2]
	default:
		return isolationRoute{}, false
	}
	return r, true
}

// Deadlines. The isolation endpoints are not operations of the service,
// whose 30 s limit (deadline.go) a large account's snapshot or restore
// can legitimately pass (about 6 µs per 1 KiB entity copied on SQLite:
// docs/benchmarks.md, "Test isolation"), but they must still answer
// rather than wait as long as a database that does not answer, and before
// the server's 5-minute WriteTimeout (run.go) drops the connection. So
// each has Config.IsolationTimeout, else DefaultIsolationTimeout, and
// answers 500 OperationTimedOut when it passes. Each is one transaction:
// one that timed out was applied whole or not at all (docs/isolation.md).
const (
	// DefaultIsolationTimeout is Config.IsolationTimeout when zero.
	DefaultIsolationTimeout = 2 * time.Minute
	// MaxIsolationTimeout is the most Config.IsolationTimeout can be:
	// a minute below the server's WriteTimeout, time to answer in.
	MaxIsolationTimeout = 4 * time.Minute
)

// isolationTimeout is how long an isolation request may take.
func (s *Server) isolationTimeout() time.Duration {
	d := s.cfg.IsolationTimeout
	if d <= 0 {
		return DefaultIsolationTimeout
	}
	return min(d, MaxIsolationTimeout)
}

// serveIsolation answers a request under /_tableemu/accounts.
func (s *Server) serveIsolation(c *call) {
	limit := s.isolationTimeout()
	ctx, cancel := context.WithTimeout(c.r.Context(), limit)
	defer cancel()
	if err := s.isolation(ctx, c); err != nil {
		if e := tableemu.From(storeErr(err)); e.Code == tableemu.OperationTimedOut {
			err = isolationTimedOut(c, limit, e.Detail) // the Table API's hint replaced
		}
		c.writeError(err)
	}
}

// isolationTimedOut is the answer to an isolation request whose time ran
// out: the service's 500 OperationTimedOut, saying what that means here.
// detail is what the store said, for the log.
func isolationTimedOut(c *call, limit time.Duration, detail string) error {
	what := c.note // reset, restore
	switch c.note {
	case "list":
		what = "snapshot list"
	case "snapshot":
		what = map[string]string{http.MethodGet: "snapshot read", http.MethodPut: "snapshot save", http.MethodDelete: "snapshot delete"}[c.r.Method]
	}
	return &storageFault{tableemu.New(tableemu.OperationTimedOut).WithHint(
		"the %s did not finish within %v, the limit of tableemu's own endpoints (docs/isolation.md). "+
			"It is one transaction, applied whole or not at all: list the account's tables or snapshots to tell, and retry. "+
			"If the database does not answer, check it; an account too large for the limit can be reset or snapshotted by "+
			"tableemu reset or tableemu snapshot with --database, or --location with no server running, which have no limit.",
		what, limit).WithDetail("%s", detail)}
}

func (s *Server) isolation(ctx context.Context, c *call) error {
	rt, ok := parseIsolationPath(c.r.URL.EscapedPath())
	if !ok {
		return tableemu.New(tableemu.InvalidUri).WithHint(isolationUsage)
	}
	method := c.r.Method
	switch {
	case rt.op == "snapshot" && method != http.MethodGet && method != http.MethodPut && method != http.MethodDelete,
		rt.method != "" && method != rt.method:
		return tableemu.New(tableemu.UnsupportedHttpVerb).WithHint(isolationUsage)
	}
	if err := s.checkAccount(rt.account); err != nil {
		return err
	}
	if err := s.isolationCaller(c, rt.account); err != nil {
		return err
	}
	c.note = rt.op
	switch rt.op {
	case "reset":
		n, err := s.reset(ctx, rt.account)
		if err != nil {
			return err
		}
		c.writeToolJSON(http.StatusOK, map[string]any{"account": rt.account, "tablesDeleted": n})
	case "list":
		list, err := s.Snapshots(ctx, rt.account)
		if err != nil {
			return err
		}
		c.writeToolJSON(http.StatusOK, map[string]any{"account": rt.account, "snapshots": list})
	case "restore":
		info, err := s.Restore(ctx, rt.account, rt.name)
		if err != nil {
			return err
		}
		c.writeToolJSON(http.StatusOK, info)
	default:
		switch method {
		case http.MethodGet:
			info, err := s.SnapshotInfo(ctx, rt.account, rt.name)
			if err != nil {
				return err
			}
			c.writeToolJSON(http.StatusOK, info)
		case http.MethodPut:
			info, replaced, err := s.snapshot(ctx, rt.account, rt.name)
			if err != nil {
				return err
			}
			status := http.StatusCreated
			if replaced {
				status = http.StatusOK
			}
			c.writeToolJSON(status, info)
		default:
			if err := s.DeleteSnapshot(ctx, rt.account, rt.name); err != nil {
				return err
			}
			c.writeNoContent(http.StatusNoContent)
		}
	}
	return nil
}

// writeToolJSON answers with v as JSON.
func (c *call) writeToolJSON(status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		c.writeError(err)
		return
	}
	h := c.w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	c.w.WriteHeader(status)
	c.w.Write(b)
}

// isolationCaller decides whether c may reset or snapshot account, by the
// rules of the insights report (insights_access.go) with the URL's
// account: 401 NoAuthenticationInformation unsigned, 403
// AuthenticationFailed for a SAS, another account's signature or a bad
// one, 400 InvalidAuthenticationInfo for a malformed header.
func (s *Server) isolationCaller(c *call, account string) error {
	r := c.r
	if _, sas := auth.ParseSAS(r.URL.Query()); sas {
		return tableemu.New(tableemu.AuthenticationFailed).WithDetail("a SAS for a reset or snapshot").WithHint(
			"resets and snapshots take no SAS (a SAS grants operations on tables); sign the request with the account key (Shared Key), as tableemu reset and the test helpers do (docs/isolation.md).")
	}
	if len(r.Header.Values("Authorization")) == 0 {
		if account == publicDevAccount(s.cfg.Accounts) && explorer.Loopback(r) {
			return nil
		}
		return tableemu.New(tableemu.NoAuthenticationInformation).WithHint(
			"resets and snapshots need no credentials only over loopback (127.0.0.1, localhost), for devstoreaccount1 "+
				"with its public key. Sign the request with the key of %s (Shared Key over /%s%s), as tableemu reset "+
				"and the test helpers do (docs/isolation.md).", account, account, r.URL.EscapedPath())
	}
	name, err := auth.SharedKeyAccount(r.Header)
	if err != nil {
		return err
	}
	if name != account {
		return tableemu.New(tableemu.AuthenticationFailed).WithDetail(
			"the request is signed as %s for an endpoint of account %s", name, account)
	}
	c.res = resource{account: account, rawPath: r.URL.EscapedPath()}
	_, err = auth.VerifySharedKey(s.authRequest(c), s.accounts[account])
	return err
}
