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

// The one allowance of the Cosmos replay (TestReplayCosmos) beyond
// replayAllowed: the order of the tables Query Tables lists.

// cosmosTablesOrder names the allowance; cosmosAllowed holds it with its
// reason and evidence. Like the mappings of replayAllowed it covers what
// tableemu cannot reproduce, not a behaviour it chose: it applies to the
// Cosmos corpora only.
const cosmosTablesOrder = "cosmos-tables-order"

var cosmosAllowed = map[string]string{
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
		"names differ as a multiset is a difference of kind \"body $.value[].TableName (the listing's names)\" " +
		"at its last page.",
}

// tableListing is one listing of tables being replayed: the names live
// and tableemu gave on its pages, in order.
type tableListing struct {
	entries  []int    // the entries of its pages
	at       string   // the last page, for messages (replayer.at)
	next     string   // the recorded NextTableName of the last page; "" at the end
	rec, act []string // TableName values, recorded and tableemu's
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
		r.listing = &tableListing{}
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
