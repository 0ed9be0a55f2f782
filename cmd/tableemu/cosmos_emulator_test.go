package main

import (
	"context"
	"os"
	"strings"
	"testing"

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
