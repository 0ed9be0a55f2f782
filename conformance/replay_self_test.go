package conformance

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// The replay's own tests: it fails, with a message naming the file, the
// entry and the difference, when a recording is altered; and its SAS
// signer agrees with an SDK's.

// replayAltered replays an in-memory copy of a recording after alter has
// changed it, and returns the differences found.
func replayAltered(t *testing.T, file string, alter func(rec *recording)) []replayDiff {
	t.Helper()
	rec := loadRecording(t, file)
	alter(rec)
	return replayRecording(t, corpusOf(file), file, rec, inMemory(t))
}

// corpusOf is the corpus a recording belongs to.
func corpusOf(file string) replayCorpus {
	for _, c := range corpora {
		if strings.HasPrefix(file, c.dir+"/") {
			return c
		}
	}
	panic("no corpus holds " + file)
}

// replaceIn replaces old with new in a recorded JSON value, written
// compactly and without escapes other than JSON's own (the recordings
// escape ', ", < and > as \u0027 and so on); it must contain old.
func replaceIn(t *testing.T, raw *json.RawMessage, old, new string) {
	t.Helper()
	v, err := decodeJSON(*raw)
	must(t, err)
	var b bytes.Buffer
	writeCompact(t, &b, v)
	if !bytes.Contains(b.Bytes(), []byte(old)) {
		t.Fatalf("the recording has no %s in %s", old, b.Bytes())
	}
	*raw = bytes.Replace(b.Bytes(), []byte(old), []byte(new), 1)
}

// writeCompact writes a value of decodeJSON as compact JSON, members in
// their order, strings with only the escapes JSON needs.
func writeCompact(t *testing.T, b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case *jsonObject:
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCompact(t, b, k)
			b.WriteByte(':')
			writeCompact(t, b, x.m[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCompact(t, b, e)
		}
		b.WriteByte(']')
	default:
		enc := json.NewEncoder(b)
		enc.SetEscapeHTML(false)
		must(t, enc.Encode(x))
		b.Truncate(b.Len() - 1) // Encode's newline
	}
}

func TestReplayFailsOnAlteredRecordings(t *testing.T) {
	const (
		etagFile  = "net/TableClientLiveTests(Storage)/EntityDeleteRespectsEtag.json"
		rangeFile = "net/TableClientLiveTests(Storage)/ValidateSasCredentialsWithRowKeyAndPartitionKeyRanges.json"
		pageFile  = "net/TableServiceClientLiveTests(Storage)/GetTablesReturnsTablesWithAndWithoutPagination(5).json"
		propsFile = "net/TableServiceClientLiveTests(Storage)/GetPropertiesReturnsProperties.json"
		batchFile = "net/TableClientLiveTests(Storage)/BatchError.json"
	)
	cases := []alteration{
		{"status", etagFile, func(t *testing.T, rec *recording) { rec.Entries[8].StatusCode = 409 },
			[]string{etagFile + " entry 8 (DELETE ", "status: recorded 409 UpdateConditionNotSatisfied, tableemu 412 UpdateConditionNotSatisfied"}},
		{"error code", etagFile, func(t *testing.T, rec *recording) {
			replaceIn(t, &rec.Entries[4].ResponseBody, `"ResourceNotFound"`, `"EntityNotFound"`)
		}, []string{etagFile + " entry 4 (DELETE ", `body $.odata.error.code: recorded "EntityNotFound", tableemu "ResourceNotFound"`}},
		{"error message", etagFile, func(t *testing.T, rec *recording) {
			replaceIn(t, &rec.Entries[4].ResponseBody, "does not exist.", "is gone.")
		}, []string{etagFile + " entry 4 ", `recorded "The specified resource is gone.", tableemu "The specified resource does not exist."`}},
		{"error code header", etagFile, func(t *testing.T, rec *recording) {
			rec.Entries[4].ResponseHeaders["x-ms-error-code"] = headerValue{"TableNotFound"}
		}, []string{etagFile + " entry 4 ", `header x-ms-error-code: recorded "TableNotFound", tableemu "ResourceNotFound"`}},
		{"body value", rangeFile, func(t *testing.T, rec *recording) {
			replaceIn(t, &rec.Entries[3].ResponseBody, "entity number 01", "entity number 99")
		}, []string{rangeFile + " entry 3 (GET ", `body $.value[0].SomeStringProperty: recorded "This is table entity number 99", tableemu "This is table entity number 01"`}},
		{"Double written as an integer", rangeFile, func(t *testing.T, rec *recording) {
			replaceIn(t, &rec.Entries[5].ResponseBody, `"SomeDoubleProperty0":2.0`, `"SomeDoubleProperty0":2`)
		}, []string{rangeFile + " entry 5 ", "body $.SomeDoubleProperty0: recorded 2, tableemu 2.0"}},
		{"member order", rangeFile, func(t *testing.T, rec *recording) {
			replaceIn(t, &rec.Entries[5].ResponseBody, `,"SomeIntProperty":2}`, `}`)
			replaceIn(t, &rec.Entries[5].ResponseBody, `"PartitionKey":"somPartition",`, `"PartitionKey":"somPartition","SomeIntProperty":2,`)
		}, []string{rangeFile + " entry 5 ", "body $: member order: recorded odata.metadata,odata.etag,PartitionKey,SomeIntProperty,RowKey"}},
		{"missing member", rangeFile, func(t *testing.T, rec *recording) {
			replaceIn(t, &rec.Entries[5].ResponseBody, `"SomeIntProperty":2`, `"SomeIntProperty":2,"Extra":true`)
		}, []string{rangeFile + " entry 5 ", "body $.Extra: recorded true, tableemu has no such member"}},
		{"header tableemu lacks", rangeFile, func(t *testing.T, rec *recording) {
			rec.Entries[5].ResponseHeaders["Preference-Applied"] = headerValue{"return-content"}
		}, []string{rangeFile + " entry 5 ", `header Preference-Applied: recorded "return-content", tableemu none`}},
		{"header live lacked", rangeFile, func(t *testing.T, rec *recording) {
			delete(rec.Entries[1].ResponseHeaders, "ETag")
		}, []string{rangeFile + " entry 1 (POST ", "header ETag: recorded none, tableemu \"W/"}},
		{"odata level", rangeFile, func(t *testing.T, rec *recording) {
			rec.Entries[4].ResponseHeaders["Content-Type"] = headerValue{"application/json; odata=fullmetadata; streaming=true; charset=utf-8"}
		}, []string{rangeFile + " entry 4 ", `header Content-Type: recorded "application/json; odata=fullmetadata; streaming=true; charset=utf-8"`}},
		{"ETag of another version", etagFile, func(t *testing.T, rec *recording) {
			replaceIn(t, &rec.Entries[7].ResponseBody, "41.513137Z'", "41.1428776Z'")
		}, []string{etagFile + " entry 7 ", "body $.value[0].odata.etag: recorded 2021-04-30T18:07:41.1428776Z was "}},
		{"continuation", pageFile, func(t *testing.T, rec *recording) {
			delete(rec.Entries[12].ResponseHeaders, "x-ms-continuation-NextTableName")
		}, []string{pageFile + " entry 12 (GET ", "header x-ms-continuation-NextTableName: recorded none, tableemu"}},
		{"XML value", propsFile, func(t *testing.T, rec *recording) {
			replaceIn(t, &rec.Entries[3].ResponseBody, "<Read>true</Read>", "<Read>false</Read>")
		}, []string{propsFile + " entry 3 (GET ", `body /StorageServiceProperties/Logging/Read: recorded "false", tableemu "true"`}},
		{"batch part", batchFile, func(t *testing.T, rec *recording) {
			var s string
			must(t, json.Unmarshal(rec.Entries[2].ResponseBody, &s))
			b, err := base64.StdEncoding.DecodeString(s)
			must(t, err)
			b = bytes.Replace(b, []byte("HTTP/1.1 409 Conflict"), []byte("HTTP/1.1 404 Not Found"), 1)
			rec.Entries[2].ResponseBody = marshal(t, base64.StdEncoding.EncodeToString(b))
		}, []string{batchFile + " entry 2 (POST /$batch)", "part 0: part 0: status: recorded 404 EntityAlreadyExists, tableemu 409 EntityAlreadyExists"}},
	}
	cases = append(cases, pythonAlterations...)
	cases = append(cases, javaJSAlterations...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			diffs := replayAltered(t, tc.file, func(rec *recording) { tc.alter(t, rec) })
			for _, d := range diffs {
				ok := true
				for _, w := range tc.want {
					ok = ok && strings.Contains(d.text, w)
				}
				if ok {
					return
				}
			}
			t.Fatalf("no difference says %q; the replay reported:\n%s", tc.want, joinDiffs(diffs))
		})
	}
	// The files altered above match when they are not altered (but for
	// their known differences), so each failure comes from its alteration.
	for _, f := range []string{etagFile, rangeFile, pageFile, propsFile, batchFile, pySASFile, pyACLFile, pyBatchFile, pyAddFile, javaGetFile, jsACLFile, pyChallenge} {
		if diffs, _ := classify(f, replayAltered(t, f, func(*recording) {})); len(diffs) != 0 {
			t.Errorf("%s differs unaltered:\n%s", f, joinDiffs(diffs))
		}
	}
}

// alteration is a change to a recording and what the replay must then say.
type alteration struct {
	name  string
	file  string
	alter func(t *testing.T, rec *recording)
	want  []string // all in one difference's message
}

// Python recordings the alterations change: their bodies are lists of
// lines (base64 inside a batch), their SAS windows moved to now.
const (
	pySASFile   = pyEntity + "test_sas_signed_identifier.json"
	pyACLFile   = pyTable + "test_set_table_acl_with_signed_identifiers.json"
	pyBatchFile = pyBatch + "test_batch_single_update.json"
	pyAddFile   = pyEntity + "test_sas_add.json"
	pyChallenge = pyAuth + "test_challenge_auth_supported_version.json"
)

var pythonAlterations = []alteration{
	{"stored policy expired at the recording", pySASFile, func(t *testing.T, rec *recording) {
		replaceInLines(t, &rec.Entries[2].RequestBody, "<Expiry>2025-10-12T00:00:00Z", "<Expiry>2024-05-01T00:00:00Z")
	}, []string{pySASFile + " entry 3 (GET ", "status: recorded 200, tableemu 403 AuthenticationFailed"}},
	{"stored policy's window as read back", pyACLFile, func(t *testing.T, rec *recording) {
		replaceIn(t, &rec.Entries[2].ResponseBody, "<Start>2021-06-08T02:05:09.0000000Z", "<Start>2021-06-08T02:05:10.0000000Z")
	}, []string{pyACLFile + " entry 2 (GET ", `body /SignedIdentifiers/SignedIdentifier/AccessPolicy/Start: recorded "2021-06-08T02:05:10.0000000Z" (`}},
	{"part of a batch answer in base64 lines", pyBatchFile, func(t *testing.T, rec *recording) {
		replaceInLines(t, &rec.Entries[2].ResponseBody, "HTTP/1.1 204 No Content", "HTTP/1.1 404 Not Found")
	}, []string{pyBatchFile + " entry 2 (POST /$batch)", "part 0: part 0: status: recorded 404, tableemu 204"}},
	{"challenge's resource", pyChallenge, func(t *testing.T, rec *recording) {
		h := rec.Entries[2].ResponseHeaders
		h["WWW-Authenticate"] = headerValue{strings.Replace(h["WWW-Authenticate"][0], "https://storage.azure.com", "https://example.com", 1)}
	}, []string{pyChallenge + " entry 2 (GET ", `header WWW-Authenticate: recorded "Bearer authorization_uri=`, "resource_id=https://example.com"}},
	{"token refused at a version before the challenge", pyChallenge, func(t *testing.T, rec *recording) {
		rec.Entries[2].RequestHeaders["x-ms-version"] = headerValue{"2019-07-07"}
	}, []string{pyChallenge + " entry 2 (GET ", "status: recorded 401, tableemu 403"}},
	{"SAS permissions", pyAddFile, func(t *testing.T, rec *recording) {
		rec.Entries[1].RequestURI = strings.Replace(rec.Entries[1].RequestURI, "&sp=a&", "&sp=r&", 1)
	}, []string{pyAddFile + " entry 1 (POST ", "status: recorded 201, tableemu 403 AuthorizationPermissionMismatch"}},
}

// Java and JavaScript recordings the alterations change.
const (
	javaGetFile = javaClient + "deleteEntityWithResponseMatchETag.json"
	jsACLFile   = "js/node/access_policy_operations/recording_should_send_a_null_ap.json"
)

var javaJSAlterations = []alteration{
	// A redacted query put back without what the answer shows (the
	// $format of a fullmetadata answer): the answer differs, as it does
	// wherever the recorder hid a parameter that mattered.
	{"redacted $format left out", javaGetFile, func(t *testing.T, rec *recording) {
		u, err := url.Parse(rec.Entries[2].RequestURI)
		must(t, err)
		u.RawQuery = ""
		rec.Entries[2].RequestURI = u.String()
	}, []string{javaGetFile + " entry 2 (GET /tablename12467a62(PartitionKey='partitionkey98095c',RowKey='rowkey874746d5c')): ",
		`body $.odata.type: recorded "t892beac1a690feffprim.tablename12467a62", tableemu has no such member`}},
	// A table is created before the file only where the file shows it
	// existed: not when its first request was answered 404.
	{"table that existed before the recording", jsACLFile, func(t *testing.T, rec *recording) {
		rec.Entries[0].StatusCode = 404
	}, []string{jsACLFile + " entry 1 (GET /AccessPolicy?comp=acl)", "status: recorded 200, tableemu 404"}},
}

// TestReplayRedactedQueries: the queries the Java recorder replaced with
// ?REDACTED read, once loaded, as the entry shows them (comp=acl from a
// SignedIdentifiers body, restype=service&comp=properties or comp=stats
// from a StorageServiceProperties or StorageServiceStats one, $format
// from an answer at another odata level than Accept's), and no ?REDACTED
// is left.
func TestReplayRedactedQueries(t *testing.T) {
	for file, want := range map[string]map[int]string{
		javaClient + "setAndListAccessPolicies.json":          {1: "comp=acl", 2: "comp=acl"},
		javaClient + "deleteEntityWithResponseMatchETag.json": {2: "$format=application%2Fjson%3Bodata%3Dfullmetadata"},
		// The StorageServiceProperties bodies of Set and Get Service
		// Properties on the account's root.
		"java/TableServiceClientTest.setGetProperties.json": {0: "restype=service&comp=properties", 1: "restype=service&comp=properties"},
		"java/TableServiceClientTest.getStatistics.json":    {0: "restype=service&comp=stats"},
		// Accept: application/json, answered at minimalmetadata: the
		// query shows nothing (the test sent timeout=5000 and, for Query
		// Tables, $format=application/json;odata=minimalmetadata).
		javaImpl + "deleteNonExistentEntityImpl.json": {1: "", 2: ""},
	} {
		raw, err := os.ReadFile(filepath.Join(recordingsRoot, filepath.FromSlash(file)))
		must(t, err)
		if n := strings.Count(string(raw), "?REDACTED"); n != len(want) {
			t.Errorf("%s holds %d redacted queries, the test expects %d", file, n, len(want))
		}
		rec := loadRecording(t, file)
		for i, e := range rec.Entries {
			u, err := url.Parse(e.RequestURI)
			must(t, err)
			if w, ok := want[i]; ok && u.RawQuery != w || u.RawQuery == javaRedacted {
				t.Errorf("%s entry %d: query %q, want %q", file, i, u.RawQuery, w)
			}
		}
	}
}

// replaceInLines replaces old with new in a body recorded as a list of
// lines, inside the base64 of a "b64:" line too; a line must contain old.
func replaceInLines(t *testing.T, raw *json.RawMessage, old, new string) {
	t.Helper()
	var lines []string
	must(t, json.Unmarshal(*raw, &lines))
	for i, l := range lines {
		if enc, ok := strings.CutPrefix(l, "b64:"); ok {
			b, err := base64.StdEncoding.DecodeString(enc)
			must(t, err)
			if strings.Contains(string(b), old) {
				lines[i] = "b64:" + base64.StdEncoding.EncodeToString([]byte(strings.Replace(string(b), old, new, 1)))
				*raw = marshal(t, lines)
				return
			}
		} else if strings.Contains(l, old) {
			lines[i] = strings.Replace(l, old, new, 1)
			*raw = marshal(t, lines)
			return
		}
	}
	t.Fatalf("no line of the recording has %s", old)
}

// TestReplaySASSigner: the replay's SAS signer computes the signature the
// Go SDK puts in the SAS it generates, for a service SAS and an account SAS.
func TestReplaySASSigner(t *testing.T) {
	const account, key = "signer", "c2lnbmVyIGtleSBmb3IgdGhlIHJlcGxheSB0ZXN0"
	cred, err := aztables.NewSharedKeyCredential(account, key)
	must(t, err)
	svc, err := aztables.NewServiceClientWithSharedKey("https://"+account+".table.core.windows.net/", cred, nil)
	must(t, err)
	start, expiry := time.Now().Add(-time.Hour).UTC(), time.Now().Add(time.Hour).UTC()
	tableSAS, err := svc.NewClient("MixedCase").GetTableSASURL(aztables.SASPermissions{Read: true, Add: true}, start, expiry)
	must(t, err)
	accountSAS, err := svc.GetAccountSASURL(aztables.AccountSASResourceTypes{Object: true, Container: true},
		aztables.AccountSASPermissions{Read: true, List: true}, start, expiry)
	must(t, err)
	for _, s := range []string{tableSAS, accountSAS} {
		u, err := url.Parse(s)
		must(t, err)
		q := u.Query()
		got, err := sasSignature(account, key, q)
		must(t, err)
		if want := q.Get("sig"); got != want {
			t.Errorf("%s: the replay signs %s, the SDK %s", s, got, want)
		}
	}
}

// TestReplaySASStringToSign: the string-to-sign of each SAS form, by
// signed version (docs/protocol.md 9.6, 9.7).
func TestReplaySASStringToSign(t *testing.T) {
	cases := []struct {
		query, want string
	}{
		{"sv=2019-02-02&ss=t&srt=sco&sp=rl&se=2040-01-01T00:00:00Z&spr=https", "acct\nrl\nt\nsco\n\n2040-01-01T00:00:00Z\n\nhttps\n2019-02-02\n"},
		{"sv=2020-12-06&ss=t&srt=o&sp=r&se=E", "acct\nr\nt\no\n\nE\n\n\n2020-12-06\n\n"},
		{"sv=2019-07-07&tn=MyTable&sp=raud&se=E&spk=a&erk=z", "raud\n\nE\n/table/acct/mytable\n\n\n\n2019-07-07\na\n\n\nz"},
		{"sv=2015-02-21&tn=T&sp=r&se=E&si=p", "r\n\nE\n/table/acct/t\np\n2015-02-21\n\n\n\n"},
		{"sv=2013-08-15&tn=T&sp=r&se=E", "r\n\nE\n/acct/t\n\n2013-08-15\n\n\n\n"},
	}
	for _, tc := range cases {
		q, err := url.ParseQuery(tc.query)
		must(t, err)
		got, err := sasStringToSign("acct", q)
		must(t, err)
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.query, got, tc.want)
		}
	}
	if _, err := sasStringToSign("acct", url.Values{"sv": {"2019-02-02"}, "sp": {"r"}}); err == nil {
		t.Error("a SAS with neither ss nor tn was signed")
	}
}

// TestReplayMessageHints: tableemu's help on lines of their own after the
// service's text passes (allow "hint"); on the service's line it does not.
func TestReplayMessageHints(t *testing.T) {
	const rec = "The specified resource does not exist.\nRequestId:live\nTime:2024-05-04T00:41:59.8751247Z"
	for act, ok := range map[string]bool{
		"The specified resource does not exist.\nRequestId:id\nTime:2026-11-28T10:00:00.0000000Z":                           true,
		"The specified resource does not exist.\ntableemu: check the key.\nRequestId:id\nTime:2026-11-28T10:00:00.0000000Z": true,
		"The specified resource does not exist. tableemu: check the key.\nRequestId:id\nTime:2026-11-28T10:00:00.0000000Z":  false,
		"The specified resource does not exist.\nRequestId:other\nTime:2026-11-28T10:00:00.0000000Z":                        false,
	} {
		r := &replayer{}
		r.matchMessage("message", rec, act, "id")
		if got := len(r.diffs) == 0; got != ok {
			t.Errorf("%q: matched %v, want %v: %s", act, got, ok, joinDiffs(r.diffs))
		}
	}
}

// TestReplayCosmosMessages: a Cosmos DB message matches with the text
// exact, tableemu's hints after it, an ActivityId line exactly where
// recorded and naming the RequestID line's id (the build after it each
// server's own), and a RequestID that is a UUID; never the storage form.
func TestReplayCosmosMessages(t *testing.T) {
	const (
		id  = "0eb895f8-7e81-4b78-99bd-165ece1c1084"
		own = "9a0c2b6e-2f0c-4f43-9d55-0b2c51bb8a31"
	)
	for _, tc := range []struct {
		rec, act string
		ok       bool
	}{
		{"The specified resource does not exist.\nRequestID:" + id + "\n", "The specified resource does not exist.\nRequestID:" + own + "\n", true},
		{"The specified resource does not exist.\nRequestID:" + id + "\n", "The specified resource does not exist.\ntableemu: check the key.\nRequestID:" + own + "\n", true},
		{"The specified resource does not exist.\nRequestID:" + id + "\n", "The specified resource does not exist.\nRequestID:live\n", false},
		{"The specified resource does not exist.\nRequestID:" + id + "\n", "The specified resource does not exist.\nRequestId:" + own + "\nTime:2026-11-28T10:00:00.0000000Z", false},
		{"One of the input values is invalid.\r\nActivityId: " + id + ", documentdb-dotnet-sdk/2.14.0 Host/64-bit MicrosoftWindowsNT/10.0.20348.0\nRequestID:" + id + "\n",
			"One of the input values is invalid.\r\nActivityId: " + own + ", tableemu\nRequestID:" + own + "\n", true},
		{"One of the input values is invalid.\r\nActivityId: " + id + ", documentdb-dotnet-sdk/2.14.0\nRequestID:" + id + "\n",
			"One of the input values is invalid.\r\nActivityId: " + id + ", tableemu\nRequestID:" + own + "\n", false},
		{"One of the input values is invalid.\r\nActivityId: " + id + ", documentdb-dotnet-sdk/2.14.0\nRequestID:" + id + "\n",
			"One of the input values is invalid.\nRequestID:" + own + "\n", false},
		{"The specified table: [] already exists.\nRequestID:" + id + "\n", "The table specified already exists.\nRequestID:" + own + "\n", false},
	} {
		r := &replayer{corpus: replayCorpus{cosmos: true}}
		r.matchMessage("message", tc.rec, tc.act, "")
		if got := len(r.diffs) == 0; got != tc.ok {
			t.Errorf("%q against %q: matched %v, want %v: %s", tc.act, tc.rec, got, tc.ok, joinDiffs(r.diffs))
		}
	}
}

// TestReplayRecordedBodies: a body recorded as lines is their bytes, a
// "b64:" line decoded; a multipart body is split at the boundary it uses
// where the recorder sanitized its header's; a window's time moves by
// whole seconds and is written as it was.
func TestReplayRecordedBodies(t *testing.T) {
	lines := marshal(t, []string{"--b1\r\n", "b64:" + base64.StdEncoding.EncodeToString([]byte("GET /x HTTP/1.1\r\n")), "--b1--\r\n"})
	b, err := recordedBytes(lines, "multipart/mixed; boundary=batch_00000000-0000-0000-0000-000000000000")
	must(t, err)
	if string(b) != "--b1\r\nGET /x HTTP/1.1\r\n--b1--\r\n" {
		t.Errorf("lines: %q", b)
	}
	if got := bodyBoundary("multipart/mixed; boundary=batch_00000000-0000-0000-0000-000000000000", b); got != "b1" {
		t.Errorf("boundary %q, want b1", got)
	}
	if got := withBoundary("multipart/mixed; boundary=batch_0; x=y", "b1"); got != "multipart/mixed; boundary=b1; x=y" {
		t.Errorf("withBoundary: %q", got)
	}
	for in, want := range map[string]string{
		"2021-06-08T02:05:09Z":         "2021-06-09T02:05:10Z",
		"2021-06-08T02:05:09.0000000Z": "2021-06-09T02:05:10.0000000Z",
		"2021-06-08T02:05:09.5Z":       "2021-06-09T02:05:10.5Z",
	} {
		if got, ok := shiftTime(in, 24*time.Hour+time.Second); !ok || got != want {
			t.Errorf("shiftTime(%s) = %s, want %s", in, got, want)
		}
	}
	if _, ok := shiftTime("start", time.Hour); ok {
		t.Error("the word start shifted as a time")
	}
}
