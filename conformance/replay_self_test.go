package conformance

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
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
	return replayRecording(t, file, rec)
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
		etagFile  = "TableClientLiveTests(Storage)/EntityDeleteRespectsEtag.json"
		rangeFile = "TableClientLiveTests(Storage)/ValidateSasCredentialsWithRowKeyAndPartitionKeyRanges.json"
		pageFile  = "TableServiceClientLiveTests(Storage)/GetTablesReturnsTablesWithAndWithoutPagination(5).json"
		propsFile = "TableServiceClientLiveTests(Storage)/GetPropertiesReturnsProperties.json"
		batchFile = "TableClientLiveTests(Storage)/BatchError.json"
	)
	cases := []struct {
		name  string
		file  string
		alter func(t *testing.T, rec *recording)
		want  []string // all in one difference's message
	}{
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
	// The files altered above match when they are not altered, so each
	// failure comes from its alteration.
	for _, f := range []string{etagFile, rangeFile, pageFile, propsFile, batchFile} {
		if diffs := replayRecording(t, f, loadRecording(t, f)); len(diffs) != 0 {
			t.Errorf("%s differs unaltered:\n%s", f, joinDiffs(diffs))
		}
	}
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
