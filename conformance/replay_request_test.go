package conformance

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Building the local request of a recorded entry, as a user's test against
// tableemu would send it: the same method, path, query, headers and body,
// with what differs by nature mapped (replayAllowed) and the credentials
// signed again with the test's own key. The signers here are written from
// docs/protocol.md 9.3 and 9.5-9.7, independently of package auth.

// request builds the local request for entry i, e.
func (r *replayer) request(i int, e *recEntry) (*http.Request, error) {
	u, err := url.Parse(e.RequestURI)
	if err != nil {
		return nil, err
	}
	query, err := r.localQuery(u.RawQuery)
	if err != nil {
		return nil, err
	}
	target := r.base(u.Host, u.RawQuery) + u.EscapedPath()
	if query != "" {
		target += "?" + query
	}
	ct, _ := e.header(false, "Content-Type")
	body, err := r.requestBody(e, ct)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(e.RequestMethod, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	for name, v := range e.RequestHeaders {
		switch strings.ToLower(name) {
		case "authorization", "x-ms-date", "date", "content-length", "host":
			// Signed again below; Content-Length and Host are the
			// local request's own.
			continue
		case "if-match":
			req.Header.Set(name, r.localETag(v.String()))
			continue
		case "content-type":
			if mt, _, _ := mime.ParseMediaType(ct); strings.HasPrefix(mt, "multipart/") {
				// The boundary the body uses, where the recorder
				// sanitized the header's.
				req.Header.Set(name, withBoundary(ct, bodyBoundary(ct, body)))
				continue
			}
		}
		req.Header.Set(name, v.String())
	}
	if q, _ := url.ParseQuery(u.RawQuery); q.Get("sig") != "" {
		return req, nil // a SAS, signed again in localQuery
	}
	// Recorded as "Sanitized" or not at all: sign again, dated now, with
	// the credential the test used (credentialOf).
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	var auth string
	switch credentialOf(r.corpus, r.file, i, e) {
	case credNone:
		if _, dated := e.header(false, "x-ms-date"); !dated {
			req.Header.Del("x-ms-date")
		}
		return req, nil
	case credAccountKey:
		auth, err = sharedKeyAuthorization(r.account, r.key, req)
	case credOtherKey:
		auth, err = sharedKeyAuthorization(r.account, otherKey, req) // tamper_test.go's
	case credToken:
		auth = "Bearer " + r.bearer
	case credRefusedToken:
		auth = "Bearer " + r.refusedBearer
	}
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", auth)
	return req, nil
}

// send runs req and reads the whole answer.
func (r *replayer) send(req *http.Request) (*http.Response, []byte, error) {
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// base is the local service root for a recorded host, path style (allow
// "host"). Every live Table host of a recording names its one account
// (liveTableHost); a first label ending in -secondary, or a host the
// recorder sanitized to "Sanitized" (Python) or REDACTED (Java) asked for
// comp=stats (those SDKs' tests read stats from the secondary, the only
// endpoint that answers it), names the account's secondary endpoint,
// /<account>-secondary.
func (r *replayer) base(host, rawQuery string) string {
	allow("host")
	label, _, _ := strings.Cut(host, ".")
	q, _ := url.ParseQuery(rawQuery)
	if strings.HasSuffix(strings.ToLower(label), "-secondary") || (label == "Sanitized" || label == javaRedacted) && q.Get("comp") == "stats" {
		return r.local + "/" + r.account + "-secondary"
	}
	return r.local + "/" + r.account
}

// localizeHosts replaces every live https://<host> in s with its local
// service root.
func (r *replayer) localizeHosts(s string) string {
	if !strings.Contains(s, "https://") {
		return s
	}
	return liveTableHost.ReplaceAllStringFunc(s, func(h string) string {
		return r.base(strings.TrimPrefix(h, "https://"), "")
	})
}

// continuationParams are the query parameters that carry a continuation
// token back, each named after its response header.
var continuationParams = []string{"NextTableName", "NextPartitionKey", "NextRowKey"}

// localQuery is the recorded query as sent, parameter by parameter, with
// continuation tokens mapped to tableemu's, and a SAS's window moved to now
// (allow "sas-window") and signed again.
func (r *replayer) localQuery(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	params := strings.Split(raw, "&")
	for i, p := range params {
		k, v, _ := strings.Cut(p, "=")
		dec, err := url.QueryUnescape(v)
		if err != nil {
			return "", err
		}
		switch {
		case contains(continuationParams, k):
			allow("continuation")
			if local, ok := r.token(k).fwd[dec]; ok {
				params[i] = k + "=" + url.QueryEscape(local)
			} else {
				r.failf("query %s=%s: a continuation token tableemu never returned", k, dec)
			}
		case (k == "st" || k == "se") && strings.Contains(raw, "sig="):
			params[i] = k + "=" + url.QueryEscape(r.sasTime(k, dec))
		case k == "sp" && dec == "Sanitized" && strings.Contains(raw, "sig="):
			tw, ok := r.permissions[r.entryIndex]
			if !ok {
				r.failf("SAS sp=Sanitized: the file's twin recording (twinPermissions) shows no permissions for this request")
			}
			params[i] = "sp=" + url.QueryEscape(tw.sp)
		case k == "sv" && dec == "Sanitized" && strings.Contains(raw, "sig="):
			tw, ok := r.permissions[r.entryIndex]
			if !ok || tw.sv == "" || tw.sv == "Sanitized" {
				r.failf("SAS sv=Sanitized: the file's twin recording (twinPermissions) shows no version for this request")
			}
			params[i] = "sv=" + url.QueryEscape(tw.sv)
		}
	}
	q, err := url.ParseQuery(strings.Join(params, "&"))
	if err != nil {
		return "", err
	}
	if q.Get("sig") == "" {
		return strings.Join(params, "&"), nil
	}
	sig, err := sasSignature(r.account, r.key, q)
	if err != nil {
		return "", err
	}
	for i, p := range params {
		if strings.HasPrefix(p, "sig=") {
			params[i] = "sig=" + url.QueryEscape(sig)
		}
	}
	return strings.Join(params, "&"), nil
}

// requestBody is the body to send: nil for none, JSON as recorded (sent
// compactly), XML as recorded with the windows of stored access policies
// moved (allow "sas-window"), and a $batch multipart body with the hosts
// and ETags inside it made local.
func (r *replayer) requestBody(e *recEntry, contentType string) ([]byte, error) {
	raw := bytes.TrimSpace(e.RequestBody)
	if len(raw) > 0 && raw[0] == '{' {
		var b bytes.Buffer
		err := json.Compact(&b, raw)
		return b.Bytes(), err
	}
	b, err := recordedBytes(raw, contentType)
	if err != nil || b == nil {
		return b, err
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case strings.HasPrefix(mt, "multipart/"):
		return []byte(r.localizeBatch(string(b))), nil
	case strings.HasSuffix(mt, "xml"):
		return r.shiftPolicies(b), nil
	}
	return b, nil
}

var (
	batchHostLine    = regexp.MustCompile(`(?im)^Host: *([^\r\n]+)`)
	batchIfMatchLine = regexp.MustCompile(`(?im)^(If-Match: *)([^\r\n]+)`)
)

// localizeBatch rewrites a recorded $batch body for the local endpoint: the
// absolute URLs of its operations, their Host lines and their If-Match
// values. The boundaries stay as recorded.
func (r *replayer) localizeBatch(body string) string {
	body = r.localizeHosts(body)
	local := strings.TrimPrefix(r.local, "https://")
	body = batchHostLine.ReplaceAllString(body, "Host: "+local)
	return batchIfMatchLine.ReplaceAllStringFunc(body, func(line string) string {
		m := batchIfMatchLine.FindStringSubmatch(line)
		return m[1] + r.localETag(strings.TrimSpace(m[2]))
	})
}

// localETag maps a recorded If-Match value to the ETag tableemu returned
// for the same entity version (allow "entity-version"); * stays, and so
// does an ETag naming a version live never returned in this file (the
// Python tests' made-up W/"datetime'2012-06-15T22%3A51%3A44.9662825Z'"),
// which can match no version here either.
func (r *replayer) localETag(v string) string {
	if strings.TrimSpace(v) == "*" {
		return v
	}
	allow("entity-version")
	key, ok := etagVersion(v)
	if !ok {
		return v // not an ETag of the service's form: sent as recorded
	}
	if local, ok := r.versions.fwd[key]; ok {
		return r.etagText[local]
	}
	if r.liveVersions[key] {
		r.failf("If-Match %s names a version tableemu never returned", v)
	}
	return v
}

// sharedKeyAuthorization signs req with Shared Key, Table service form
// (docs/protocol.md 9.3, 9.5): method, Content-MD5, Content-Type, date and
// the canonicalized resource, "/<account><path as sent>" plus "?comp=…".
// In path style the path starts with the account, so it appears twice.
func sharedKeyAuthorization(account, key string, req *http.Request) (string, error) {
	resource := "/" + account + req.URL.EscapedPath()
	if comp := req.URL.Query().Get("comp"); comp != "" {
		resource += "?comp=" + comp
	}
	date := req.Header.Get("x-ms-date")
	if date == "" {
		date = req.Header.Get("Date")
	}
	sts := strings.Join([]string{req.Method, req.Header.Get("Content-MD5"), req.Header.Get("Content-Type"), date, resource}, "\n")
	sig, err := hmacBase64(key, sts)
	if err != nil {
		return "", err
	}
	return "SharedKey " + account + ":" + sig, nil
}

// sasSignature signs the SAS fields of q again (its sig is ignored):
// an account SAS (ss present) or a service SAS (tn present), each in the
// string-to-sign of its signed version sv.
func sasSignature(account, key string, q url.Values) (string, error) {
	sts, err := sasStringToSign(account, q)
	if err != nil {
		return "", err
	}
	return hmacBase64(key, sts)
}

// sasStringToSign is the string a SAS signs, the values URL-decoded:
//
//   - account SAS (docs/protocol.md 9.7): account, sp, ss, srt, st, se,
//     sip, spr, sv, each followed by a newline, and from sv 2020-12-06 ses
//     and a newline too;
//   - service SAS (docs/protocol.md 9.6): from sv 2015-04-05
//     sp, st, se, /table/<account>/<table in lower case>, si, sip, spr, sv,
//     spk, srk, epk, erk, joined by newlines; from 2013-08-15 to 2015-02-21
//     without sip and spr, the resource being /<account>/<table> before
//     2015-02-21.
//
// Versions are dates in ISO form, so they compare as strings.
func sasStringToSign(account string, q url.Values) (string, error) {
	sv := q.Get("sv")
	if sv == "" {
		return "", errors.New("SAS without sv")
	}
	if q.Has("ss") {
		f := []string{account, q.Get("sp"), q.Get("ss"), q.Get("srt"), q.Get("st"), q.Get("se"), q.Get("sip"), q.Get("spr"), sv}
		if sv >= "2020-12-06" {
			f = append(f, q.Get("ses"))
		}
		return strings.Join(f, "\n") + "\n", nil
	}
	tn := q.Get("tn")
	if tn == "" {
		return "", errors.New("SAS with neither ss (account SAS) nor tn (service SAS)")
	}
	resource := "/table/" + account + "/" + strings.ToLower(tn)
	if sv < "2015-02-21" {
		resource = "/" + account + "/" + strings.ToLower(tn)
	}
	head := []string{q.Get("sp"), q.Get("st"), q.Get("se"), resource, q.Get("si")}
	tail := []string{sv, q.Get("spk"), q.Get("srk"), q.Get("epk"), q.Get("erk")}
	if sv >= "2015-04-05" {
		head = append(head, q.Get("sip"), q.Get("spr"))
	}
	return strings.Join(append(head, tail...), "\n"), nil
}

func hmacBase64(key, s string) (string, error) {
	k, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		return "", fmt.Errorf("account key is not base64: %v", err)
	}
	m := hmac.New(sha256.New, k)
	m.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(m.Sum(nil)), nil
}

// twinPermissions maps the entries of a .NET recording whose SAS reads
// sp=Sanitized (the recorder of 2024 hid the permissions) to the
// permissions the test signed. The same test also ran with the account
// key, and that run's recording, "<class>(Storage)/<file>" beside
// "<class>(StorageAAD)/<file>", kept them: the k-th request carrying a SAS
// in the one is the k-th in the other, with the same method and the same
// permissions. The same holds for a run against Cosmos DB for Table,
// "<class>(CosmosTable)/<file>" in netCosmosCorpus, whose recorder hid a
// SAS's version too (sv=Sanitized): the twin's is the one the test signed
// with. nil where the file has no such twin.
func twinPermissions(t testing.TB, c replayCorpus, file string, rec *recording) map[int]twinSAS {
	t.Helper()
	dir, name, _ := strings.Cut(strings.TrimPrefix(file, c.dir+"/"), "/")
	class, ok := strings.CutSuffix(dir, "(StorageAAD)")
	if c == netCosmosCorpus {
		class, ok = strings.CutSuffix(dir, "(CosmosTable)")
	} else if c != netCorpus {
		return nil
	}
	if !ok {
		return nil
	}
	twinFile := netCorpus.dir + "/" + class + "(Storage)/" + name
	if _, err := os.Stat(filepath.Join(recordingsRoot, filepath.FromSlash(twinFile))); err != nil {
		return nil
	}
	sas := func(rec *recording) (idx []int, methods []string, qs []url.Values) {
		for i := range rec.Entries {
			e := &rec.Entries[i]
			u, err := url.Parse(e.RequestURI)
			if err != nil || u.Query().Get("sig") == "" {
				continue
			}
			idx, methods, qs = append(idx, i), append(methods, e.RequestMethod), append(qs, u.Query())
		}
		return idx, methods, qs
	}
	idx, methods, _ := sas(rec)
	_, twinMethods, twinQs := sas(loadRecording(t, twinFile))
	m := map[int]twinSAS{}
	for k, i := range idx {
		if k < len(twinMethods) && twinMethods[k] == methods[k] && twinQs[k].Get("sp") != "Sanitized" {
			m[i] = twinSAS{sp: twinQs[k].Get("sp"), sv: twinQs[k].Get("sv")}
		}
	}
	return m
}

// twinSAS is what a twin recording's SAS shows that a sanitized one hides:
// its permissions (sp) and version (sv).
type twinSAS struct{ sp, sv string }
