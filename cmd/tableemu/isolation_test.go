package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// `tableemu reset` and `tableemu snapshot` (isolation.go), run as a user
// runs them, against the real server and on its data directory.

// tablesOf lists the tables the connection string's account has.
func tablesOf(t *testing.T, cs string) []string {
	t.Helper()
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	pager := svc.NewListTablesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, tb := range page.Tables {
			names = append(names, *tb.Name)
		}
	}
	sort.Strings(names)
	return names
}

func createTables(t *testing.T, cs string, names ...string) {
	t.Helper()
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if _, err := svc.CreateTable(context.Background(), n, nil); err != nil {
			t.Fatal(err)
		}
		e := []byte(`{"PartitionKey":"p","RowKey":"r","V":"` + n + `"}`)
		if _, err := svc.NewClient(n).AddEntity(context.Background(), e, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// cli runs `tableemu ARGS` with env added and wants exit code want; it
// returns stdout and stderr.
func cli(t *testing.T, want int, env []string, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := command(t, "", args...)
	cmd.Env = append(cmd.Env, env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != want {
		t.Fatalf("tableemu %s: exit %d, want %d\nstdout %s\nstderr %s", strings.Join(args, " "), code, want, o.String(), e.String())
	}
	return o.String(), e.String()
}

// TestResetCommand: on a running server (found by its port, or by the
// data directory it holds), then on the directory with no server: each
// command's line, and the account's tables after it.
func TestResetCommand(t *testing.T) {
	dir := t.TempDir()
	p := startProc(t, "", "--tablePort", "0", "--location", dir, "--silent")
	port, cs := p.ready()
	createTables(t, cs, "Orders", "People")

	out, _ := cli(t, 0, nil, "snapshot", "save", "fixtures", "--tablePort", port)
	if want := "tableemu snapshot: devstoreaccount1 saved fixtures: 2 tables, 2 entities, saved "; !strings.HasPrefix(out, want) ||
		!strings.HasSuffix(out, " (http://127.0.0.1:"+port+")\n") {
		t.Fatalf("save printed %q", out)
	}
	createTables(t, cs, "Extra")
	// The server's own command line, with the command in front: the
	// directory leads to the server, which serves on the port it announced.
	out, _ = cli(t, 0, nil, "reset", "--location", dir, "--silent", "--loose")
	if out != "tableemu reset: devstoreaccount1 reset: 3 tables deleted (http://127.0.0.1:"+port+")\n" {
		t.Fatalf("reset printed %q", out)
	}
	if got := tablesOf(t, cs); len(got) != 0 {
		t.Fatalf("tables after reset: %v", got)
	}
	cli(t, 0, nil, "snapshot", "restore", "fixtures", "--tablePort", port)
	if got := strings.Join(tablesOf(t, cs), ","); got != "Orders,People" {
		t.Fatalf("tables after restore: %s", got)
	}
	out, _ = cli(t, 0, nil, "snapshot", "list", "--tablePort", port)
	if !strings.HasPrefix(out, "tableemu snapshot: devstoreaccount1 fixtures: 2 tables, 2 entities, saved ") {
		t.Fatalf("list printed %q", out)
	}

	// No server on the directory: the database itself.
	p.signal(syscall.SIGTERM)
	if code := p.exit(15 * time.Second); code != 0 {
		t.Fatalf("server exit %d", code)
	}
	out, _ = cli(t, 0, nil, "reset", "--location", dir)
	if want := "tableemu reset: devstoreaccount1 reset (" + filepath.Join(dir, "tableemu.sqlite") + ", no server running on it)\n"; out != want {
		t.Fatalf("offline reset printed %q, want %q", out, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "tableemu.lock")); !os.IsNotExist(err) {
		t.Errorf("the offline reset left its lock note: %v", err)
	}
	p = startProc(t, "", "--tablePort", "0", "--location", dir, "--silent")
	port, cs = p.ready()
	if got := tablesOf(t, cs); len(got) != 0 {
		t.Fatalf("tables after an offline reset: %v", got)
	}
	p.signal(syscall.SIGTERM)
	p.exit(15 * time.Second)
	cli(t, 0, nil, "snapshot", "restore", "fixtures", "--location", dir)
	cli(t, 0, nil, "snapshot", "delete", "fixtures", "--location", dir)
	out, _ = cli(t, 0, nil, "snapshot", "list", "--location", dir)
	if !strings.HasPrefix(out, "tableemu snapshot: devstoreaccount1 has no snapshots (") {
		t.Fatalf("list after delete printed %q", out)
	}
	p = startProc(t, "", "--tablePort", "0", "--location", dir, "--silent")
	_, cs = p.ready()
	if got := strings.Join(tablesOf(t, cs), ","); got != "Orders,People" {
		t.Fatalf("tables after an offline restore: %s", got)
	}
}

// TestResetCommandAccounts: with AZURITE_ACCOUNTS as the server has it,
// --account picks the account and signs with its key, and --allAccounts
// resets each; without the key, one line says what to give.
func TestResetCommandAccounts(t *testing.T) {
	env := []string{"AZURITE_ACCOUNTS=acct1:a2V5MQ==;acct2:a2V5Mg=="}
	cmd := command(t, "", "--tablePort", "0", "--inMemoryPersistence", "--silent")
	cmd.Env = append(cmd.Env, env...)
	p := startCmd(t, cmd)
	port, cs1 := p.ready()
	cs2 := strings.ReplaceAll(strings.ReplaceAll(cs1, "acct1", "acct2"), "a2V5MQ==", "a2V5Mg==")
	createTables(t, cs1, "One")
	createTables(t, cs2, "Two")

	cli(t, 0, env, "reset", "--account", "acct2", "--tablePort", port)
	if len(tablesOf(t, cs2)) != 0 || len(tablesOf(t, cs1)) != 1 {
		t.Fatal("--account acct2 did not reset acct2 alone")
	}
	createTables(t, cs2, "Two")
	out, _ := cli(t, 0, env, "reset", "--allAccounts", "--tablePort", port)
	if strings.Count(out, " reset: 1 tables deleted") != 2 || len(tablesOf(t, cs1))+len(tablesOf(t, cs2)) != 0 {
		t.Fatalf("--allAccounts printed %q", out)
	}
	// The key given on the command line instead.
	createTables(t, cs1, "One")
	cli(t, 0, nil, "reset", "--account", "acct1", "--accountKey", "a2V5MQ==", "--tablePort", port)
	if len(tablesOf(t, cs1)) != 0 {
		t.Fatal("--accountKey did not reset acct1")
	}
	_, errOut := cli(t, 1, nil, "reset", "--account", "acct1", "--tablePort", port)
	if errOut != "tableemu reset: no key for account acct1: give --accountKey, or AZURITE_ACCOUNTS as the server has it\n" {
		t.Fatalf("without a key: %q", errOut)
	}
	_, errOut = cli(t, 1, nil, "reset", "--account", "acct1", "--accountKey", "d3Jvbmc=", "--tablePort", port)
	if !strings.HasPrefix(errOut, "tableemu reset: 403 AuthenticationFailed: ") {
		t.Fatalf("a wrong key: %q", errOut)
	}
}

// TestResetCommandHTTPS: --cert makes it speak HTTPS and trust that
// certificate.
func TestResetCommandHTTPS(t *testing.T) {
	dir := t.TempDir()
	certPEM, keyPEM := selfSigned(t)
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, certPEM, 0o600)
	os.WriteFile(key, keyPEM, 0o600)
	p := startProc(t, "", "--tablePort", "0", "--inMemoryPersistence", "--silent", "--cert", cert, "--key", key)
	port, _ := p.ready()
	out, _ := cli(t, 0, nil, "reset", "--tablePort", port, "--cert", cert, "--key", key)
	if !strings.HasSuffix(out, "(https://127.0.0.1:"+port+")\n") {
		t.Fatalf("reset over HTTPS printed %q", out)
	}
}

// TestResetCommandErrors: each failure is one line that says what to do;
// command-line mistakes exit 2, failures 1.
func TestResetCommandErrors(t *testing.T) {
	p := startProc(t, "", "--tablePort", "0", "--inMemoryPersistence", "--silent")
	port, _ := p.ready()
	free := t.TempDir()
	for _, tc := range []struct {
		code int
		args []string
		says string
	}{
		{2, []string{"snapshot"}, "say what to do: tableemu snapshot save|restore|delete NAME"},
		{2, []string{"snapshot", "save"}, "needs the snapshot's name"},
		{2, []string{"snapshot", "copy", "x"}, `unknown action "copy"`},
		{2, []string{"snapshot", "list", "--allAccounts"}, "--allAccounts is for tableemu reset"},
		{2, []string{"reset", "--tablePort", "x"}, "tablePort"},
		{2, []string{"reset", "--account", "a", "--allAccounts"}, "give one"},
		{2, []string{"snapshot", "save", "-x", "--tablePort", port}, "needs the snapshot's name"},
		{1, []string{"snapshot", "save", "a/b", "--tablePort", port}, "400 InvalidSnapshotName: The snapshot name \"a/b\" is not valid"},
		{1, []string{"snapshot", "restore", "nope", "--tablePort", port}, `404 SnapshotNotFound: Account devstoreaccount1 has no snapshot named "nope"`},
		{1, []string{"reset", "--tablePort", "1"}, "nothing listens at http://127.0.0.1:1 (connection refused): start tableemu"},
		{1, []string{"reset", "--location", free}, "no tableemu database in " + free},
	} {
		_, errOut := cli(t, tc.code, nil, tc.args...)
		if strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.says) {
			t.Errorf("tableemu %s: stderr %q, want one line saying %q", strings.Join(tc.args, " "), errOut, tc.says)
		}
	}
	out, _ := cli(t, 0, nil, "reset", "--help")
	if !strings.HasPrefix(out, "Usage: tableemu reset") || !strings.Contains(out, "docs/isolation.md") {
		t.Fatalf("reset --help: %q", out)
	}
}

// docSection returns the text of docs/isolation.md's section "## title".
func docSection(t *testing.T, title string) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/isolation.md")
	if err != nil {
		t.Fatal(err)
	}
	_, s, ok := strings.Cut(string(b), "\n## "+title+"\n")
	if !ok {
		t.Fatalf("docs/isolation.md has no section %q", title)
	}
	s, _, _ = strings.Cut(s, "\n## ")
	return s
}

// docBlock returns the lines of the first ``` block of a section whose
// info string is lang.
func docBlock(t *testing.T, section, lang string) []string {
	t.Helper()
	_, s, ok := strings.Cut(section, "```"+lang+"\n")
	if !ok {
		t.Fatalf("no ```%s block in %q", lang, section[:min(len(section), 80)])
	}
	s, _, _ = strings.Cut(s, "```")
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

var savedAt = regexp.MustCompile(`saved \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)

// TestIsolationDocCommands: docs/isolation.md's command-line block, run
// line by line against a server (on its port, and on its data directory
// data/), prints what the doc's sample shows; and its curl line prints
// what the doc says.
func TestIsolationDocCommands(t *testing.T) {
	cwd := t.TempDir()
	p := startProc(t, cwd, "--tablePort", "0", "--location", "data", "--silent")
	port, cs := p.ready()
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Orders", "People"} {
		if _, err := svc.CreateTable(context.Background(), name, nil); err != nil {
			t.Fatal(err)
		}
		for i := range 150 {
			e := []byte(`{"PartitionKey":"p","RowKey":"` + strconv.Itoa(i) + `"}`)
			if _, err := svc.NewClient(name).AddEntity(context.Background(), e, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	sec := docSection(t, "From the command line")
	var printed []string
	for _, line := range docBlock(t, sec, "sh") {
		line, _, _ = strings.Cut(line, "#")
		args := strings.Fields(line)
		if len(args) == 0 || args[0] != "tableemu" {
			t.Fatalf("the block's line %q does not run tableemu", line)
		}
		cmd := command(t, cwd, append(args[1:], "--tablePort", port)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		o := strings.ReplaceAll(string(out), ":"+port+")", ":10002)")
		printed = append(printed, savedAt.ReplaceAllString(o, "saved TIME"))
	}
	all := strings.Join(printed, "")
	sample := docBlock(t, sec, "text")
	if len(sample) < 2 {
		t.Fatal("the sample output has fewer than two lines")
	}
	for _, want := range sample {
		if !strings.Contains(all, savedAt.ReplaceAllString(want, "saved TIME")+"\n") {
			t.Errorf("the doc's sample line %q is not what the commands printed:\n%s", want, all)
		}
	}
	if !strings.Contains(all, "devstoreaccount1 reset ("+filepath.Join(cwd, "data", "tableemu.sqlite")) &&
		!strings.Contains(all, "devstoreaccount1 reset: 0 tables deleted (http://127.0.0.1:10002)\n") {
		t.Errorf("the --location line did not reset through the server or the file:\n%s", all)
	}

	http := docSection(t, "Over HTTP")
	curl := docBlock(t, http, "sh")
	if len(curl) != 1 || !strings.HasPrefix(curl[0], "curl ") {
		t.Fatalf("want one curl line: %q", curl)
	}
	m := regexp.MustCompile("prints `([^`]+)`").FindStringSubmatch(http)
	if m == nil {
		t.Fatal("the section does not say what curl prints")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	out, err := exec.Command("sh", "-c", strings.ReplaceAll(curl[0], ":10002/", ":"+port+"/")).Output()
	if err != nil || string(out) != m[1] {
		t.Fatalf("%s printed %q (%v), the doc says %q", curl[0], out, err, m[1])
	}
}
