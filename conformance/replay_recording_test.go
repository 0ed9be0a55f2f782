package conformance

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu/emulator"
)

// recordingFiles lists the recordings as "<folder>/<file>.json", sorted.
func recordingFiles(t testing.TB) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(recordingsDir, "*", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		rel, _ := filepath.Rel(recordingsDir, p)
		names = append(names, filepath.ToSlash(rel))
	}
	sort.Strings(names)
	return names
}

// recording is one test-proxy file (testdata/recordings/README.md).
type recording struct {
	Entries   []recEntry        `json:"Entries"`
	Variables map[string]string `json:"Variables"`
}

type recEntry struct {
	RequestURI      string                 `json:"RequestUri"`
	RequestMethod   string                 `json:"RequestMethod"`
	RequestHeaders  map[string]headerValue `json:"RequestHeaders"`
	RequestBody     json.RawMessage        `json:"RequestBody"`
	StatusCode      int                    `json:"StatusCode"`
	ResponseHeaders map[string]headerValue `json:"ResponseHeaders"`
	ResponseBody    json.RawMessage        `json:"ResponseBody"`
}

// headerValue is a recorded header: a string, or an array of strings sent
// as one line joined with ", ".
type headerValue []string

func (h *headerValue) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*h = headerValue{s}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	*h = list
	return nil
}

func (h headerValue) String() string { return strings.Join(h, ", ") }

// header looks a recorded header up without regard to case.
func (e *recEntry) header(resp bool, name string) (string, bool) {
	m := e.RequestHeaders
	if resp {
		m = e.ResponseHeaders
	}
	for k, v := range m {
		if strings.EqualFold(k, name) {
			return v.String(), true
		}
	}
	return "", false
}

func loadRecording(t testing.TB, name string) *recording {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(recordingsDir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	var rec recording
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &rec
}

// replayRecording replays rec against a fresh tableemu over HTTPS and
// returns the differences, each naming the file, the entry and what
// differs. An empty result means every answer matched.
func replayRecording(t testing.TB, name string, rec *recording) []replayDiff {
	t.Helper()
	account := rec.Variables["TABLES_STORAGE_ACCOUNT_NAME"]
	if account == "" && len(rec.Entries) > 0 {
		if u, err := url.Parse(rec.Entries[0].RequestURI); err == nil {
			account, _, _ = strings.Cut(u.Hostname(), ".")
		}
	}
	if account == "" {
		return []replayDiff{{0, name + ": no account name (Variables.TABLES_STORAGE_ACCOUNT_NAME) and no entries"}}
	}
	// A key of the test's own: the recordings' keys are sanitized.
	raw := make([]byte, 64)
	rand.Read(raw)
	key := base64.StdEncoding.EncodeToString(raw)
	srv, err := emulator.New(emulator.Config{InMemory: true, Silent: true,
		Accounts: []emulator.Account{{Name: account, Keys: []string{key}, RawKeys: [][]byte{raw}}}})
	if err != nil {
		t.Fatal(err)
	}
	// TLS, so that https URLs and SAS spr=https are met as recorded.
	hs := httptest.NewTLSServer(srv)
	defer func() { hs.Close(); srv.Close() }()
	r := &replayer{file: name, account: account, key: key, local: hs.URL, client: hs.Client(),
		versions: newOneToOne(), tokens: map[string]*oneToOne{}, etagText: map[string]string{}}
	for _, e := range rec.Entries {
		if u, err := url.Parse(e.RequestURI); err == nil && !contains(r.hosts, u.Host) {
			r.hosts = append(r.hosts, u.Host)
		}
	}
	r.restoreAccountState(rec)
	for i := range rec.Entries {
		r.entry(i, &rec.Entries[i])
	}
	return r.diffs
}

// restoreAccountState gives tableemu the service properties the live
// account had before the test, when the file's first service-properties
// operation is a Get that shows them (allow "account-state").
func (r *replayer) restoreAccountState(rec *recording) {
	for i := range rec.Entries {
		e := &rec.Entries[i]
		u, err := url.Parse(e.RequestURI)
		if err != nil || u.Query().Get("comp") != "properties" || u.Query().Get("restype") != "service" {
			continue
		}
		ct, _ := e.header(true, "Content-Type")
		body, err := recordedBody(e.ResponseBody, ct)
		if e.RequestMethod != http.MethodGet || e.StatusCode != http.StatusOK || err != nil || len(body) == 0 {
			return
		}
		allow("account-state")
		r.entryIndex = i
		r.at = fmt.Sprintf("%s before entry %d (Set Service Properties to the live account's settings)", r.file, i)
		req, err := http.NewRequest(http.MethodPut, r.base(u.Host)+"/?restype=service&comp=properties", bytes.NewReader(body))
		if err != nil {
			r.failf("%v", err)
			return
		}
		req.Header.Set("Content-Type", "application/xml")
		req.Header.Set("x-ms-version", "2019-02-02")
		req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
		auth, err := sharedKeyAuthorization(r.account, r.key, req)
		if err != nil {
			r.failf("%v", err)
			return
		}
		req.Header.Set("Authorization", auth)
		resp, b, err := r.send(req)
		if err != nil || resp.StatusCode != http.StatusAccepted {
			r.failf("tableemu refused the recorded properties: %v %s", err, snippet(b))
		}
		return
	}
}

// replayer carries one file's replay: the local endpoint, the mappings
// built so far and the differences found.
type replayer struct {
	file, account, key string
	local              string   // https://127.0.0.1:<port>
	hosts              []string // the recorded hosts
	client             *http.Client
	versions           *oneToOne            // recorded entity-version time → tableemu's (allow "entity-version")
	tokens             map[string]*oneToOne // per query parameter: recorded continuation token → tableemu's (allow "continuation")
	etagText           map[string]string    // tableemu's version time → the ETag it sent for it
	diffs              []replayDiff
	entryIndex         int    // the entry being compared
	at                 string // the entry being compared, for messages
}

// replayDiff is one difference: the entry it is in and the message, which
// names the file, the entry and what differs.
type replayDiff struct {
	entry int
	text  string
}

func (d replayDiff) String() string { return d.text }

// failf records a difference of the current entry.
func (r *replayer) failf(format string, args ...any) {
	r.diffs = append(r.diffs, replayDiff{r.entryIndex, r.at + ": " + fmt.Sprintf(format, args...)})
}

// entry sends one recorded request and compares the answer.
func (r *replayer) entry(i int, e *recEntry) {
	r.entryIndex = i
	r.at = fmt.Sprintf("%s entry %d (%s %s)", r.file, i, e.RequestMethod, shortURL(e.RequestURI))
	req, err := r.request(e)
	if err != nil {
		r.failf("cannot build the request: %v", err)
		return
	}
	resp, body, err := r.send(req)
	if err != nil {
		r.failf("request failed: %v", err)
		return
	}
	r.compare(e, resp, body)
}

// shortURL is a recorded URL without scheme and host, for messages.
func shortURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	if u.RawQuery != "" {
		return u.EscapedPath() + "?" + u.RawQuery
	}
	return u.EscapedPath()
}

// oneToOne maps values one to one, both ways.
type oneToOne struct{ fwd, back map[string]string }

func newOneToOne() *oneToOne {
	return &oneToOne{fwd: map[string]string{}, back: map[string]string{}}
}

// match checks that recorded and local correspond: a recorded value seen
// before must map to the same local value, and a local value to the same
// recorded one. A new pair is remembered.
func (m *oneToOne) match(recorded, local string) error {
	if l, ok := m.fwd[recorded]; ok {
		if l != local {
			return fmt.Errorf("recorded %s was %s earlier in tableemu's answers, now %s", recorded, l, local)
		}
		return nil
	}
	if r, ok := m.back[local]; ok {
		return fmt.Errorf("tableemu gave %s for both %s and %s, which live told apart", local, r, recorded)
	}
	m.fwd[recorded], m.back[local] = local, recorded
	return nil
}

// operationKind names the operation a recorded request is, for the counts
// of docs/replay.md.
func operationKind(e *recEntry) string {
	u, err := url.Parse(e.RequestURI)
	if err != nil {
		return "unreadable"
	}
	q, p := u.Query(), u.EscapedPath()
	keyed := strings.HasSuffix(p, ")") && !strings.HasSuffix(p, "()")
	switch {
	case q.Get("comp") == "properties":
		return map[string]string{"GET": "get service properties", "PUT": "set service properties"}[e.RequestMethod]
	case q.Get("comp") == "stats":
		return "get service stats"
	case q.Get("comp") == "acl":
		return map[string]string{"GET": "get table ACL", "PUT": "set table ACL"}[e.RequestMethod]
	case strings.HasSuffix(p, "/$batch"):
		return "batch"
	case strings.Contains(p, "/Tables"):
		switch e.RequestMethod {
		case "POST":
			return "create table"
		case "DELETE":
			return "delete table"
		}
		return "query tables"
	case keyed:
		switch e.RequestMethod {
		case "GET":
			return "get entity"
		case "PUT":
			return "update or upsert entity"
		case "PATCH", "MERGE":
			return "merge entity"
		case "DELETE":
			return "delete entity"
		}
	case e.RequestMethod == "POST":
		return "insert entity"
	case e.RequestMethod == "GET":
		return "query entities"
	}
	return "other " + e.RequestMethod
}
