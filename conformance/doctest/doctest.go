// Package doctest runs what the documentation shows, for the tests that
// hold the docs to the code: it finds a document's sections and fenced
// blocks, and runs the go command as a user's machine would
// (GoEnv, ModProxy). It is imported by tests only.
package doctest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	rootOnce sync.Once
	root     string
)

// Root is the repository's root: the nearest directory above the test's
// working directory (its package's) that holds go.mod.
func Root(t testing.TB) string {
	t.Helper()
	rootOnce.Do(func() {
		dir, err := os.Getwd()
		for err == nil {
			if _, e := os.Stat(filepath.Join(dir, "go.mod")); e == nil {
				root = dir
				return
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				return
			}
			dir = parent
		}
	})
	if root == "" {
		t.Fatal("no go.mod above the test's directory")
	}
	return root
}

// File returns a file of the repository, by its path from the root.
func File(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Root(t), filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Section returns the text of the section headed "## title" in md, up to
// the next "## " heading.
func Section(t testing.TB, md, title string) string {
	t.Helper()
	i := strings.Index(md, "\n## "+title+"\n")
	if i < 0 {
		t.Fatalf("no section %q", title)
	}
	s := md[i+len("\n## "+title+"\n"):]
	if j := strings.Index(s, "\n## "); j >= 0 {
		s = s[:j]
	}
	return s
}

// Fenced returns the fenced blocks of text whose info string is lang ("go",
// "sh", "" for none), in order.
func Fenced(text, lang string) []string {
	var blocks []string
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		if lines[i] != "```"+lang {
			if strings.HasPrefix(lines[i], "```") {
				for i++; i < len(lines) && lines[i] != "```"; i++ {
				}
			}
			continue
		}
		var b strings.Builder
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			b.WriteString(lines[i])
			b.WriteByte('\n')
		}
		blocks = append(blocks, b.String())
	}
	return blocks
}

// OneBlock returns the only block of lang in text.
func OneBlock(t testing.TB, text, lang string) string {
	t.Helper()
	b := Fenced(text, lang)
	if len(b) != 1 {
		t.Fatalf("want one ```%s block, found %d", lang, len(b))
	}
	return b[0]
}

// Run runs a shell script in dir with env and returns its standard output.
func Run(t testing.TB, env []string, dir, script string) string {
	t.Helper()
	cmd := exec.Command("sh", "-e", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s\nin %s: %v\nstdout:\n%s\nstderr:\n%s", script, dir, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}
