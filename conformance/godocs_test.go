package conformance

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Docs that run: the Go commands and programs of README.md and docs/, run
// as a user would run them, against the real binary, with the go command
// configured as on a user's machine: the module proxy this machine is
// configured with (go env GOPROXY; proxy.golang.org by default), an empty
// module cache of the test's own, no GOFLAGS, no workspace, this
// toolchain. So on a new machine with empty caches every module a
// document's commands need is fetched as the user's go command fetches it,
// and a document that relies on a module only this machine has fails here.
//
// Two stand-ins, both module proxies given in front of the configured one:
//   - this checkout, served as a version of github.com/tableemu/tableemu
//     (modProxy), as the release workflow publishes it from a tag, so that
//     `go get github.com/tableemu/tableemu@latest` and `go install
//     .../cmd/tableemu@latest` build what is being tested;
//   - this machine's module cache, read as a proxy (GOPROXY's file:// form),
//     so modules it already holds are not downloaded again; what it lacks
//     falls through to the configured proxy.
//
// Covered here: docs/go.md ("Install the program", "Use it from Go",
// "Embed it in Go tests"), README.md's Go snippet, and docs/security.md's
// openssl command. README.md's "Run" commands and start-up output are the
// command-line tests' (cmd/tableemu).

// repoFile returns a file of the repository, by its path from the root.
func repoFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// section returns the text of the section headed "## title" in md, up to
// the next "## " heading.
func section(t *testing.T, md, title string) string {
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

// fenced returns the fenced blocks of text whose info string is lang ("go",
// "sh", "" for none), in order.
func fenced(text, lang string) []string {
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

// oneBlock returns the only block of lang in text.
func oneBlock(t *testing.T, text, lang string) string {
	t.Helper()
	b := fenced(text, lang)
	if len(b) != 1 {
		t.Fatalf("want one ```%s block, found %d", lang, len(b))
	}
	return b[0]
}

// goEnv is the environment of the go commands a user types (see the top of
// this file); proxies, if any, are put in front of the configured proxy.
func goEnv(t *testing.T, proxies ...string) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("fetches and builds modules with the go command")
	}
	configured := strings.TrimSpace(run(t, os.Environ(), ".", "go env GOPROXY"))
	if configured == "" || configured == "off" {
		t.Skipf("GOPROXY is %q: the go command of this machine fetches no modules", configured)
	}
	if cache := strings.TrimSpace(run(t, os.Environ(), ".", "go env GOMODCACHE")); cache != "" {
		if fi, err := os.Stat(filepath.Join(cache, "cache", "download")); err == nil && fi.IsDir() {
			proxies = append(proxies, fileURL(filepath.Join(cache, "cache", "download")))
		}
	}
	return append(os.Environ(),
		"GOPROXY="+strings.Join(append(proxies, configured), ","),
		// The stand-in version of tableemu is not in the checksum
		// database; every other module is checked against it as usual.
		"GONOSUMDB="+modulePath,
		// -modcacherw: the test's module cache can be removed afterwards.
		"GOMODCACHE="+t.TempDir(), "GOFLAGS=-modcacherw", "GOWORK=off", "GOTOOLCHAIN=local")
}

// run runs a shell script in dir with env and returns its standard output.
func run(t *testing.T, env []string, dir, script string) string {
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

// TestGoDocsProgram: docs/go.md's "Use it from Go" program, built and run
// twice by the section's own commands against the real binary, prints what
// the doc says it prints both times.
func TestGoDocsProgram(t *testing.T) {
	env := goEnv(t)
	bin := buildBinary(t)
	p, err := startBinary(t, bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sec := section(t, repoFile(t, "docs/go.md"), "Use it from Go")
	program := oneBlock(t, sec, "go")
	if !strings.HasPrefix(program, "package main\n") {
		t.Fatal("the program is not a complete main package")
	}
	program = atEndpoint(t, program, p.endpoint)
	var want string
	for _, b := range fenced(sec, "") {
		if strings.Contains(b, "order") {
			want = b
		}
	}
	if want == "" {
		t.Fatal("the section does not show the program's output")
	}

	dir := filepath.Join(t.TempDir(), "orders")
	must(t, os.Mkdir(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(program), 0o644))
	commands := oneBlock(t, sec, "sh")
	if !strings.HasSuffix(commands, "go run .\n") {
		t.Fatalf("the commands should end by running the program:\n%s", commands)
	}
	if got := run(t, env, dir, commands); got != want {
		t.Errorf("first run printed\n%s\nthe doc says\n%s", got, want)
	}
	if got := run(t, env, dir, "go run ."); got != want {
		t.Errorf("second run printed\n%s\nthe doc says\n%s", got, want)
	}
}

// atEndpoint points a document's program, written for the default
// endpoint, at the test's server: port 10002 is not free in CI.
func atEndpoint(t *testing.T, program, endpoint string) string {
	t.Helper()
	const defaultEndpoint = "http://127.0.0.1:10002/devstoreaccount1"
	if strings.Count(program, defaultEndpoint) != 1 {
		t.Fatalf("the program should name %s once", defaultEndpoint)
	}
	return strings.Replace(program, defaultEndpoint, endpoint, 1)
}

// TestReadmeConnect: README.md's "Connect" section. Its export line sets
// the connection string the start-up sample prints (which the command-line
// tests hold to the binary), and its Go snippet, built with the SDK version
// the section names and run twice with that variable pointing at the real
// binary, prints what the section says every snippet prints. (The
// JavaScript, Python and Java snippets are run by those suites:
// conformance/js/test/data-tables/readme.test.js,
// conformance/python/tests/test_readme.py, conformance/java ReadmeTest.)
func TestReadmeConnect(t *testing.T) {
	readme := repoFile(t, "README.md")
	sec := section(t, readme, "Connect")
	export := regexp.MustCompile(`(?m)^export AZURE_TABLES_CONNECTION_STRING="([^"]+)"$`).FindStringSubmatch(oneBlock(t, sec, "sh"))
	printed := regexp.MustCompile(`(?m) connection string (\S+)$`).FindStringSubmatch(readme)
	if export == nil || printed == nil || export[1] != printed[1] {
		t.Fatalf("the export line's connection string %q is not the one the start-up sample prints %q", export, printed)
	}
	prints := regexp.MustCompile("prints `([^`]+)`").FindStringSubmatch(sec)
	if prints == nil {
		t.Fatal("the section does not say what the snippets print")
	}
	sdk := regexp.MustCompile("`(go get github.com/Azure/azure-sdk-for-go/sdk/data/aztables@v[0-9.]+)`").FindStringSubmatch(sec)
	if sdk == nil {
		t.Fatal("the section does not say which aztables version the Go snippet takes")
	}

	env := goEnv(t)
	bin := buildBinary(t)
	p, err := startBinary(t, bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "orders")
	must(t, os.Mkdir(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(oneBlock(t, sec, "go")), 0o644))
	env = append(env, "AZURE_TABLES_CONNECTION_STRING="+p.cs)
	run(t, env, dir, "go mod init example.com/orders\n"+sdk[1]+"\n")
	for i := 1; i <= 2; i++ {
		if got := run(t, env, dir, "go run ."); got != prints[1]+"\n" {
			t.Errorf("run %d printed %q, the README says %q", i, got, prints[1])
		}
	}
}

// TestGoDocsEmbedding: in a new module, docs/go.md's "Embed it in Go tests"
// test file (and docs/isolation.md's "From Go" one beside it) and then the
// section's commands, in the doc's order, make the module depend on
// github.com/tableemu/tableemu as published (modProxy), and the tests pass. Its emulator calls are the ones
// emulator/example_test.go makes, so the runnable example and the doc say
// the same. Then "Install the program": go install of the published
// module, and its --version names that version.
func TestGoDocsEmbedding(t *testing.T) {
	needInProcess(t)
	env := goEnv(t, modProxy(t))
	doc := repoFile(t, "docs/go.md")
	sec := section(t, doc, "Embed it in Go tests")
	if i, j := strings.Index(sec, "```go\n"), strings.Index(sec, "```sh\n"); i < 0 || j < i {
		t.Fatal("the section should show the test file before the commands that need it")
	}
	dir := filepath.Join(t.TempDir(), "app")
	must(t, os.Mkdir(dir, 0o755))
	run(t, env, dir, "go mod init example.com/app")
	code := oneBlock(t, sec, "go")
	must(t, os.WriteFile(filepath.Join(dir, "orders_test.go"), []byte(code), 0o644))
	// docs/isolation.md's Go test file is written beside it, as that
	// section says, and runs with it.
	isolation := oneBlock(t, section(t, repoFile(t, "docs/isolation.md"), "From Go"), "go")
	must(t, os.WriteFile(filepath.Join(dir, "isolation_test.go"), []byte(isolation), 0o644))
	commands := oneBlock(t, sec, "sh")
	if !strings.HasSuffix(commands, "go test ./...\n") {
		t.Fatalf("the commands should end by running the test:\n%s", commands)
	}
	run(t, env, dir, commands)
	out := run(t, env, dir, "go test -count=1 -v ./...")
	if !strings.Contains(out, "--- PASS: TestOrders") {
		t.Errorf("the doc's test did not pass:\n%s", out)
	}
	if !strings.Contains(out, "--- PASS: TestWithFixtures") || !strings.Contains(out, "--- PASS: TestWithFixtures/sees_the_fixtures") {
		t.Errorf("docs/isolation.md's test did not pass:\n%s", out)
	}
	if mod := run(t, env, dir, "go list -m "+modulePath); strings.TrimSpace(mod) != modulePath+" "+testVersion {
		t.Errorf("the module depends on %q, want the published stand-in %s", mod, testVersion)
	}

	example, err := os.ReadFile("../emulator/example_test.go")
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
	install := oneBlock(t, section(t, doc, "Install the program"), "sh")
	bin := t.TempDir()
	env = append(env, "GOBIN="+bin, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out = run(t, env, t.TempDir(), install)
	if !strings.HasPrefix(out, "tableemu "+testVersion+"\n") {
		t.Errorf("the installed tableemu --version printed %q, want the module version %s first", out, testVersion)
	}
}

// TestDocsOpenSSL: docs/security.md's HTTPS openssl command makes a
// certificate and key that tableemu serves with, and that a client trusting
// the certificate accepts for https://127.0.0.1.
func TestDocsOpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("no openssl")
	}
	bin := buildBinary(t)
	var command string
	for _, b := range fenced(section(t, repoFile(t, "docs/security.md"), "HTTPS"), "sh") {
		if strings.HasPrefix(b, "openssl ") {
			// The command and its continuation lines; the rest are
			// comments about trusting the certificate.
			for _, line := range strings.Split(b, "\n") {
				if strings.HasPrefix(line, "#") {
					break
				}
				command += line + "\n"
			}
		}
	}
	if command == "" {
		t.Fatal("the HTTPS section has no openssl command")
	}
	dir := t.TempDir()
	run(t, os.Environ(), dir, command)
	p, err := startBinary(t, bin, t.TempDir(), "--cert", filepath.Join(dir, "cert.pem"), "--key", filepath.Join(dir, "key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.endpoint, "https://127.0.0.1:") {
		t.Fatalf("endpoint %s", p.endpoint)
	}
	pem, err := os.ReadFile(filepath.Join(dir, "cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		t.Fatal("cert.pem holds no certificate")
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	resp, err := client.Get(p.endpoint + "/Tables")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("unsigned GET over HTTPS: %d, want 401", resp.StatusCode)
	}
}
