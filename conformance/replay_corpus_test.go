package conformance

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"mime"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The corpora the replay reads, one folder of test-proxy recordings per
// SDK under testdata/recordings (README.md there says where each comes
// from and how its recorder wrote it), and what each recorder left out
// that the replay has to put back.

// recordingsRoot holds one folder per corpus; recordings are named by
// their path under it ("net/…/X.json", "python/X.json").
// TABLEEMU_REPLAY_RECORDINGS, an absolute path, names another: the copy
// on which TestDocsReplayPage follows docs/replay.md's procedure for
// adding a recording.
var recordingsRoot = cmp.Or(os.Getenv("TABLEEMU_REPLAY_RECORDINGS"), "testdata/recordings")

// replayCorpus is one SDK's recordings.
type replayCorpus struct {
	sdk string // names the test, TestReplay<sdk>, and the counts it logs
	dir string // the folder under recordingsRoot
	// keptAuthorization: the recorder kept Authorization (reading
	// "Sanitized") on every signed request, so one without it was sent
	// unsigned (the .NET recorder). Where it kept none (the Python one),
	// every request without a SAS was signed with the account key, except
	// those replayCredentials names.
	keptAuthorization bool
	// account names the account where the recordings do not
	// (Variables.TABLES_STORAGE_ACCOUNT_NAME): the Python recorder writes
	// "faketableaccount" for it in odata.type and in messages
	// ('faketableaccount.<table>'), while the hosts it writes are
	// placeholders of their own (fakeendpoint, Sanitized, REDACTED).
	account string
	// cosmos: the recordings are of Azure Cosmos DB for Table, replayed
	// against tableemu --profile cosmos (replay_cosmos_test.go).
	cosmos bool
}

var (
	netCorpus    = replayCorpus{sdk: "NET", dir: "net", keptAuthorization: true}
	pythonCorpus = replayCorpus{sdk: "Python", dir: "python", account: "faketableaccount"}
	// The Go SDK's recorder kept Authorization as the .NET one did, and
	// wrote the account as fakeaccount (host and answers).
	goCorpus = replayCorpus{sdk: "Go", dir: "go", keptAuthorization: true, account: "fakeaccount"}
	// The Java SDK's recorder kept Authorization too, and wrote every host
	// as REDACTED (javaRedacted): the account shows only in odata.type and
	// inside the $batch bodies of the TableClientTest files
	// (t892beac1a690feffprim); AzureTableImplTest's file names none.
	javaCorpus = replayCorpus{sdk: "Java", dir: "java", keptAuthorization: true, account: "t892beac1a690feffprim"}
	// The JavaScript SDK's recorder kept Authorization, and wrote the
	// account as fakeaccountname.
	jsCorpus = replayCorpus{sdk: "JS", dir: "js", keptAuthorization: true, account: "fakeaccountname"}
	corpora  = []replayCorpus{netCorpus, pythonCorpus, goCorpus, javaCorpus, jsCorpus}
)

// credential is how a recorded request was authorized where the recording
// does not show it.
type credential int

const (
	credAccountKey   credential = iota // Shared Key with the account's key
	credNone                           // no credentials
	credOtherKey                       // Shared Key with a key that is not the account's
	credToken                          // a Microsoft Entra ID bearer token the account accepts
	credRefusedToken                   // a bearer token the account refuses
)

// replayCredential names the credential of one entry whose recording
// cannot tell it, with the evidence.
type replayCredential struct {
	file  string
	entry int
	cred  credential
	why   string
}

// replayCredentials are the requests not signed with the account key in
// corpora that did not keep Authorization. The Python tests are in
// Azure/azure-sdk-for-python, sdk/tables/azure-data-tables/tests/.
var replayCredentials = []replayCredential{
	{"python/test_table_batch.pyTestTableBatchtest_new_invalid_key.json", 0, credOtherKey,
		"test_new_invalid_key signs its batch with a key that is not the account's"},
	{"python/test_table_batch_async.pyTestTableBatchAsynctest_new_invalid_key.json", 0, credOtherKey,
		"the async test_new_invalid_key signs its batch with a key that is not the account's"},
	{"python/test_table.pyTestTabletest_create_properties.json", 1, credOtherKey,
		"live refused this request's signature (403 AuthenticationFailed, \"Make sure the value of Authorization header is " +
			"formed correctly including the signature.\") although the same client's Create Table before it passed: " +
			"what the SDK signed is not recorded, and a local endpoint sees such a request only as one signed with another key"},
	{"python/test_challenge_auth.pyTestTableChallengeAuthtest_challenge_auth_supported_version.json", 2, credRefusedToken,
		"test_challenge_auth_supported_version's first token is for a tenant the account does not trust; tableemu checks " +
			"no tenants (docs/security.md), so the replay sends a token it refuses for its issuer"},
	{"python/test_challenge_auth.pyTestTableChallengeAuthtest_challenge_auth_supported_version.json", 5, credToken,
		"the token the SDK fetched for the tenant the challenge named"},
	{"python/test_challenge_auth.pyTestTableChallengeAuthtest_challenge_auth_unsupported_version.json", 2, credRefusedToken,
		"test_challenge_auth_unsupported_version's token is for a tenant the account does not trust (as above)"},
	{"python/test_challenge_auth_async.pyTestTableChallengeAuthAsynctest_challenge_auth_supported_version.json", 0, credRefusedToken,
		"the async test_challenge_auth_supported_version's first token is for a tenant the account does not trust (as above)"},
	{"python/test_challenge_auth_async.pyTestTableChallengeAuthAsynctest_challenge_auth_supported_version.json", 1, credToken,
		"the token the async SDK fetched for the tenant the challenge named"},
	{"python/test_challenge_auth_async.pyTestTableChallengeAuthAsynctest_challenge_auth_unsupported_version.json", 0, credRefusedToken,
		"the async test_challenge_auth_unsupported_version's token is for a tenant the account does not trust (as above)"},
	{"python/test_table_aad.pyTestTableAADtest_aad_create_table.json", 0, credRefusedToken,
		"test_aad_create_table signs with a token credential (get_token_credential), and live refused its token (401 InvalidAuthenticationInfo with a Bearer challenge)"},
	{"python/test_table_aad.pyTestTableAADtest_aad_create_table.json", 1, credRefusedToken,
		"test_aad_create_table's Delete Table, with the same refused token (401 again)"},
	{"net/TableClientLiveTests(StorageAAD)/TimespanPropertyInCustomEntityCanBeInsertedAndRead.json", 0, credRefusedToken,
		"the SDK's first token (May 2025) was for a tenant the account does not trust: live answered 401 InvalidAuthenticationInfo " +
			"with a Bearer challenge naming the account's tenant, and the SDK sent the same request again (entry 1) with a token for it"},
	{"net/TableClientLiveTests(StorageAAD)/TimespanPropertyInCustomEntityCanBeInsertedAndReadAsync.json", 0, credRefusedToken,
		"as in TimespanPropertyInCustomEntityCanBeInsertedAndRead"},
	{"net/TableClientLiveTests(StorageAAD)/TimespanPropertyInCustomEntityCanBeUpdatedAndRead.json", 0, credRefusedToken,
		"as in TimespanPropertyInCustomEntityCanBeInsertedAndRead"},
	{"net/TableClientLiveTests(StorageAAD)/TimespanPropertyInCustomEntityCanBeUpsertedAndRead.json", 0, credRefusedToken,
		"as in TimespanPropertyInCustomEntityCanBeInsertedAndRead"},
	{"net/TableClientLiveTests(StorageAAD)/TimespanPropertyInCustomEntityCanBeUpdatedAndReadAsync.json", 0, credRefusedToken,
		"as in TimespanPropertyInCustomEntityCanBeInsertedAndRead"},
	{"net/TableClientLiveTests(StorageAAD)/TimespanPropertyInCustomEntityCanBeUpsertedAndReadAsync.json", 0, credRefusedToken,
		"as in TimespanPropertyInCustomEntityCanBeInsertedAndRead"},
	{"python/test_retry_async.pyTestStorageRetryAsynctest_retry_on_timeout_async.json", 0, credOtherKey,
		"live refused this Get Service Properties' signature (403 AuthenticationFailed, \"Make sure the value of Authorization header is " +
			"formed correctly including the signature.\") although the same client's List Tables after it passed: what the async SDK " +
			"signed is not recorded, and a local endpoint sees such a request only as one signed with another key"},
}

// credentialOf is how entry i of file was authorized: as replayCredentials
// says, else by what the recording kept. A SAS in the query is handled on
// its own (localQuery).
func credentialOf(c replayCorpus, file string, i int, e *recEntry) credential {
	for _, rc := range replayCredentials {
		if rc.file == file && rc.entry == i {
			return rc.cred
		}
	}
	if c == pythonCorpus && aadModule(file) {
		return credToken
	}
	if _, signed := e.header(false, "Authorization"); signed || !c.keptAuthorization {
		if _, dated := e.header(false, "x-ms-date"); signed && !dated && c == netCorpus && tokenClass(file) {
			return credToken
		}
		return credAccountKey
	}
	return credNone
}

// aadModule: file is one of the Python SDK's test_table_aad tests (sync or
// async) or its test_get_user_delegation_key (sync and async; not the
// _shared_key_auth ones, which use the account key), whose every client is made
// with a token credential (get_token_credential in the tests' source): each
// request carried a bearer token, unless replayCredentials says otherwise.
func aadModule(file string) bool {
	return strings.HasPrefix(file, pythonCorpus.dir+"/test_table_aad.py") ||
		strings.HasPrefix(file, pythonCorpus.dir+"/test_table_aad_async.py") ||
		file == pythonCorpus.dir+"/test_table_user_delegation_key.pyTestTableUserDelegationKeytest_get_user_delegation_key.json" ||
		file == pythonCorpus.dir+"/test_table_user_delegation_key_async.pyTestTableUserDelegationKeyAsynctest_get_user_delegation_key_async.json"
}

// tokenClass: file is a .NET test class's run with a Microsoft Entra ID
// token credential, which the SDK's tests record in a folder of its own,
// "<class>(StorageAAD)" beside "<class>(Storage)": the Authorization it
// kept (reading "Sanitized") carried a bearer token, not Shared Key,
// unless the request also carries x-ms-date: the SDK dates only what it
// signs with Shared Key (a client made from a connection string, as in
// TableClientRemovesTableNameFromEndpointUri).
func tokenClass(file string) bool {
	dir, _, _ := strings.Cut(strings.TrimPrefix(file, netCorpus.dir+"/"), "/")
	return strings.HasSuffix(dir, "(StorageAAD)")
}

// recordingFiles lists a corpus's recordings, at any depth, by their path
// under recordingsRoot, sorted.
func recordingFiles(t testing.TB, c replayCorpus) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(filepath.Join(recordingsRoot, c.dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		rel, err := filepath.Rel(recordingsRoot, p)
		names = append(names, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
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
	b, err := os.ReadFile(filepath.Join(recordingsRoot, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	var rec recording
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for i := range rec.Entries {
		rebuildRedactedQuery(&rec.Entries[i])
	}
	return &rec
}

// liveTableHost is a live Table service endpoint in a recording. Every one
// names the file's one account: the recorders replaced its name in places
// (fakeendpoint, Sanitized, REDACTED, faketableaccount) and left it in
// others (inside a Python $batch body's base64 lines). The Java recorder
// replaced the whole host with javaRedacted (https://REDACTED/Tables…).
// A Cosmos DB for Table account's is <account>.table.cosmos.azure.com
// (the cosmos corpora, replay_cosmos_test.go); no storage recording
// names one.
var liveTableHost = regexp.MustCompile(`https://(?:([A-Za-z0-9-]+)\.table\.(?:core\.windows\.net|cosmos\.azure\.com)|` + javaRedacted + `\b)`)

// javaRedacted is what the Java recorder wrote for every host, and for
// every query string (rebuildRedactedQuery).
const javaRedacted = "REDACTED"

// isTableHost: the entry was an exchange with the Table service, not with
// the identity provider (login.microsoftonline.com) a token client asks
// first; the replay sends only the former.
func isTableHost(host string) bool {
	h := strings.ToLower(host)
	return strings.HasSuffix(h, ".table.core.windows.net") || strings.HasSuffix(h, ".table.cosmos.azure.com") || host == javaRedacted
}

// rebuildRedactedQuery puts back, in e's RequestUri, what the query the
// Java recorder replaced with ?REDACTED held, as far as the entry itself
// shows it (testdata/recordings/README.md, docs/replay.md):
//
//   - comp=acl where the request's body or the answer's is a
//     SignedIdentifiers document (Set and Get Table ACL: a path naming a
//     table, and XML);
//   - restype=service&comp=properties where it is a
//     StorageServiceProperties document (Set and Get Service Properties,
//     on the account's root: TableServiceClientTest.setGetProperties), and
//     restype=service&comp=stats where it is StorageServiceStats (Get
//     Service Stats, read from the secondary: replayer.base);
//   - $format=application/json;odata=<level> where a JSON answer's
//     Content-Type names a level other than the one the request's Accept
//     asks for (a bare application/json asking for minimalmetadata,
//     docs/protocol.md 2.1): only $format, which wins over Accept, gives
//     that answer.
//
// What the entry does not show is not sent: a $format asking what Accept
// asks, or a timeout, changes no answer; a $filter, $select or $top that
// did would make the answer differ, which the replay reports.
func rebuildRedactedQuery(e *recEntry) {
	u, err := url.Parse(e.RequestURI)
	if err != nil || u.RawQuery != javaRedacted {
		return
	}
	var q []string
	reqCT, _ := e.header(false, "Content-Type")
	respCT, _ := e.header(true, "Content-Type")
	reqBody, _ := recordedBytes(e.RequestBody, reqCT)
	respBody, _ := recordedBytes(e.ResponseBody, respCT)
	for _, b := range [][]byte{reqBody, respBody} {
		if n, err := parseXML(b); err == nil && n.name == "SignedIdentifiers" {
			q = append(q, "comp=acl")
			break
		} else if err == nil && n.name == "StorageServiceProperties" {
			q = append(q, "restype=service", "comp=properties")
			break
		} else if err == nil && n.name == "StorageServiceStats" {
			q = append(q, "restype=service", "comp=stats")
			break
		}
	}
	accept, _ := e.header(false, "Accept")
	if level := odataLevel(respCT); level != "" && level != odataLevel(accept) {
		q = append(q, "$format="+url.QueryEscape("application/json;odata="+level))
	}
	u.RawQuery = strings.Join(q, "&")
	e.RequestURI = u.String()
}

// odataLevel is the odata parameter of a JSON media type, minimalmetadata
// for a bare application/json, "" for any other type.
func odataLevel(mediaType string) string {
	mt, params, err := mime.ParseMediaType(mediaType)
	if err != nil || mt != "application/json" {
		return ""
	}
	return cmp.Or(params["odata"], "minimalmetadata")
}

// recordingAccount names the local account of a recording: the account
// the test read (Variables.TABLES_STORAGE_ACCOUNT_NAME, .NET; or
// TABLES_COSMOS_ACCOUNT_NAME, its Cosmos DB runs), else the one a body
// names (bodyAccount), else the corpus's. Every live host of the file
// names that account (liveTableHost).
func recordingAccount(c replayCorpus, rec *recording) string {
	if a := cmp.Or(rec.Variables["TABLES_STORAGE_ACCOUNT_NAME"], rec.Variables["TABLES_COSMOS_ACCOUNT_NAME"]); a != "" {
		return a
	}
	return cmp.Or(bodyAccount(rec), c.account)
}

// bodyAccount is the account the first full-metadata entity of a
// recording names in its odata.type ("<account>.<table>"), or "". The
// Python recorder's sanitizer wrote one name per run, not per corpus:
// fakecosmosaccount in most Cosmos runs, faketableaccount in the
// azure-sdk-assets commit 4f55d47's (python-cosmos
// test_table_entity_cosmos_async…test_get_entity_full_metadata).
func bodyAccount(rec *recording) string {
	for _, e := range rec.Entries {
		var body struct {
			Type string `json:"odata.type"`
		}
		if len(e.ResponseBody) == 0 || e.ResponseBody[0] != '{' || json.Unmarshal(e.ResponseBody, &body) != nil {
			continue
		}
		if account, _, ok := strings.Cut(body.Type, "."); ok && account != "" {
			return account
		}
	}
	return ""
}

// recordedBytes is a recorded body as it was sent: none for null or [];
// the lines of a list joined, each "b64:" line base64-decoded (the Python
// recorder's multipart and XML bodies); a string's text, base64-decoded
// for multipart (the .NET recorder's); or the JSON value itself.
func recordedBytes(raw json.RawMessage, contentType string) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case len(raw) == 0, string(raw) == "null", string(raw) == "[]":
		return nil, nil
	case raw[0] == '[' && !strings.HasSuffix(mt, "json"):
		var lines []string
		if err := json.Unmarshal(raw, &lines); err != nil {
			return nil, fmt.Errorf("a list body that is not lines of text: %v", err)
		}
		var b []byte
		for _, l := range lines {
			if enc, ok := strings.CutPrefix(l, "b64:"); ok {
				dec, err := base64.StdEncoding.DecodeString(enc)
				if err != nil {
					return nil, fmt.Errorf("b64 line: %v", err)
				}
				b = append(b, dec...)
				continue
			}
			b = append(b, l...)
		}
		return b, nil
	case raw[0] != '"':
		return raw, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	if strings.HasPrefix(mt, "multipart/") {
		return base64.StdEncoding.DecodeString(s)
	}
	return []byte(s), nil
}

// bodyBoundary is the boundary a multipart body really uses: the one its
// Content-Type names, or, where a recorder sanitized that
// (batch_00000000-…), the one on the body's first line.
func bodyBoundary(contentType string, body []byte) string {
	_, params, _ := mime.ParseMediaType(contentType)
	b := params["boundary"]
	if b != "" && bytes.Contains(body, []byte("--"+b)) {
		return b
	}
	first, _, _ := bytes.Cut(body, []byte("\n"))
	if m := regexp.MustCompile(`^--([^\s]+)\s*$`).FindSubmatch(first); m != nil {
		return string(m[1])
	}
	return b
}

// withBoundary is contentType naming boundary.
func withBoundary(contentType, boundary string) string {
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil || params["boundary"] == boundary {
		return contentType
	}
	return regexp.MustCompile(`boundary=[^;\s]*`).ReplaceAllLiteralString(contentType, "boundary="+boundary)
}

// recordedVersion is the x-ms-version an entry names, for the counts.
func recordedVersion(e *recEntry) string {
	if v, ok := e.header(false, "x-ms-version"); ok {
		return v
	}
	return "none"
}

// hostOf is a recorded URL's host, or "".
func hostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return u.Host
}
