package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/emulator"
)

// The documents say what the binary does; these tests hold them to it.

// fencedBlock returns the lines of the first ``` block of file that
// contains marker.
func fencedBlock(t *testing.T, file, marker string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(string(b), "```")
	for i := 1; i < len(parts); i += 2 {
		if strings.Contains(parts[i], marker) {
			body := strings.TrimPrefix(parts[i], "\n") // after the opening fence's (empty) info string
			return strings.Split(strings.TrimSuffix(body, "\n"), "\n")
		}
	}
	t.Fatalf("%s: no code block with %q", file, marker)
	return nil
}

// startLines runs the binary with args in cwd until its readiness line and
// returns its output lines, with the port it got replaced by 10002 and
// dir by asDir; it then stops the server.
func startLines(t *testing.T, cwd, dir, asDir string, args ...string) []string {
	t.Helper()
	p := startProc(t, cwd, args...)
	port, _ := p.ready()
	lines := p.lines()
	p.signal(syscall.SIGTERM)
	p.exit(15 * time.Second)
	for i, l := range lines {
		l = strings.ReplaceAll(l, ":"+port, ":10002")
		lines[i] = strings.ReplaceAll(l, dir, asDir)
	}
	return lines
}

// sameOutput compares real output lines with a document's sample: the
// same lines, byte for byte, after the time at the start of each.
func sameOutput(t *testing.T, doc string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s shows %d lines, the binary printed %d:\n%s", doc, len(want), len(got), strings.Join(got, "\n"))
	}
	for i := range want {
		if !logLine.MatchString(want[i]) {
			t.Errorf("%s line %d is not in the log format: %q", doc, i+1, want[i])
			continue
		}
		if got[i][24:] != want[i][24:] {
			t.Errorf("%s line %d:\n doc    %q\n binary %q", doc, i+1, want[i][24:], got[i][24:])
		}
	}
}

// TestReadmeStartOutput: README.md's sample is what `go run ./cmd/tableemu`
// prints in a clone at /home/you/tableemu, but for the times.
func TestReadmeStartOutput(t *testing.T) {
	want := fencedBlock(t, "../../README.md", "successfully listening")
	dir := t.TempDir()
	got := startLines(t, dir, dir, "/home/you/tableemu", "--tablePort", "0")
	sameOutput(t, "README.md", got, want)
}

// TestDockerReadmeStartOutput: docker/README.md's sample is what the image's
// entrypoint prints: data in /data, listening on 0.0.0.0 (the test listens
// on 127.0.0.1 and says 0.0.0.0 where the server would).
func TestDockerReadmeStartOutput(t *testing.T) {
	want := fencedBlock(t, "../../docker/README.md", "successfully listening")
	dir := t.TempDir()
	got := startLines(t, "", dir, "/data", "--tableHost", "127.0.0.1", "--tablePort", "0", "--location", dir)
	last := len(got) - 1
	got[last] = strings.Replace(got[last], "listening at http://127.0.0.1:10002 ", "listening at http://0.0.0.0:10002 ", 1)
	sameOutput(t, "docker/README.md", got, want)
}

// startLineNames is what the documents' prose calls each start-up line,
// in the order the server prints them (run in main.go).
var startLineNames = []struct{ prefix, name string }{
	{"tableemu serves Azure Table storage from ", "where the data lives"},
	{"endpoint ", "endpoint"},
	{"connection string ", "connection string"},
	{"data explorer ", "data explorer"},
	{"Azurite Table service is successfully listening at ", "readiness line"},
}

// TestStartLinesDescribed: each document that describes the start-up
// lines in words names every line the server prints, in the order it
// prints them, in the paragraph that says it "prints" them (packaging/python/README.md
// once named three of five: the endpoint, "then" the connection string,
// "then" the readiness line). The samples beside some of them are
// TestReadmeStartOutput's and TestDockerReadmeStartOutput's.
func TestStartLinesDescribed(t *testing.T) {
	dir := t.TempDir()
	got := startLines(t, dir, dir, dir, "--tablePort", "0", "--inMemoryPersistence")
	if len(got) != len(startLineNames) {
		t.Fatalf("the server printed %d start-up lines, this test names %d:\n%s", len(got), len(startLineNames), strings.Join(got, "\n"))
	}
	for i, l := range got {
		if !strings.HasPrefix(l[25:], startLineNames[i].prefix) {
			t.Fatalf("start-up line %d is %q, this test says %q", i+1, l, startLineNames[i].prefix)
		}
	}
	for _, doc := range []string{"README.md", "docker/README.md", "packaging/python/README.md", "packaging/npm/tableemu/README.md"} {
		b, err := os.ReadFile("../../" + doc)
		if err != nil {
			t.Fatal(err)
		}
		var text string
		for _, para := range strings.Split(string(b), "\n\n") {
			if para = strings.Join(strings.Fields(para), " "); strings.Contains(para, "prints ") && strings.Contains(para, "readiness line") {
				text = para[strings.Index(para, "prints "):]
				break
			}
		}
		if text == "" {
			t.Errorf("%s: no paragraph says what the server prints", doc)
			continue
		}
		for i, n := range startLineNames {
			at := strings.Index(text, n.name)
			if at < 0 {
				t.Errorf("%s: what the server prints, in words, lacks %q (line %d of %d) after the lines before it: %q", doc, n.name, i+1, len(startLineNames), text)
				break
			}
			text = text[at+len(n.name):]
		}
	}
}

// TestMigratingFlags: docker/MIGRATING.md's flag table lists every flag of
// Azurite 3.37, and what it says of each — honoured, accepted, ignored
// with a warning, refused — is what the command line does.
func TestMigratingFlags(t *testing.T) {
	b, err := os.ReadFile("../../docker/MIGRATING.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `--(\\w+)`(?:, `-\\w`)? \\| (honoured|accepted|ignored with a warning|refused)")
	said := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		said[m[1]] = m[2]
	}
	dir := t.TempDir()
	cert := filepath.Join(dir, "c.pem")
	// What each flag is given: a value it takes, and what it needs beside.
	args := map[string][]string{
		"tableHost": {"--tableHost", "0.0.0.0"}, "tablePort": {"--tablePort", "10012"},
		"tableKeepAliveTimeout": {"--tableKeepAliveTimeout", "5"}, "location": {"--location", dir},
		"inMemoryPersistence": {"--inMemoryPersistence"}, "loose": {"--loose"},
		"skipApiVersionCheck": {"--skipApiVersionCheck"}, "disableProductStyleUrl": {"--disableProductStyleUrl"},
		"cert": {"--cert", cert, "--key", cert}, "key": {"--key", cert, "--cert", cert},
		"oauth": {"--oauth", "basic", "--cert", cert, "--key", cert}, "debug": {"--debug", filepath.Join(dir, "d.log")},
		"silent": {"--silent"}, "disableTelemetry": {"--disableTelemetry"},
		"pwd":      {"--pwd", "secret", "--cert", filepath.Join(dir, "c.pfx")},
		"blobHost": {"--blobHost", "0.0.0.0"}, "blobPort": {"--blobPort", "10000"}, "blobKeepAliveTimeout": {"--blobKeepAliveTimeout", "5"},
		"queueHost": {"--queueHost", "0.0.0.0"}, "queuePort": {"--queuePort", "10001"}, "queueKeepAliveTimeout": {"--queueKeepAliveTimeout", "5"},
		"extentMemoryLimit": {"--extentMemoryLimit", "50"},
	}
	for _, f := range azuriteFlags {
		what, ok := said[f]
		if !ok {
			t.Errorf("MIGRATING.md does not say what --%s does", f)
			continue
		}
		a, ok := args[f]
		if !ok {
			t.Fatalf("no arguments for --%s in this test", f)
		}
		cfg, err := emulator.LoadConfig(a, func(string) string { return "" }, nil)
		switch what {
		case "honoured", "accepted":
			if err != nil || len(cfg.Warnings) != 0 {
				t.Errorf("--%s is %s per MIGRATING.md; the binary: %v %q", f, what, err, cfg.Warnings)
			}
		case "ignored with a warning":
			if err != nil || len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "--"+f) {
				t.Errorf("--%s is ignored with a warning per MIGRATING.md; the binary: %v %q", f, err, cfg.Warnings)
			}
		case "refused":
			if err == nil || errors.Is(err, flag.ErrHelp) {
				t.Errorf("--%s is refused per MIGRATING.md; the binary accepts it", f)
			}
		}
	}
	for f := range said {
		if !strings.Contains(strings.Join(azuriteFlags, " ")+" ", f+" ") {
			t.Errorf("MIGRATING.md lists --%s, which Azurite 3.37 does not have", f)
		}
	}
	// The corners the table's words add.
	if cfg, err := emulator.LoadConfig([]string{"--tableKeepAliveTimeout", "0"}, func(string) string { return "" }, nil); err != nil || cfg.KeepAlive != emulator.NoKeepAliveTimeout {
		t.Errorf("--tableKeepAliveTimeout 0 turns the idle timeout off per MIGRATING.md; the binary: %v, KeepAlive %v", err, cfg.KeepAlive)
	}
	if _, err := emulator.LoadConfig([]string{"--oauth", "full", "--cert", cert, "--key", cert}, func(string) string { return "" }, nil); err == nil {
		t.Error("--oauth full is refused per MIGRATING.md; the binary accepts it")
	}
	cfg, err := emulator.LoadConfig([]string{"--inMemoryPersistence", "--location", dir}, func(string) string { return "" }, nil)
	if err != nil || len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "--location is ignored") {
		t.Errorf("--inMemoryPersistence with --location: %v %q; MIGRATING.md says --location is ignored with a warning", err, cfg.Warnings)
	}
}

// TestDocsListFlags: docs/command-line.md names every flag --help lists.
func TestDocsListFlags(t *testing.T) {
	b, err := os.ReadFile("../../docs/command-line.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	_, help, _ := runProc(t, "", "--help")
	for _, m := range regexp.MustCompile(`(?m)^  --(\w+)`).FindAllStringSubmatch(help, -1) {
		if !strings.Contains(readme, "`--"+m[1]) {
			t.Errorf("docs/command-line.md does not mention --%s", m[1])
		}
	}
	// And the other way: each row of the doc's flag tables is a flag --help
	// lists, with the default --help gives.
	rows := regexp.MustCompile("(?m)^\\| `--(\\w+)[^`]*`[^|]*\\| *`?([^|`]*?)`? *\\|").FindAllStringSubmatch(readme, -1)
	if len(rows) < 15 {
		t.Fatalf("found %d rows in docs/command-line.md's flag tables", len(rows))
	}
	for _, r := range rows {
		line := regexp.MustCompile(`(?m)^  --` + r[1] + `\b.*$`).FindString(help)
		if line == "" {
			t.Errorf("docs/command-line.md's flag table has --%s, which --help does not list", r[1])
			continue
		}
		if d := regexp.MustCompile(`\(default ([^):]+)\)$`).FindStringSubmatch(line); d != nil && d[1] != r[2] {
			t.Errorf("--%s: docs/command-line.md's default is %q, --help's %q", r[1], r[2], d[1])
		}
	}
}

// TestDataFilesIgnoredByGit: README's first command serves from the
// current directory, the clone: none of the files a running server keeps
// there (the database, its -wal and -shm, the lock note) shows up in git
// status.
func TestDataFilesIgnoredByGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	if err := exec.Command("git", "-C", "../..", "rev-parse", "--is-inside-work-tree").Run(); err != nil {
		t.Skip("not in a git checkout")
	}
	dir := t.TempDir()
	p := startProc(t, dir, "--tablePort", "0")
	p.ready()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 4 {
		t.Fatalf("the data directory holds %d files while the server runs, want the database, -wal, -shm and the lock", len(entries))
	}
	for _, e := range entries {
		// --no-index: whether the name would be ignored, tracked or not.
		if err := exec.Command("git", "-C", "../..", "check-ignore", "--no-index", "-q", e.Name()).Run(); err != nil {
			t.Errorf("%s, which a server started in the clone writes, is not ignored by .gitignore", e.Name())
		}
	}
	p.signal(syscall.SIGTERM)
	p.exit(15 * time.Second)
}

// TestDocsInsightsLogLine: docs/insights.md's access-log line is what
// tableemu --insights logs for that request, but for the time, the
// duration and the counts (the doc's table holds 100,000 employees, this
// one 40, 12 of them Joneses).
func TestDocsInsightsLogLine(t *testing.T) {
	var doc string
	for _, l := range fencedBlock(t, "../../docs/insights.md", " shape=table-scan ") {
		if strings.Contains(l, " shape=") {
			doc = l
		}
	}
	fields := strings.Fields(doc)
	if len(fields) != 10 || !logLine.MatchString(doc) {
		t.Fatalf("docs/insights.md's line is not an access-log line with insights: %q", doc)
	}
	target := fields[2] // /devstoreaccount1/employees()?$filter=...
	table := strings.TrimSuffix(strings.TrimPrefix(strings.SplitN(target, "?", 2)[0], "/devstoreaccount1/"), "()")

	p := startProc(t, "", "--tablePort", "0", "--inMemoryPersistence", "--insights")
	port, cs := p.ready()
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.CreateTable(ctx, table, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		last := "Smith"
		if i%10 < 3 {
			last = "Jones"
		}
		e, _ := json.Marshal(map[string]string{"PartitionKey": fmt.Sprintf("dept%d", i%4), "RowKey": fmt.Sprintf("%04d", i), "LastName": last})
		if _, err := svc.NewClient(table).AddEntity(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
	}

	// The doc's request target, exactly, signed with Shared Key Lite.
	req, err := http.NewRequest("GET", "http://127.0.0.1:"+port+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.URL.Opaque = strings.SplitN(target, "?", 2)[0]
	req.URL.RawQuery = strings.SplitN(target, "?", 2)[1]
	date := time.Now().UTC().Format(http.TimeFormat)
	key, _ := base64.StdEncoding.DecodeString(emulator.DevKey)
	mac := hmac.New(sha256.New, key)
	io.WriteString(mac, date+"\n/devstoreaccount1"+req.URL.Opaque)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("Accept", "application/json;odata=nometadata")
	req.Header.Set("Authorization", "SharedKeyLite devstoreaccount1:"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("the doc's request: %d", resp.StatusCode)
	}

	got := strings.Fields(p.waitFor(" GET " + target + " "))
	want := append(fields[:0:0], fields...)
	want[0], want[6] = got[0], got[6] // time, duration
	want[8], want[9] = "scanned=40", "returned=12"
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("logged\n %s\ndocs/insights.md (with this table's figures)\n %s", strings.Join(got, " "), strings.Join(want, " "))
	}
}

// TestMigratingReadinessPatterns: the patterns docker/MIGRATING.md gives
// for waiting on the readiness line — grep's, and Testcontainers for Java's
// whole-line regular expression — match the line tableemu prints, and a
// pattern anchored at the start of the line does not, as it says.
func TestMigratingReadinessPatterns(t *testing.T) {
	b, err := os.ReadFile("../../docker/MIGRATING.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(b)), " ") // the patterns span line breaks
	grep := regexp.MustCompile("`grep -q '([^']+)'`").FindStringSubmatch(text)
	java := regexp.MustCompile("`(\\.\\*Azurite [^`]+)`").FindStringSubmatch(text)
	if grep == nil || java == nil {
		t.Fatalf("MIGRATING.md: grep pattern %q, Java pattern %q", grep, java)
	}
	dir := t.TempDir()
	var ready string
	for _, l := range startLines(t, "", dir, dir, "--tablePort", "0", "--inMemoryPersistence") {
		if strings.Contains(l, "successfully listening") {
			ready = l
		}
	}
	if !strings.Contains(ready, grep[1]) {
		t.Errorf("grep -q %q does not match %q", grep[1], ready)
	}
	// Java's Pattern and Go's regexp agree on this one: '.' stops at '\n'.
	if !regexp.MustCompile(`\A(?:` + strings.ReplaceAll(java[1], `\n`, "\n") + `)\z`).MatchString(ready + "\n") {
		t.Errorf("%s does not match the whole line %q", java[1], ready)
	}
	if strings.HasPrefix(ready, "Azurite Table service") {
		t.Errorf("the line starts with Azurite's words, not the time: %q", ready)
	}
}

// TestImageBuiltBeforeUse: the examples use an image built from the
// checkout (the published one exists only from a release on), so every
// document and example that runs it builds it first (docker build, or
// compose's build:), and no `docker run` comes before the first `docker
// build`.
func TestImageBuiltBeforeUse(t *testing.T) {
	use := regexp.MustCompile(`docker run |image: tableemu\b|name: \$TABLEEMU_IMAGE`)
	for _, f := range []string{"README.md", "docker/README.md", "docker/MIGRATING.md", "docker/compose.yaml",
		"docker/compose.azurite.yaml", "docs/containers.md", "docker/ci/github-actions.yml", "docker/ci/gitlab-ci.yml"} {
		b, err := os.ReadFile("../../" + f)
		if err != nil {
			t.Fatal(err)
		}
		// Commands, not the comments about them.
		var lines []string
		for _, l := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "#") {
				lines = append(lines, l)
			}
		}
		s := strings.Join(lines, "\n")
		u := use.FindStringIndex(s)
		if u == nil {
			t.Errorf("%s: no use of the image found; is this list out of date?", f)
			continue
		}
		build := strings.Index(s, "docker build ")
		if build < 0 && !strings.Contains(s, "build: ") {
			t.Errorf("%s uses the image (%q) and never builds it", f, s[u[0]:u[1]])
		}
		if run := strings.Index(s, "docker run "); run >= 0 && (build < 0 || run < build) {
			t.Errorf("%s: docker run comes before docker build", f)
		}
	}
}

// TestCosmosDocsStart: the two ways docs/cosmos.md gives to turn the
// profile on both start tableemu under it, as its first start-up line
// says (run with --tablePort 0 and in memory, so as not to need port
// 8902 or write here; TestLoadConfigProfile checks the port).
func TestCosmosDocsStart(t *testing.T) {
	lines := fencedBlock(t, "../../docs/cosmos.md", "--profile cosmos")
	if len(lines) != 2 {
		t.Fatalf("docs/cosmos.md's block: %q, want two command lines", lines)
	}
	for _, l := range lines {
		words := strings.Fields(l)
		var env []string
		for len(words) > 0 && strings.Contains(words[0], "=") {
			env, words = append(env, words[0]), words[1:]
		}
		if len(words) == 0 || words[0] != "tableemu" {
			t.Fatalf("%q: not a tableemu command line", l)
		}
		cmd := command(t, "", append(words[1:], "--tablePort", "0", "--inMemoryPersistence")...)
		cmd.Env = append(cmd.Env, env...)
		p := startCmd(t, cmd)
		p.ready()
		const want = "tableemu serves Azure Cosmos DB for Table (--profile cosmos) from memory"
		if start := p.lines(); len(start) == 0 || !strings.Contains(start[0], want) {
			t.Errorf("%q: start-up lines %q, want the first to say %q", l, start, want)
		}
	}
}
