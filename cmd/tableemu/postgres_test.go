package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/tableemu/tableemu/internal/pgtest"
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
