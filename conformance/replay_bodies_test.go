package conformance

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"regexp"
	"strings"
	"time"
)

// Comparing bodies: JSON parsed, XML as element trees, multipart part by
// part (replayAllowed says what each comparison lets pass).

// compareJSON compares two JSON documents parsed (allow "json-spelling").
func (r *replayer) compareJSON(where string, rec, act []byte, reqID string) {
	allow("json-spelling")
	rv, err := decodeJSON(rec)
	if err != nil {
		r.failf("%srecorded body is not JSON: %v", where, err)
		return
	}
	av, err := decodeJSON(act)
	if err != nil {
		r.failf("%sbody is not JSON: %v: %s", where, err, snippet(act))
		return
	}
	r.jsonValue(where+"body ", "$", rv, av, reqID)
}

// jsonObject is a JSON object with its members in the order sent.
type jsonObject struct {
	keys []string
	m    map[string]any
}

func (o *jsonObject) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, k := range o.keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(o.m[k])
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, kb...), ':'), vb...)
	}
	return append(b, '}'), nil
}

// decodeJSON parses one JSON document: objects as *jsonObject (a member
// name twice is an error), numbers as json.Number.
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := decodeValue(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

func decodeValue(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &jsonObject{m: map[string]any{}}
		for d.More() {
			kt, err := d.Token()
			if err != nil {
				return nil, err
			}
			k := kt.(string)
			if _, dup := o.m[k]; dup {
				return nil, fmt.Errorf("member %q twice", k)
			}
			v, err := decodeValue(d)
			if err != nil {
				return nil, err
			}
			o.keys, o.m[k] = append(o.keys, k), v
		}
		_, err = d.Token() // }
		return o, err
	case json.Delim('['):
		a := []any{}
		for d.More() {
			v, err := decodeValue(d)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err = d.Token() // ]
		return a, err
	}
	return tok, nil
}

// jsonValue compares the values at path: objects member by member and in
// the same order, arrays element by element. Members holding what differs
// by nature are compared through their mappings: odata.etag and Timestamp
// (entity versions), the RequestId and Time lines of an error message;
// strings with the live host in them with the local one.
func (r *replayer) jsonValue(where, path string, rv, av any, reqID string) {
	switch rt := rv.(type) {
	case *jsonObject:
		at, ok := av.(*jsonObject)
		if !ok {
			r.failf("%s%s: recorded an object, tableemu %s", where, path, jsonText(av))
			return
		}
		same := len(rt.keys) == len(at.keys)
		for _, k := range unionKeys(rt, at) {
			rm, inRec := rt.m[k]
			am, inAct := at.m[k]
			p := path + "." + k
			switch {
			case !inAct:
				same = false
				r.failf("%s%s: recorded %s, tableemu has no such member", where, p, jsonText(rm))
			case !inRec:
				same = false
				r.failf("%s%s: not recorded, tableemu %s", where, p, jsonText(am))
			default:
				r.jsonMember(where, path, k, rm, am, reqID)
			}
		}
		if same && strings.Join(rt.keys, ",") != strings.Join(at.keys, ",") {
			r.failf("%s%s: member order: recorded %s, tableemu %s", where, path, strings.Join(rt.keys, ","), strings.Join(at.keys, ","))
		}
	case []any:
		at, ok := av.([]any)
		if !ok {
			r.failf("%s%s: recorded an array, tableemu %s", where, path, jsonText(av))
			return
		}
		if len(rt) != len(at) {
			r.failf("%s%s: recorded %d elements, tableemu %d: recorded %s, tableemu %s", where, path, len(rt), len(at), jsonText(rt), jsonText(at))
			return
		}
		for i := range rt {
			r.jsonValue(where, fmt.Sprintf("%s[%d]", path, i), rt[i], at[i], reqID)
		}
	case json.Number:
		an, ok := av.(json.Number)
		if !ok || !sameNumber(rt, an) {
			r.failf("%s%s: recorded %s, tableemu %s", where, path, rt, jsonText(av))
		}
	case string:
		if as, ok := av.(string); !ok || r.localizeHosts(rt) != as {
			r.failf("%s%s: recorded %s, tableemu %s", where, path, jsonText(rt), jsonText(av))
		}
	default: // bool, null
		if rv != av {
			r.failf("%s%s: recorded %s, tableemu %s", where, path, jsonText(rv), jsonText(av))
		}
	}
}

// jsonMember compares member k of the object at path, through a mapping
// where its value differs by nature.
func (r *replayer) jsonMember(where, path, k string, rm, am any, reqID string) {
	rs, rIsStr := rm.(string)
	as, aIsStr := am.(string)
	p := path + "." + k
	switch {
	case rIsStr && aIsStr && k == "odata.etag":
		r.matchETag(where+p, rs, as)
	case rIsStr && aIsStr && k == "Timestamp":
		r.matchTimestamp(where+p, rs, as)
	case rIsStr && aIsStr && k == "value" && strings.HasSuffix(path, ".odata.error.message"):
		r.matchMessage(where+p, rs, as, reqID)
	case rIsStr && aIsStr && k == "TableName" && r.tablesPage && isTablesElement(where, path):
		r.tableName(rs, as) // compared across the listing (cosmosTablesOrder)
	default:
		r.jsonValue(where, p, rm, am, reqID)
	}
}

// unionKeys: a's members in order, then those only b has.
func unionKeys(a, b *jsonObject) []string {
	keys := append([]string(nil), a.keys...)
	for _, k := range b.keys {
		if _, ok := a.m[k]; !ok {
			keys = append(keys, k)
		}
	}
	return keys
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// sameNumber: equal values, and both written as integers or both with a
// fraction or exponent (a client without annotations types 1 as Int32
// and 1.0 as Double).
func sameNumber(a, b json.Number) bool {
	isInt := func(n json.Number) bool { return !strings.ContainsAny(string(n), ".eE") }
	if isInt(a) != isInt(b) {
		return false
	}
	x, _, err1 := big.ParseFloat(string(a), 10, 200, big.ToNearestEven)
	y, _, err2 := big.ParseFloat(string(b), 10, 200, big.ToNearestEven)
	if err1 != nil || err2 != nil {
		return a == b
	}
	return x.Cmp(y) == 0
}

var (
	etagForm      = regexp.MustCompile(`^W/"datetime'([^'"]+)'"$`)
	timestampForm = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,7})?Z$`)
	messageForm   = regexp.MustCompile(`(?s)^(.*)\nRequestId:([^\n]*)\nTime:([^\n]*)$`)
	// hintLines are tableemu's help in a message: lines of their own
	// after the service's text, each starting "tableemu: " (error.go,
	// WithHint).
	hintLines = regexp.MustCompile(`\ntableemu: [^\n]*`)
)

// etagVersion is the entity-version time an ETag names, in one canonical
// form, or false if s is not an ETag of the service's form.
func etagVersion(s string) (string, bool) {
	m := etagForm.FindStringSubmatch(s)
	if m == nil {
		return "", false
	}
	ts := strings.NewReplacer("%3A", ":", "%3a", ":").Replace(m[1])
	return timestampVersion(ts)
}

// timestampVersion is a Timestamp's time in the canonical form of
// etagVersion.
func timestampVersion(s string) (string, bool) {
	if !timestampForm.MatchString(s) {
		return "", false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return "", false
	}
	return t.UTC().Format("2006-01-02T15:04:05.0000000Z"), true
}

// matchETag compares ETags through the version mapping (allow
// "entity-version") and remembers tableemu's for If-Match.
func (r *replayer) matchETag(where, rec, act string) {
	allow("entity-version")
	rk, ok := etagVersion(rec)
	if !ok {
		if rec != act {
			r.failf("%s: recorded %q, tableemu %q", where, rec, act)
		}
		return
	}
	ak, ok := etagVersion(act)
	if !ok {
		r.failf("%s: tableemu %q is not an ETag of the form W/\"datetime'<time>'\"", where, act)
		return
	}
	r.liveVersions[rk] = true
	if err := r.matchVersion(rk, ak); err != nil {
		r.failf("%s: %v", where, err)
	}
	r.etagText[ak] = act
}

// matchTimestamp compares Timestamps through the same mapping, so that an
// entity's Timestamp and ETag name the same version.
func (r *replayer) matchTimestamp(where, rec, act string) {
	allow("entity-version")
	rk, ok := timestampVersion(rec)
	if !ok {
		if rec != act {
			r.failf("%s: recorded %q, tableemu %q", where, rec, act)
		}
		return
	}
	ak, ok := timestampVersion(act)
	if !ok {
		r.failf("%s: tableemu %q is not a Timestamp (yyyy-mm-ddThh:mm:ss.fffffffZ)", where, act)
		return
	}
	r.liveVersions[rk] = true
	if err := r.matchVersion(rk, ak); err != nil {
		r.failf("%s: %v", where, err)
	}
}

// matchVersion maps a recorded entity-version time to tableemu's (allow
// "entity-version"). Inside one batch answer, several recorded times may
// map to one of tableemu's that this answer named first (allow
// "batch-clock").
func (r *replayer) matchVersion(rk, ak string) error {
	if r.batchVersions == nil {
		return r.versions.match(rk, ak)
	}
	if _, seen := r.versions.fwd[rk]; !seen && r.batchVersions[ak] {
		allow("batch-clock")
		r.versions.fwd[rk] = ak
		return nil
	}
	if _, taken := r.versions.back[ak]; !taken {
		r.batchVersions[ak] = true
	}
	return r.versions.match(rk, ak)
}

// matchMessage compares an error message: the text exactly, less the
// lines of tableemu's own help that follow the service's text (allow
// "hint"); the RequestId line must name tableemu's x-ms-request-id (allow
// "request-id") and the Time line be a time (allow "time").
func (r *replayer) matchMessage(where, rec, act, reqID string) {
	allow("hint")
	act = hintLines.ReplaceAllString(act, "")
	if r.corpus.cosmos {
		r.matchCosmosMessage(where, rec, act)
		return
	}
	rm, am := messageForm.FindStringSubmatch(rec), messageForm.FindStringSubmatch(act)
	switch {
	case rm == nil && rec != act:
		r.failf("%s: recorded %q, tableemu %q", where, rec, act)
	case rm == nil:
	case am == nil:
		r.failf("%s: tableemu %q lacks the RequestId and Time lines", where, act)
	case rm[1] != am[1]:
		r.failf("%s: recorded %q, tableemu %q", where, rm[1], am[1])
	default:
		allow("request-id")
		if am[2] != reqID {
			r.failf("%s: RequestId %q is not the answer's x-ms-request-id %q", where, am[2], reqID)
		}
		allow("time")
		if !timestampForm.MatchString(am[3]) {
			r.failf("%s: Time %q is not a time", where, am[3])
		}
	}
}

// cosmosMessageForm is an error message of Azure Cosmos DB for Table: the
// text, perhaps an ActivityId line (the id, then the build that answered),
// and a RequestID line, ending with a newline; no Time line.
var cosmosMessageForm = regexp.MustCompile(`(?s)^(.*?)(\r\nActivityId: ([^,\n]*), [^\n]*)?\nRequestID:([^\n]*)\n$`)

// matchCosmosMessage is matchMessage for a Cosmos DB recording (act
// without tableemu's hints): the text exactly; an ActivityId line exactly
// when recorded, naming the RequestID line's id, the build after it being
// each server's own (allow "request-id"); a RequestID that is tableemu's,
// a UUID.
func (r *replayer) matchCosmosMessage(where, rec, act string) {
	rm, am := cosmosMessageForm.FindStringSubmatch(rec), cosmosMessageForm.FindStringSubmatch(act)
	switch {
	case rm == nil && rec != act:
		r.failf("%s: recorded %q, tableemu %q", where, rec, act)
	case rm == nil:
	case am == nil:
		r.failf("%s: tableemu %q lacks Cosmos DB's RequestID line (\\nRequestID:<id>\\n)", where, act)
	case rm[1] != am[1]:
		r.failf("%s: recorded %q, tableemu %q", where, rm[1], am[1])
	case (rm[2] == "") != (am[2] == ""):
		r.failf("%s: recorded %q, tableemu %q (an ActivityId line in one only)", where, rec, act)
	default:
		allow("request-id")
		if !uuidForm.MatchString(am[4]) {
			r.failf("%s: RequestID %q is not a UUID", where, am[4])
		}
		if am[2] != "" && am[3] != am[4] {
			r.failf("%s: ActivityId %q is not the RequestID %q", where, am[3], am[4])
		}
	}
}

var uuidForm = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// xmlNode is an element: name, attributes, the text of a leaf, children.
type xmlNode struct {
	name  string
	attrs map[string]string
	text  string
	kids  []*xmlNode
}

// parseXML reads a document into a tree, without its byte-order mark,
// declaration, comments and the white space between elements.
func parseXML(b []byte) (*xmlNode, error) {
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	d := xml.NewDecoder(bytes.NewReader(b))
	var stack []*xmlNode
	var root *xmlNode
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			n := &xmlNode{name: tk.Name.Local, attrs: map[string]string{}}
			for _, a := range tk.Attr {
				n.attrs[a.Name.Space+":"+a.Name.Local] = a.Value
			}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.kids = append(p.kids, n)
			} else if root == nil {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(tk)
			}
		}
	}
	if root == nil {
		return nil, fmt.Errorf("no element")
	}
	return root, nil
}

// xmlTimes are elements holding clock readings (allow "time").
var xmlTimes = map[string]bool{"LastSyncTime": true}

// compareXML compares two XML documents as trees (allow "xml-spelling").
func (r *replayer) compareXML(where string, rec, act []byte, reqID string) {
	allow("xml-spelling")
	rn, err := parseXML(rec)
	if err != nil {
		r.failf("%srecorded body is not XML: %v", where, err)
		return
	}
	an, err := parseXML(act)
	if err != nil {
		r.failf("%sbody is not XML: %v: %s", where, err, snippet(act))
		return
	}
	r.xmlElement(where+"body ", "/", rn, an, reqID)
}

func (r *replayer) xmlElement(where, path string, rn, an *xmlNode, reqID string) {
	path += rn.name
	if rn.name != an.name {
		r.failf("%s%s: tableemu has <%s> here", where, path, an.name)
		return
	}
	if fmt.Sprint(rn.attrs) != fmt.Sprint(an.attrs) {
		r.failf("%s%s: attributes recorded %v, tableemu %v", where, path, rn.attrs, an.attrs)
	}
	if len(rn.kids) == 0 && len(an.kids) == 0 {
		rt, at := strings.TrimSpace(rn.text), strings.TrimSpace(an.text)
		switch {
		case xmlTimes[rn.name]:
			allow("time")
			if _, err := http.ParseTime(at); err != nil {
				r.failf("%s%s: tableemu %q is not an HTTP date", where, path, at)
			}
		case isPolicyTime(path):
			r.matchPolicyTime(where+path, rt, at)
		case path == "/UserDelegationKey/Value" && rt == "MA==":
			// The recorder wrote MA== for the key (allow "sanitized"):
			// tableemu's must be a 256-bit key in base64.
			allow("sanitized")
			if k, err := base64.StdEncoding.DecodeString(at); err != nil || len(k) != 32 {
				r.failf("%s%s: tableemu %q is not a base64 256-bit key", where, path, at)
			}
		case rn.name == "message" && path == "/error/message":
			// An error's message, with its RequestId and Time lines.
			r.matchMessage(where+path, rt, at, reqID)
		case rt != at:
			r.failf("%s%s: recorded %q, tableemu %q", where, path, rt, at)
		}
		return
	}
	if len(rn.kids) != len(an.kids) {
		names := func(n *xmlNode) (s []string) {
			for _, k := range n.kids {
				s = append(s, k.name)
			}
			return s
		}
		r.failf("%s%s: recorded children %v, tableemu %v", where, path, names(rn), names(an))
		return
	}
	for i := range rn.kids {
		r.xmlElement(where, path+"/", rn.kids[i], an.kids[i], reqID)
	}
}

// mimePart is one part of a multipart body.
type mimePart struct {
	header textproto.MIMEHeader
	body   []byte
}

func readParts(contentType string, body []byte) ([]mimePart, error) {
	if _, _, err := mime.ParseMediaType(contentType); err != nil {
		return nil, err
	}
	mr := multipart.NewReader(bytes.NewReader(body), bodyBoundary(contentType, body))
	var parts []mimePart
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			return parts, nil
		}
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return nil, err
		}
		parts = append(parts, mimePart{p.Header, b})
	}
}

// compareMultipart compares a batch answer part by part (allow
// "boundary"): each part's headers, and the response inside an
// application/http part as a whole answer is compared.
func (r *replayer) compareMultipart(where, recCT string, rec []byte, actCT string, act []byte, reqID string) {
	allow("boundary")
	r.batchVersions = map[string]bool{}
	defer func() { r.batchVersions = nil }()
	rps, lf, err := readRecordedParts(recCT, rec)
	if err != nil {
		r.failf("%srecorded multipart body: %v", where, err)
		return
	}
	if lf {
		r.recordedLF(where)
	}
	aps, err := readParts(actCT, act)
	if err != nil {
		r.failf("%smultipart body: %v: %s", where, err, snippet(act))
		return
	}
	if len(rps) != len(aps) {
		r.failf("%sbody: recorded %d parts, tableemu %d", where, len(rps), len(aps))
		return
	}
	for i := range rps {
		w := fmt.Sprintf("%spart %d: ", where, i)
		r.compareHeaders(w, http.Header(rps[i].header), http.Header(aps[i].header))
		rct, act := rps[i].header.Get("Content-Type"), aps[i].header.Get("Content-Type")
		if !sameMediaType(rct, act) {
			continue
		}
		if mt, _, _ := mime.ParseMediaType(rct); mt != "application/http" {
			r.compareBody(w, rct, rps[i].body, act, aps[i].body, reqID)
			continue
		}
		r.compareInnerResponse(w, rps[i].body, aps[i].body, reqID)
	}
}

// compareInnerResponse compares the HTTP responses inside two batch parts.
func (r *replayer) compareInnerResponse(where string, rec, act []byte, reqID string) {
	rr, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(rec)), nil)
	if err != nil {
		r.failf("%srecorded response: %v", where, err)
		return
	}
	ar, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(act)), nil)
	if err != nil {
		r.failf("%sresponse: %v: %s", where, err, snippet(act))
		return
	}
	rb, _ := io.ReadAll(rr.Body)
	ab, _ := io.ReadAll(ar.Body)
	if !r.compareStatus(where, rr.StatusCode, rb, ar.StatusCode, ab) {
		return
	}
	r.compareHeaders(where, rr.Header, ar.Header)
	r.compareErrorCode(where, rr.Header, ar.Header, ar.StatusCode, ar.Header.Get("Content-Type"), ab, true)
	r.compareBody(where, rr.Header.Get("Content-Type"), rb, ar.Header.Get("Content-Type"), ab, reqID)
}
