package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// azuriteFlags are the flags of Azurite 3.37: azurite-table's
// (src/table/TableEnvironment.ts) and those the all-in-one azurite adds for
// its blob and queue services (src/azurite/Environment.ts). A command line
// written for either must not fail on any of them.
var azuriteFlags = []string{
	"tableHost", "tablePort", "tableKeepAliveTimeout", "location", "silent", "loose", "skipApiVersionCheck",
	"disableProductStyleUrl", "inMemoryPersistence", "debug", "oauth", "cert", "key", "pwd", "disableTelemetry",
	"blobHost", "blobPort", "blobKeepAliveTimeout", "queueHost", "queuePort", "queueKeepAliveTimeout", "extentMemoryLimit",
}

// TestHelp: --help (and -h) prints the help on stdout and exits 0; it
// lists every Azurite flag, AZURITE_ACCOUNTS and the healthcheck command.
// healthcheck --help has its own.
func TestHelp(t *testing.T) {
	for _, arg := range []string{"--help", "-h", "-help"} {
		code, out, errOut := runProc(t, "", arg)
		if code != 0 || errOut != "" {
			t.Fatalf("%s: exit %d, stderr %q", arg, code, errOut)
		}
		for _, w := range []string{"Usage: tableemu", "AZURITE_ACCOUNTS", "healthcheck", "--version", "Exit status"} {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in the help", arg, w)
			}
		}
		for _, f := range azuriteFlags {
			if !strings.Contains(out, "--"+f+" ") && !strings.Contains(out, "--"+f+",") {
				t.Errorf("%s: the help does not list --%s", arg, f)
			}
		}
	}
	code, out, errOut := runProc(t, "", "healthcheck", "--help")
	if code != 0 || errOut != "" || !strings.HasPrefix(out, "Usage: tableemu healthcheck") {
		t.Fatalf("healthcheck --help: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestVersion: --version prints the version, the commit line and the Go
// release on stdout and exits 0.
func TestVersion(t *testing.T) {
	code, out, errOut := runProc(t, "", "--version")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || errOut != "" || len(lines) != 3 ||
		!strings.HasPrefix(lines[0], "tableemu ") || !strings.HasPrefix(lines[1], "commit ") ||
		lines[2] != runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestBadCommandLine: a mistake is one line on stderr and exit 2, with a
// suggestion when a flag is close to a real one and a pointer to --help;
// nothing on stdout, never the whole usage.
func TestBadCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
		not  string
	}{
		{[]string{"--tablPort", "1"}, []string{"unknown flag --tablPort; did you mean --tablePort?", "tableemu --help"}, ""},
		{[]string{"--tableport", "1"}, []string{"did you mean --tablePort?"}, ""},
		{[]string{"--inMemory"}, []string{"did you mean --inMemoryPersistence?"}, ""},
		{[]string{"--frobnicate"}, []string{"unknown flag --frobnicate", "tableemu --help"}, "did you mean"},
		{[]string{"--tablePort", "http"}, []string{"--tablePort", "tableemu --help"}, ""},
		{[]string{"--location"}, []string{"--location", "needs an argument"}, ""},
		{[]string{"serve"}, []string{`unexpected argument "serve"`}, ""},
		{[]string{"--tableKeepAliveTimeout", "-1"}, []string{"--tableKeepAliveTimeout", "seconds"}, ""},
		{[]string{"--tableKeepAliveTimeout", "5m"}, []string{"--tableKeepAliveTimeout", "seconds"}, ""},
		{[]string{"--pwd", "secret", "--cert", "c.pfx"}, []string{"PFX", "PEM"}, ""},
		{[]string{"--profile", "cosmosdb"}, []string{`--profile "cosmosdb"`, "storage", "cosmos"}, ""},
	} {
		code, out, errOut := runProc(t, "", tc.args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "tableemu: ") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one line on stderr", tc.args, code, out, errOut)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%q: no %q in %q", tc.args, w, errOut)
			}
		}
		if tc.not != "" && strings.Contains(errOut, tc.not) {
			t.Errorf("%q: %q in %q", tc.args, tc.not, errOut)
		}
	}
}

// TestAzuriteCommandLine: the command line of Azurite's all-in-one image,
// with every flag Azurite has except --pwd (refused: tableemu takes PEM)
// and --cert/--key/--oauth (TestHealthcheckOverHTTPSIsQuiet), starts the
// server; the blob and queue flags draw one warning line.
func TestAzuriteCommandLine(t *testing.T) {
	dir := t.TempDir()
	p := startProc(t, "", "azurite",
		"--blobHost", "127.0.0.1", "--blobPort", "10000", "--blobKeepAliveTimeout", "5",
		"--queueHost", "127.0.0.1", "--queuePort", "10001", "--queueKeepAliveTimeout", "5",
		"--tableHost", "127.0.0.1", "--tablePort", "0", "--tableKeepAliveTimeout", "5",
		"-l", dir, "-s", "-L", "--skipApiVersionCheck", "--disableProductStyleUrl",
		"-d", filepath.Join(dir, "debug.log"), "--disableTelemetry", "--extentMemoryLimit", "50")
	p.ready()
	out := p.out.String()
	for _, w := range []string{
		`warning: "azurite" ignored`,
		"warning: --blobHost, --blobPort, --blobKeepAliveTimeout, --queueHost, --queuePort, --queueKeepAliveTimeout, --extentMemoryLimit ignored",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("no %q in:\n%s", w, out)
		}
	}
	p.signal(syscall.SIGTERM)
	if code := p.exit(15 * time.Second); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.out)
	}
	for _, l := range p.lines() { // the warnings too
		if !logLine.MatchString(l) {
			t.Errorf("line not in the log format: %q", l)
		}
	}
}

// TestKeepAliveTimeout: --tableKeepAliveTimeout 1 closes a keep-alive
// connection that stays idle for a second; without it, and with 0 (no
// idle limit, as in Azurite), the same connection is still open then.
// (That 0 is no limit rather than another long one is
// emulator.TestKeepAliveTimeoutZero.)
func TestKeepAliveTimeout(t *testing.T) {
	idleFor := func(args ...string) (closed bool) {
		p := startProc(t, "", append([]string{"--tablePort", "0", "--inMemoryPersistence", "--silent"}, args...)...)
		port, _ := p.ready()
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /devstoreaccount1/Tables HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		// Idle from here: the server closes the connection (EOF) once
		// its keep-alive timeout passes.
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		_, err = br.ReadByte()
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return false
		}
		return err == io.EOF
	}
	if !idleFor("--tableKeepAliveTimeout", "1") {
		t.Error("--tableKeepAliveTimeout 1: the idle connection was still open after 3 s")
	}
	if idleFor() {
		t.Error("default: the idle connection was closed within 3 s")
	}
	if idleFor("--tableKeepAliveTimeout", "0") {
		t.Error("--tableKeepAliveTimeout 0: the idle connection was closed within 3 s")
	}
}

// TestHealthcheckOverHTTPSIsQuiet: the image's health check, which does not
// know the server has --cert, finds an HTTPS server up without making it
// log a TLS handshake error (it did, every 5 s, when the probe spoke plain
// HTTP first); with --cert it probes over TLS only.
func TestHealthcheckOverHTTPSIsQuiet(t *testing.T) {
	dir := t.TempDir()
	certPEM, keyPEM := selfSigned(t)
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, certPEM, 0o600)
	os.WriteFile(key, keyPEM, 0o600)
	p := startProc(t, "", "--tablePort", "0", "--inMemoryPersistence", "--cert", cert, "--key", key, "--oauth", "basic")
	port, _ := p.ready()
	for range 3 {
		code, out, errOut := runHealthcheck("--tablePort", port)
		if code != 0 || !strings.Contains(out, "https://127.0.0.1:"+port) {
			t.Fatalf("exit %d, stdout %q, stderr %q; want up over https", code, out, errOut)
		}
	}
	code, out, errOut := runHealthcheck("--tablePort", port, "--cert", cert, "--key", key)
	if code != 0 || !strings.Contains(out, "https://") {
		t.Fatalf("with --cert: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// The plain HTTP server is found too, after the TLS attempt.
	plain := startProc(t, "", "--tablePort", "0", "--inMemoryPersistence")
	plainPort, _ := plain.ready()
	if code, out, errOut := runHealthcheck("--tablePort", plainPort); code != 0 || !strings.Contains(out, "http://127.0.0.1:"+plainPort) {
		t.Fatalf("plain server: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, _ := runHealthcheck("--tablePort", plainPort, "--cert", cert, "--key", key); code != 1 {
		t.Fatalf("--cert against a plain HTTP server: exit %d, want 1", code)
	}
	time.Sleep(100 * time.Millisecond) // let any log line of the last probe arrive
	for _, q := range []*proc{p, plain} {
		for _, l := range q.lines() {
			if strings.Contains(l, "TLS handshake error") || strings.Contains(l, "GET / ") {
				t.Errorf("the probe was logged: %q", l)
			}
		}
	}

	// A real client speaking HTTP to the HTTPS server is logged, by
	// net/http through the standard logger, in the one log format.
	if resp, err := http.Get("http://127.0.0.1:" + port + "/"); err == nil {
		resp.Body.Close()
	}
	if l := p.waitFor("TLS handshake error"); !logLine.MatchString(l) {
		t.Errorf("net/http's line is not in the log format: %q", l)
	}
}

// TestCORSAfterRestart: CORS rules set through one process are served by
// the next one on the same data directory: nothing the database holds is
// answered from a stale copy in memory.
func TestCORSAfterRestart(t *testing.T) {
	dir := t.TempDir()
	setRules := func(cs string) {
		svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = svc.SetProperties(context.Background(), aztables.ServiceProperties{Cors: []*aztables.CorsRule{{
			AllowedOrigins: to.Ptr("http://app.example"), AllowedMethods: to.Ptr("GET,PUT"),
			AllowedHeaders: to.Ptr("*"), ExposedHeaders: to.Ptr("*"), MaxAgeInSeconds: to.Ptr[int32](30),
		}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	preflight := func(port string) int {
		req, _ := http.NewRequest("OPTIONS", "http://127.0.0.1:"+port+"/devstoreaccount1/Tables", nil)
		req.Header.Set("Origin", "http://app.example")
		req.Header.Set("Access-Control-Request-Method", "PUT")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	first := startProc(t, "", "--tablePort", "0", "--location", dir, "--silent")
	port, cs := first.ready()
	if got := preflight(port); got != 403 {
		t.Fatalf("preflight before any rule: %d, want 403", got)
	}
	setRules(cs)
	if got := preflight(port); got != 200 {
		t.Fatalf("preflight after the rule: %d, want 200", got)
	}
	first.signal(syscall.SIGTERM)
	first.exit(15 * time.Second)

	second := startProc(t, "", "--tablePort", "0", "--location", dir, "--silent")
	port, cs = second.ready()
	if got := preflight(port); got != 200 {
		t.Fatalf("preflight after restart: %d, want 200", got)
	}
	svc, _ := aztables.NewServiceClientFromConnectionString(cs, nil)
	props, err := svc.GetProperties(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(props.Cors) != 1 || *props.Cors[0].AllowedOrigins != "http://app.example" {
		t.Fatalf("CORS rules after restart: %+v", props.Cors)
	}
}

// TestVersionCommitFromLdflags: a binary built without VCS information
// (-buildvcs=false, as the container image's build, which has no .git)
// names the commit given with -ldflags -X main.commit, as packaging/release/build.sh
// sets it, from COMMIT, which docker/build-binary.sh passes from
// TABLEEMU_COMMIT (and VERSION from TABLEEMU_VERSION).
func TestVersionCommitFromLdflags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	for file, want := range map[string][]string{
		"../../packaging/release/build.sh": {"-X main.version=$version -X main.commit=$commit"},
		"../../docker/build-binary.sh":     {"VERSION=${TABLEEMU_VERSION:-v0.0.0-dev} COMMIT=$commit", "sh packaging/release/build.sh"},
	} {
		script, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(script), w) {
				t.Errorf("%s does not say %q: the stamp is not passed on", file, w)
			}
		}
	}
	bin := filepath.Join(t.TempDir(), "tableemu")
	build := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", append(append([]string{"build", "-buildvcs=false", "-o", bin}, args...), ".")...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %q: %v\n%s", args, err, out)
		}
		out, err := exec.Command(bin, "--version").Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	if out := build("-ldflags", "-X main.commit=abc1234"); !strings.Contains(out, "\ncommit abc1234\n") {
		t.Errorf("built with -X main.commit=abc1234: --version says\n%s", out)
	}
	if out := build(); !strings.Contains(out, "\ncommit unknown\n") {
		t.Errorf("built with no VCS information and no -X: --version says\n%s", out)
	}
}

// TestStartedAsAzurite: under Azurite's command names (the image's links,
// Dockerfile) the binary takes the same command line. As azurite it says
// once that only the table service runs and, as anywhere, ignores the blob
// and queue flags with a warning; as azurite-table it warns of nothing.
// With no --location the database is in the current directory, as in
// Azurite (the image's WORKDIR is /data). As azurite-blob or azurite-queue
// it refuses to start. No line ever claims a blob or queue service.
func TestStartedAsAzurite(t *testing.T) {
	links := t.TempDir()
	for _, name := range []string{"azurite", "azurite-table", "azurite-blob"} {
		if err := os.Symlink(binary(t), filepath.Join(links, name)); err != nil {
			t.Fatal(err)
		}
	}
	as := func(name, dir string, args ...string) *exec.Cmd {
		cmd := command(t, dir, args...)
		cmd.Path = filepath.Join(links, name)
		cmd.Args[0] = cmd.Path
		return cmd
	}
	claims := regexp.MustCompile(`(?i)(blob|queue) service (is|started|listening)`)
	for _, tc := range []struct {
		name  string
		extra []string
		warn  []string
	}{
		{"azurite", []string{"--blobHost", "0.0.0.0", "--queueHost", "0.0.0.0"}, []string{
			"warning: started as azurite: only the table service runs (tableemu has no blob or queue service)",
			"warning: --blobHost, --queueHost ignored: tableemu serves the table service only"}},
		{"azurite-table", nil, nil},
	} {
		dir := t.TempDir()
		p := startCmd(t, as(tc.name, dir, append([]string{"--tableHost", "127.0.0.1", "--tablePort", "0"}, tc.extra...)...))
		p.ready()
		p.signal(syscall.SIGTERM)
		if code := p.exit(15 * time.Second); code != 0 {
			t.Fatalf("%s: exit %d:\n%s", tc.name, code, p.out)
		}
		var warnings []string
		for _, l := range p.lines() {
			if _, w, ok := strings.Cut(l, " warning: "); ok {
				warnings = append(warnings, "warning: "+w)
			}
			if claims.MatchString(l) {
				t.Errorf("%s: a line claims a service tableemu does not have: %q", tc.name, l)
			}
		}
		if strings.Join(warnings, "\n") != strings.Join(tc.warn, "\n") {
			t.Errorf("%s: warnings\n%s\nwant\n%s", tc.name, strings.Join(warnings, "\n"), strings.Join(tc.warn, "\n"))
		}
		// Each command's own readiness line (Azurite 3.37: the all-in-one
		// azurite prints "... is successfully listening at URL",
		// azurite-table "... successfully started on HOST:PORT").
		started := regexp.MustCompile(`^\S+ Azurite Table service successfully started on 127\.0\.0\.1:[0-9]+ \(tableemu, Azurite-compatible\)$`)
		found := false
		for _, l := range p.lines() {
			found = found || started.MatchString(l)
		}
		if want := tc.name == "azurite-table"; found != want {
			t.Errorf("%s: azurite-table's readiness line printed: %v, want %v\n%s", tc.name, found, want, p.out)
		}
		if _, err := os.Stat(filepath.Join(dir, "tableemu.sqlite")); err != nil {
			t.Errorf("%s with no --location: no database in the current directory: %v\n%s", tc.name, err, p.out)
		}
	}

	cmd := as("azurite-blob", "", "--blobHost", "0.0.0.0")
	var errOut strings.Builder
	cmd.Stderr = &errOut
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(errOut.String(), "tableemu has no blob service") {
		t.Errorf("as azurite-blob: exit %d (%v), stderr %q; want 2 and a refusal", code, err, errOut.String())
	}
}

func TestCommandName(t *testing.T) {
	for in, want := range map[string]string{
		"tableemu": "tableemu", "/usr/local/bin/azurite": "azurite", "azurite-table": "azurite-table",
		`C:\tools\Azurite.EXE`: "azurite", "./tableemu-linux-amd64": "tableemu-linux-amd64",
	} {
		if runtime.GOOS != "windows" && strings.Contains(in, `\`) {
			in = strings.ReplaceAll(in, `\`, "/")
		}
		if got := commandName(in); got != want {
			t.Errorf("commandName(%q) = %q, want %q", in, got, want)
		}
	}
}
