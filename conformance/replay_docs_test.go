package conformance

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsReplayPage keeps docs/replay.md and the replay together: the
// page lists exactly the allowances of replayAllowed and the items of the
// known differences, and counts them; its command, run here as a user
// runs it from the repository root, prints the counts the page quotes,
// per SDK and x-ms-version as its table gives them; and its procedure for
// adding a recording, followed on a copy of the recordings, adds it.
func TestDocsReplayPage(t *testing.T) {
	skipUnderRace(t, "it checks a page and runs its command, a go test without -race, in a process of its own")
	doc := repoFile(t, "docs/replay.md")

	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\|").FindAllStringSubmatch(doc, -1) {
		documented[m[1]] = true
		if _, ok := replayAllowed[m[1]]; !ok {
			t.Errorf("docs/replay.md lists allowance %q, which replayAllowed lacks", m[1])
		}
	}
	for key := range replayAllowed {
		if !documented[key] {
			t.Errorf("docs/replay.md does not list allowance %q of replayAllowed", key)
		}
	}
	known := section(t, doc, "Known differences")
	files, items := map[string]bool{}, map[string]int{}
	for _, k := range replayKnownDifferences {
		files[k.file] = true
		items[k.item]++
	}
	if want := fmt.Sprintf("%d entries in %d files", len(replayKnownDifferences), len(files)); !strings.Contains(known, want) {
		t.Errorf("docs/replay.md, Known differences, should count them as %q", want)
	}
	for item, n := range items {
		if want := fmt.Sprintf("| %s | %d |", item, n); !strings.Contains(known, want) {
			t.Errorf("docs/replay.md, Known differences, should have the row %q…", want)
		}
	}

	run := section(t, doc, "Run it")
	blocks := regexp.MustCompile("(?s)```(?:sh)?\n(.*?)\n```").FindAllStringSubmatch(run, -1)
	if len(blocks) < 2 {
		t.Fatalf("docs/replay.md, Run it: want the command and the lines it prints, found %d blocks", len(blocks))
	}
	args := strings.Fields(blocks[0][1])
	if len(args) != 6 || strings.Join(args[:4], " ") != "go test ./conformance/ -run" || args[5] != "-v" {
		t.Fatalf("docs/replay.md, Run it: the command %q is not `go test ./conformance/ -run PATTERN -v`", blocks[0][1])
	}
	pattern := regexp.MustCompile(args[4])
	for _, name := range []string{"TestReplayNET", "TestReplayPython", "TestReplayGo", "TestReplayJava", "TestReplayJS", "TestReplayFailsOnAlteredRecordings", "TestReplaySASSigner", "TestReplayRedactedQueries",
		"TestReplaySASStringToSign", "TestReplayMessageHints", "TestReplayRecordedBodies"} {
		if !pattern.MatchString(name) {
			t.Errorf("the documented -run %s leaves out %s", args[4], name)
		}
	}
	for _, name := range []string{t.Name(), "TestPostgresReplay"} {
		if pattern.MatchString(name) {
			t.Fatalf("the documented -run %s would run %s", args[4], name)
		}
	}
	if testing.Short() {
		t.Skip("runs go test")
	}
	out := goTestOutput(t, args, "")
	if got, want := out, strings.TrimSpace(blocks[1][1]); got != want {
		t.Errorf("docs/replay.md quotes\n%s\nbut the replay printed\n%s", want, got)
	}
	covers := section(t, doc, "What it covers")
	for _, m := range regexp.MustCompile(`(?m)^(\w+) x-ms-version (\S+): (\d+) files, (\d+) entries \(.*\); (\d+) files and (\d+) entries match exactly$`).FindAllStringSubmatch(out, -1) {
		if row := fmt.Sprintf("| %s | %s | %s | %s | %s | %s |", m[1], m[2], m[3], m[4], m[5], m[6]); !strings.Contains(covers, row) {
			t.Errorf("docs/replay.md, What it covers, should have the row %q", row)
		}
	}

	addRecording(t, doc, out)
}

// addRecording follows the page's procedure for adding a recording on a
// copy of the recordings that lacks the file it copies: the file must then
// be replayed, the corpus's counts being those the page quotes for all.
func addRecording(t *testing.T, doc, counts string) {
	proc := section(t, doc, "Adding a recording")
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)\n```").FindAllStringSubmatch(proc, -1)
	if len(blocks) == 0 {
		t.Fatal("docs/replay.md, Adding a recording: no sh block")
	}
	lines := strings.Split(blocks[0][1], "\n")
	m := regexp.MustCompile(`^cp "\$ASSETS"/(\S+) conformance/testdata/recordings/(\w+)/$`).FindStringSubmatch(lines[0])
	if len(lines) != 2 || m == nil {
		t.Fatalf("docs/replay.md, Adding a recording: want `cp \"$ASSETS\"/<path> conformance/testdata/recordings/<corpus>/` and the go test line, found\n%s", blocks[0][1])
	}
	var corpus *replayCorpus
	for i := range corpora {
		if corpora[i].dir == m[2] {
			corpus = &corpora[i]
		}
	}
	if corpus == nil {
		t.Fatalf("docs/replay.md, Adding a recording: %s is no corpus's folder", m[2])
	}
	name := filepath.Base(m[1])
	src, err := os.ReadFile(filepath.Join(recordingsRoot, corpus.dir, name))
	if err != nil {
		t.Fatalf("the procedure copies %s, which should be a recording of %s/: %v", name, corpus.dir, err)
	}
	// The copy: the recordings without that file, and an assets
	// checkout that holds it.
	scratch, assets := t.TempDir(), t.TempDir()
	root := filepath.Join(scratch, "conformance", "testdata", "recordings")
	must(t, os.CopyFS(root, os.DirFS(recordingsRoot)))
	must(t, os.Remove(filepath.Join(root, corpus.dir, name)))
	must(t, os.MkdirAll(filepath.Join(assets, filepath.Dir(m[1])), 0o755))
	must(t, os.WriteFile(filepath.Join(assets, m[1]), src, 0o644))
	cp := exec.Command("bash", "-c", lines[0])
	cp.Dir, cp.Env = scratch, append(os.Environ(), "ASSETS="+assets)
	if out, err := cp.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", lines[0], err, out)
	}
	args := strings.Fields(strings.ReplaceAll(lines[1], "'", ""))
	if len(args) != 6 || args[4] != "TestReplay"+corpus.sdk+"$" {
		t.Fatalf("docs/replay.md, Adding a recording: the second line should be `go test ./conformance/ -run 'TestReplay%s$' -v`", corpus.sdk)
	}
	got := goTestOutput(t, args, root)
	want := []string{"recordings under " + root} // the copy, not the repository's

	for _, l := range strings.Split(counts, "\n") {
		if strings.HasPrefix(l, corpus.sdk+":") || strings.HasPrefix(l, corpus.sdk+" ") {
			want = append(want, l)
		}
	}
	if strings.Join(want, "\n") != got {
		t.Errorf("after the procedure the replay printed\n%s\nwhere the page quotes, for all the recordings,\n%s", got, strings.Join(want, "\n"))
	}
}

// goTestOutput runs a go test command from the repository root, with the
// recordings at root if not "", and returns the lines the replay logged.
func goTestOutput(t *testing.T, args []string, root string) string {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = ".."
	cmd.Env = withoutVar(withoutVar(os.Environ(), "TABLEEMU_TEST_CONNECTION_STRING"), "TABLEEMU_REPLAY_RECORDINGS")
	if root != "" {
		cmd.Env = append(cmd.Env, "TABLEEMU_REPLAY_RECORDINGS="+root)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	var lines []string
	for _, m := range regexp.MustCompile(`(?m)replay_test\.go:\d+: (.*)$`).FindAllSubmatch(out, -1) {
		lines = append(lines, string(m[1]))
	}
	if len(lines) == 0 {
		t.Fatalf("%s printed no count:\n%s", strings.Join(args, " "), out)
	}
	return strings.Join(lines, "\n")
}

func withoutVar(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
