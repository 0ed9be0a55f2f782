package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/emulator/transfer"
)

// `tableemu export` and `tableemu import` (transfer.go), run as a user
// runs them: a round trip through files of every EDM type, stored access
// policies and service properties, on a running server, on a data
// directory no server holds, and on PostgreSQL (postgres_test.go).

// everyTypeEntity is an entity with a property of each EDM type, and the
// values hardest to keep: a 100 ns DateTime, an Int64 beyond 2^53, NaN
// and the infinities, a Double with a whole value, empty strings and
// empty Binary.
func everyTypeEntity(rk string) []byte {
	return []byte(`{"PartitionKey":"p","RowKey":"` + rk + `",` +
		`"S":"text ✓","Empty":"","I32":-7,"I64@odata.type":"Edm.Int64","I64":"9007199254740993",` +
		`"D":1.5,"Whole@odata.type":"Edm.Double","Whole":"2.0","NaN@odata.type":"Edm.Double","NaN":"NaN",` +
		`"Inf@odata.type":"Edm.Double","Inf":"Infinity","NInf@odata.type":"Edm.Double","NInf":"-Infinity",` +
		`"B":true,"DT@odata.type":"Edm.DateTime","DT":"2024-02-29T12:34:56.1234567Z",` +
		`"G@odata.type":"Edm.Guid","G":"c9da6455-213d-42c9-9a79-3e9149a57833",` +
		`"Bin@odata.type":"Edm.Binary","Bin":"AAEC/w==","NoBin@odata.type":"Edm.Binary","NoBin":""}`)
}

// fill gives the connection string's account two tables (one with every
// type, n entities, and a stored access policy; one of a single entity),
// and a CORS rule.
func fill(t *testing.T, cs string, n int) {
	t.Helper()
	ctx := context.Background()
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	createTables(t, cs, "People")
	if _, err := svc.CreateTable(ctx, "Orders", nil); err != nil {
		t.Fatal(err)
	}
	orders := svc.NewClient("Orders")
	for i := range n {
		if _, err := orders.AddEntity(ctx, everyTypeEntity(fmt.Sprintf("%05d", i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	start, expiry := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	_, err = orders.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{{
		ID: to.Ptr("readers"), AccessPolicy: &aztables.AccessPolicy{Start: &start, Expiry: &expiry, Permission: to.Ptr("r")}}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.SetProperties(ctx, aztables.ServiceProperties{Cors: []*aztables.CorsRule{{AllowedOrigins: to.Ptr("http://app.example"),
		AllowedMethods: to.Ptr("GET"), AllowedHeaders: to.Ptr("*"), ExposedHeaders: to.Ptr("*"), MaxAgeInSeconds: to.Ptr[int32](5)}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
}

// dump is what an account shows through the SDK: each table's entities
// as the service sends them (their Timestamps and ETags too), its stored
// access policies, and the account's CORS rules.
func dump(t *testing.T, cs string) string {
	t.Helper()
	ctx := context.Background()
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, name := range tablesOf(t, cs) {
		c := svc.NewClient(name)
		fmt.Fprintf(&b, "table %s\n", name)
		// Full metadata: every property's type shows (minimal metadata
		// writes a whole Double as a number, like an Int32).
		pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Format: to.Ptr(aztables.MetadataFormatFull)})
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range page.Entities {
				b.Write(canonical(t, e))
				b.WriteByte('\n')
			}
		}
		acl, err := c.GetAccessPolicy(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range acl.SignedIdentifiers {
			fmt.Fprintf(&b, "policy %s %v %v %s\n", *id.ID, id.AccessPolicy.Start.UTC(), id.AccessPolicy.Expiry.UTC(), *id.AccessPolicy.Permission)
		}
	}
	props, err := svc.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range props.Cors {
		fmt.Fprintf(&b, "cors %s %s\n", *r.AllowedOrigins, *r.AllowedMethods)
	}
	return b.String()
}

// canonical is an entity's JSON with its members sorted, without the
// annotations that hold the server's address: the same entity always
// prints the same.
func canonical(t *testing.T, e []byte) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(e, &m); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != "odata.id" && k != "odata.editLink" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b bytes.Buffer
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s ", k, m[k])
	}
	return b.Bytes()
}

// TestTransferCommands: export from a running server (by its port), import
// into another (by the data directory it holds) and into a directory no
// server holds, each holding afterwards exactly what the first does, to
// the Timestamps; the modes; progress and summary lines.
func TestTransferCommands(t *testing.T) {
	cwd := t.TempDir()
	a := startProc(t, "", "--tablePort", "0", "--inMemoryPersistence", "--silent")
	portA, csA := a.ready()
	fill(t, csA, 30)
	want := dump(t, csA)
	for _, s := range []string{"table Orders", "table People", "policy readers", "cors http://app.example", `I64@odata.type="Edm.Int64"`,
		`DT="2024-02-29T12:34:56.1234567Z"`, `NaN="NaN"`} {
		if !strings.Contains(want, s) {
			t.Fatalf("the source account lacks %q:\n%s", s, want)
		}
	}

	out, errOut := cli2(t, cwd, 0, "export", "--tablePort", portA, "fixtures")
	if out != "tableemu export: devstoreaccount1: 2 tables, 31 entities exported to fixtures (http://127.0.0.1:"+portA+")\n" {
		t.Errorf("export printed %q", out)
	}
	// Not a terminal: one line per table, at its end.
	if errOut != "tableemu export: Orders: 30 entities\ntableemu export: People: 1 entities\n" {
		t.Errorf("export's progress: %q", errOut)
	}
	for _, f := range []string{"tableemu.json", "Orders.jsonl", "People.jsonl"} {
		if _, err := os.Stat(filepath.Join(cwd, "fixtures", f)); err != nil {
			t.Errorf("the export wrote no %s: %v", f, err)
		}
	}
	// A whole Double keeps its type in the file (the SDK's view above
	// cannot tell it from an Int32).
	if b, _ := os.ReadFile(filepath.Join(cwd, "fixtures", "Orders.jsonl")); !bytes.Contains(b, []byte(`"Whole@odata.type":"Edm.Double"`)) {
		t.Errorf("Orders.jsonl lost the type of a whole Double:\n%.400s", b)
	}
	// Again into the same directory: refused, unless --force.
	_, errOut = cli2(t, cwd, 1, "export", "--tablePort", portA, "fixtures")
	if !strings.Contains(errOut, "already holds an export") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("export over an export: %q", errOut)
	}
	cli2(t, cwd, 0, "export", "--tablePort", portA, "--force", "fixtures")

	// Into a server found by its data directory.
	dirB := t.TempDir()
	b := startProc(t, "", "--tablePort", "0", "--location", dirB, "--silent")
	portB, csB := b.ready()
	out, _ = cli2(t, cwd, 0, "import", "--location", dirB, "fixtures")
	if out != "tableemu import: 2 tables, 31 entities imported from fixtures into devstoreaccount1, mode fail (http://127.0.0.1:"+portB+")\n" {
		t.Errorf("import printed %q", out)
	}
	if got := dump(t, csB); got != want {
		t.Fatalf("after the import:\n%s\nwant\n%s", got, want)
	}
	// The modes: fail refuses, and changes nothing; replace and merge.
	_, errOut = cli2(t, cwd, 1, "import", "--tablePort", portB, "fixtures")
	if !strings.HasPrefix(errOut, "tableemu import: 409 TableAlreadyExists: ") || !strings.Contains(errOut, "mode replace") {
		t.Errorf("import over the tables: %q", errOut)
	}
	svcB, _ := aztables.NewServiceClientFromConnectionString(csB, nil)
	if _, err := svcB.NewClient("People").AddEntity(context.Background(), []byte(`{"PartitionKey":"p","RowKey":"extra"}`), nil); err != nil {
		t.Fatal(err)
	}
	cli2(t, cwd, 0, "import", "--tablePort", portB, "--tables", "people", "--mode", "merge", "fixtures")
	if got := dump(t, csB); !strings.Contains(got, `RowKey="extra"`) || strings.Count(got, "\n") != strings.Count(want, "\n")+1 {
		t.Errorf("after a merge: the extra entity is gone, or another came:\n%s", got)
	}
	cli2(t, cwd, 0, "import", "--tablePort", portB, "--mode", "replace", "fixtures")
	if got := dump(t, csB); got != want {
		t.Errorf("after a replace:\n%s", got)
	}

	// Into a directory no server holds, created by the import; then a
	// server started on it has the data.
	dirC := filepath.Join(t.TempDir(), "data")
	out, _ = cli2(t, cwd, 0, "import", "--location", dirC, "fixtures/Orders.jsonl")
	if want := "tableemu import: 1 tables, 30 entities imported from fixtures/Orders.jsonl into devstoreaccount1, mode fail (" +
		filepath.Join(dirC, "tableemu.sqlite") + ", no server running on it)\n"; out != want {
		t.Errorf("offline import printed %q, want %q", out, want)
	}
	cli2(t, cwd, 0, "import", "--location", dirC, "--tables", "People", "fixtures")
	cli2(t, cwd, 0, "import", "--location", dirC, "--mode", "merge", "--tables", "Orders", "fixtures") // the policy, from the manifest
	cli2(t, cwd, 0, "export", "--location", dirC, "offline")
	c := startProc(t, "", "--tablePort", "0", "--location", dirC, "--silent")
	_, csC := c.ready()
	if got := dump(t, csC); got != want {
		t.Errorf("a directory imported into with no server:\n%s\nwant\n%s", got, want)
	}
	for _, f := range []string{"Orders.jsonl", "People.jsonl"} {
		x, _ := os.ReadFile(filepath.Join(cwd, "fixtures", f))
		y, _ := os.ReadFile(filepath.Join(cwd, "offline", f))
		if !bytes.Equal(x, y) || len(x) == 0 {
			t.Errorf("%s: the offline export differs from the online one", f)
		}
	}
	c.signal(syscall.SIGTERM)
	c.exit(15 * time.Second)
}

// cli2 runs `tableemu ARGS` in dir and wants exit code want.
func cli2(t *testing.T, dir string, want int, args ...string) (stdout, stderr string) {
	t.Helper()
	code, o, e := runProc(t, dir, args...)
	if code != want {
		t.Fatalf("tableemu %s: exit %d, want %d\nstdout %s\nstderr %s", strings.Join(args, " "), code, want, o, e)
	}
	return o, e
}

// TestTransferCommandErrors: a line the service would refuse is named by
// file and line, with why, online and offline, and nothing of its table
// is written; command-line mistakes exit 2; each failure is one line.
func TestTransferCommandErrors(t *testing.T) {
	cwd := t.TempDir()
	p := startProc(t, "", "--tablePort", "0", "--inMemoryPersistence", "--silent")
	port, cs := p.ready()
	os.Mkdir(filepath.Join(cwd, "bad"), 0o755)
	lines := `{"PartitionKey":"p","RowKey":"1"}` + "\n\n" + // a blank line: the file's numbers are not the body's
		`{"PartitionKey":"p","RowKey":"2","N@odata.type":"Edm.Int64","N":"x"}` + "\n"
	os.WriteFile(filepath.Join(cwd, "bad", "Orders.jsonl"), []byte(lines), 0o644)
	_, errOut := cli2(t, cwd, 1, "import", "--tablePort", port, "bad")
	if !strings.HasPrefix(errOut, "tableemu import: 400 ") || !strings.Contains(errOut, "Orders.jsonl:3: ") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("online, a bad line: %q", errOut)
	}
	if got := tablesOf(t, cs); len(got) != 0 {
		t.Errorf("a refused import left tables: %v", got)
	}
	// Mode fail with one table of two there already: refused before
	// anything is sent.
	os.Mkdir(filepath.Join(cwd, "two"), 0o755)
	os.WriteFile(filepath.Join(cwd, "two", "Aaa.jsonl"), []byte(`{"PartitionKey":"p","RowKey":"1"}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(cwd, "two", "Zzz.jsonl"), []byte(`{"PartitionKey":"p","RowKey":"1"}`+"\n"), 0o644)
	createTables(t, cs, "zzz")
	if _, errOut := cli2(t, cwd, 1, "import", "--tablePort", port, "two"); !strings.Contains(errOut, "409 TableAlreadyExists") {
		t.Errorf("online, a table there already: %q", errOut)
	}
	if got := tablesOf(t, cs); strings.Join(got, ",") != "zzz" {
		t.Errorf("a refused import left tables: %v", got)
	}
	// Offline: the file's place too, and no table.
	dir := t.TempDir()
	_, errOut = cli2(t, cwd, 1, "import", "--location", dir, "bad")
	if !strings.Contains(errOut, "Orders.jsonl:3: ") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("offline, a bad line: %q", errOut)
	}

	for _, tc := range []struct {
		code int
		args []string
		says string
	}{
		{2, []string{"export"}, "say where: tableemu export DIR"},
		{2, []string{"import", "--tablePort", port}, "say what to import: tableemu import DIR or FILE.jsonl, tableemu import --from SOURCE, or tableemu import --from-azurite DIR"},
		{2, []string{"import", "--from", "x", "--from-azurite", "y"}, "--from or --from-azurite, not both"},
		{2, []string{"import", "--from-azurite", "y", "dir"}, `--from-azurite or DIR or FILE.jsonl, not both: "dir"`},
		{2, []string{"import", "--from", "UseDevelopmentStorage=true", "dir"}, `--from or DIR or FILE.jsonl, not both: "dir"`},
		{2, []string{"export", "a", "b"}, `one DIR, not "a" and "b"`},
		{2, []string{"import", "--mode", "upsert", "x"}, "--mode upsert: the modes are fail"},
		{2, []string{"export", "--tables", ",", "x"}, "--tables names no table"},
		{2, []string{"export", "--tablePort", "x", "out"}, "tablePort"},
		{2, []string{"import", "--mode"}, "--mode needs a value"},
		{1, []string{"export", "--tablePort", "1", "out"}, "nothing listens at http://127.0.0.1:1 (connection refused)"},
		{1, []string{"export", "--tablePort", port, "--tables", "Nope", "out"}, "404 TableNotFound: "},
		{1, []string{"import", "--tablePort", port, "missing"}, "missing"},
		{1, []string{"export", "--location", t.TempDir(), "out"}, "no tableemu database in "},
	} {
		_, errOut := cli2(t, cwd, tc.code, tc.args...)
		if strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.says) {
			t.Errorf("tableemu %s: stderr %q, want one line saying %q", strings.Join(tc.args, " "), errOut, tc.says)
		}
	}
	out, _ := cli2(t, cwd, 0, "import", "--help")
	if !strings.HasPrefix(out, "Usage: tableemu export") || !strings.Contains(out, "docs/transfer.md") {
		t.Errorf("import --help: %q", out)
	}
}

// TestProgressPrinter: on a terminal, one line rewritten with \r and
// ended when its table is done.
func TestProgressPrinter(t *testing.T) {
	var b bytes.Buffer
	p := &progressPrinter{w: &b, tty: true, prefix: "tableemu import: "}
	p.report(progressOf("orders", 5000, false))
	p.report(progressOf("orders", 10000, false)) // within the interval: not shown
	p.report(progressOf("orders", 12345, true))
	p.report(progressOf("people", 5000, false))
	p.end() // a failure: the line ends before the error's
	if got, want := b.String(), "\r\033[Korders: 5,000 entities\r\033[Korders: 12,345 entities\n\r\033[Kpeople: 5,000 entities\n"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q", n, got)
		}
	}
}

func progressOf(table string, n int, done bool) transfer.Progress {
	return transfer.Progress{Account: "devstoreaccount1", Table: table, Entities: n, Done: done}
}

// transferDoc returns the text of docs/transfer.md's subsection "### title"
// of "Export and import: JSON Lines".
func transferDoc(t *testing.T, title string) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/transfer.md")
	if err != nil {
		t.Fatal(err)
	}
	_, s, ok := strings.Cut(string(b), "\n## Export and import: JSON Lines\n")
	if ok {
		_, s, ok = strings.Cut(s, "\n### "+title+"\n")
	}
	if !ok {
		t.Fatalf("docs/transfer.md has no subsection %q of \"Export and import: JSON Lines\"", title)
	}
	end := len(s)
	for _, h := range []string{"\n## ", "\n### "} {
		if i := strings.Index(s, h); i >= 0 && i < end {
			end = i
		}
	}
	return s[:end]
}

// TestTransferDocCommands: docs/transfer.md's command-line block, run line
// by line against a server (on its port, and on its data directory
// data/), prints what the doc's sample shows; its curl lines save a table
// and import it again, the second printing what the doc says.
func TestTransferDocCommands(t *testing.T) {
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
			if _, err := svc.NewClient(name).AddEntity(context.Background(), everyTypeEntity(fmt.Sprintf("%03d", i)), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := dump(t, cs)
	sec := transferDoc(t, "Commands")
	var printed []string
	for _, line := range docBlock(t, sec, "sh") {
		line, _, _ = strings.Cut(line, "#")
		args := strings.Fields(line)
		if len(args) == 0 || args[0] != "tableemu" {
			t.Fatalf("the block's line %q does not run tableemu", line)
		}
		out, _ := cli2(t, cwd, 0, append(args[1:], "--tablePort", port)...)
		printed = append(printed, strings.ReplaceAll(out, ":"+port+")", ":10002)"))
	}
	all := strings.Join(printed, "")
	sample := docBlock(t, sec, "text")
	if len(sample) < 2 {
		t.Fatal("the sample output has fewer than two lines")
	}
	for _, l := range sample {
		if !strings.Contains(all, l+"\n") {
			t.Errorf("the doc's sample line %q is not what the commands printed:\n%s", l, all)
		}
	}
	if got := dump(t, cs); got != want {
		t.Errorf("the doc's commands changed the account:\n%s\nwant\n%s", got, want)
	}

	http := transferDoc(t, "Over HTTP")
	curl := docBlock(t, http, "sh")
	if len(curl) != 2 || !strings.HasPrefix(curl[0], "curl ") || !strings.HasPrefix(curl[1], "curl ") {
		t.Fatalf("want two curl lines: %q", curl)
	}
	m := regexp.MustCompile("the second prints\\s+`([^`]+)`").FindStringSubmatch(http)
	if m == nil {
		t.Fatal("the section does not say what the second curl prints")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	var outs []string
	for _, c := range curl {
		cmd := exec.Command("sh", "-c", strings.ReplaceAll(c, ":10002/", ":"+port+"/"))
		cmd.Dir = cwd
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		outs = append(outs, string(out))
	}
	if outs[0] != "" || strings.TrimSuffix(outs[1], "\n") != m[1] {
		t.Errorf("the curl lines printed %q, the doc says the second prints %q", outs, m[1])
	}
	if b, _ := os.ReadFile(filepath.Join(cwd, "Orders.jsonl")); bytes.Count(b, []byte("\n")) != 150 {
		t.Errorf("the first curl line saved %d lines, want 150", bytes.Count(b, []byte("\n")))
	}
	if got := dump(t, cs); got != want {
		t.Errorf("the doc's curl lines changed the account:\n%s\nwant\n%s", got, want)
	}
}

// TestTransferCommandHandWritten: fixtures written by hand, with no
// Timestamps, imported into a running server: each entity is stamped as
// an insert stamps it.
func TestTransferCommandHandWritten(t *testing.T) {
	cwd := t.TempDir()
	p := startProc(t, "", "--tablePort", "0", "--inMemoryPersistence", "--silent")
	port, cs := p.ready()
	os.WriteFile(filepath.Join(cwd, "people.jsonl"), []byte(`{"PartitionKey":"eu","RowKey":"1","Name":"Zoë"}`+"\n"+
		`{"PartitionKey":"eu","RowKey":"2","Born@odata.type":"Edm.DateTime","Born":"1990-01-02T03:04:05Z"}`+"\n"), 0o644)
	before := time.Now().Add(-time.Second)
	cli2(t, cwd, 0, "import", "--tablePort", port, "people.jsonl")
	svc, _ := aztables.NewServiceClientFromConnectionString(cs, nil)
	pager := svc.NewClient("people").NewListEntitiesPager(nil)
	n := 0
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entities {
			var v struct{ Timestamp time.Time }
			json.Unmarshal(e, &v)
			if v.Timestamp.Before(before) || v.Timestamp.After(time.Now().Add(time.Second)) {
				t.Errorf("entity %s: Timestamp %v, want now", e, v.Timestamp)
			}
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d entities imported, want 2", n)
	}
}

// TestTransferCommandFrom: tableemu import --from copies another tableemu,
// named by its connection string, into a running server: the same
// entities to the Timestamps, policies and properties (the account key
// reads them); the summary does not show the connection string.
func TestTransferCommandFrom(t *testing.T) {
	a := startProc(t, "", "--tablePort", "0", "--inMemoryPersistence", "--silent")
	_, csA := a.ready()
	fill(t, csA, 20)
	b := startProc(t, "", "--tablePort", "0", "--inMemoryPersistence", "--silent")
	portB, csB := b.ready()
	out, errOut := cli2(t, "", 0, "import", "--from", csA, "--tablePort", portB)
	if out != "tableemu import: 2 tables, 21 entities imported from the endpoint of --from into devstoreaccount1, mode fail (http://127.0.0.1:"+portB+")\n" {
		t.Errorf("import --from printed %q", out)
	}
	if key := "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq"; strings.Contains(out+errOut, key) {
		t.Errorf("the output shows the key: %q %q", out, errOut)
	}
	if got, want := dump(t, csB), dump(t, csA); got != want {
		t.Errorf("the copy:\n%s\nwant\n%s", got, want)
	}
}
