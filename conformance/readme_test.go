package conformance

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// Docs that run: the README's programs and commands, run as a user would
// run them, against the real binary. Go commands find modules in the module
// cache, with the repository's go.sum, and any lookup beyond it goes to a
// module proxy that refuses every request (noProxy), so CI needs no network
// and a command that asks for a module that is not published fails here as
// it fails for a user. (GOPROXY=off would hide that: "off" reads as "no such
// module", which go get accepts for a replaced module, while a user's
// proxy.golang.org answers 404 and the go command then asks GitHub, which
// fails.) The versions are the ones README.md names.
//
// Covered here: "Use it from Go" (its sh block and program, run twice),
// "Embed it in Go tests" (its test file and sh block, in a module that
// replaces github.com/tableemu/tableemu with this repository, and the
// go install of the program), and the HTTPS section's openssl command. The
// "Set up" commands (go run ./cmd/tableemu and the start-up output) are the
// command-line tests'.

// readme returns README.md.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// section returns the text of the README section headed "## title", up to
// the next "## " heading.
func section(t *testing.T, md, title string) string {
	t.Helper()
	i := strings.Index(md, "\n## "+title+"\n")
	if i < 0 {
		t.Fatalf("README.md has no section %q", title)
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

// goEnv is the environment of the go commands a README user types: no
// GOFLAGS (so -mod=readonly, as for a user: a missing requirement fails
// instead of being added quietly), no workspace, this toolchain, and a
// module proxy that refuses everything not in the module cache.
func goEnv(t *testing.T) []string {
	return append(os.Environ(), "GOPROXY="+noProxy(t), "GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local")
}

// noProxy is a module proxy that answers every request 403, as a stand-in
// for the network a user has and CI does not: a module that is not in the
// module cache (tableemu itself, which is not published) cannot be found.
func noProxy(t *testing.T) string {
	t.Helper()
	var mu sync.Mutex
	var asked []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		http.Error(w, "no network in this test", http.StatusForbidden)
	}))
	t.Cleanup(func() {
		hs.Close()
		mu.Lock()
		defer mu.Unlock()
		if len(asked) > 0 {
			t.Logf("the module proxy was asked for %q", asked)
		}
	})
	return hs.URL
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

// newModuleDir is an empty directory holding the repository's go.sum, so
// that the README's go get needs no checksum database.
func newModuleDir(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile("../go.sum")
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	return dir
}

// TestReadmeGoProgram: the "Use it from Go" program, built and run twice
// by the section's own commands against the real binary, prints what the
// README says it prints both times.
func TestReadmeGoProgram(t *testing.T) {
	bin := buildBinary(t)
	p, err := startBinary(t, bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sec := section(t, readme(t), "Use it from Go")
	program := oneBlock(t, sec, "go")
	if !strings.HasPrefix(program, "package main\n") {
		t.Fatal("the program is not a complete main package")
	}
	// The program talks to the default endpoint; port 10002 is not free in
	// CI, so point it at the binary's port instead.
	const defaultEndpoint = "http://127.0.0.1:10002/devstoreaccount1"
	if strings.Count(program, defaultEndpoint) != 1 {
		t.Fatalf("the program should name %s once", defaultEndpoint)
	}
	program = strings.Replace(program, defaultEndpoint, p.endpoint, 1)
	var want string
	for _, b := range fenced(sec, "") {
		if strings.Contains(b, "order") {
			want = b
		}
	}
	if want == "" {
		t.Fatal("the section does not show the program's output")
	}

	dir := newModuleDir(t, filepath.Join(t.TempDir(), "orders"))
	must(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(program), 0o644))
	commands := oneBlock(t, sec, "sh")
	if !strings.HasSuffix(commands, "go run .\n") {
		t.Fatalf("the commands should end by running the program:\n%s", commands)
	}
	env := goEnv(t)
	if got := run(t, env, dir, commands); got != want {
		t.Errorf("first run printed\n%s\nthe README says\n%s", got, want)
	}
	if got := run(t, env, dir, "go run ."); got != want {
		t.Errorf("second run printed\n%s\nthe README says\n%s", got, want)
	}
}

// TestReadmeEmbedding: in a module next to a clone, the "Embed it in Go
// tests" test file and then the section's commands, in the README's order,
// make the module depend on this repository through a replace directive,
// and the test passes. Its emulator calls are the ones
// emulator/example_test.go makes, so the runnable example and the README
// say the same. The section's go install builds the program from the clone.
func TestReadmeEmbedding(t *testing.T) {
	needInProcess(t)
	if testing.Short() {
		t.Skip("builds a module with go")
	}
	sec := section(t, readme(t), "Embed it in Go tests")
	if i, j := strings.Index(sec, "```go\n"), strings.Index(sec, "```sh\n"); i < 0 || j < i {
		t.Fatal("the section should show the test file before the commands that need it")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	// The README's layout: the clone at ../tableemu next to the project.
	must(t, os.Symlink(root, filepath.Join(parent, "tableemu")))
	dir := newModuleDir(t, filepath.Join(parent, "app"))
	env := goEnv(t)
	run(t, env, dir, "go mod init example.com/app")
	code := oneBlock(t, sec, "go")
	must(t, os.WriteFile(filepath.Join(dir, "orders_test.go"), []byte(code), 0o644))
	commands := oneBlock(t, sec, "sh")
	if !strings.HasSuffix(commands, "go test ./...\n") {
		t.Fatalf("the commands should end by running the test:\n%s", commands)
	}
	run(t, env, dir, commands)
	out := run(t, env, dir, "go test -count=1 -v ./...")
	if !strings.Contains(out, "--- PASS: TestOrders") {
		t.Errorf("the README's test did not pass:\n%s", out)
	}

	example, err := os.ReadFile("../emulator/example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	calls := regexp.MustCompile(`emulator\.[A-Za-z]+\(.*\)`).FindAllString(code, -1)
	if len(calls) < 3 {
		t.Fatalf("the README's test makes %d emulator calls: %q", len(calls), calls)
	}
	for _, c := range calls {
		if !strings.Contains(string(example), c) {
			t.Errorf("emulator/example_test.go does not make the README's call %s", c)
		}
	}

	// "go install ./cmd/tableemu, then tableemu", in the clone.
	install := regexp.MustCompile("`(go install [^`]+)`,\\s+then\\s+`(tableemu)`").FindStringSubmatch(sec)
	if install == nil {
		t.Fatal("the section does not say how to install the program")
	}
	bin := t.TempDir()
	run(t, append(env, "GOBIN="+bin), root, install[1])
	if v := run(t, env, bin, "./"+install[2]+" --version"); !strings.HasPrefix(v, "tableemu ") {
		t.Errorf("the installed tableemu --version printed %q", v)
	}
}

// TestReadmeOpenSSL: the HTTPS section's openssl command makes a
// certificate and key that tableemu serves with, and that a client trusting
// the certificate accepts for https://127.0.0.1.
func TestReadmeOpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("no openssl")
	}
	bin := buildBinary(t)
	var command string
	for _, b := range fenced(section(t, readme(t), "HTTPS"), "sh") {
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
	run(t, goEnv(t), dir, command)
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
