package emulator

import (
	"bytes"
	"net/http"
	"net/textproto"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/tableemu/tableemu"
)

// This file reads a $batch body (docs/protocol.md 7.1): a multipart/mixed body
// whose one part is either a changeset (multipart/mixed again, one
// application/http part per operation) or a lone application/http query.
//
// It is written by hand rather than with mime/multipart and net/http's
// ReadRequest because clients send what those reject or normalise away:
// bare LF line endings, lower-case part headers, extra blank lines after a
// header block, a closing delimiter without its final "--" (JS), header
// lines with empty values (the Go SDK's "x-ms-version:"), unescaped quotes
// and spaces in request-line URLs. It also scans one string copy of the
// body by offset, so header names, values and URLs are substrings of it and
// entity bodies sub-slices of the request body: a 100-operation batch costs
// few allocations (conformance BenchmarkBatchInsert100 measures the whole path).

// batchBody is a parsed $batch body.
type batchBody struct {
	// changeset reports whether the operations came inside a changeset;
	// the response mirrors the request's structure (docs/protocol.md 7.3).
	changeset bool
	parts     []batchPart
}

// batchPart is one operation: an HTTP request carried in a MIME part.
type batchPart struct {
	// contentID is the operation's Content-ID request header, echoed in
	// its response part. A Content-ID among the MIME part's headers (as
	// the Python SDK writes one before the request line) is not echoed:
	// live answers such parts without one (docs/protocol.md 7.1).
	contentID string
	method    string // as on the request line (X-HTTP-Method not applied)
	target    string // the request-line URL: absolute, or a path
	header    http.Header
	body      []byte
}

// malformed is the top-level refusal of a body that is not a batch. The
// service answers a broken multipart body with 400 for the whole request
// (docs/protocol.md 7.4); its sentence is InvalidInput's, and what is
// wrong is tableemu's hint (docs/protocol.md 8.1).
func malformed(format string, args ...any) *tableemu.Error {
	return tableemu.New(tableemu.InvalidInput).WithHint("the batch request body is malformed: "+format, args...)
}

// parseBatch reads a $batch request body given its Content-Type.
func parseBatch(contentType string, body []byte) (*batchBody, error) {
	boundary, ok := multipartBoundary(contentType)
	if !ok {
		return nil, tableemu.New(tableemu.InvalidInput).WithHint(
			"the batch request must have Content-Type multipart/mixed with a boundary parameter; it has %q.", clipText(contentType))
	}
	// src is body's own memory, not a copy (a batch of a hundred
	// entities is over 100 KB): readBody gave body to this request alone
	// and nothing changes it, so the strings cut from src stay as read.
	p := &batchParser{src: unsafe.String(unsafe.SliceData(body), len(body)), raw: body}
	outer, err := p.split(span{0, len(body)}, boundary)
	if err != nil {
		return nil, err
	}
	switch len(outer) {
	case 0:
		return nil, malformed("it holds no changeset and no query.")
	case 1:
	default:
		// One changeset, or one query, per batch (docs/protocol.md 7.2).
		return nil, malformed("it holds %d parts; a batch holds one changeset or one query.", len(outer))
	}
	ct, rest, err := p.mimeHeader(outer[0])
	if err != nil {
		return nil, err
	}
	if inner, ok := multipartBoundary(ct); ok {
		parts, err := p.split(rest, inner)
		if err != nil {
			return nil, err
		}
		if len(parts) == 0 {
			// An empty changeset is not a malformed body: the service
			// answers it inside a 202 (batchfail.go emptyChangeset).
			return &batchBody{changeset: true}, nil
		}
		if len(parts) > maxBatchOps+1 {
			// One more than the limit is enough for the handler to refuse
			// the change set; the rest need not be parsed.
			parts = parts[:maxBatchOps+1]
		}
		b := &batchBody{changeset: true, parts: make([]batchPart, len(parts))}
		for i, sp := range parts {
			ct, content, err := p.mimeHeader(sp)
			if err != nil {
				return nil, err
			}
			if err := p.operation(ct, content, &b.parts[i]); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
	b := &batchBody{parts: make([]batchPart, 1)}
	if err := p.operation(ct, rest, &b.parts[0]); err != nil {
		return nil, err
	}
	return b, nil
}

// multipartBoundary returns the boundary of a multipart/mixed media type.
// Parameters may be quoted, spaced or in any case, and come in any order
// (the legacy Node SDK sends multipart/mixed;charset="utf-8";boundary=…).
func multipartBoundary(ct string) (string, bool) {
	params := strings.Split(ct, ";")
	if !strings.EqualFold(strings.TrimSpace(params[0]), "multipart/mixed") {
		return "", false
	}
	for _, p := range params[1:] {
		k, v, ok := strings.Cut(p, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "boundary") {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		// RFC 2046 allows 1 to 70 characters; longer ones are accepted, an
		// empty one (which would match any "--" line) is not.
		if v == "" || len(v) > 200 {
			return "", false
		}
		return v, true
	}
	return "", false
}

// span is a byte range [from, to) of the body.
type span struct{ from, to int }

// batchParser scans one body: src is it as a string, raw as bytes; the two
// share offsets.
type batchParser struct {
	src string
	raw []byte
}

// split returns the non-blank body parts of the multipart entity in sp
// (RFC 2046 5.1.1). The line break before a delimiter belongs to the
// delimiter; text before the first one is a preamble and is ignored.
// Tolerated: LF line endings, white space after a delimiter, a missing
// close delimiter, and a close delimiter without its trailing "--" (JS).
// Blank parts (the one such a delimiter leaves) are dropped.
func (p *batchParser) split(sp span, boundary string) ([]span, error) {
	delim := "--" + boundary
	pos := p.indexDelimiter(sp, sp.from, delim)
	if pos < 0 {
		return nil, malformed("no line starts with the boundary delimiter %q.", clipText(delim))
	}
	var parts []span
	add := func(part span) {
		if strings.TrimSpace(p.src[part.from:part.to]) != "" {
			parts = append(parts, part)
		}
	}
	for {
		i := pos + len(delim)
		if strings.HasPrefix(p.src[i:sp.to], "--") {
			return parts, nil // the close delimiter; the epilogue is ignored
		}
		for i < sp.to && (p.src[i] == ' ' || p.src[i] == '\t') {
			i++
		}
		if i == sp.to {
			return parts, nil
		}
		if p.src[i] == '\r' {
			i++
		}
		if i >= sp.to || p.src[i] != '\n' {
			return nil, malformed("text follows the boundary delimiter %q on its line.", clipText(delim))
		}
		start := i + 1
		next := p.indexDelimiter(sp, start, delim)
		if next < 0 {
			// No close delimiter: the part runs to the end.
			end := sp.to
			if end > start && p.src[end-1] == '\n' {
				end--
				if end > start && p.src[end-1] == '\r' {
					end--
				}
			}
			add(span{start, end})
			return parts, nil
		}
		end := next
		if end > start && p.src[end-1] == '\n' {
			end--
			if end > start && p.src[end-1] == '\r' {
				end--
			}
		}
		add(span{start, end})
		pos = next
	}
}

// indexDelimiter finds the next delimiter line in sp at or after from:
// delim at the start of a line, followed by "--", white space, a line
// break or the end (so "--b" does not match a line "--bc").
func (p *batchParser) indexDelimiter(sp span, from int, delim string) int {
	for from < sp.to {
		j := strings.Index(p.src[from:sp.to], delim)
		if j < 0 {
			return -1
		}
		at := from + j
		end := at + len(delim)
		if (at == sp.from || p.src[at-1] == '\n') &&
			(end == sp.to || strings.IndexByte("- \t\r\n", p.src[end]) >= 0) {
			return at
		}
		from = at + 1
	}
	return -1
}

// line returns the line starting at i within sp, without its line break,
// and where the next line starts.
func (p *batchParser) line(sp span, i int) (string, int) {
	j := strings.IndexByte(p.src[i:sp.to], '\n')
	if j < 0 {
		return strings.TrimSuffix(p.src[i:sp.to], "\r"), sp.to
	}
	return strings.TrimSuffix(p.src[i:i+j], "\r"), i + j + 1
}

// header reads a header block up to its blank line and returns the rest.
// Names are canonicalised (clients send them in any case); values may be
// empty; folded continuation lines are joined. A block that reaches the end
// without a blank line is all header (a DELETE part may end so).
func (p *batchParser) header(sp span) (http.Header, span, error) {
	h := make(http.Header, 8)
	// One backing array holds the values of a typical block; each name's
	// slice is capped so a repeated header copies rather than overwrites.
	vals := make([]string, 0, 8)
	var last string
	i := sp.from
	for i < sp.to {
		line, next := p.line(sp, i)
		i = next
		if line == "" {
			return h, span{i, sp.to}, nil
		}
		if line[0] == ' ' || line[0] == '\t' {
			if last == "" {
				return nil, sp, malformed("a header block starts with a continuation line.")
			}
			v := h[last]
			v[len(v)-1] += " " + strings.TrimSpace(line)
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		if !ok || !validHeaderName(name) {
			return nil, sp, malformed("the header line %q is not \"Name: value\".", clipText(line))
		}
		last = canonicalHeader(name)
		value = strings.TrimSpace(value)
		if prev, ok := h[last]; ok {
			h[last] = append(prev, value)
			continue
		}
		if len(vals) == cap(vals) {
			vals = make([]string, 0, 8)
		}
		vals = append(vals, value)
		h[last] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	return h, span{sp.to, sp.to}, nil
}

// mimeHeader reads a part's MIME header block, of which only Content-Type
// matters, and returns the rest.
func (p *batchParser) mimeHeader(sp span) (contentType string, rest span, err error) {
	i := sp.from
	for i < sp.to {
		line, next := p.line(sp, i)
		i = next
		if line == "" {
			return contentType, span{i, sp.to}, nil
		}
		if line[0] == ' ' || line[0] == '\t' {
			continue // a folded line of a header that does not matter here
		}
		name, value, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		if !ok || !validHeaderName(name) {
			return "", sp, malformed("the header line %q is not \"Name: value\".", clipText(line))
		}
		if strings.EqualFold(name, "Content-Type") {
			contentType = strings.TrimSpace(value)
		}
	}
	return contentType, span{sp.to, sp.to}, nil
}

// validHeaderName reports whether a trimmed header name is non-empty and
// holds no white space.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if name[i] == ' ' || name[i] == '\t' {
			return false
		}
	}
	return true
}

// commonHeaders are the names batch parts carry, canonical: matching them
// first spares an allocation for each lower-case or oddly-cased name
// (JS sends "dataserviceversion", Go "x-ms-version").
var commonHeaders = [...]string{
	"Accept", "Content-Type", "Content-Length", "Content-Id", "Prefer", "If-Match",
	"Dataserviceversion", "Maxdataserviceversion", "X-Ms-Version", "X-Http-Method",
	"Accept-Charset", "X-Ms-Client-Request-Id", "Content-Transfer-Encoding",
}

func canonicalHeader(name string) string {
	for _, c := range commonHeaders {
		if len(c) == len(name) && strings.EqualFold(c, name) {
			return c
		}
	}
	return textproto.CanonicalMIMEHeaderKey(name)
}

// operation reads the application/http content of a part: a request line,
// headers, a blank line and the body.
func (p *batchParser) operation(contentType string, sp span, op *batchPart) error {
	if contentType != "" {
		mt, _, _ := strings.Cut(contentType, ";")
		if !strings.EqualFold(strings.TrimSpace(mt), "application/http") {
			return malformed("an operation's part has Content-Type %q; operations are application/http.", clipText(contentType))
		}
	}
	// Blank lines may precede the request line.
	line, next := p.line(sp, sp.from)
	for line == "" && next < sp.to {
		line, next = p.line(sp, next)
	}
	// "METHOD target HTTP/1.1"; the target is everything between the first
	// and the last space, so a URL a client failed to escape still parses.
	line = strings.TrimSpace(line)
	sp1 := strings.IndexByte(line, ' ')
	sp2 := strings.LastIndexByte(line, ' ')
	if sp1 <= 0 || sp2 <= sp1 || !strings.HasPrefix(line[sp2+1:], "HTTP/") {
		return malformed("an operation does not start with a request line such as \"POST <url> HTTP/1.1\" (it starts %q).", clipText(line))
	}
	op.method = strings.ToUpper(line[:sp1])
	op.target = strings.TrimSpace(line[sp1+1 : sp2])
	if op.target == "" {
		return malformed("an operation's request line has no URL.")
	}
	h, rest, err := p.header(span{next, sp.to})
	if err != nil {
		return err
	}
	op.header = h
	// JS sends a second blank line before the JSON; JSON ignores white
	// space, and a stated Content-Length is not needed to find the end.
	op.body = bytes.TrimSpace(p.raw[rest.from:rest.to])
	op.contentID = h.Get("Content-Id")
	return nil
}

// clipText shortens client text quoted in a message, at a character
// boundary.
func clipText(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
