package conformance

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/tableemu/tableemu/emulator"
)

// The SDKs' recorded live tests against Azure Cosmos DB for Table
// (testdata/recordings/python-cosmos and net-cosmos, README.md there):
// the same tests as the storage corpora, run against another service.
// They are the evidence for the cosmos profile (tableemu --profile cosmos,
// docs/cosmos.md), which is built in increments: its headers, Content-Type,
// error bodies, batch parts, continuation tokens, the form of entities
// and query answers, and the order of query results match. So not every
// file is required to replay exactly (the order of listed tables follows
// no rule; cosmosAllowed). TestReplayCosmos replays each file as the
// storage corpora are replayed, but against tableemu
// under the profile (cosmosProfile); requires that every entry's status
// matches (but in the files cosmosStatusDiffers names) and that at least
// as many files and entries match exactly as cosmosExactAtLeast holds;
// and logs the files that match exactly and, per file and in all, what
// differs and of which kind. It lets pass what replayAllowed lets pass,
// and one thing more, the order of listed tables (cosmosAllowed), logged
// where it applies. Once every file matches, these corpora join corpora.

var (
	// The Python recorder kept no Authorization (every request was
	// signed with the account key), as in pythonCorpus, and wrote the
	// account as fakecosmosaccount where a body names it (odata.type of
	// a full-metadata entity); the hosts it wrote are placeholders
	// (fakeendpoint, Sanitized, faketableaccount), mapped as any host.
	pythonCosmosCorpus = replayCorpus{sdk: "PythonCosmos", dir: "python-cosmos", account: "fakecosmosaccount", cosmos: true}
	// The .NET recorder kept Authorization, as in netCorpus; the account
	// is Variables.TABLES_COSMOS_ACCOUNT_NAME, and a SAS's sanitized
	// permissions are those of the test's (Storage) run (twinPermissions).
	netCosmosCorpus = replayCorpus{sdk: "NETCosmos", dir: "net-cosmos", keptAuthorization: true, cosmos: true}
	cosmosCorpora   = []replayCorpus{pythonCosmosCorpus, netCosmosCorpus}
)

// cosmosStatusDiffers names the Cosmos recordings in which tableemu
// answers some entry with another status than Cosmos DB did, each with
// why. The replay fails on a status difference in any other file, and on
// a file listed here whose statuses all match.
var cosmosStatusDiffers = map[string]string{}

// TestReplayCosmos replays the Cosmos DB for Table recordings, each against
// its own tableemu (in memory), and checks their statuses.
func TestReplayCosmos(t *testing.T) {
	skipUnderRace(t, "a replay sends its recorded requests one after another")
	// The storage corpora check that each replayAllowed key was needed
	// by them (replayCorpusTest); what this replay needs does not count.
	before := map[any]bool{}
	replayAllowedUsed.Range(func(k, _ any) bool { before[k] = true; return true })
	defer replayAllowedUsed.Range(func(k, _ any) bool {
		if !before[k] {
			replayAllowedUsed.Delete(k)
		}
		return true
	})
	for _, c := range cosmosCorpora {
		t.Run(c.sdk, func(t *testing.T) { replayCosmosCorpus(t, c) })
	}
}

// cosmosStats counts a Cosmos corpus's replay: files and entries, those
// whose statuses match, those that match exactly, and the differences by
// kind (cosmosDiffKind), with the files each kind shows in.
type cosmosStats struct {
	files, statusFiles, exactFiles, entries, statusEntries, exactEntries int
	kinds                                                                map[string]int
	kindFiles                                                            map[string]map[string]bool
	exact                                                                []string       // the files that match exactly
	allowed, allowedExact                                                map[string]int // per cosmosAllowed key: files it let something pass in, those exact
}

func replayCosmosCorpus(t *testing.T, c replayCorpus) {
	files := recordingFiles(t, c)
	if len(files) == 0 {
		t.Fatalf("no recordings under %s/%s", recordingsRoot, c.dir)
	}
	for f := range cosmosStatusDiffers {
		if strings.HasPrefix(f, c.dir+"/") && !contains(files, f) {
			t.Errorf("cosmosStatusDiffers names %s, which is no recording", f)
		}
	}
	var mu sync.Mutex
	st := cosmosStats{kinds: map[string]int{}, kindFiles: map[string]map[string]bool{}, allowed: map[string]int{}, allowedExact: map[string]int{}}
	t.Run("files", func(t *testing.T) {
		for _, name := range files {
			t.Run(strings.TrimPrefix(name, c.dir+"/"), func(t *testing.T) {
				t.Parallel()
				rec := loadRecording(t, name)
				diffs, notes := replayRecordingNotes(t, c, name, rec, cosmosProfile(t))
				statusOff := map[int]bool{}
				var statusDiffs []replayDiff
				for _, d := range diffs {
					if cosmosDiffKind(d.text) == "status" {
						statusOff[d.entry] = true
						statusDiffs = append(statusDiffs, d)
					}
				}
				mu.Lock()
				st.add(name, rec, diffs, statusOff)
				for key := range cosmosAllowed {
					if slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, ": allowance "+key+":") }) {
						st.allowed[key]++
						if len(diffs) == 0 {
							st.allowedExact[key]++
						}
					}
				}
				mu.Unlock()
				_, listed := cosmosStatusDiffers[name]
				switch {
				case listed && len(statusDiffs) == 0:
					t.Errorf("%s: every status matches now: remove it from cosmosStatusDiffers", name)
				case !listed:
					for _, d := range statusDiffs {
						t.Error(d)
					}
				}
				if testing.Verbose() {
					for _, d := range diffs {
						t.Logf("%s [%s]", d.text, cosmosDiffKind(d.text))
					}
					for _, n := range notes {
						t.Log(n)
					}
				}
			})
		}
	})
	for _, line := range st.lines(c.sdk) {
		t.Log(line)
	}
	for _, key := range sortedKeys(cosmosAllowed) {
		t.Logf("%s: allowance %s, applied in %d files (%d of them exact): %s",
			c.sdk, key, st.allowed[key], st.allowedExact[key], cosmosAllowed[key])
	}
	sort.Strings(st.exact)
	for _, f := range st.exact {
		t.Logf("%s: exact: %s", c.sdk, f)
	}
	if t.Failed() {
		return // the counts of a run cut short say nothing
	}
	if want := cosmosExactAtLeast[c.sdk]; st.exactFiles < want.files || st.exactEntries < want.entries {
		t.Errorf("%s: %d files and %d entries replay exactly, fewer than the %d and %d cosmosExactAtLeast holds: a regression",
			c.sdk, st.exactFiles, st.exactEntries, want.files, want.entries)
	} else if st.exactFiles > want.files || st.exactEntries > want.entries {
		t.Logf("%s: more replay exactly than cosmosExactAtLeast holds (%d and %d): raise it to %d files and %d entries",
			c.sdk, want.files, want.entries, st.exactFiles, st.exactEntries)
	}
}

// cosmosExactAtLeast is, per corpus, how many files and entries replay
// exactly under the profile at least, raised as the profile grows, so
// that a regression fails. Since session 49 every file and entry of both
// corpora replays exactly (with the two allowances of cosmosAllowed), so
// these are the corpora's whole counts: a file added must replay exactly
// too, or its difference be matched or named.
var cosmosExactAtLeast = map[string]struct{ files, entries int }{
	"PythonCosmos": {files: 197, entries: 1171},
	"NETCosmos":    {files: 32, entries: 168},
}

// cosmosProfile is the server a Cosmos recording is replayed against: in
// memory, under the cosmos profile (docs/cosmos.md).
func cosmosProfile(testing.TB) emulator.Config {
	return emulator.Config{InMemory: true, Profile: emulator.ProfileCosmos}
}

func (s *cosmosStats) add(name string, rec *recording, diffs []replayDiff, statusOff map[int]bool) {
	s.files++
	differs := map[int]bool{}
	for _, d := range diffs {
		differs[d.entry] = true
		k := cosmosDiffKind(d.text)
		s.kinds[k]++
		if s.kindFiles[k] == nil {
			s.kindFiles[k] = map[string]bool{}
		}
		s.kindFiles[k][name] = true
	}
	for i := range rec.Entries {
		if !isTableHost(hostOf(rec.Entries[i].RequestURI)) {
			continue
		}
		s.entries++
		if !statusOff[i] {
			s.statusEntries++
		}
		if !differs[i] {
			s.exactEntries++
		}
	}
	if len(statusOff) == 0 {
		s.statusFiles++
	}
	if len(diffs) == 0 {
		s.exactFiles++
		s.exact = append(s.exact, name)
	}
}

// lines are the counts as logged: the corpus, then each kind of
// difference with how often it shows and in how many files.
func (s *cosmosStats) lines(sdk string) []string {
	out := []string{fmt.Sprintf("%s: replayed %d files, %d entries; statuses match in %d files and %d entries; %d files and %d entries match exactly",
		sdk, s.files, s.entries, s.statusFiles, s.statusEntries, s.exactFiles, s.exactEntries)}
	var ks []string
	for k := range s.kinds {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		return s.kinds[ks[i]] > s.kinds[ks[j]] || s.kinds[ks[i]] == s.kinds[ks[j]] && ks[i] < ks[j]
	})
	for _, k := range ks {
		out = append(out, fmt.Sprintf("%s difference %s: %d, in %d files", sdk, k, s.kinds[k], len(s.kindFiles[k])))
	}
	return out
}

// diffWhere is the start of a difference's text: the file, entry and
// request (replayer.entry), and where in a batch answer's parts.
var diffWhere = regexp.MustCompile(`^.*? entry \d+ \(.*?\): (?:part \d+: )*`)

// arrayIndex is an index in a JSON member path ($.value[3]), which the
// counts leave out.
var arrayIndex = regexp.MustCompile(`\[\d+\]`)

// cosmosDiffKind names the kind of a replay difference, for the counts:
// status; header <name>: live only, tableemu only, or value; for a body,
// its JSON member path without indexes, or member order; each prefixed
// "batch part: " where it is inside a part of a batch answer.
func cosmosDiffKind(text string) string {
	if loc := diffWhere.FindString(text); strings.HasSuffix(loc, "): ") {
		return cosmosKind(strings.TrimPrefix(text, loc))
	}
	// A difference inside a batch answer's part.
	return "batch part: " + cosmosKind(diffWhere.ReplaceAllString(text, ""))
}

func cosmosKind(rest string) string {
	switch {
	case strings.HasPrefix(rest, "status:"):
		return "status"
	case strings.HasPrefix(rest, "cannot build the request"), strings.HasPrefix(rest, "request failed"):
		return "status" // no answer to compare
	case strings.HasPrefix(rest, "query "):
		param, _, _ := strings.Cut(strings.TrimPrefix(rest, "query "), "=")
		return "query " + param + " (a token not mapped)"
	case strings.HasPrefix(rest, "header "):
		name, v, _ := strings.Cut(strings.TrimPrefix(rest, "header "), ": ")
		switch {
		case strings.HasPrefix(v, "recorded none"):
			return "header " + name + " (tableemu only)"
		case strings.HasSuffix(v, "tableemu none"):
			return "header " + name + " (live only)"
		}
		return "header " + name + " (value)"
	}
	path, v, _ := strings.Cut(rest, ": ")
	path = arrayIndex.ReplaceAllString(path, "[]")
	switch {
	case strings.HasPrefix(v, "member order"):
		return path + " member order"
	case strings.HasPrefix(v, "not recorded"):
		return path + " (tableemu only)"
	case strings.Contains(v, "tableemu has no such member"):
		return path + " (live only)"
	}
	return path
}

// readRecordedParts reads a recorded multipart answer. Cosmos DB ended
// some lines of its batch answers with a bare LF in 2024 (after a change
// set's boundary and a part's MIME headers: docs/cosmos.md, "line ends of
// the answer"), which Go's multipart reader, once it has seen CRLF, does
// not take for a boundary's line end; such a body is read again with CRLF
// put back (lf true), so that its parts are still compared and the line
// ends are named once as a difference.
func readRecordedParts(contentType string, body []byte) (parts []mimePart, lf bool, err error) {
	parts, err = readParts(contentType, body)
	if err == nil {
		return parts, false, nil
	}
	var b bytes.Buffer
	for i, c := range body {
		if c == '\n' && (i == 0 || body[i-1] != '\r') {
			b.WriteByte('\r')
			lf = true
		}
		b.WriteByte(c)
	}
	if !lf {
		return nil, false, err
	}
	if parts, err2 := readParts(contentType, b.Bytes()); err2 == nil {
		return parts, true, nil
	}
	return nil, false, err
}

// sortedKeys is m's keys in order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
