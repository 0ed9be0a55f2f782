package main

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The documents quote the facts between marker comments,
//
//	<!-- compat:ID -->  ...  <!-- /compat:ID -->
//
// where ID is "commands" (Azurite's image, line for line) or a module's id.
// render writes what goes between them; rewrite and quoted keep documents
// and facts the same.

var markers = regexp.MustCompile(`(?s)<!-- compat:([a-z]+) -->\n.*?<!-- /compat:([a-z]+) -->`)

// rewrite replaces every quoted block of doc with the facts as rendered
// now, and says which blocks it found.
func rewrite(doc string, f *Facts, entrypoint, cmd []string) (string, []string, error) {
	var found []string
	var err error
	out := markers.ReplaceAllStringFunc(doc, func(block string) string {
		m := markers.FindStringSubmatch(block)
		if m[1] != m[2] {
			err = fmt.Errorf("<!-- compat:%s --> is closed by <!-- /compat:%s -->", m[1], m[2])
			return block
		}
		body, e := render(f, m[1], entrypoint, cmd)
		if e != nil {
			err = e
			return block
		}
		found = append(found, m[1])
		return "<!-- compat:" + m[1] + " -->\n" + body + "<!-- /compat:" + m[1] + " -->"
	})
	return out, found, err
}

// render is the Markdown for one block.
func render(f *Facts, id string, entrypoint, cmd []string) (string, error) {
	var b strings.Builder
	if id == "commands" {
		b.WriteString("| the line written for Azurite's image (swap the image name) | the process tableemu's image runs | |\n|---|---|---|\n")
		for _, c := range f.Commands {
			fmt.Fprintf(&b, "| `%s` | `%s` | %s |\n", dockerRun(c, "mcr.microsoft.com/azure-storage/azurite"),
				shellJoin(c.argv(entrypoint, cmd)), esc(c.Why))
		}
		var compose []string
		for _, c := range f.Commands {
			if c.Cmd != nil {
				compose = append(compose, composeLines(c))
			}
		}
		b.WriteString("\nIn compose, the same lines are " + strings.Join(compose, "; ") + ".\n")
		return b.String(), nil
	}
	for _, m := range f.Modules {
		if m.ID != id {
			continue
		}
		fmt.Fprintf(&b, "Facts about %s (%s, [source](%s)); image by default: %s.\n\n", m.Package, m.Language, m.Source, m.ImageDefault)
		for _, c := range m.Configs {
			verdict := "works with tableemu"
			if !c.Works {
				verdict = "does not work with tableemu"
			}
			fmt.Fprintf(&b, "- `%s`: **%s**: %s.\n", c.Code, verdict, c.Why)
			fmt.Fprintf(&b, "  - sets: %s\n", sets(c))
			fmt.Fprintf(&b, "  - the container runs: `%s`\n", shellJoin(c.argv(entrypoint, cmd)))
			fmt.Fprintf(&b, "  - exposes: %s; waits for: %s\n", ports(c.Ports), waits(c.Wait))
			if c.ConnectionString != "" {
				fmt.Fprintf(&b, "  - connection string: `%s`\n", c.ConnectionString)
			} else {
				fmt.Fprintf(&b, "  - table service URL: `%s`, shared key of devstoreaccount1\n", c.ServiceURL)
			}
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("no module %q in the facts", id)
}

// dockerRun is the docker run line of a command configuration.
func dockerRun(c Config, image string) string {
	words := append([]string{"docker", "run"}, c.Docker...)
	words = append(words, image)
	if c.Entrypoint != nil || c.Cmd != nil {
		words = append(words, c.Cmd...)
	}
	return shellJoin(words)
}

// composeLines is a command configuration as compose's keys.
func composeLines(c Config) string {
	var parts []string
	if c.Entrypoint != nil {
		parts = append(parts, "`entrypoint: "+flow(c.Entrypoint)+"`")
	}
	parts = append(parts, "`command: "+flow(c.Cmd)+"`")
	return strings.Join(parts, " with ")
}

// flow is a YAML flow sequence of double-quoted strings (also JSON).
func flow(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = strconv.Quote(w)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func sets(c Config) string {
	var s []string
	if c.Entrypoint != nil {
		s = append(s, "entrypoint `"+shellJoin(c.Entrypoint)+"`")
	}
	if c.Cmd != nil {
		s = append(s, "command `"+shellJoin(c.Cmd)+"`")
	}
	if len(s) == 0 {
		s = append(s, "no entrypoint or command (the image's own)")
	}
	for _, e := range c.environ("{key}") {
		s = append(s, "environment `"+e+"`")
	}
	return strings.Join(s, ", ")
}

func ports(ps []int) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, ", ")
}

func waits(ws []Wait) string {
	var s, portList []string
	for _, w := range ws {
		if w.Match == "" {
			portList = append(portList, strconv.Itoa(w.Port))
		}
	}
	switch len(portList) {
	case 0:
	case 1:
		s = append(s, "port "+portList[0]+" (a TCP connection from the host)")
	default:
		s = append(s, "ports "+strings.Join(portList, ", ")+" (TCP connections from the host)")
	}
	for _, w := range ws {
		switch w.Match {
		case "contains":
			s = append(s, fmt.Sprintf("a log line containing `%s`", w.Log))
		case "search":
			s = append(s, fmt.Sprintf("the regular expression `%s` in the log", w.Log))
		case "line":
			s = append(s, fmt.Sprintf("a log line matching `/%s/`", w.Log))
		case "java-line":
			s = append(s, fmt.Sprintf("a log line that `%s` matches whole", w.Log))
		}
	}
	return strings.Join(s, " and ")
}

// shellJoin writes words as a shell would need them: quoted only where a
// word has a character the shell treats specially.
func shellJoin(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\"'$`\\|&;<>()*?[]#~{}") {
			w = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		q[i] = w
	}
	return strings.Join(q, " ")
}

// esc keeps a table cell in its cell.
func esc(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// quoted checks that doc quotes the facts as rendered now, every module and
// the commands included.
func quoted(path string, f *Facts, entrypoint, cmd []string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, found, err := rewrite(string(b), f, entrypoint, cmd)
	if err != nil {
		return err
	}
	want := []string{"commands"}
	for _, m := range f.Modules {
		want = append(want, m.ID)
	}
	for _, id := range want {
		if !slices.Contains(found, id) {
			return fmt.Errorf("%s does not quote the facts of %s (<!-- compat:%s -->)", path, id, id)
		}
	}
	if out != string(b) {
		return fmt.Errorf("%s quotes the facts of docker/compat/azurite-compat.json differently: run go run ./docker/compat markdown %s", path, path)
	}
	return nil
}
