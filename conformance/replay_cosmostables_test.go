package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// The two allowances of the Cosmos replay (TestReplayCosmos) beyond
// replayAllowed: the order of the tables Query Tables lists, and the line
// ends of a 2024 batch answer.

// cosmosTablesOrder and cosmosBatchLineEnds name the allowances;
// cosmosAllowed holds each with its reason and evidence. Like the
// mappings of replayAllowed they cover what tableemu cannot reproduce, not
// a behaviour it chose: they apply to the Cosmos corpora only.
const (
	cosmosTablesOrder   = "cosmos-tables-order"
	cosmosBatchLineEnds = "cosmos-batch-line-ends"
)

var cosmosAllowed = map[string]string{
	cosmosBatchLineEnds: "Cosmos DB for Table ended the lines after a change set's boundary and a part's MIME headers " +
		"with a bare LF in the batch answers recorded in 2024 (test_encoder_cosmos…test_encoder_batch, azure-sdk-assets " +
		"7807206, November 2024) and with CRLF in those recorded in 2026 (test_table_batch_cosmos…test_batch_insert_merge " +
		"and the rest of 97970da, March 2026): the service changed. tableemu answers CRLF, as the newer recordings and " +
		"Table storage do (docs/cosmos.md, \"line ends of the answer\"). So an answer recorded with bare LF is read " +
		"with CRLF put back and compared part by part, exactly.",
	cosmosTablesOrder: "Cosmos DB for Table lists tables in an order no rule reproduces: neither by name nor " +
		"by creation (four tables created as 0, 1, 2, 3 listed as 2, 0, 3, 1 in test_query_tables_with_marker and " +
		"test_query_tables_with_num_results; of two tables, the one created first listed first in " +
		"test_query_entities, …_with_top and …_with_top_and_next, last in test_query_zero_entities, " +
		"…_full_metadata, …_no_metadata and …_with_select); its NextTableName is a resource id (8 bytes, the database's 4 the " +
		"same in both files), so the order is likely that of ids the service assigns. tableemu lists by name " +
		"(docs/cosmos.md, \"Query Tables order\"). So for a Query Tables answer of a Cosmos recording the " +
		"TableName values are compared as a multiset across one listing — a first page and the pages reached " +
		"through its NextTableName; an unpaged listing on its own — while the number of tables on each page, " +
		"every other member, the headers and the continuation's form stay compared exactly. A listing whose " +
		"continuation was never followed (a first page of 3 of 4 tables in test_query_tables_with_num_results) " +
		"holds the service's choice of tables as well as its order: its names are checked to be distinct tables " +
		"the recording created and had not deleted when the listing began, as many as tableemu listed. A listing whose " +
		"names differ so is a difference of kind \"body $.value[].TableName (the listing's names)\" " +
		"at its last page.",
}

// recordedLF notes a batch answer recorded with bare-LF line ends, read
// with CRLF put back (readRecordedParts): the allowance
// cosmosBatchLineEnds in a Cosmos corpus, a difference in any other.
func (r *replayer) recordedLF(where string) {
	if !r.corpus.cosmos {
		r.failf("%sbody line ends: recorded LF in the multipart framing, tableemu CRLF", where)
		return
	}
	r.notes = append(r.notes, fmt.Sprintf("%s: allowance %s: %s recorded LF in the multipart framing, tableemu CRLF",
		r.file, cosmosBatchLineEnds, r.at))
}

// tableListing is one listing of tables being replayed: the names live
// and tableemu gave on its pages, in order.
type tableListing struct {
	entries  []int    // the entries of its pages
	at       string   // the last page, for messages (replayer.at)
	next     string   // the recorded NextTableName of the last page; "" at the end
	rec, act []string // TableName values, recorded and tableemu's
	tables   []string // the tables the recording had created when it began (replayer.tables)
}

// trackTables follows the tables a Cosmos recording creates and deletes
// (201 to POST /Tables, 204 to DELETE /Tables('name')), as recorded, for
// a listing whose continuation is never followed (endListing).
func (r *replayer) trackTables(e *recEntry) {
	if !r.corpus.cosmos {
		return
	}
	u, err := url.Parse(e.RequestURI)
	if err != nil {
		return
	}
	switch p := u.Path; {
	case e.RequestMethod == http.MethodPost && e.StatusCode == http.StatusCreated && strings.HasSuffix(p, "/Tables"):
		var b struct{ TableName string }
		if json.Unmarshal(e.ResponseBody, &b) == nil && b.TableName != "" && !slices.Contains(r.tables, b.TableName) {
			r.tables = append(r.tables, b.TableName)
		}
	case e.RequestMethod == http.MethodDelete && e.StatusCode == http.StatusNoContent && strings.Contains(p, "/Tables('"):
		name := p[strings.Index(p, "/Tables('")+len("/Tables('"):]
		name = strings.TrimSuffix(name, "')")
		r.tables = slices.DeleteFunc(r.tables, func(t string) bool { return t == name })
	}
}

// queryTablesPage reports whether entry e is a page of Query Tables
// answered 200 both live and by tableemu: GET <account>/Tables, with or
// without "()".
func queryTablesPage(e *recEntry, status int) bool {
	if e.RequestMethod != http.MethodGet || e.StatusCode != http.StatusOK || status != http.StatusOK {
		return false
	}
	u, err := url.Parse(e.RequestURI)
	if err != nil {
		return false
	}
	p := strings.TrimSuffix(u.Path, "()")
	return p == "/Tables" || strings.HasSuffix(p, "/Tables") && strings.Count(p, "/") == 2
}

// beginTablesPage starts comparing entry e as a page of a listing under
// cosmosTablesOrder, in a Cosmos corpus: it continues the open listing
// when its request carries the NextTableName that listing's last page
// was answered, and else ends that listing and starts one. It returns
// whether e is such a page.
func (r *replayer) beginTablesPage(e *recEntry, status int) bool {
	if !r.corpus.cosmos || !queryTablesPage(e, status) {
		return false
	}
	u, _ := url.Parse(e.RequestURI)
	token := u.Query().Get("NextTableName")
	if l := r.listing; l == nil || token == "" || token != l.next {
		r.endListing()
		r.listing = &tableListing{tables: slices.Clone(r.tables)}
	}
	r.listing.entries = append(r.listing.entries, r.entryIndex)
	r.listing.at = r.at
	r.listing.next, _ = e.header(true, "x-ms-continuation-NextTableName")
	return true
}

// endTablesPage ends the listing whose page was just compared if live
// gave that page no continuation.
func (r *replayer) endTablesPage() {
	if r.listing != nil && r.listing.next == "" {
		r.endListing()
	}
}

// tableName takes the TableName member of an element of a Query Tables
// answer's value, compared when its listing ends (endListing).
func (r *replayer) tableName(rec, act string) {
	r.listing.rec = append(r.listing.rec, rec)
	r.listing.act = append(r.listing.act, act)
}

// isTablesElement reports whether path, in the body compared at where,
// is an element of a Query Tables answer's value: "$.value[3]" of the
// answer itself, not of a part inside it.
func isTablesElement(where, path string) bool {
	i, ok := strings.CutPrefix(path, "$.value[")
	return ok && where == "body " && !strings.ContainsAny(i, ".[")
}

// endListing compares the names of the open listing as multisets, and
// notes the allowance where only their order differs.
func (r *replayer) endListing() {
	l := r.listing
	r.listing = nil
	if l == nil || slices.Equal(l.rec, l.act) {
		return
	}
	rec, act := slices.Clone(l.rec), slices.Clone(l.act)
	slices.Sort(rec)
	slices.Sort(act)
	entries := strings.ReplaceAll(strings.Trim(fmt.Sprint(l.entries), "[]"), " ", ", ")
	if l.next != "" && len(rec) == len(act) && len(slices.Compact(slices.Clone(rec))) == len(rec) &&
		!slices.ContainsFunc(rec, func(name string) bool { return !slices.Contains(l.tables, name) }) {
		r.notes = append(r.notes, fmt.Sprintf("%s: allowance %s: entries %s (a listing not followed to its end) listed %s live, %s in tableemu, of the tables %s",
			r.file, cosmosTablesOrder, entries, jsonText(l.rec), jsonText(l.act), jsonText(l.tables)))
		return
	}
	if !slices.Equal(rec, act) {
		r.diffs = append(r.diffs, replayDiff{l.entries[len(l.entries)-1], fmt.Sprintf(
			"%s: body $.value[].TableName (the listing's names): entries %s recorded %s, tableemu %s, in any order (%s)",
			l.at, entries, jsonText(l.rec), jsonText(l.act), cosmosTablesOrder)})
		return
	}
	r.notes = append(r.notes, fmt.Sprintf("%s: allowance %s: entries %s listed %s live, %s in tableemu",
		r.file, cosmosTablesOrder, entries, jsonText(l.rec), jsonText(l.act)))
}

// TestReplayCosmosTablesOrder: cosmosTablesOrder lets a listing's order
// pass and nothing more. test_query_tables_with_marker replays exactly,
// its two listings (two pages, then one unpaged) noted as reordered; with
// a name of its second page changed, or a table left off the unpaged
// listing, the listing differs.
func TestReplayCosmosTablesOrder(t *testing.T) {
	skipUnderRace(t, "a replay sends its recorded requests one after another")
	const file = "python-cosmos/test_table_cosmos.pyTestTableCosmostest_query_tables_with_marker.json"
	diffs, notes := replayRecordingNotes(t, pythonCosmosCorpus, file, loadRecording(t, file), cosmosProfile(t))
	if len(diffs) != 0 || len(notes) != 2 || !strings.Contains(notes[0], "entries 4, 5 listed") || !strings.Contains(notes[1], "entries 6 listed") {
		t.Fatalf("as recorded: differences %v, notes %q", diffs, notes)
	}
	for _, tc := range []struct {
		name  string
		entry int
		alter func(raw *json.RawMessage)
		want  string
	}{
		{"a name changed", 5, func(raw *json.RawMessage) { replaceIn(t, raw, `"listtable13ce12a90"`, `"listtable93ce12a90"`) },
			" entry 5 (GET /Tables?$top=2&NextTableName=BoZsAPosJ6A%3D): body $.value[].TableName (the listing's names): entries 4, 5 recorded "},
		{"a table left off", 6, func(raw *json.RawMessage) { replaceIn(t, raw, `{"TableName":"listtable03ce12a90"},`, ``) },
			" entry 6 (GET /Tables): body $.value: recorded 3 elements, tableemu 4"},
	} {
		rec := loadRecording(t, file)
		tc.alter(&rec.Entries[tc.entry].ResponseBody)
		diffs, _ := replayRecordingNotes(t, pythonCosmosCorpus, file, rec, cosmosProfile(t))
		if len(diffs) != 1 || diffs[0].entry != tc.entry || !strings.Contains(diffs[0].text, tc.want) {
			t.Errorf("%s: want one difference at entry %d with %q, got %v", tc.name, tc.entry, tc.want, diffs)
		}
	}
}

// TestReplayCosmosTablesUnfollowed: a listing whose continuation is never
// followed (test_query_tables_with_num_results, entry 4: 3 of 4 tables)
// passes when its names are distinct tables the recording created, and
// differs when one names a table it did not create, or one twice.
func TestReplayCosmosTablesUnfollowed(t *testing.T) {
	skipUnderRace(t, "a replay sends its recorded requests one after another")
	const file = "python-cosmos/test_table_cosmos.pyTestTableCosmostest_query_tables_with_num_results.json"
	diffs, notes := replayRecordingNotes(t, pythonCosmosCorpus, file, loadRecording(t, file), cosmosProfile(t))
	if len(diffs) != 0 || len(notes) != 3 || !strings.Contains(notes[0], "entries 4 (a listing not followed to its end)") {
		t.Fatalf("as recorded: differences %v, notes %q", diffs, notes)
	}
	for name, swap := range map[string][2]string{
		"a table not created": {`"listtable31e3d2ccf"`, `"listtable91e3d2ccf"`},
		"a table twice":       {`"listtable31e3d2ccf"`, `"listtable21e3d2ccf"`},
	} {
		rec := loadRecording(t, file)
		replaceIn(t, &rec.Entries[4].ResponseBody, swap[0], swap[1])
		diffs, _ := replayRecordingNotes(t, pythonCosmosCorpus, file, rec, cosmosProfile(t))
		if len(diffs) != 1 || diffs[0].entry != 4 || !strings.Contains(diffs[0].text, "(the listing's names): entries 4 recorded") {
			t.Errorf("%s: want one difference at entry 4 in the listing's names, got %v", name, diffs)
		}
	}
}
