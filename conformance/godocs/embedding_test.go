// Package godocs runs docs/go.md's "Embed it in Go tests" and "Install
// the program" as a user would: in a new module, against this checkout
// published as a module version (conformance/doctest). They compile tableemu
// as that version, and link a test and a program, a minute or more of a
// small machine's CPU, so they are a package of their own: go test gives each
// package its own time limit, and runs packages side by side. The rest of
// the docs that run are the conformance package's (godocs_test.go).
package godocs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tableemu/tableemu/conformance/doctest"
)

// TestGoDocsEmbedding: in a new module, docs/go.md's "Embed it in Go tests"
// test file (and docs/isolation.md's "From Go" one beside it, with the
// fixture file it imports) and then the section's commands, in the doc's
// order, make the module depend on
// github.com/tableemu/tableemu as published (doctest.ModProxy), and the
// tests pass. Its emulator calls are the ones emulator/example_test.go
// makes, so the runnable example and the doc say the same. Then "Install the program": go install of the published
// module, and its --version names that version.
func TestGoDocsEmbedding(t *testing.T) {
	if raceEnabled {
		t.Skip("not under the race detector: the go commands it runs are processes built without -race")
	}
	proxy, version := doctest.ModProxy(t)
	env := doctest.GoEnv(t, proxy)
	doc := doctest.File(t, "docs/go.md")
	sec := doctest.Section(t, doc, "Embed it in Go tests")
	if i, j := strings.Index(sec, "```go\n"), strings.Index(sec, "```sh\n"); i < 0 || j < i {
		t.Fatal("the section should show the test file before the commands that need it")
	}
	dir := filepath.Join(t.TempDir(), "app")
	mustNil(t, os.Mkdir(dir, 0o755))
	doctest.Run(t, env, dir, "go mod init example.com/app")
	code := doctest.OneBlock(t, sec, "go")
	mustNil(t, os.WriteFile(filepath.Join(dir, "orders_test.go"), []byte(code), 0o644))
	// docs/isolation.md's Go test file is written beside it, as that
	// section says, and runs with it.
	isoDoc := doctest.File(t, "docs/isolation.md")
	isolation := doctest.OneBlock(t, doctest.Section(t, isoDoc, "From Go"), "go")
	mustNil(t, os.WriteFile(filepath.Join(dir, "isolation_test.go"), []byte(isolation), 0o644))
	// It imports the doc's fixture file, from testdata/fixtures as the
	// doc says.
	fixture := doctest.OneBlock(t, doctest.Section(t, isoDoc, "Load fixtures once, snapshot, restore before each test"), "jsonl")
	mustNil(t, os.MkdirAll(filepath.Join(dir, "testdata", "fixtures"), 0o755))
	mustNil(t, os.WriteFile(filepath.Join(dir, "testdata", "fixtures", "people.jsonl"), []byte(fixture), 0o644))
	commands := doctest.OneBlock(t, sec, "sh")
	if !strings.HasSuffix(commands, "go test ./...\n") {
		t.Fatalf("the commands should end by running the test:\n%s", commands)
	}
	doctest.Run(t, env, dir, commands)
	out := doctest.Run(t, env, dir, "go test -count=1 -v ./...")
	if !strings.Contains(out, "--- PASS: TestOrders") {
		t.Errorf("the doc's test did not pass:\n%s", out)
	}
	if !strings.Contains(out, "--- PASS: TestWithFixtures") || !strings.Contains(out, "--- PASS: TestWithFixtures/sees_the_fixtures") {
		t.Errorf("docs/isolation.md's test did not pass:\n%s", out)
	}
	if mod := doctest.Run(t, env, dir, "go list -m "+doctest.ModulePath); strings.TrimSpace(mod) != doctest.ModulePath+" "+version {
		t.Errorf("the module depends on %q, want the published stand-in %s", mod, version)
	}

	example, err := os.ReadFile(filepath.Join(doctest.Root(t), "emulator", "example_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	calls := regexp.MustCompile(`emulator\.[A-Za-z]+\(.*\)`).FindAllString(code, -1)
	if len(calls) < 3 {
		t.Fatalf("the doc's test makes %d emulator calls: %q", len(calls), calls)
	}
	for _, c := range calls {
		if !strings.Contains(string(example), c) {
			t.Errorf("emulator/example_test.go does not make the doc's call %s", c)
		}
	}

	// "Install the program": go install, then tableemu --version, with
	// GOBIN on the PATH as a user's $(go env GOPATH)/bin is.
	install := doctest.OneBlock(t, doctest.Section(t, doc, "Install the program"), "sh")
	bin := t.TempDir()
	env = append(env, "GOBIN="+bin, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out = doctest.Run(t, env, t.TempDir(), install)
	if !strings.HasPrefix(out, "tableemu "+version+"\n") {
		t.Errorf("the installed tableemu --version printed %q, want the module version %s first", out, version)
	}
}

func mustNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
