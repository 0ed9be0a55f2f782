package conformance

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// The repository's text files that cite docs or could name files outside
// the repository: code, docs, scripts, SQL, CI.
func repoTextFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "target", ".venv", "venv", "__pycache__", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".js", ".mjs", ".ts", ".py", ".java", ".sql", ".sh", ".yaml", ".yml", ".toml", ".txt",
			".html", ".css", ".svg", ".json", ".xml", ".ini", ".in":
			files = append(files, path)
		default:
			switch d.Name() {
			case "Dockerfile", ".gitignore", ".dockerignore":
				files = append(files, path)
				return nil
			}
			if filepath.Base(filepath.Dir(path)) == ".ci" {
				files = append(files, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 50 {
		t.Fatalf("found only %d files; is the test running in conformance/?", len(files))
	}
	return files
}

// protocolSections returns the section numbers docs/protocol.md has:
// its "## N." and "### N.M" headings, and "12.N" for the items of the
// numbered list in section 12, which citations name that way.
func protocolSections(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	heading := regexp.MustCompile(`^#{2,3} (\d+(?:\.\d+|\.x)?)[. ]`)
	item := regexp.MustCompile(`^(\d+)\. `)
	have := map[string]bool{}
	in12 := false
	for _, line := range strings.Split(string(b), "\n") {
		if m := heading.FindStringSubmatch(line); m != nil {
			have[m[1]] = true
			in12 = m[1] == "12"
			continue
		}
		if m := item.FindStringSubmatch(line); m != nil && in12 {
			have["12."+m[1]] = true
		}
	}
	return have
}

// TestProtocolCitations: every "docs/protocol.md <section>" in the
// repository names a section docs/protocol.md has. A citation is the path
// followed by section numbers ("9.6", "3.10-3.13", "0.1, 7.4", "12 item 8",
// "section 0.1"), possibly on the next comment line.
func TestProtocolCitations(t *testing.T) {
	have := protocolSections(t)
	for _, s := range []string{"0", "0.1", "1.1", "3.14", "6.6", "9.8", "12", "12.3", "13", "13.x"} {
		if !have[s] {
			t.Fatalf("docs/protocol.md lacks section %s", s)
		}
	}
	number := regexp.MustCompile(`\d+(?:\.\d+|\.x)?`)
	// What follows the numbers ends the citation: a quote, a colon or
	// semicolon, a closing parenthesis, or a word.
	stop := regexp.MustCompile(`["“:;)]|[A-Za-z]{2,}`)
	comment := regexp.MustCompile(`^\s*(//|#|--|\*)?\s*`)
	cites := 0
	for _, path := range repoTextFiles(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for i, line := range lines {
			for _, rest := range strings.Split(line, "docs/protocol.md")[1:] {
				if strings.TrimSpace(rest) == "" && i+1 < len(lines) {
					rest = comment.ReplaceAllString(lines[i+1], "")
				}
				rest = strings.TrimPrefix(strings.TrimLeft(rest, " `"), "section ")
				if rest == "" || rest[0] < '0' || rest[0] > '9' {
					continue // a mention or a link, not a citation
				}
				if loc := stop.FindStringIndex(rest); loc != nil {
					rest = rest[:loc[0]]
				}
				for _, n := range number.FindAllString(rest, -1) {
					cites++
					if !have[n] {
						t.Errorf("%s:%d cites docs/protocol.md %s, which has no such section: %s", path, i+1, n, strings.TrimSpace(line))
					}
				}
			}
		}
	}
	if cites < 100 {
		t.Errorf("found only %d citations; the scan is broken", cites)
	}

	// docs/protocol.md's own cross-references, "§9.6".
	b, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	refs := regexp.MustCompile(`§ ?(\d+(?:\.\d+)?)`).FindAllStringSubmatch(string(b), -1)
	if len(refs) < 20 {
		t.Errorf("found only %d § references in docs/protocol.md; the scan is broken", len(refs))
	}
	for _, r := range refs {
		if !have[r[1]] {
			t.Errorf("docs/protocol.md refers to §%s, which it does not have", r[1])
		}
	}
}

// TestNoOutsideReferences: nothing in the repository points at files a user
// of it does not have — the design notes tableemu was written from live
// outside the repository, and docs/protocol.md replaces them.
func TestNoOutsideReferences(t *testing.T) {
	outside := []string{"../" + "shared", "PROTOCOL" + ".md", "/work" + "/"}
	for _, path := range repoTextFiles(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, o := range outside {
				if strings.Contains(line, o) {
					t.Errorf("%s:%d refers to %s, outside the repository: %s", path, i+1, o, strings.TrimSpace(line))
				}
			}
		}
	}
}

// TestMarkdownLinks: every relative link in the repository's Markdown
// files names a file that exists, and a #fragment names a heading of that
// file (by GitHub's rule for heading anchors: lower case, punctuation
// dropped, spaces as hyphens). Links into the web are not checked.
func TestMarkdownLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading := regexp.MustCompile("(?m)^#{1,6} (.+)$")
	anchors := func(path string) map[string]bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		// Headings inside fenced blocks are comments of code, not headings.
		var text []string
		for i, part := range strings.Split(string(b), "```") {
			if i%2 == 0 {
				text = append(text, part)
			}
		}
		a := map[string]bool{}
		for _, m := range heading.FindAllStringSubmatch(strings.Join(text, ""), -1) {
			slug := strings.Map(func(r rune) rune {
				switch {
				case r == ' ':
					return '-'
				case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
					return unicode.ToLower(r)
				}
				return -1
			}, strings.TrimSpace(m[1]))
			a[slug] = true
		}
		return a
	}
	checked := 0
	for _, f := range repoTextFiles(t) {
		if filepath.Ext(f) != ".md" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			file := f
			if path != "" {
				file = filepath.Join(filepath.Dir(f), filepath.FromSlash(path))
				if _, err := os.Stat(file); err != nil {
					t.Errorf("%s: link %s: no such file", f, target)
					continue
				}
			}
			if frag != "" && filepath.Ext(file) == ".md" && !anchors(file)[frag] {
				t.Errorf("%s: link %s: %s has no heading #%s", f, target, file, frag)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Fatalf("checked only %d links", checked)
	}
}
