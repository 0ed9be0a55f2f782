package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"sort"
	"strings"
)

// Comparing tableemu's answer with the recorded one. Every difference is
// reported, except those replayAllowed lists (each use is marked with
// allow).

// headerKind says how a response header is compared.
type headerKind int

const (
	hExact     headerKind = iota // byte for byte: every header not named below
	hMediaType                   // as a media type (allow "media-type-spelling")
	hURL                         // with the live host made local (allow "host")
	hVersion                     // an ETag, through the version mapping (allow "entity-version")
	hToken                       // a continuation token, through its mapping (allow "continuation")
	hChallenge                   // a Bearer challenge, its tenant aside (allow "tenant")
	hSkip                        // not compared: see headerSkipped
	hErrorCode                   // compared on its own (compareErrorCode)
)

// headerKinds are the response headers compared other than byte for byte,
// by canonical name. Every other header, on an answer or on a part of a
// batch answer, must be present exactly when live sent it, with the same
// value.
var headerKinds = map[string]headerKind{
	"Content-Type":                       hMediaType,
	"ETag":                               hVersion,
	"Location":                           hURL,
	"DataServiceId":                      hURL,
	"x-ms-continuation-NextTableName":    hToken,
	"x-ms-continuation-NextPartitionKey": hToken,
	"x-ms-continuation-NextRowKey":       hToken,
	"x-ms-error-code":                    hErrorCode,
	"WWW-Authenticate":                   hChallenge,
	"Date":                               hSkip,
	"x-ms-request-id":                    hSkip,
	"Server":                             hSkip,
	"Transfer-Encoding":                  hSkip,
	"Content-Length":                     hSkip,
	"Connection":                         hSkip,
}

// headerSkipped names the allowance of each header not compared.
var headerSkipped = map[string]string{
	"Date":              "time",
	"x-ms-request-id":   "request-id",
	"Server":            "framing",
	"Transfer-Encoding": "framing",
	"Content-Length":    "framing",
	"Connection":        "framing",
}

// headerSpelling maps a canonical header name to the spelling used above,
// for lookups and messages.
var headerSpelling = func() map[string]string {
	m := map[string]string{}
	for k := range headerKinds {
		m[http.CanonicalHeaderKey(k)] = k
	}
	return m
}()

// compare checks tableemu's answer to entry e.
func (r *replayer) compare(e *recEntry, resp *http.Response, body []byte) {
	reqID := resp.Header.Get("x-ms-request-id")
	switch {
	case r.corpus.cosmos && reqID != "":
		// Cosmos DB for Table sends none (docs/cosmos.md).
		r.failf("x-ms-request-id %q under the cosmos profile", reqID)
	case !r.corpus.cosmos && reqID == "":
		r.failf("no x-ms-request-id")
	}
	if _, err := http.ParseTime(resp.Header.Get("Date")); err != nil {
		r.failf("Date %q is not an HTTP date", resp.Header.Get("Date"))
	}
	recCT, _ := e.header(true, "Content-Type")
	rec, err := recordedBytes(e.ResponseBody, recCT)
	if err != nil {
		r.failf("recorded body: %v", err)
		return
	}
	if !r.compareStatus("", e.StatusCode, rec, resp.StatusCode, body) {
		return
	}
	recHeader := http.Header{} // names as recorded, for messages
	for k, v := range e.ResponseHeaders {
		recHeader[k] = []string{v.String()}
	}
	r.compareHeaders("", recHeader, resp.Header)
	r.compareErrorCode("", recHeader, resp.Header, resp.StatusCode, resp.Header.Get("Content-Type"), body, false)
	r.trackTables(e)
	r.tablesPage = r.beginTablesPage(e, resp.StatusCode) // cosmosTablesOrder
	r.compareBody("", recCT, rec, resp.Header.Get("Content-Type"), body, reqID)
	if r.tablesPage {
		r.tablesPage = false
		r.endTablesPage()
	}
}

// compareStatus reports a different status, with both error codes; the
// rest of an answer with the wrong status is not compared.
func (r *replayer) compareStatus(where string, rec int, recBody []byte, act int, actBody []byte) bool {
	if rec == act {
		return true
	}
	r.failf("%sstatus: recorded %d%s, tableemu %d%s", where, rec, codeSuffix(recBody), act, codeSuffix(actBody))
	return false
}

func codeSuffix(body []byte) string {
	if c := jsonErrorCode(body); c != "" {
		return " " + c
	}
	return ""
}

// jsonErrorCode is odata.error.code of a JSON error body, or "".
func jsonErrorCode(body []byte) string {
	var j struct {
		E struct {
			Code string `json:"code"`
		} `json:"odata.error"`
	}
	json.Unmarshal(body, &j)
	return j.E.Code
}

// compareHeaders compares every header either side sent, by its kind
// (headerKinds).
func (r *replayer) compareHeaders(where string, rec, act http.Header) {
	// Canonical names, each shown as spelled in the recording if it has
	// it, else as spelled in headerKinds.
	shown := map[string]string{}
	for _, h := range []http.Header{act, rec} {
		for k := range h {
			shown[http.CanonicalHeaderKey(k)] = k
		}
	}
	sorted := make([]string, 0, len(shown))
	for k := range shown {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, key := range sorted {
		name := shown[key]
		if _, inRec := headerValues(rec, key); !inRec && headerSpelling[key] != "" {
			name = headerSpelling[key]
		}
		how := headerKinds[headerSpelling[key]]
		switch how {
		case hSkip:
			allow(headerSkipped[headerSpelling[key]])
			continue
		case hErrorCode:
			continue
		}
		rv, hasRec := headerValues(rec, key)
		av, hasAct := headerValues(act, key)
		switch {
		case !hasRec:
			r.failf("%sheader %s: recorded none, tableemu %q", where, name, av)
			continue
		case !hasAct:
			r.failf("%sheader %s: recorded %q, tableemu none", where, name, rv)
			continue
		}
		switch how {
		case hExact:
			if rv != av {
				r.failf("%sheader %s: recorded %q, tableemu %q", where, name, rv, av)
			}
		case hURL:
			r.matchURL(where+"header "+name, rv, av)
		case hMediaType:
			if !sameMediaType(rv, av) {
				r.failf("%sheader %s: recorded %q, tableemu %q", where, name, rv, av)
			}
		case hVersion:
			r.matchETag(where+"header "+name, rv, av)
		case hChallenge:
			allow("tenant")
			if challengeTenant.ReplaceAllString(rv, "${1}<tenant>/") != challengeTenant.ReplaceAllString(av, "${1}<tenant>/") ||
				!challengeTenant.MatchString(rv) || !challengeTenant.MatchString(av) {
				r.failf("%sheader %s: recorded %q, tableemu %q", where, name, rv, av)
			}
		case hToken:
			allow("continuation")
			param := headerSpelling[key][len("x-ms-continuation-"):]
			if r.corpus.cosmos {
				if err := matchCosmosTokenForm(param, rv, av); err != nil {
					r.failf("%sheader %s: %v", where, name, err)
					continue
				}
			}
			if err := r.token(param).match(rv, av); err != nil {
				r.failf("%sheader %s: %v", where, name, err)
			}
		}
	}
}

// challengeTenant is the tenant segment of a Bearer challenge's
// authorization_uri.
var challengeTenant = regexp.MustCompile(`(authorization_uri=https://login\.microsoftonline\.com/)[^/ ]+/`)

// matchURL compares a URL in a header: the live host made local (allow
// "host"). Where the recorder replaced the whole URL (the Python one
// writes Location: https://example.com, the Java one https://REDACTED
// with no path), tableemu's must be a URL of the local account (allow
// "sanitized").
func (r *replayer) matchURL(where, rec, act string) {
	if !liveTableHost.MatchString(rec) || liveTableHost.ReplaceAllString(rec, "") == "" {
		allow("sanitized")
		if !strings.HasPrefix(act, r.base("", "")+"/") {
			r.failf("%s: recorded %q (sanitized), tableemu %q, not a URL of %s", where, rec, act, r.base("", ""))
		}
		return
	}
	if want := r.localizeHosts(rec); want != act {
		r.failf("%s: recorded %q (%q here), tableemu %q", where, rec, want, act)
	}
}

// headerValues is a header's values joined, whatever the case of its name
// in h, and whether it is present.
func headerValues(h http.Header, name string) (string, bool) {
	var vals []string
	for k, v := range h {
		if strings.EqualFold(k, name) {
			vals = append(vals, v...)
		}
	}
	return strings.Join(vals, ", "), len(vals) > 0
}

// token is the mapping of one continuation parameter's tokens.
func (r *replayer) token(param string) *oneToOne {
	m := r.tokens[param]
	if m == nil {
		m = newOneToOne()
		r.tokens[param] = m
	}
	return m
}

// compareErrorCode: a recorded x-ms-error-code must be matched. Where live
// sent none (allow "error-code-header"), tableemu's must equal the body's
// code on an error, the failed operation's code on the 202 of a failed
// batch (docs/protocol.md 7.4), and be absent on any other success; inside
// a batch part, where tableemu sends none, one it sent would have to equal
// the part's code.
func (r *replayer) compareErrorCode(where string, rec, act http.Header, status int, contentType string, body []byte, inPart bool) {
	rv, hasRec := headerValues(rec, "X-Ms-Error-Code")
	av, hasAct := headerValues(act, "X-Ms-Error-Code")
	if hasRec {
		if rv != av {
			r.failf("%sheader x-ms-error-code: recorded %q, tableemu %q", where, rv, av)
		}
		return
	}
	want := ""
	switch mt, _, _ := mime.ParseMediaType(contentType); {
	case status >= 400:
		want = errorCodeOf(body)
	case status == http.StatusAccepted && strings.HasPrefix(mt, "multipart/"):
		want = failedPartCode(contentType, body)
	}
	if want != "" {
		allow("error-code-header")
	}
	if inPart && !hasAct {
		return
	}
	if av != want {
		r.failf("%sheader x-ms-error-code: live sent none; tableemu %q where the answer's code is %q", where, av, want)
	}
}

// failedPartCode is the error code of the failed operation in a batch
// answer, or "".
func failedPartCode(contentType string, body []byte) string {
	parts, err := readParts(contentType, body)
	if err != nil {
		return ""
	}
	for _, p := range parts {
		ct := p.header.Get("Content-Type")
		mt, _, _ := mime.ParseMediaType(ct)
		if strings.HasPrefix(mt, "multipart/") {
			if c := failedPartCode(ct, p.body); c != "" {
				return c
			}
			continue
		}
		if resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(p.body)), nil); err == nil && resp.StatusCode >= 400 {
			b, _ := io.ReadAll(resp.Body)
			return errorCodeOf(b)
		}
	}
	return ""
}

// errorCodeOf is the code of a JSON or XML error body.
func errorCodeOf(body []byte) string {
	if c := jsonErrorCode(body); c != "" {
		return c
	}
	if n, err := parseXML(body); err == nil {
		for _, k := range n.kids {
			if k.name == "code" || k.name == "Code" {
				return k.text
			}
		}
	}
	return ""
}

// sameMediaType compares two Content-Type values as media types: type and
// parameters, ignoring spaces and the case of names, and a multipart
// boundary's value (allow "boundary").
func sameMediaType(rec, act string) bool {
	allow("media-type-spelling")
	rt, rp, err1 := mime.ParseMediaType(rec)
	at, ap, err2 := mime.ParseMediaType(act)
	if err1 != nil || err2 != nil {
		return rec == act
	}
	if _, ok := rp["boundary"]; ok {
		allow("boundary")
		if _, ok := ap["boundary"]; !ok {
			return false
		}
		delete(rp, "boundary")
		delete(ap, "boundary")
	}
	if rt != at || len(rp) != len(ap) {
		return false
	}
	for k, v := range rp {
		if ap[k] != v {
			return false
		}
	}
	return true
}

// compareBody compares two bodies by the recorded Content-Type: multipart
// part by part, XML as a tree, JSON parsed, anything else as bytes.
func (r *replayer) compareBody(where, recCT string, rec []byte, actCT string, act []byte, reqID string) {
	switch {
	case len(rec) == 0 && len(act) == 0:
		return
	case len(rec) == 0:
		r.failf("%sbody: recorded none, tableemu %s", where, snippet(act))
		return
	case len(act) == 0:
		r.failf("%sbody: recorded %s, tableemu none", where, snippet(rec))
		return
	}
	mt, _, _ := mime.ParseMediaType(recCT)
	switch {
	case strings.HasPrefix(mt, "multipart/"):
		r.compareMultipart(where, recCT, rec, actCT, act, reqID)
	case strings.HasSuffix(mt, "xml"):
		r.compareXML(where, rec, act, reqID)
	case strings.HasSuffix(mt, "json"):
		r.compareJSON(where, rec, act, reqID)
	case !bytes.Equal(rec, act):
		r.failf("%sbody: recorded %s, tableemu %s", where, snippet(rec), snippet(act))
	}
}

func snippet(b []byte) string {
	if len(b) > 300 {
		return fmt.Sprintf("%q…", b[:300])
	}
	return fmt.Sprintf("%q", b)
}
