package main

import (
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tableemu/tableemu/emulator"
	"github.com/tableemu/tableemu/emulator/store/postgres/pgtest"
)

// On PostgreSQL: two servers on one database, and `tableemu snapshot` and
// `tableemu reset --database` acting on the database directly, for both at
// once; the start line names the database without its password.
func TestIsolationCommandsOnDatabase(t *testing.T) {
	db := pgtest.URL(t)
	a := startProc(t, "", "--tablePort", "0", "--database", db)
	b := startProc(t, "", "--tablePort", "0", "--database", db)
	_, csA := a.ready()
	_, csB := b.ready()
	if !slices.ContainsFunc(a.lines(), func(l string) bool {
		return strings.Contains(l, "serves Azure Table storage from the PostgreSQL database ")
	}) {
		t.Errorf("no start line naming the database: %q", a.lines())
	}
	createTables(t, csA, "fixtures")
	out, _ := cli(t, 0, nil, "snapshot", "save", "loaded", "--database", db)
	if !strings.Contains(out, "saved loaded: 1 tables, 1 entities") || !strings.Contains(out, "(PostgreSQL database ") {
		t.Errorf("snapshot save printed %q", out)
	}
	createTables(t, csB, "extra")
	cli(t, 0, nil, "snapshot", "restore", "loaded", "--database", db)
	for _, cs := range []string{csA, csB} {
		if got := tablesOf(t, cs); !slices.Equal(got, []string{"fixtures"}) {
			t.Errorf("after the restore: %v on one of the servers", got)
		}
	}
	cli(t, 0, []string{"TABLEEMU_DATABASE=" + db}, "reset")
	for _, cs := range []string{csA, csB} {
		if got := tablesOf(t, cs); len(got) != 0 {
			t.Errorf("after the reset: %v on one of the servers", got)
		}
	}
	_, errOut := cli(t, 1, nil, "reset", "--database", "postgres://u:hunter2@127.0.0.1:1/x?connect_timeout=5")
	if !strings.Contains(errOut, "127.0.0.1:1") || strings.Contains(errOut, "hunter2") {
		t.Errorf("unreachable database: %q; want the address, never the password", errOut)
	}
}

// TestPostgresDocCommand: docs/postgres.md's command line starts a server
// on a database, with the doc's URL pointed at the test's PostgreSQL (its
// flags and quoting as written), and the start line names the database
// without the password; the README's --database example parses too.
func TestPostgresDocCommand(t *testing.T) {
	b, err := os.ReadFile("../../docs/postgres.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := docBlock(t, string(b), "")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "tableemu ") {
		t.Fatalf("docs/postgres.md's first block: %q, want one tableemu command", lines)
	}
	args := strings.Fields(strings.TrimPrefix(lines[0], "tableemu "))
	db := pgtest.URL(t)
	for i, a := range args {
		if strings.Contains(a, "postgres://") {
			// The doc's URL, with the test server's address, user and
			// database but the doc's password (the server trusts
			// loopback), to check the start line hides it.
			u, err := url.Parse(strings.Trim(a, "'"))
			if err != nil {
				t.Fatalf("the doc's URL %s: %v", a, err)
			}
			pw, _ := u.User.Password()
			tu, _ := url.Parse(db)
			tu.User = url.UserPassword(tu.User.Username(), pw)
			tu.RawQuery = "sslmode=disable"
			args[i] = tu.String()
		}
		if a == "0.0.0.0" {
			args[i] = "127.0.0.1" // tests listen on loopback
		}
	}
	p := startProc(t, "", append(args, "--tablePort", "0")...)
	p.ready()
	out := strings.Join(p.lines(), "\n")
	if !strings.Contains(out, "from the PostgreSQL database ") || strings.Contains(out, "secret") {
		t.Errorf("start lines %q: want the database named, without its password", out)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`--database (postgres://[^`]+)`").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md: no `--database postgres://…` example")
	}
	if _, err := emulator.LoadConfig([]string{"--database", string(m[1])}, func(string) string { return "" }, nil); err != nil {
		t.Errorf("README.md's --database %s: %v", m[1], err)
	}
}

// TestTransferCommandsOnDatabase: tableemu export --database reads one
// PostgreSQL database, servers on it running or not, and tableemu import
// --database writes another, which a server then serves exactly as the
// first, to the Timestamps.
func TestTransferCommandsOnDatabase(t *testing.T) {
	src, dst := pgtest.URL(t), pgtest.URL(t)
	cwd := t.TempDir()
	a := startProc(t, "", "--tablePort", "0", "--database", src, "--silent")
	_, csA := a.ready()
	fill(t, csA, 20)
	want := dump(t, csA)
	out, _ := cli2(t, cwd, 0, "export", "--database", src, "out")
	if !strings.HasPrefix(out, "tableemu export: devstoreaccount1: 2 tables, 21 entities exported to out (PostgreSQL database ") {
		t.Errorf("export printed %q", out)
	}
	out, _ = cli2(t, cwd, 0, "import", "--database", dst, "out")
	if !strings.HasPrefix(out, "tableemu import: 2 tables, 21 entities imported from out into devstoreaccount1, mode fail (PostgreSQL database ") {
		t.Errorf("import printed %q", out)
	}
	b := startProc(t, "", "--tablePort", "0", "--database", dst, "--silent")
	_, csB := b.ready()
	if got := dump(t, csB); got != want {
		t.Errorf("the imported database:\n%s\nwant\n%s", got, want)
	}
}
