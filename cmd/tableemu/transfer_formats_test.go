package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tableemu/tableemu/emulator/transfer/azuritetest"
)

// The command's other sources and formats: an Azurite data directory,
// Storage Explorer's CSV in and out.

// TestTransferCommandFromAzurite: tableemu import --from-azurite reads the
// directory a real Azurite wrote (filled through the SDK, stopped with
// Ctrl-C) into a running tableemu: its tables, their entities with their
// types, and the service properties.
func TestTransferCommandFromAzurite(t *testing.T) {
	az := azuritetest.Start(t, "", nil)
	fill(t, az.ConnectionString(), 5)
	az.Stop(t) // Ctrl-C: Azurite saves its database
	dir := az.Dir

	p := startProc(t, "", "--tablePort", "0", "--inMemoryPersistence", "--silent")
	port, cs := p.ready()
	out, _ := cli2(t, "", 0, "import", "--from-azurite", dir, "--tablePort", port)
	if want := "tableemu import: 2 tables, 6 entities imported from Azurite's " + dir + " into the accounts of the same names, mode fail (http://127.0.0.1:" + port + ")\n"; out != want {
		t.Errorf("import --from-azurite printed %q, want %q", out, want)
	}
	got := dump(t, cs)
	for _, s := range []string{"table Orders", "table People", `I64@odata.type="Edm.Int64"`, `DT="2024-02-29T12:34:56.1234567Z"`,
		"policy readers", "cors http://app.example"} {
		if !strings.Contains(got, s) {
			t.Errorf("the import lacks %q:\n%s", s, got)
		}
	}
}

// TestTransferCommandCSV: tableemu import FILE.csv reads a file of Storage
// Explorer's CSV (the CSV room's sample, written by its rules: four
// entities) into a running server, a table named after the file, each
// type as the file says; a directory of such files is read as CSV too.
func TestTransferCommandCSV(t *testing.T) {
	sample, err := filepath.Abs("../../emulator/transfer/testdata/csv/sample.csv")
	if err != nil {
		t.Fatal(err)
	}
	p := startProc(t, "", "--tablePort", "0", "--inMemoryPersistence", "--silent")
	port, cs := p.ready()
	out, _ := cli2(t, "", 0, "import", "--tablePort", port, sample)
	if !strings.HasPrefix(out, "tableemu import: 1 tables, 4 entities imported from "+sample+" into devstoreaccount1, mode fail (") {
		t.Errorf("import of a CSV file printed %q", out)
	}
	got := dump(t, cs)
	for _, s := range []string{"table sample", `Total="9223372036854775807"`, `Total@odata.type="Edm.Int64"`, `Id@odata.type="Edm.Guid"`,
		`Name="Smith, Jane"`, `Price="NaN"`} {
		if !strings.Contains(got, s) {
			t.Errorf("the imported CSV lacks %s:\n%s", s, got)
		}
	}
	dir := t.TempDir()
	b, _ := os.ReadFile(sample)
	os.WriteFile(filepath.Join(dir, "orders.csv"), b, 0o644)
	cli2(t, "", 0, "import", "--tablePort", port, dir)
	if got := tablesOf(t, cs); strings.Join(got, ",") != "orders,sample" {
		t.Errorf("after importing a directory of CSV: %v", got)
	}
}

// TestTransferCommandCSVExport: tableemu export --format csv writes a
// <table>.csv a table, which tableemu import reads back into another
// server with every entity and type (not the Timestamps, which a CSV
// import leaves to the server, as Storage Explorer's does).
func TestTransferCommandCSVExport(t *testing.T) {
	cwd := t.TempDir()
	a := startProc(t, "", "--tablePort", "0", "--inMemoryPersistence", "--silent")
	portA, csA := a.ready()
	fill(t, csA, 10)
	out, _ := cli2(t, cwd, 0, "export", "--format", "csv", "--tablePort", portA, "csv")
	if !strings.HasPrefix(out, "tableemu export: devstoreaccount1: 2 tables, 11 entities exported to csv (") {
		t.Errorf("export --format csv printed %q", out)
	}
	for _, f := range []string{"Orders.csv", "People.csv"} {
		if _, err := os.Stat(filepath.Join(cwd, "csv", f)); err != nil {
			t.Errorf("no %s: %v", f, err)
		}
	}
	b := startProc(t, "", "--tablePort", "0", "--inMemoryPersistence", "--silent")
	portB, csB := b.ready()
	cli2(t, cwd, 0, "import", "--tablePort", portB, "csv")
	// The same but for Timestamps and ETags, policies and properties.
	strip := regexp.MustCompile(`(?m)Timestamp="[^"]*" |odata\.etag="(?:[^"\\]|\\.)*" |^policy .*\n|^cors .*\n`)
	if got, want := strip.ReplaceAllString(dump(t, csB), ""), strip.ReplaceAllString(dump(t, csA), ""); got != want {
		t.Errorf("imported from CSV:\n%s\nwant\n%s", got, want)
	}
	_, errOut := cli2(t, cwd, 2, "export", "--format", "xml", "out")
	if !strings.Contains(errOut, "--format xml: the formats are jsonl (the default) and csv") {
		t.Errorf("--format xml: %q", errOut)
	}
}
