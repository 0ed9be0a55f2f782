package transfer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/wire"
	"github.com/tableemu/tableemu/odata/edm"
)

// The transfer endpoints (docs/transfer.md, "Over HTTP"):
//
//	GET  /_tableemu/accounts/{account}/export           the manifest: service properties, tables, their policies (JSON)
//	GET  /_tableemu/accounts/{account}/export/{table}   the table's entities as JSON Lines (application/x-ndjson)
//	POST /_tableemu/accounts/{account}/import/{table}   a table from a JSON Lines body; ?mode=fail|replace|merge
//
// They share the prefix of the isolation endpoints (emulator/isolation),
// and the server routes here first the paths IsPath claims. Who may call
// them is decided as for those: unsigned only over loopback for a
// devstoreaccount1 with its public key, otherwise signed with the key of
// the account the URL names (Shared Key over /<account><path as sent>);
// never a SAS, which grants operations on tables, not on an account's
// whole data. An import has first passed the server's cross-origin check
// (emulator/crossorigin.go). Errors are the service's JSON errors, with
// codes of the root error table, written by the server (ServeTool).
//
// An import's stored access policies travel in the request header
// Tableemu-Acl, as the JSON list the manifest holds (absent: the source
// has none, and a merge keeps the table's); service properties are set
// through the Table API's Set Table Service Properties, as any client
// sets them.

// prefix starts every transfer path (and every isolation path).
const prefix = "/_tableemu/accounts/"

// ACLHeader carries an import's stored access policies.
const ACLHeader = "Tableemu-Acl"

// EntitiesTrailer ends a table's export stream that is complete, with the
// number of entities it held: a stream that ends without it was cut short
// (a client that does not read trailers sees the connection closed
// before the end of the chunked body instead).
const EntitiesTrailer = "Tableemu-Entities"

// MaxImportBody is the most an import request's body may be: it is
// spooled to a temporary file (os.TempDir) so that a store transaction
// that is retried (PostgreSQL after a serialization conflict) reads it
// again, and the cap keeps a mistaken upload from filling the disk. About
// a million 1 KiB entities; larger tables are imported by tableemu import
// with --location or --database, which reads the files in place.
const MaxImportBody = 1 << 30

// IsPath reports whether the path p is the transfer endpoints' to answer:
// /_tableemu/accounts/{account}/export or import, or below them.
func IsPath(p string) bool {
	rest, ok := strings.CutPrefix(p, prefix)
	if !ok {
		return false
	}
	_, rest, _ = strings.Cut(rest, "/")
	op, _, _ := strings.Cut(rest, "/")
	return op == "export" || op == "import"
}

// usage is the hint of a path or method that is not an endpoint.
const usage = "tableemu's transfer endpoints are GET /_tableemu/accounts/<account>/export, " +
	"GET /_tableemu/accounts/<account>/export/<table> and POST /_tableemu/accounts/<account>/import/<table> (docs/transfer.md)."

// route is a parsed transfer path.
type route struct {
	op, method, account, table string
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
	case len(segs) == 2 && segs[1] == "export":
		r.op, r.method = "manifest", http.MethodGet
	case len(segs) == 3 && segs[1] == "export":
		r.op, r.method, r.table = "export", http.MethodGet, segs[2]
	case len(segs) == 3 && segs[1] == "import":
		r.op, r.method, r.table = "import", http.MethodPost, segs[2]
	default:
		return route{}, false
	}
	return r, true
}

// Deadlines, as the isolation endpoints': not operations of the service,
// whose 30 s limit a large table's import or export can pass, but bounded
// below the server's 5-minute WriteTimeout (emulator/run.go).
const (
	// DefaultTimeout is Config.Timeout when zero.
	DefaultTimeout = 2 * time.Minute
	// MaxTimeout is the most Config.Timeout can be.
	MaxTimeout = 4 * time.Minute
)

func (t *Transfer) timeout() time.Duration {
	d := t.cfg.Timeout
	if d <= 0 {
		return DefaultTimeout
	}
	return min(d, MaxTimeout)
}

// ServeTool answers a request under /_tableemu/accounts/ that IsPath
// claims: the answer on success; otherwise the error, which the server
// writes as the service writes its errors. note names the operation for
// the access log.
func (t *Transfer) ServeTool(w http.ResponseWriter, r *http.Request) (note string, err error) {
	limit := t.timeout()
	ctx, cancel := context.WithTimeout(r.Context(), limit)
	defer cancel()
	if err := t.serve(ctx, w, r, &note); err != nil {
		err = t.cfg.StoreError(err)
		if e := tableemu.From(err); e.Code == tableemu.OperationTimedOut {
			err = tableemu.New(tableemu.OperationTimedOut).WithHint(
				"the %s did not finish within %v, the limit of tableemu's own endpoints (docs/transfer.md). "+
					"An import is one transaction per table, applied whole or not at all: query the table to tell, and retry. "+
					"A table too large for the limit can be imported or exported by tableemu import or export with --database, "+
					"or --location with no server running, which have no limit.", note, limit).WithDetail("%s", e.Detail)
		}
		return note, err
	}
	return note, nil
}

func (t *Transfer) serve(ctx context.Context, w http.ResponseWriter, r *http.Request, note *string) error {
	rt, ok := parsePath(r.URL.EscapedPath())
	if !ok {
		return tableemu.New(tableemu.InvalidUri).WithHint(usage)
	}
	if r.Method != rt.method && !(rt.method == http.MethodGet && r.Method == http.MethodHead) {
		return tableemu.New(tableemu.UnsupportedHttpVerb).WithHint(usage)
	}
	if t.cfg.Accounts[rt.account] == nil {
		return tableemu.New(tableemu.ResourceNotFound).WithHint(
			"this server has no account %q; AZURITE_ACCOUNTS sets the accounts (devstoreaccount1 when it is unset).", rt.account)
	}
	if err := t.cfg.Authorize(r, rt.account); err != nil {
		return err
	}
	*note = rt.op
	switch rt.op {
	case "manifest":
		m, err := t.manifest(ctx, rt.account)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, m)
	case "export":
		return t.serveExport(ctx, w, r, rt)
	default:
		return t.serveImport(ctx, w, r, rt)
	}
}

// manifest reads account's service properties, tables and their policies
// in one transaction: the document an export writes as ManifestName.
func (t *Transfer) manifest(ctx context.Context, account string) (*manifest, error) {
	props, err := t.cfg.GetProps(ctx, account)
	if err != nil {
		return nil, err
	}
	m := &manifest{Format: manifestFormat, Account: account, ServiceProperties: string(props)}
	err = t.cfg.Store.View(ctx, func(tx *store.Tx) error {
		m.Tables = []manifestTable{}
		q := store.TableQuery{Top: 1000}
		for {
			page, err := tx.QueryTables(account, q)
			if err != nil {
				return err
			}
			for _, tb := range page.Tables {
				ids, err := tx.TableACL(tb)
				if err != nil {
					return err
				}
				m.Tables = append(m.Tables, manifestTable{Name: tb.Name, File: tb.Name + ".jsonl", ACL: policyDocs(ids)})
			}
			if page.Next == "" {
				return nil
			}
			q.After = page.Next
		}
	})
	return m, err
}

// policyDocs is ids as the manifest holds them.
func policyDocs(ids []store.SignedIdentifier) []policyDoc {
	var out []policyDoc
	for _, si := range ids {
		out = append(out, policyDoc{ID: si.ID, Start: formatPolicyTime(si.Start), Expiry: formatPolicyTime(si.Expiry), Permission: si.Permission})
	}
	return out
}

// serveExport streams one table as JSON Lines from one consistent read
// (Export). The status is sent with the first line: a failure before it
// is answered as an error; one after it, which can no longer change the
// status, closes the connection before the chunked body's end, and the
// trailer EntitiesTrailer is missing.
func (t *Transfer) serveExport(ctx context.Context, w http.ResponseWriter, r *http.Request, rt route) error {
	sink := &streamSink{w: w, head: r.Method == http.MethodHead}
	_, err := t.Export(ctx, sink, Options{Account: rt.account, Tables: []string{rt.table}})
	if err == nil {
		err = sink.Close()
	}
	switch {
	case err != nil && sink.started:
		panic(http.ErrAbortHandler) // net/http closes the connection
	case err != nil:
		return err
	case !sink.started:
		return tableemu.New(tableemu.TableNotFound).WithHint(
			"account %s has no table %q; GET /_tableemu/accounts/%s/export lists its tables.", rt.account, rt.table, rt.account)
	}
	w.Header().Set(EntitiesTrailer, strconv.Itoa(sink.n))
	return nil
}

// lineOptions write an entity as a line of a JSON Lines export (DirSink).
var lineOptions = wire.Options{Level: wire.MinimalMetadata, Lines: true}

// streamSink writes one table's entities to an HTTP response as JSON
// Lines.
type streamSink struct {
	w       http.ResponseWriter
	bw      *bufio.Writer
	head    bool
	started bool
	n       int
	line    []byte
}

func (s *streamSink) Properties(string, []byte) error { return nil }

func (s *streamSink) Table(ti TableInfo) error {
	if s.started {
		return errors.New("transfer: more than one table in a table's export")
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "application/x-ndjson")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Trailer", EntitiesTrailer)
	s.w.WriteHeader(http.StatusOK)
	s.bw = bufio.NewWriterSize(s.w, 64<<10)
	return nil
}

func (s *streamSink) Entity(e *edm.Entity) error {
	s.n++
	if s.head {
		return nil
	}
	s.line = append(wire.AppendEntity(s.line[:0], e, &lineOptions), '\n')
	_, err := s.bw.Write(s.line)
	return err
}

func (s *streamSink) Close() error {
	if s.bw == nil {
		return nil
	}
	return s.bw.Flush()
}

// serveImport imports one table from the request's JSON Lines body.
func (t *Transfer) serveImport(ctx context.Context, w http.ResponseWriter, r *http.Request, rt route) error {
	mode := Mode(r.URL.Query().Get("mode"))
	switch mode {
	case "":
		mode = ModeFail
	case ModeFail, ModeReplace, ModeMerge:
	default:
		return tableemu.New(tableemu.InvalidQueryParameterValue).WithHint(
			"mode=%s: an import's mode is fail (the default: refuse a table that exists), replace or merge (docs/transfer.md).", mode)
	}
	src := &bodySource{table: rt.table}
	if v := r.Header.Values(ACLHeader); len(v) > 0 {
		mt := manifestTable{Name: rt.table, ACL: []policyDoc{}}
		err := json.Unmarshal([]byte(strings.Join(v, ",")), &mt.ACL)
		if err == nil {
			src.acl, err = mt.policies()
		}
		if err != nil {
			return tableemu.New(tableemu.InvalidHeaderValue).WithHint(
				"%s is the table's stored access policies as a JSON list, as the export's manifest has them (docs/transfer.md): %v", ACLHeader, err)
		}
	}
	f, err := spool(r.Body, MaxImportBody)
	if f != nil {
		defer func() { f.Close(); os.Remove(f.Name()) }()
	}
	if err != nil {
		return err
	}
	src.f = f
	sum, err := t.Import(ctx, src, Options{Account: rt.account, Mode: mode})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, struct {
		Account  string `json:"account"`
		Table    string `json:"table"`
		Entities int    `json:"entities"`
		Mode     Mode   `json:"mode"`
	}{rt.account, rt.table, sum.Entities, mode})
}

// spool copies body to a temporary file, at most limit bytes.
func spool(body io.Reader, limit int64) (*os.File, error) {
	f, err := os.CreateTemp("", "tableemu-import-*.jsonl")
	if err != nil {
		return nil, tableemu.New(tableemu.InternalError).WithDetail("spooling an import: %v", err)
	}
	n, err := io.Copy(f, io.LimitReader(body, limit+1))
	switch {
	case err != nil:
		return f, tableemu.New(tableemu.InvalidInput).WithDetail("reading the body: %v", err).WithHint(
			"the import's body could not be read whole (%v); nothing was written.", err)
	case n > limit:
		return f, tableemu.New(tableemu.RequestBodyTooLarge).WithHint(
			"an import's body is at most %d MiB; import a larger table with tableemu import --location or --database, "+
				"which reads the file in place (docs/transfer.md).", limit>>20)
	}
	return f, nil
}

// bodySource is an import request's body as the source of one table.
type bodySource struct {
	table string
	acl   []store.SignedIdentifier
	f     *os.File
}

func (s *bodySource) Accounts() ([]Account, error) {
	tb := &Table{Name: s.table, ACL: s.acl, Entities: s.entities}
	return []Account{{Tables: []*Table{tb}}}, nil
}

func (s *bodySource) Close() error { return nil }

// entities reads the spooled body from its start, each call, as a file
// of a directory is read (a byte order mark, blank lines, Windows line
// ends); an entity's Where is "line N" (Client.Import names the source's
// place instead).
func (s *bodySource) entities(fn func(Entity) error) error {
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return readLines(s.f, "", s.table, fn)
}

// writeJSON answers with v as JSON, '<' and '>' as they are (the
// manifest's service properties are XML, read by people too).
func writeJSON(w http.ResponseWriter, status int, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(status)
	w.Write(b.Bytes())
	return nil
}
