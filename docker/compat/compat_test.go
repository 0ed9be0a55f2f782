package main

import (
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const doc = "../../docs/containers.md"

func facts(t *testing.T) *Facts {
	t.Helper()
	f, err := loadFacts("azurite-compat.json")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestDocQuotesFacts: docs/containers.md quotes every block of the facts
// as rendered now, with the image's command from the Dockerfile.
func TestDocQuotesFacts(t *testing.T) {
	ep, cmd, err := dockerfileCommand("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if err := quoted(doc, facts(t), ep, cmd); err != nil {
		t.Fatal(err)
	}
}

// codeBlock is the first fenced block of a language under a level-3
// heading of the document.
func codeBlock(t *testing.T, heading, lang string) string {
	t.Helper()
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n### "+heading+"\n")
	if !ok {
		t.Fatalf("%s: no section ### %s", doc, heading)
	}
	section, _, _ = strings.Cut(section, "\n### ")
	m := regexp.MustCompile("(?ms)^```" + regexp.QuoteMeta(lang) + "\n(.*?)^```$").FindStringSubmatch(section)
	if m == nil {
		t.Fatalf("%s: no %s block under ### %s", doc, lang, heading)
	}
	return m[1]
}

// TestDocCodeSaysWhatFactsSay: each language's code in docs/containers.md
// uses what the facts of its working configuration say it does, and the Go
// code parses.
func TestDocCodeSaysWhatFactsSay(t *testing.T) {
	langs := map[string]string{"go": "go", "java": "java", "dotnet": "csharp", "python": "python", "node": "js"}
	for _, m := range facts(t).Modules {
		code := codeBlock(t, m.Language, langs[m.ID])
		if len(m.Snippet) == 0 {
			t.Errorf("module %s: the facts say nothing the code must contain", m.ID)
		}
		for _, s := range m.Snippet {
			if !strings.Contains(code, s) {
				t.Errorf("the %s code of %s does not say %s", m.Language, doc, s)
			}
		}
		// The configuration the code is: its wait is in the code.
		found := false
		for _, c := range m.Configs {
			found = found || (c.Works && strings.Contains(strings.Join(strings.Fields(code), " "), waitInCode(c)))
		}
		if !found {
			t.Errorf("the %s code of %s waits as no working configuration of the facts does", m.Language, doc)
		}
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "containers.md.go", codeBlock(t, "Go", "go"), 0); err != nil {
		t.Errorf("the Go code of %s does not parse: %v", doc, err)
	}
}

// waitInCode is how a configuration's log wait is written in its code: the
// text of its log wait, as a string or regular expression literal would
// hold it.
func waitInCode(c Config) string {
	for _, w := range c.Wait {
		if w.Log != "" {
			return strings.ReplaceAll(w.Log, `\n`, `\\n`)
		}
	}
	return "\x00" // a port wait alone is no configuration the documents recommend
}

// TestArgv: the Docker Engine's merge of a container's entrypoint and
// command with the image's.
func TestArgv(t *testing.T) {
	ep, cmd := []string{"/tableemu", "--tableHost", "0.0.0.0"}, []string{"--loose"}
	for _, tc := range []struct {
		c    Config
		want []string
	}{
		{Config{}, []string{"/tableemu", "--tableHost", "0.0.0.0", "--loose"}},
		{Config{Cmd: []string{"azurite-table", "-l", "/x"}}, []string{"/tableemu", "--tableHost", "0.0.0.0", "azurite-table", "-l", "/x"}},
		{Config{Entrypoint: []string{"azurite"}}, []string{"azurite"}}, // the image's command is dropped
		{Config{Entrypoint: []string{"azurite"}, Cmd: []string{"--tableHost", "0.0.0.0"}}, []string{"azurite", "--tableHost", "0.0.0.0"}},
	} {
		if got := tc.c.argv(ep, cmd); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc.c, got, tc.want)
		}
	}
}

func TestFill(t *testing.T) {
	got := fill("AccountKey={key};TableEndpoint=http://{host}:{port:10002}/a;BlobEndpoint=http://{host}:{port:10000}/a",
		"K", "h", func(p int) int { return p + 1 })
	if want := "AccountKey=K;TableEndpoint=http://h:10003/a;BlobEndpoint=http://h:10001/a"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// TestComposeFiles: the compose files of docker/ are in the form the image
// test reads, with a health check and the app's connection string.
func TestComposeFiles(t *testing.T) {
	for file, host := range map[string]string{"../compose.yaml": "tableemu", "../compose.azurite.yaml": "azurite"} {
		s, err := readCompose(file)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(s.Health, []string{"/tableemu", "healthcheck"}) {
			t.Errorf("%s: healthcheck %q", file, s.Health)
		}
		if !strings.Contains(s.AppConnectionString, "TableEndpoint=http://"+host+":10002/devstoreaccount1;") {
			t.Errorf("%s: the app's connection string %q does not name the service %s", file, s.AppConnectionString, host)
		}
	}
	s, _ := readCompose("../compose.azurite.yaml")
	if len(s.Command) == 0 || s.Command[0] != "azurite-table" {
		t.Errorf("compose.azurite.yaml: command %q is not Azurite's", s.Command)
	}
}

func TestReadComposeRefusesWhatItCannotRead(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"string": "services:\n  t:\n    image: tableemu\n    command: azurite-table --tableHost 0.0.0.0\n",
		"shell":  "services:\n  t:\n    image: tableemu\n    healthcheck:\n      test: [\"CMD-SHELL\", \"curl -f http://localhost:10002\"]\n",
	} {
		path := dir + "/" + name + ".yaml"
		os.WriteFile(path, []byte(body+"  app:\n    environment:\n      AZURE_TABLES_CONNECTION_STRING: \"x\"\n"), 0o644)
		if _, err := readCompose(path); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
}
