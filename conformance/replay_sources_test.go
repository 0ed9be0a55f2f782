package conformance

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRecordingSources holds testdata/recordings/SOURCES.tsv, the list of
// the recordings harvested from Azure/azure-sdk-assets (README.md there),
// to the files: each row names a file that is in the corpus, the commit it
// was read at, and the x-ms-version and number of entries the file really
// has, so that the provenance the README summarises cannot drift from what
// is replayed.
func TestRecordingSources(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(recordingsRoot, "SOURCES.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if want := "file\tcommit\tsdk\tx-ms-version\trecorded\tentries"; lines[0] != want {
		t.Fatalf("SOURCES.tsv header %q, want %q", lines[0], want)
	}
	commit := regexp.MustCompile(`^[0-9a-f]{40}$`)
	month := regexp.MustCompile(`^(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) 20[0-9]{2}$`)
	seen := map[string]bool{}
	for i, line := range lines[1:] {
		f := strings.Split(line, "\t")
		if len(f) != 6 {
			t.Errorf("SOURCES.tsv line %d: %d fields, want 6", i+2, len(f))
			continue
		}
		name, ver := f[0], f[3]
		if seen[name] {
			t.Errorf("SOURCES.tsv: %s listed twice", name)
		}
		seen[name] = true
		if !commit.MatchString(f[1]) || f[2] == "" || !month.MatchString(f[4]) {
			t.Errorf("SOURCES.tsv %s: commit %q, sdk %q, recorded %q", name, f[1], f[2], f[4])
		}
		rec := loadRecording(t, name)
		if n, _ := strconv.Atoi(f[5]); n != len(rec.Entries) {
			t.Errorf("SOURCES.tsv %s: %s entries, the file has %d", name, f[5], len(rec.Entries))
		}
		// The version named is the one the file's Table requests send
		// (an exchange with the identity provider sends none).
		versions := map[string]bool{}
		for _, e := range rec.Entries {
			if v, ok := e.header(false, "x-ms-version"); ok && v != "" {
				versions[v] = true
			}
		}
		if len(rec.Entries) > 0 && !versions[ver] {
			t.Errorf("SOURCES.tsv %s: x-ms-version %s, the file's requests send %v", name, ver, versions)
		}
	}
	if len(seen) == 0 {
		t.Fatal("SOURCES.tsv lists no file")
	}
}
