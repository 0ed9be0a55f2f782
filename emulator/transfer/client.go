package transfer

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/emulator/wire"
	"github.com/tableemu/tableemu/odata/edm"
)

// Client runs exports and imports on a running tableemu over HTTP, through
// the endpoints of http.go, as Transfer runs them on a store: the same
// sinks and sources, so that `tableemu export` and `tableemu import`
// (cmd/tableemu) differ only in where they act. Each request is signed
// with the account's key (Shared Key).
type Client struct {
	// Base is the server's root, without a trailing slash:
	// http://127.0.0.1:10002.
	Base string
	// Key returns the key that signs for account.
	Key func(account string) ([]byte, error)
	// HTTP sends the requests (nil: http.DefaultClient).
	HTTP *http.Client
	// UserAgent names the program in the server's log.
	UserAgent string
}

// Export writes o.Account's tables (o.Tables of them, when given) to
// sink: the manifest's service properties and policies, then each
// table's entities as the server streams them. A name of o.Tables the
// account lacks is refused before anything is written. It closes sink,
// after telling it of a failure (Abort) when it can undo what it wrote.
func (c *Client) Export(ctx context.Context, sink Sink, o Options) (sum Summary, err error) {
	defer func() {
		if a, ok := sink.(Aborter); ok && err != nil {
			a.Abort() // a DirSink then leaves its directory as it was
		}
		if cerr := sink.Close(); err == nil {
			err = cerr
		}
	}()
	account := o.Account
	m, err := c.manifest(ctx, account)
	if err != nil {
		return sum, err
	}
	tables := m.Tables
	if o.Tables != nil {
		names := make([]string, len(tables))
		for i, mt := range tables {
			names[i] = mt.Name
		}
		if names, err = onlyNames(names, o.Tables, account, false); err != nil {
			return sum, err
		}
		tables = tables[:0]
		for _, mt := range m.Tables {
			if slices.Contains(names, mt.Name) {
				tables = append(tables, mt)
			}
		}
	}
	if m.ServiceProperties != "" {
		if err := sink.Properties(account, []byte(m.ServiceProperties)); err != nil {
			return sum, err
		}
	}
	for _, mt := range tables {
		ti := TableInfo{Account: account, Name: mt.Name}
		if ti.ACL, err = mt.policies(); err != nil {
			return sum, fmt.Errorf("the policies of table %s in the server's manifest: %v", mt.Name, err)
		}
		n, err := c.exportTable(ctx, sink, ti, o.Progress)
		sum.Entities += n
		if err != nil {
			return sum, err
		}
		sum.Tables++
	}
	return sum, nil
}

// manifest reads account's manifest from the server.
func (c *Client) manifest(ctx context.Context, account string) (*manifest, error) {
	body, err := c.do(ctx, http.MethodGet, account, "/export", "", nil, nil)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	var m manifest
	if err := json.NewDecoder(body).Decode(&m); err != nil {
		return nil, fmt.Errorf("the server's manifest of %s: %v", account, err)
	}
	return &m, nil
}

// exportTable reads one table's stream into sink.
func (c *Client) exportTable(ctx context.Context, sink Sink, ti TableInfo, progress func(Progress)) (int, error) {
	if err := sink.Table(ti); err != nil {
		return 0, err
	}
	body, err := c.do(ctx, http.MethodGet, ti.Account, "/export/"+url.PathEscape(ti.Name), "", nil, nil)
	if err != nil {
		return 0, err
	}
	defer body.Close()
	br := bufio.NewReaderSize(body, 64<<10)
	n := 0
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			e, derr := decodeLine(line)
			if derr != nil {
				return n, fmt.Errorf("table %s, entity %d of the server's export: %v", ti.Name, n+1, derr)
			}
			if err := sink.Entity(e.Entity); err != nil {
				return n, err
			}
			n++
			if progress != nil && n%progressEvery == 0 {
				progress(Progress{Account: ti.Account, Table: ti.Name, Entities: n})
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return n, fmt.Errorf("table %s: the server's export was cut short after %d entities (%v); its log may say why", ti.Name, n, err)
		}
	}
	if got := body.(*respBody).resp.Trailer.Get(EntitiesTrailer); got != strconv.Itoa(n) {
		return n, fmt.Errorf("table %s: the server's export was cut short after %d entities (it says %q)", ti.Name, n, got)
	}
	if progress != nil {
		progress(Progress{Account: ti.Account, Table: ti.Name, Entities: n, Done: true})
	}
	return n, nil
}

// Import writes src's tables into the server, one request per table, each
// table all or nothing: a source account with a name goes to the account
// of that name, one without to o.Account. As Transfer.Import, it checks
// every table before it sends one: the names of o.Tables against the
// source, each table's name and policies by the service's rules, and with
// ModeFail that the account has none of them (a table made meanwhile is
// still refused by the server). An account's service properties, when src
// has them, are set after its tables, through the Table API's Set Table
// Service Properties.
func (c *Client) Import(ctx context.Context, src Source, o Options) (Summary, error) {
	var sum Summary
	mode := o.Mode
	if mode == "" {
		mode = ModeFail
	}
	accounts, err := src.Accounts()
	if err != nil {
		return sum, err
	}
	type job struct {
		account string
		tables  []*Table
		props   []byte
	}
	var jobs []job
	for _, a := range accounts {
		account := a.Name
		if account == "" {
			account = o.Account
		}
		tables, err := chooseTables(a.Tables, o.Tables, account, false)
		if err != nil {
			return sum, err
		}
		for _, tb := range tables {
			if err := checkTable(tb); err != nil {
				return sum, err
			}
		}
		if mode == ModeFail && len(tables) > 0 {
			m, err := c.manifest(ctx, account)
			if err != nil {
				return sum, err
			}
			for _, tb := range tables {
				for _, mt := range m.Tables {
					if strings.EqualFold(mt.Name, tb.Name) {
						return sum, tableExists(account, tb.Name, mt.Name)
					}
				}
			}
		}
		jobs = append(jobs, job{account, tables, a.Properties})
	}
	for _, j := range jobs {
		for _, tb := range j.tables {
			n, err := c.importTable(ctx, j.account, tb, mode, o.Progress)
			if err != nil {
				return sum, err
			}
			sum.Tables++
			sum.Entities += n
		}
		if j.props != nil {
			if err := c.setProperties(ctx, j.account, j.props); err != nil {
				return sum, err
			}
		}
	}
	return sum, nil
}

// importTable posts one table as JSON Lines, encoded as the request is
// sent.
func (c *Client) importTable(ctx context.Context, account string, tb *Table, mode Mode, progress func(Progress)) (int, error) {
	pr, pw := io.Pipe()
	sent := 0
	encoded := make(chan struct{})
	go func() {
		defer close(encoded)
		bw := bufio.NewWriterSize(pw, 64<<10)
		var line []byte
		err := tb.Entities(func(e Entity) error {
			line = append(wire.AppendEntity(line[:0], e.Entity, &lineOptions), '\n')
			if !e.KeepTimestamp {
				line = dropTimestamp(line, e.Timestamp)
			}
			if _, err := bw.Write(line); err != nil {
				return err
			}
			sent++
			if progress != nil && sent%progressEvery == 0 {
				progress(Progress{Account: account, Table: tb.Name, Entities: sent})
			}
			return nil
		})
		if err == nil {
			err = bw.Flush()
		}
		pw.CloseWithError(err)
	}()
	h := http.Header{}
	if tb.ACL != nil {
		doc, err := json.Marshal(append([]policyDoc{}, policyDocs(tb.ACL)...))
		if err != nil {
			return 0, err
		}
		h.Set(ACLHeader, string(asciiJSON(doc)))
	}
	path := "/import/" + url.PathEscape(tb.Name) + "?mode=" + url.QueryEscape(string(mode))
	body, err := c.do(ctx, http.MethodPost, account, path, "application/x-ndjson", h, pr)
	pr.CloseWithError(errors.New("the request ended")) // stops the encoder if the server answered early
	<-encoded                                          // before the source is read again (sourcePlaces)
	if err != nil {
		return 0, sourcePlaces(err, tb)
	}
	defer body.Close()
	var ans struct {
		Entities int `json:"entities"`
	}
	if err := json.NewDecoder(body).Decode(&ans); err != nil {
		return 0, fmt.Errorf("the server's answer to the import of %s: %v", tb.Name, err)
	}
	if progress != nil {
		progress(Progress{Account: account, Table: tb.Name, Entities: ans.Entities, Done: true})
	}
	return ans.Entities, nil
}

// dropTimestamp removes the Timestamp member from line, an entity whose
// Timestamp is not the source's (Entity.KeepTimestamp): without it the
// server stamps the entity as an insert does, where a zero one would be
// refused as outside the DateTime range. The system Timestamp is the
// first such member, right after the keys, and a key's text cannot hold
// it unescaped.
func dropTimestamp(line []byte, ts int64) []byte {
	member := append(append([]byte(`,"Timestamp":"`), edm.FormatTimestamp(ts)...), '"')
	if i := bytes.Index(line, member); i >= 0 {
		line = append(line[:i], line[i+len(member):]...)
	}
	return line
}

// bodyLine is the place an import's refusal names, "line N" of the body
// as http.go's bodySource reads it.
var bodyLine = regexp.MustCompile(`\bline (\d+)\b`)

// sourcePlaces is err, the server's refusal of a table's import, with
// each "line N" of the request body it names replaced by where the N-th
// entity came from (Entity.Where: "orders.jsonl:12"): the body holds one
// entity a line, but a source's places are its own (a file with blank
// lines, a CSV, another endpoint). The source is read again to find them,
// as its contract allows.
func sourcePlaces(err error, tb *Table) error {
	var e *tableemu.Error
	if !errors.As(err, &e) || !bodyLine.MatchString(e.Message) {
		return err
	}
	want := map[int]string{}
	for _, m := range bodyLine.FindAllStringSubmatch(e.Message, -1) {
		n, _ := strconv.Atoi(m[1])
		want[n] = ""
	}
	left, i := len(want), 0
	stop := errors.New("found")
	tb.Entities(func(en Entity) error {
		i++
		if _, ok := want[i]; ok && en.Where != "" {
			want[i] = strings.Clone(en.Where)
			if left--; left == 0 {
				return stop
			}
		}
		return nil
	})
	c := *e
	c.Message = bodyLine.ReplaceAllStringFunc(e.Message, func(s string) string {
		n, _ := strconv.Atoi(s[len("line "):])
		if w := want[n]; w != "" {
			return w
		}
		return s
	})
	return &c
}

// asciiJSON escapes b's non-ASCII characters (\uXXXX), for a header.
func asciiJSON(b []byte) []byte {
	var out []byte
	for _, r := range string(b) {
		switch {
		case r < 0x80:
			out = append(out, byte(r))
		case r > 0xFFFF:
			r -= 0x10000
			out = fmt.Appendf(out, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
	}
	return out
}

// setProperties is Set Table Service Properties (docs/protocol.md 3.5).
func (c *Client) setProperties(ctx context.Context, account string, doc []byte) error {
	body, err := c.do(ctx, http.MethodPut, account, "", "application/xml", nil, bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("the service properties of %s: %w", account, err)
	}
	body.Close()
	return nil
}

// respBody is a response's body that keeps the response, for its
// trailers.
type respBody struct {
	io.ReadCloser
	resp *http.Response
}

// do sends one signed request. path follows /_tableemu/accounts/<account>;
// "" with PUT is Set Table Service Properties of the Table API. A refusal
// is returned as the service's error it carries.
func (c *Client) do(ctx context.Context, method, account, path, ctype string, h http.Header, body io.Reader) (io.ReadCloser, error) {
	key, err := c.Key(account)
	if err != nil {
		return nil, err
	}
	target := c.Base + "/_tableemu/accounts/" + url.PathEscape(account) + path
	comp := ""
	if path == "" {
		target, comp = c.Base+"/"+url.PathEscape(account)+"/?restype=service&comp=properties", "?comp=properties"
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	// Shared Key for the Table service (docs/protocol.md 9.3): verb,
	// Content-MD5, Content-Type, date, and the resource /<account><path>
	// (with ?comp= when the request has it).
	date := time.Now().UTC().Format(http.TimeFormat)
	m := hmac.New(sha256.New, key)
	io.WriteString(m, method+"\n\n"+ctype+"\n"+date+"\n/"+account+req.URL.EscapedPath()+comp)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("x-ms-version", "2019-02-02")
	if c.UserAgent != "" {
		req.Header.Set("User-Agent", c.UserAgent)
	}
	req.Header.Set("Authorization", "SharedKey "+account+":"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, answerError(resp, b)
	}
	return &respBody{resp.Body, resp}, nil
}

// answerError is a refusal as the service's error it carries: its code,
// status and message (the hint line kept), without the RequestId and
// Time lines.
func answerError(resp *http.Response, body []byte) error {
	var e struct {
		E struct {
			Code    string `json:"code"`
			Message struct {
				Value string `json:"value"`
			} `json:"message"`
		} `json:"odata.error"`
	}
	if json.Unmarshal(body, &e) != nil || e.E.Code == "" {
		if code := resp.Header.Get("x-ms-error-code"); code != "" { // an XML error of the Table API
			return &tableemu.Error{Code: tableemu.Code(code), Status: resp.StatusCode, Message: http.StatusText(resp.StatusCode)}
		}
		return fmt.Errorf("%s from the server, which may not be tableemu: %.200s", resp.Status, body)
	}
	msg, _, _ := strings.Cut(e.E.Message.Value, "\nRequestId:")
	return &tableemu.Error{Code: tableemu.Code(e.E.Code), Status: resp.StatusCode, Message: msg}
}
