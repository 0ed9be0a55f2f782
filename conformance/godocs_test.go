package conformance

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tableemu/tableemu/conformance/doctest"
)

// Docs that run: the Go commands and programs of README.md and docs/, run
// as a user would run them (conformance/doctest says how the go command is
// set up), against the real binary. Covered here: docs/go.md's "Use it
// from Go", README.md's Go snippet, and docs/security.md's openssl
// command; docs/go.md's "Embed it in Go tests" and "Install the program"
// are conformance/godocs's, a package of their own because they compile
// tableemu as a module version of its own, for a minute or more on a small
// machine. README.md's "Run" commands and start-up output are
// the command-line tests' (cmd/tableemu).

// The document helpers, under the names these tests use.
var (
	repoFile = doctest.File
	section  = doctest.Section
	fenced   = doctest.Fenced
	oneBlock = doctest.OneBlock
	run      = doctest.Run
	goEnv    = doctest.GoEnv
)

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
