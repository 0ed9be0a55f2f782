package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu/emulator"
)

// replayRecording replays rec, the file name of corpus c, against a fresh
// tableemu over HTTPS, keeping its data as base says (in memory, or in a
// PostgreSQL database of its own), and returns the differences, each
// naming the file, the entry and what differs. An empty result means every
// answer matched.
func replayRecording(t testing.TB, c replayCorpus, name string, rec *recording, base emulator.Config) []replayDiff {
	t.Helper()
	diffs, _ := replayRecordingNotes(t, c, name, rec, base)
	return diffs
}

// replayRecordingNotes is replayRecording, also returning what the
// allowances of cosmosAllowed let pass, one line each.
func replayRecordingNotes(t testing.TB, c replayCorpus, name string, rec *recording, base emulator.Config) ([]replayDiff, []string) {
	t.Helper()
	account := recordingAccount(c, rec)
	if account == "" {
		t.Fatalf("%s: no account name: the file has no Variables.TABLES_STORAGE_ACCOUNT_NAME and the corpus names none", name)
	}
	// A key of the test's own: the recordings' keys are sanitized.
	raw := make([]byte, 64)
	rand.Read(raw)
	key := base64.StdEncoding.EncodeToString(raw)
	cfg := base
	cfg.Silent = true
	cfg.Accounts = []emulator.Account{{Name: account, Keys: []string{key}, RawKeys: [][]byte{raw}}}
	for i := range rec.Entries {
		if k := credentialOf(c, name, i, &rec.Entries[i]); k == credToken || k == credRefusedToken {
			// Bearer tokens, which tableemu accepts over HTTPS with
			// --oauth basic (docs/security.md).
			cfg.OAuth = "basic"
		}
	}
	srv, err := emulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Database != "" {
		// A database of a pool (TestPostgresReplay) holds the file
		// replayed on it before: the state of a new server again
		// (docs/isolation.md).
		if err := srv.ResetAll(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	// TLS, so that https URLs and SAS spr=https are met as recorded.
	hs := httptest.NewTLSServer(srv)
	defer func() { hs.Close(); srv.Close() }()
	now := time.Now()
	r := &replayer{corpus: c, file: name, account: account, key: key, local: hs.URL, client: hs.Client(),
		now: now, offset: windowOffset(rec, now),
		versions: newOneToOne(), liveVersions: map[string]bool{}, tokens: map[string]*oneToOne{}, etagText: map[string]string{}}
	if cfg.OAuth != "" {
		// Tokens from Microsoft Entra ID for storage (tls_test.go): one
		// tableemu accepts, and one from an issuer it refuses.
		r.bearer = string(mint(t, entraClaims(keyIdentity(rec)...)))
		r.refusedBearer = string(mint(t, entraClaims("iss", "https://issuer.example/")))
	}
	r.permissions = twinPermissions(t, c, name, rec)
	r.restoreAccountState(rec)
	r.createExistingTables(rec)
	for i := range rec.Entries {
		if !isTableHost(hostOf(rec.Entries[i].RequestURI)) {
			continue // the identity provider's: not the Table service (isTableHost)
		}
		r.entry(i, &rec.Entries[i])
	}
	r.endListing()
	return r.diffs, r.notes
}

// signedIdentity finds a user delegation key's SignedOid and SignedTid.
var signedIdentity = regexp.MustCompile(`<SignedOid>([^<]*)</SignedOid><SignedTid>([^<]*)</SignedTid>`)

// keyIdentity is the oid and tid claims of the token the replay sends: the
// identity a recorded user delegation key was issued to (its SignedOid,
// and its SignedTid, which the recorder wrote as zeros), as claims for
// entraClaims, so that the key tableemu issues names the same identity;
// none for a file without one. The live test's token is not recorded, and
// a token names whom it was issued to, so the replay stands in for the same
// identity, not for another.
func keyIdentity(rec *recording) []any {
	for i := range rec.Entries {
		if m := signedIdentity.FindSubmatch(rec.Entries[i].ResponseBody); m != nil {
			return []any{"oid", string(m[1]), "tid", string(m[2])}
		}
	}
	return nil
}

// restoreAccountState gives tableemu the service properties the live
// account had before the test, as far as the file's first successful Get
// Service Properties shows them (allow "account-state"): its document,
// less the settings a Set earlier in the file wrote, which the replay
// sends itself.
func (r *replayer) restoreAccountState(rec *recording) {
	var written []string // top-level elements earlier Sets wrote
	for i := range rec.Entries {
		e := &rec.Entries[i]
		u, err := url.Parse(e.RequestURI)
		if err != nil || u.Query().Get("comp") != "properties" || u.Query().Get("restype") != "service" {
			continue
		}
		if e.RequestMethod == http.MethodPut {
			ct, _ := e.header(false, "Content-Type")
			if body, err := recordedBytes(e.RequestBody, ct); err == nil && e.StatusCode == http.StatusAccepted {
				if n, err := parseXML(body); err == nil {
					for _, k := range n.kids {
						written = append(written, k.name)
					}
				}
			}
			continue
		}
		ct, _ := e.header(true, "Content-Type")
		body, err := recordedBytes(e.ResponseBody, ct)
		if e.RequestMethod != http.MethodGet || e.StatusCode != http.StatusOK || err != nil || len(body) == 0 {
			continue
		}
		for _, name := range written {
			n := regexp.QuoteMeta(name)
			body = regexp.MustCompile(`(?s)<`+n+`\s*/>|<`+n+`>.*?</`+n+`>`).ReplaceAll(body, nil)
		}
		if n, err := parseXML(body); err != nil || len(n.kids) == 0 {
			return // the Sets wrote all the Get shows
		}
		allow("account-state")
		r.entryIndex = i
		r.at = fmt.Sprintf("%s before entry 0 (Set Service Properties to the live account's settings of entry %d)", r.file, i)
		req, err := http.NewRequest(http.MethodPut, r.base(u.Host, "")+"/?restype=service&comp=properties", bytes.NewReader(body))
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

// createExistingTables creates, empty, the tables the file shows existed
// before it: a table whose first request in the file is not a Create
// Table and was answered with success, or whose first Create Table was
// answered 409 TableAlreadyExists. Tests make such tables outside the
// recording (the JavaScript tests in a before hook; Python's
// test_empty_batch deletes one the file never creates); without them a
// fresh tableemu would answer 404 where live succeeded. Nothing else
// about them is known: a file that reads what they held before would
// still differ.
func (r *replayer) createExistingTables(rec *recording) {
	seen := map[string]bool{}
	for i := range rec.Entries {
		e := &rec.Entries[i]
		table, create := entryTable(e)
		if table == "" || seen[strings.ToLower(table)] || !isTableHost(hostOf(e.RequestURI)) {
			continue
		}
		seen[strings.ToLower(table)] = true
		existed := !create && e.StatusCode/100 == 2
		if create && e.StatusCode == http.StatusConflict {
			ct, _ := e.header(true, "Content-Type")
			body, _ := recordedBytes(e.ResponseBody, ct)
			existed = errorCodeOf(body) == "TableAlreadyExists"
		}
		if !existed {
			continue
		}
		r.entryIndex = i
		r.at = fmt.Sprintf("%s before entry 0 (Create Table %s, which entry %d shows existed)", r.file, table, i)
		body, _ := json.Marshal(map[string]string{"TableName": table})
		req, err := http.NewRequest(http.MethodPost, r.base("", "")+"/Tables", bytes.NewReader(body))
		if err != nil {
			r.failf("%v", err)
			return
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json;odata=nometadata")
		req.Header.Set("Prefer", "return-no-content")
		req.Header.Set("x-ms-version", "2019-02-02")
		req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
		auth, err := sharedKeyAuthorization(r.account, r.key, req)
		if err != nil {
			r.failf("%v", err)
			return
		}
		req.Header.Set("Authorization", auth)
		if resp, b, err := r.send(req); err != nil || resp.StatusCode != http.StatusNoContent {
			r.failf("tableemu did not create the table: %v %s", err, snippet(b))
		}
	}
}

// entryTable is the table a recorded request names, and whether it is a
// Create Table (POST /Tables, the name in its body): "" for none (service
// properties and stats, $batch, Query Tables).
func entryTable(e *recEntry) (table string, create bool) {
	u, err := url.Parse(e.RequestURI)
	if err != nil {
		return "", false
	}
	seg, _, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	switch {
	case seg == "Tables" && e.RequestMethod == http.MethodPost:
		var b struct{ TableName string }
		json.Unmarshal(e.RequestBody, &b)
		return b.TableName, true
	case strings.HasPrefix(seg, "Tables('"):
		return strings.TrimSuffix(strings.TrimPrefix(seg, "Tables('"), "')"), false
	case seg == "Tables", seg == "$batch":
		return "", false
	}
	name, _, _ := strings.Cut(seg, "(")
	return name, false
}

// replayer carries one file's replay: the local endpoint, the mappings
// built so far and the differences found.
type replayer struct {
	corpus             replayCorpus
	file, account, key string
	local              string // https://127.0.0.1:<port>
	client             *http.Client
	now                time.Time
	offset             time.Duration        // how far the file's SAS windows move (allow "sas-window")
	permissions        map[int]twinSAS      // by entry, the permissions (and version) of a SAS recorded as sp=Sanitized (twinPermissions)
	bearer             string               // a bearer token tableemu accepts (credToken)
	refusedBearer      string               // one it refuses (credRefusedToken)
	versions           *oneToOne            // recorded entity-version time → tableemu's (allow "entity-version")
	liveVersions       map[string]bool      // every entity-version time live named in an answer compared
	batchVersions      map[string]bool      // tableemu's version times first named by the batch answer being compared (allow "batch-clock")
	tokens             map[string]*oneToOne // per query parameter: recorded continuation token → tableemu's (allow "continuation")
	etagText           map[string]string    // tableemu's version time → the ETag it sent for it
	listing            *tableListing        // the listing of tables being compared (cosmosTablesOrder)
	tables             []string             // the tables the recording has created and not deleted (trackTables)
	tablesPage         bool                 // the entry being compared is a page of it
	notes              []string             // the allowances of cosmosAllowed applied, for the log
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
	req, err := r.request(i, e)
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
