package conformance

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The replay of the .NET SDK's recorded live exchanges (docs/replay.md):
// every recording under testdata/recordings/net is sent, request by
// request, to a fresh in-process tableemu, and each answer is compared with
// the one the live service gave. The files are test-proxy recordings from
// Azure/azure-sdk-for-net (testdata/recordings/README.md).

// recordingsDir holds the corpus, one folder per .NET test class.
const recordingsDir = "testdata/recordings/net"

// replayAllowed is every difference the replay lets pass, with the reason,
// in one place. The comparison code names these keys (allow), and
// TestReplayNET fails if a key here is never used, so the table and the
// code cannot drift; docs/replay.md lists the same keys. None of them hides
// a behaviour a client acts on: each is a value that differs by nature
// between two servers, or a spelling no client distinguishes.
var replayAllowed = map[string]string{
	"host": "The live host https://<account>.table.core.windows.net is https://127.0.0.1:<port>/<account> " +
		"locally (path style): requests are sent there, and URLs in answers (odata.metadata, odata.id, " +
		"Location, DataServiceId) are compared with the one replaced by the other, the rest of each URL exactly.",
	"request-id": "The x-ms-request-id header and the RequestId line of an error message are each server's own: " +
		"not compared, but the message must name the answer's own x-ms-request-id.",
	"time": "The Date header, the Time line of an error message and a service-stats LastSyncTime are clock " +
		"readings: not compared, but each must be a well-formed time.",
	"entity-version": "ETags and Timestamps are the times entity versions were written. A recorded one is mapped " +
		"to tableemu's in the same place the first time it appears, one to one per file: a later ETag, Timestamp " +
		"or If-Match must name the version tableemu named there, and a new version must get a new value.",
	"continuation": "Continuation tokens are opaque to clients. A recorded token is mapped to the one tableemu " +
		"returned in the same answer and sent back in its place; the header must be present exactly when live sent it.",
	"boundary": "A multipart boundary is random: each batch answer is split with its own boundary and compared part by part.",
	"error-code-header": "tableemu sends x-ms-error-code on JSON errors too, and on the 202 of a failed batch the " +
		"failed operation's code, where live sent none (docs/protocol.md 0.1, 7.4, 8.1): it must equal the code " +
		"in the body, and be absent on any other success.",
	"media-type-spelling": "Content-Type is compared as a media type, type and parameters (names without regard " +
		"to case): live itself writes both `a; b=c` and `a;b=c` in these recordings.",
	"xml-spelling": "XML bodies are compared as element trees, names, attributes, order and text: a byte-order " +
		"mark, the XML declaration and `<X />` against `<X></X>` spell the same document.",
	"json-spelling": "JSON bodies are compared parsed, member order included: white space and string escapes " +
		"(live writes ' as \\u0027) are spelling; numbers are compared by value and by whether they are written " +
		"with a fraction or exponent, which decides whether a client types them Double or Int32.",
	"account-state": "The first Get Service Properties of a file shows the settings the live account had before " +
		"the test (left by earlier runs or set by its owner), where a fresh tableemu has a new account's. The " +
		"replay first sets that recorded document with one Set Service Properties, so that every answer, that " +
		"first one included, is compared exactly.",
	"framing": "Server names the product; Transfer-Encoding and Content-Length only frame the body (live streams " +
		"its answers chunked, tableemu sends a length). They are not compared; the body is.",
}

var replayAllowedUsed sync.Map

// allow returns its key after checking it is in replayAllowed, and notes
// that the replay used it.
func allow(key string) string {
	if _, ok := replayAllowed[key]; !ok {
		panic("replay: allowance " + key + " is not in replayAllowed")
	}
	replayAllowedUsed.Store(key, true)
	return key
}

// knownDifference is one difference the replay finds and this repository
// does not fix yet: the file, the entry and a part of the message.
type knownDifference struct {
	file  string
	entry int
	text  string
	why   string
}

// replayKnownDifferences are the differences found in files that otherwise
// match. A replay must show exactly these in their files and entries: any
// other difference fails the test, and so does one listed here that no
// longer happens.
var replayKnownDifferences = []knownDifference{}

// TestReplayNET replays every recording against its own tableemu.
func TestReplayNET(t *testing.T) {
	files := recordingFiles(t)
	if len(files) == 0 {
		t.Fatalf("no recordings under %s", recordingsDir)
	}
	var mu sync.Mutex
	var st replayStats
	t.Run("files", func(t *testing.T) {
		for _, name := range files {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				rec := loadRecording(t, name)
				diffs := replayRecording(t, name, rec)
				unexpected, missing := classify(name, diffs)
				mu.Lock()
				st.add(rec, diffs)
				mu.Unlock()
				for _, d := range unexpected {
					t.Error(d)
				}
				for _, k := range missing {
					t.Errorf("%s entry %d no longer differs (%q: %s): remove it from replayKnownDifferences", k.file, k.entry, k.text, k.why)
				}
			})
		}
	})
	t.Logf("replayed %d files, %d entries (%s); %d files and %d entries match exactly, %d files match but for %d known differences",
		len(files), st.entries, st.kinds(), st.exact, st.exactEntries, st.knownOnly, len(replayKnownDifferences))
	if t.Failed() {
		return
	}
	for key := range replayAllowed {
		if _, ok := replayAllowedUsed.Load(key); !ok {
			t.Errorf("replayAllowed[%q] was never needed: remove it (and from docs/replay.md)", key)
		}
	}
}

// classify splits a file's differences into those not expected and the
// expected ones that did not happen.
func classify(file string, diffs []replayDiff) (unexpected []replayDiff, missing []knownDifference) {
	seen := make([]bool, len(replayKnownDifferences))
	for _, d := range diffs {
		known := false
		for i, k := range replayKnownDifferences {
			if k.file == file && k.entry == d.entry && strings.Contains(d.text, k.text) {
				known, seen[i] = true, true
			}
		}
		if !known {
			unexpected = append(unexpected, d)
		}
	}
	for i, k := range replayKnownDifferences {
		if k.file == file && !seen[i] {
			missing = append(missing, k)
		}
	}
	return unexpected, missing
}

func joinDiffs(diffs []replayDiff) string {
	var lines []string
	for _, d := range diffs {
		lines = append(lines, d.String())
	}
	return strings.Join(lines, "\n")
}

// replayStats are the counts TestReplayNET reports (docs/replay.md).
type replayStats struct {
	entries, exact, exactEntries, knownOnly int
	ops                                     map[string]int
}

func (s *replayStats) add(rec *recording, diffs []replayDiff) {
	s.entries += len(rec.Entries)
	differs := map[int]bool{}
	for _, d := range diffs {
		differs[d.entry] = true
	}
	for i := range rec.Entries {
		if !differs[i] {
			s.exactEntries++
		}
		if s.ops == nil {
			s.ops = map[string]int{}
		}
		s.ops[operationKind(&rec.Entries[i])]++
	}
	if len(diffs) == 0 {
		s.exact++
	} else {
		s.knownOnly++
	}
}

func (s *replayStats) kinds() string {
	var parts []string
	for k, n := range s.ops {
		parts = append(parts, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
