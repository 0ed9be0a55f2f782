package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/emulator"
)

func TestDataSurvivesRestart(t *testing.T) {
	needInProcess(t)
	dir := t.TempDir()
	cfg := emulator.Config{Location: dir, Silent: true}
	tg, stop, err := startInProcess(cfg)
	must(t, err)
	c := tg.newTable(t)
	name := tableNames(t, tg)[0]
	_, err = c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": "kept"}), nil)
	must(t, err)
	stop()
	if _, err := os.Stat(filepath.Join(dir, "tableemu.sqlite")); err != nil {
		t.Fatal(err)
	}

	tg, stop, err = startInProcess(cfg)
	must(t, err)
	defer stop()
	resp, err := tg.service(t).NewClient(name).GetEntity(ctx(), "p", "r", nil)
	must(t, err)
	var m map[string]any
	must(t, json.Unmarshal(resp.Value, &m))
	if m["V"] != "kept" {
		t.Fatalf("after restart %v", m)
	}
}

func tableNames(t *testing.T, tg *target) []string {
	t.Helper()
	var names []string
	p := tg.service(t).NewListTablesPager(nil)
	for p.More() {
		page, err := p.NextPage(ctx())
		must(t, err)
		for _, tb := range page.Tables {
			names = append(names, *tb.Name)
		}
	}
	return names
}

func TestHostStyleURL(t *testing.T) {
	needInProcess(t)
	_, name := shared.newNamedTable(t)
	// devstoreaccount1.table.localhost:<port>/Tables: the account is in
	// the host name, the path has only the resource (docs/protocol.md 1.1).
	base := strings.TrimSuffix(shared.endpoint, "/"+shared.account)
	req, _ := http.NewRequest("GET", base+"/Tables", nil)
	req.Host = shared.account + ".table.localhost"
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("Accept", "application/json;odata=nometadata")
	shared.signLite(t, req) // canonical resource: /devstoreaccount1/Tables
	r := do(t, req)
	if r.StatusCode != 200 || !strings.Contains(string(r.body), `"TableName":"`+name+`"`) {
		t.Fatalf("host-style list: %d %s", r.StatusCode, r.body)
	}
	// A dotted host that names no account stays path-style.
	req, _ = http.NewRequest("GET", shared.endpoint+"/Tables", nil)
	req.Host = "emulator.example"
	req.Header.Set("x-ms-version", "2019-02-02")
	shared.signLite(t, req)
	if r := do(t, req); r.StatusCode != 200 {
		t.Fatalf("path-style through a dotted host: %d %s", r.StatusCode, r.body)
	}
}

// TestBinary runs the real command: it starts with the default flags in a
// fresh directory, prints a connection string that works, keeps data in a
// file there, and exits cleanly on SIGTERM.
func TestBinary(t *testing.T) {
	bin := buildBinary(t)

	dir := t.TempDir()
	cmd := exec.Command(bin, "--tablePort", "0", "--silent")
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	defer cmd.Process.Kill()
	var cs string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if rest, ok := cutLogLine(sc.Text(), "connection string "); ok {
			cs = rest
			break
		}
	}
	if cs == "" {
		t.Fatal("no connection string printed")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	svc, err := aztables.NewServiceClientFromConnectionString(cs, clientOptions())
	must(t, err)
	_, err = svc.CreateTable(ctx(), "fromBinary", nil)
	must(t, err)
	if _, err := os.Stat(filepath.Join(dir, "tableemu.sqlite")); err != nil {
		t.Fatalf("no database under the current directory: %v", err)
	}
	must(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no exit 10 s after SIGTERM")
	}

	// --inMemoryPersistence writes nothing to the current directory.
	memDir := t.TempDir()
	mem := exec.Command(bin, "--tablePort", "0", "--silent", "--inMemoryPersistence")
	mem.Dir = memDir
	memOut, err := mem.StdoutPipe()
	must(t, err)
	must(t, mem.Start())
	defer mem.Process.Kill()
	msc := bufio.NewScanner(memOut)
	cs = ""
	for msc.Scan() {
		if rest, ok := cutLogLine(msc.Text(), "connection string "); ok {
			cs = rest
			break
		}
	}
	go func() {
		for msc.Scan() {
		}
	}()
	msvc, err := aztables.NewServiceClientFromConnectionString(cs, clientOptions())
	must(t, err)
	_, err = msvc.CreateTable(ctx(), "inMemory", nil)
	must(t, err)
	must(t, mem.Process.Signal(syscall.SIGTERM))
	must(t, mem.Wait())
	if entries, _ := os.ReadDir(memDir); len(entries) != 0 {
		t.Fatalf("--inMemoryPersistence left files: %v", entries)
	}

	// A bad flag is a clear error and a non-zero exit.
	out, err := exec.CommandContext(context.Background(), bin, "--tablePort", "http").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "tablePort") {
		t.Fatalf("bad flag: err %v, output %s", err, out)
	}
	out, err = exec.Command(bin, "--tablePrt", "1").CombinedOutput()
	if err == nil {
		t.Fatalf("unknown flag accepted: %s", out)
	}
	bad := exec.Command(bin, "--inMemoryPersistence")
	bad.Env = append(os.Environ(), "AZURITE_ACCOUNTS=acct1")
	if out, err := bad.CombinedOutput(); err == nil || !strings.Contains(string(out), "AZURITE_ACCOUNTS") {
		t.Fatalf("bad AZURITE_ACCOUNTS: err %v, output %s", err, out)
	}
}

// cutLogLine returns what follows prefix in a line of tableemu's log
// (`<time> <message>`, emulator.Log), if the message starts with prefix.
func cutLogLine(line, prefix string) (string, bool) {
	_, msg, ok := strings.Cut(line, " ")
	if !ok {
		return "", false
	}
	return strings.CutPrefix(msg, prefix)
}
