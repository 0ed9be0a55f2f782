package conformance

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestDocsReplayPage keeps docs/replay.md and the replay together: the
// page lists exactly the allowances of replayAllowed and the known
// differences, and its command, run here as a user runs it from the
// repository root, prints the counts the page quotes.
func TestDocsReplayPage(t *testing.T) {
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
	files := map[string]bool{}
	for _, k := range replayKnownDifferences {
		files[k.file] = true
	}
	if want := fmt.Sprintf("%d entries in %d files", len(replayKnownDifferences), len(files)); !strings.Contains(doc, want) {
		t.Errorf("docs/replay.md should count the known differences as %q", want)
	}

	run := section(t, doc, "Run it")
	blocks := regexp.MustCompile("(?s)```(?:sh)?\n(.*?)\n```").FindAllStringSubmatch(run, -1)
	if len(blocks) < 2 {
		t.Fatalf("docs/replay.md, Run it: want the command and the line it prints, found %d blocks", len(blocks))
	}
	args := strings.Fields(blocks[0][1])
	if len(args) != 6 || strings.Join(args[:4], " ") != "go test ./conformance/ -run" || args[5] != "-v" {
		t.Fatalf("docs/replay.md, Run it: the command %q is not `go test ./conformance/ -run PATTERN -v`", blocks[0][1])
	}
	pattern := regexp.MustCompile(args[4])
	for _, name := range []string{"TestReplayNET", "TestReplayFailsOnAlteredRecordings", "TestReplaySASSigner", "TestReplaySASStringToSign"} {
		if !pattern.MatchString(name) {
			t.Errorf("the documented -run %s leaves out %s", args[4], name)
		}
	}
	if pattern.MatchString(t.Name()) {
		t.Fatalf("the documented -run %s would run %s, which runs it", args[4], t.Name())
	}
	if testing.Short() {
		t.Skip("runs go test")
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = ".."
	cmd.Env = withoutVar(os.Environ(), "TABLEEMU_TEST_CONNECTION_STRING")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", blocks[0][1], err, out)
	}
	m := regexp.MustCompile(`(?m)replay_test\.go:\d+: (replayed .*)$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("%s printed no count:\n%s", blocks[0][1], out)
	}
	if got, want := string(m[1]), strings.TrimSpace(blocks[1][1]); got != want {
		t.Errorf("docs/replay.md quotes\n%s\nbut the replay printed\n%s", want, got)
	}
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
