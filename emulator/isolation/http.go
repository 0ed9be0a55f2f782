package isolation

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tableemu/tableemu"
)

// The isolation endpoints (docs/isolation.md):
//
//	POST   /_tableemu/accounts/{account}/reset
//	GET    /_tableemu/accounts/{account}/snapshots
//	GET    /_tableemu/accounts/{account}/snapshots/{name}
//	PUT    /_tableemu/accounts/{account}/snapshots/{name}          (save; replaces)
//	DELETE /_tableemu/accounts/{account}/snapshots/{name}
//	POST   /_tableemu/accounts/{account}/snapshots/{name}/restore
//
// They answer JSON, and fail with the service's JSON errors and codes of
// the root error table, which the server writes (ServeTool). Who may call
// them is decided as for the insights report, with the account the URL
// names: unsigned only over loopback for a devstoreaccount1 with its
// public key, otherwise signed with that account's key (Shared Key over
// the canonicalized resource /<account><path>, the path as sent). A
// request that changes state has first passed the server's cross-origin
// check (emulator/crossorigin.go): signed, or carrying Tableemu-Request,
// and not sent by a page of another origin.
// They never pass through the Table API's routes, so no throttle bucket
// or insight counts them.

// prefix starts every isolation path.
const prefix = "/_tableemu/accounts/"

// IsPath reports whether the path p is the isolation endpoints' to answer.
func IsPath(p string) bool {
	return p == strings.TrimSuffix(prefix, "/") || strings.HasPrefix(p, prefix)
}

// usage is the hint of a path or method that is not an endpoint.
const usage = "tableemu's isolation endpoints are POST /_tableemu/accounts/<account>/reset, " +
	"GET /_tableemu/accounts/<account>/snapshots, GET|PUT|DELETE /_tableemu/accounts/<account>/snapshots/<name> " +
	"and POST /_tableemu/accounts/<account>/snapshots/<name>/restore (docs/isolation.md)."

// route is a parsed isolation path: the operation, its method,
// the account and the snapshot name.
type route struct {
	op, method, account, name string
}

func parsePath(escaped string) (route, bool) {
	rest, ok := strings.CutPrefix(escaped, prefix)
	if !ok {
		return route{}, false
	}
	segs := strings.Split(rest, "/")
	for i, s := range segs {
		u, err := url.PathUnescape(s)
		if err != nil || u == "" {
			return route{}, false
		}
		segs[i] = u
	}
	r := route{account: segs[0]}
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
		return route{}, false
	}
	return r, true
}

// Deadlines. The isolation endpoints are not operations of the service,
// whose 30 s limit (emulator/deadline.go) a large account's snapshot or restore
// can legitimately pass (about 6 µs per 1 KiB entity copied on SQLite:
// docs/benchmarks.md, "Test isolation"), but they must still answer
// rather than wait as long as a database that does not answer, and before
// the server's 5-minute WriteTimeout (emulator/run.go) drops the
// connection. So each has Config.Timeout, else DefaultTimeout, and
// answers 500 OperationTimedOut when it passes. Each is one transaction:
// one that timed out was applied whole or not at all (docs/isolation.md).
const (
	// DefaultTimeout is Config.Timeout when zero.
	DefaultTimeout = 2 * time.Minute
	// MaxTimeout is the most Config.Timeout can be: a minute below the
	// server's WriteTimeout, time to answer in.
	MaxTimeout = 4 * time.Minute
)

// timeout is how long an isolation request may take.
func (iso *Isolation) timeout() time.Duration {
	d := iso.cfg.Timeout
	if d <= 0 {
		return DefaultTimeout
	}
	return min(d, MaxTimeout)
}

// ServeTool answers a request under /_tableemu/accounts: the answer on
// success; otherwise the error, which the server writes as the service
// writes its errors (and logs when it is the server's fault, 5xx). note,
// for the server's access log, names the operation once the path is read.
func (iso *Isolation) ServeTool(w http.ResponseWriter, r *http.Request) (note string, err error) {
	limit := iso.timeout()
	ctx, cancel := context.WithTimeout(r.Context(), limit)
	defer cancel()
	if err := iso.serve(ctx, w, r, &note); err != nil {
		err = iso.cfg.StoreError(err)
		if e := tableemu.From(err); e.Code == tableemu.OperationTimedOut {
			err = timedOut(r, note, limit, e.Detail) // the Table API's hint replaced
		}
		return note, err
	}
	return note, nil
}

// timedOut is the answer to an isolation request whose time ran out: the
// service's 500 OperationTimedOut, saying what that means here. detail is
// what the store said, for the log.
func timedOut(r *http.Request, note string, limit time.Duration, detail string) error {
	what := note // reset, restore
	switch note {
	case "list":
		what = "snapshot list"
	case "snapshot":
		what = map[string]string{http.MethodGet: "snapshot read", http.MethodPut: "snapshot save", http.MethodDelete: "snapshot delete"}[r.Method]
	}
	return tableemu.New(tableemu.OperationTimedOut).WithHint(
		"the %s did not finish within %v, the limit of tableemu's own endpoints (docs/isolation.md). "+
			"It is one transaction, applied whole or not at all: list the account's tables or snapshots to tell, and retry. "+
			"If the database does not answer, check it; an account too large for the limit can be reset or snapshotted by "+
			"tableemu reset or tableemu snapshot with --database, or --location with no server running, which have no limit.",
		what, limit).WithDetail("%s", detail)
}

func (iso *Isolation) serve(ctx context.Context, w http.ResponseWriter, r *http.Request, note *string) error {
	rt, ok := parsePath(r.URL.EscapedPath())
	if !ok {
		return tableemu.New(tableemu.InvalidUri).WithHint(usage)
	}
	method := r.Method
	switch {
	case rt.op == "snapshot" && method != http.MethodGet && method != http.MethodPut && method != http.MethodDelete,
		rt.method != "" && method != rt.method:
		return tableemu.New(tableemu.UnsupportedHttpVerb).WithHint(usage)
	}
	if err := iso.checkAccount(rt.account); err != nil {
		return err
	}
	if err := iso.cfg.Authorize(r, rt.account); err != nil {
		return err
	}
	*note = rt.op
	switch rt.op {
	case "reset":
		n, err := iso.Reset(ctx, rt.account)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]any{"account": rt.account, "tablesDeleted": n})
	case "list":
		list, err := iso.Snapshots(ctx, rt.account)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]any{"account": rt.account, "snapshots": list})
	case "restore":
		info, err := iso.Restore(ctx, rt.account, rt.name)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, info)
	default:
		switch method {
		case http.MethodGet:
			info, err := iso.Info(ctx, rt.account, rt.name)
			if err != nil {
				return err
			}
			return writeJSON(w, http.StatusOK, info)
		case http.MethodPut:
			info, replaced, err := iso.Snapshot(ctx, rt.account, rt.name)
			if err != nil {
				return err
			}
			status := http.StatusCreated
			if replaced {
				status = http.StatusOK
			}
			return writeJSON(w, status, info)
		default:
			if err := iso.DeleteSnapshot(ctx, rt.account, rt.name); err != nil {
				return err
			}
			// As the server's own 204s (emulator/format.go): net/http's
			// HTTP/1 server drops a 204's Content-Length itself.
			h := w.Header()
			h.Set("Cache-Control", "no-cache")
			h.Set("X-Content-Type-Options", "nosniff")
			if r.ProtoMajor >= 2 {
				h.Set("Content-Length", "0")
			}
			w.WriteHeader(http.StatusNoContent)
		}
	}
	return nil
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
	return nil
}
