package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tableemu/tableemu/emulator"
)

// TestCosmosEmulatorStartLines: under --profile cosmos the start-up lines
// give the Cosmos DB emulator's account after devstoreaccount1, in the form
// of the emulator's documented connection string (on localhost, no account
// in the path; docs/cosmos.md), and that string, as printed, reaches the
// server. AZURITE_ACCOUNTS replaces both accounts; without the profile the
// lines stay devstoreaccount1's alone (TestStartAndStopLines).
func TestCosmosEmulatorStartLines(t *testing.T) {
	p := startProc(t, "", "--profile", "cosmos", "--tablePort", "0", "--inMemoryPersistence")
	port, first := p.ready()
	if !strings.Contains(first, "AccountName=devstoreaccount1;") {
		t.Fatalf("first connection string %q: want devstoreaccount1's", first)
	}
	wantEndpoint := "endpoint http://localhost:" + port + "/"
	wantCS := "DefaultEndpointsProtocol=http;AccountName=localhost;AccountKey=" + emulator.CosmosEmulatorKey +
		";TableEndpoint=http://localhost:" + port + "/;"
	var cs string
	lines := p.lines()
	for i, l := range lines {
		if strings.HasSuffix(l, " "+wantEndpoint) && i+1 < len(lines) {
			_, cs, _ = strings.Cut(lines[i+1], " connection string ")
		}
	}
	if cs != wantCS {
		t.Fatalf("start-up lines:\n%s\nwant %q, then the connection string %q", strings.Join(lines, "\n"), wantEndpoint, wantCS)
	}
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(context.Background(), "emulatorlines", nil); err != nil {
		t.Fatalf("the printed emulator connection string: %v", err)
	}
	p.waitFor("POST /Tables 201 CreateTable")

	cmd := command(t, "", "--profile", "cosmos", "--tablePort", "0", "--inMemoryPersistence")
	cmd.Env = append(os.Environ(), "AZURITE_ACCOUNTS=mine:"+emulator.DevKey)
	q := startCmd(t, cmd)
	q.ready()
	if out := q.out.String(); strings.Contains(out, "AccountName=localhost") || strings.Count(out, " connection string ") != 1 {
		t.Fatalf("AZURITE_ACCOUNTS=mine:…: start-up lines\n%s\nwant mine's connection string alone", out)
	}
}

// TestCosmosEmulatorDocsString: docs/cosmos.md's block is the Cosmos DB
// emulator's documented connection string (emulator.CosmosEmulatorKey and
// its endpoint on 8902), what tableemu --profile cosmos prints on port
// 8902, and, as it is, it reaches such a server: the client dials the
// server's free port for localhost:8902, so the SDK keeps the URL (and its
// Cosmos mode) and the test needs no port 8902.
func TestCosmosEmulatorDocsString(t *testing.T) {
	lines := fencedBlock(t, "../../docs/cosmos.md", "AccountName=localhost")
	if len(lines) != 2 || lines[0] != "text" {
		t.Fatalf("docs/cosmos.md's block: %q, want ```text and one line", lines)
	}
	doc := lines[1]
	want := "DefaultEndpointsProtocol=http;AccountName=localhost;AccountKey=" + emulator.CosmosEmulatorKey + ";TableEndpoint=http://localhost:8902/;"
	if doc != want {
		t.Fatalf("docs/cosmos.md: %q\nwant %q", doc, want)
	}
	p := startProc(t, "", "--profile", "cosmos", "--tablePort", "0", "--inMemoryPersistence")
	port, _ := p.ready()
	if !strings.Contains(p.out.String(), " connection string "+strings.Replace(doc, ":8902/", ":"+port+"/", 1)+"\n") {
		t.Fatalf("start-up lines:\n%s\nwant the docs' string, on port %s", p.out, port)
	}
	var d net.Dialer
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return d.DialContext(ctx, "tcp", "127.0.0.1:"+port)
	}}
	svc, err := aztables.NewServiceClientFromConnectionString(doc, &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(context.Background(), "docsstring", nil); err != nil {
		t.Fatalf("docs/cosmos.md's string: %v", err)
	}
	p.waitFor("POST /Tables 201 CreateTable")
}
