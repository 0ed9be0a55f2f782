package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// cosmosEmulatorConnStr is the connection string Microsoft documents for the
// API for Table of its Azure Cosmos DB emulator, character for character
// (learn.microsoft.com/azure/cosmos-db/how-to-develop-emulator, API for
// Table; config.go, CosmosEmulatorAccount).
const cosmosEmulatorConnStr = "DefaultEndpointsProtocol=http;AccountName=localhost;AccountKey=C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==;TableEndpoint=http://localhost:8902/;"

// dialedTo are client options whose connections all go to addr, the test
// server's free port on 127.0.0.1: the SDK keeps the URL it was given
// (localhost:8902, which puts aztables in its Cosmos mode, and is the Host
// header it sends), and no test needs port 8902 itself free.
func dialedTo(addr string) *aztables.ClientOptions {
	var d net.Dialer
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return d.DialContext(ctx, "tcp", addr)
	}}
	return &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: &http.Client{Transport: tr},
		Retry:     policy.RetryOptions{MaxRetries: -1},
	}}
}

// TestCosmosEmulatorConnectionString: under the profile the Cosmos DB
// emulator's own connection string works as it is: the Go SDK, signing for
// account "localhost" with the emulator's key and sending paths with no
// account segment, creates a table, inserts, reads, queries, runs a batch,
// and uses table and account SAS URLs (docs/cosmos.md).
func TestCosmosEmulatorConnectionString(t *testing.T) {
	hs := newProfileServer(t, ProfileCosmos)
	opts := dialedTo(hs.Listener.Addr().String())
	svc, err := aztables.NewServiceClientFromConnectionString(cosmosEmulatorConnStr, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.CreateTable(ctx, "emutable", nil); err != nil {
		t.Fatalf("create table: %v", err)
	}
	tc := svc.NewClient("emutable")
	for _, rk := range []string{"r1", "r2"} {
		e, _ := json.Marshal(map[string]any{"PartitionKey": "p", "RowKey": rk, "N": 1})
		if _, err := tc.AddEntity(ctx, e, nil); err != nil {
			t.Fatalf("insert %s: %v", rk, err)
		}
	}
	if _, err := tc.GetEntity(ctx, "p", "r1", nil); err != nil {
		t.Fatalf("get: %v", err)
	}
	pager := tc.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("RowKey ge 'r2'")})
	var got []string
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatalf("query: %v", err)
		}
		for _, raw := range page.Entities {
			var e aztables.Entity
			json.Unmarshal(raw, &e)
			got = append(got, e.RowKey)
		}
	}
	if strings.Join(got, ",") != "r2" {
		t.Errorf("query RowKey ge 'r2': %v, want [r2]", got)
	}

	var batch []aztables.TransactionAction
	for _, rk := range []string{"b1", "b2", "b3"} {
		e, _ := json.Marshal(map[string]string{"PartitionKey": "p", "RowKey": rk})
		batch = append(batch, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: e})
	}
	e, _ := json.Marshal(map[string]any{"PartitionKey": "p", "RowKey": "r1", "N": 2})
	batch = append(batch, aztables.TransactionAction{ActionType: aztables.TransactionTypeUpdateMerge, Entity: e})
	if _, err := tc.SubmitTransaction(ctx, batch, nil); err != nil {
		t.Fatalf("batch: %v", err)
	}
	if n := countEntities(t, tc); n != 5 {
		t.Errorf("after the batch: %d entities, want 5", n)
	}

	// A table SAS, signed over "/table/localhost/emutable".
	start := time.Now().Add(-time.Hour)
	sasURL, err := tc.GetTableSASURL(aztables.SASPermissions{Read: true, Add: true}, start, start.Add(3*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sasURL, "http://localhost:8902/emutable?") {
		t.Errorf("table SAS URL %s: want it on the emulator's endpoint", sasURL)
	}
	sasClient, err := aztables.NewClientWithNoCredential(sasURL, opts)
	if err != nil {
		t.Fatal(err)
	}
	e, _ = json.Marshal(map[string]string{"PartitionKey": "p", "RowKey": "sas"})
	if _, err := sasClient.AddEntity(ctx, e, nil); err != nil {
		t.Fatalf("insert with the table SAS: %v", err)
	}
	if n := countEntities(t, sasClient); n != 6 {
		t.Errorf("read with the table SAS: %d entities, want 6", n)
	}
	_, err = sasClient.DeleteEntity(ctx, "p", "sas", nil)
	wantCode(t, "delete with a read/add SAS", err, 403, "Forbidden") // Cosmos DB's code (docs/cosmos.md)

	// An account SAS, signed for "localhost". GetAccountSASURL signs
	// for https only (spr=https), which tableemu refuses over http
	// without --loose, as the service does; this one allows http.
	cred, err := aztables.NewSharedKeyCredential(CosmosEmulatorAccount, CosmosEmulatorKey)
	if err != nil {
		t.Fatal(err)
	}
	qp, err := aztables.AccountSASSignatureValues{Protocol: aztables.SASProtocolHTTPSandHTTP, StartTime: start, ExpiryTime: start.Add(3 * time.Hour),
		Permissions: "rl", Services: "t", ResourceTypes: "sco"}.Sign(cred)
	if err != nil {
		t.Fatal(err)
	}
	accURL := "http://localhost:8902/?" + qp.Encode()
	accSvc, err := aztables.NewServiceClientWithNoCredential(accURL, opts)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	tp := accSvc.NewListTablesPager(nil)
	for tp.More() {
		page, err := tp.NextPage(ctx)
		if err != nil {
			t.Fatalf("list tables with the account SAS: %v", err)
		}
		for _, tb := range page.Tables {
			tables = append(tables, *tb.Name)
		}
	}
	if strings.Join(tables, ",") != "emutable" {
		t.Errorf("tables of account localhost: %v, want [emutable]", tables)
	}

	// The wrong key still fails, with the service's code.
	bad := strings.Replace(cosmosEmulatorConnStr, "C2y6", "D2y6", 1)
	badSvc, err := aztables.NewServiceClientFromConnectionString(bad, opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = badSvc.CreateTable(ctx, "other", nil)
	wantCode(t, "another key", err, 403, "AuthenticationFailed")

	if _, err := svc.DeleteTable(ctx, "emutable", nil); err != nil {
		t.Fatalf("delete table: %v", err)
	}
}

// TestCosmosEmulatorPathStyle: under the profile, path-style URLs on
// localhost keep naming their account (what docs/cosmos.md gives for the
// SDKs' Cosmos mode), separate from the account localhost; the one
// ambiguity — a bare first segment naming a configured account — is read
// as that account (docs/cosmos.md).
func TestCosmosEmulatorPathStyle(t *testing.T) {
	hs := newProfileServer(t, ProfileCosmos)
	opts := dialedTo(hs.Listener.Addr().String())
	ctx := context.Background()
	dev := DefaultAccounts()[0]
	devSvc, err := aztables.NewServiceClientFromConnectionString(ConnectionString(dev, "http://localhost:8902/"+DevAccount), opts)
	if err != nil {
		t.Fatal(err)
	}
	emuSvc, err := aztables.NewServiceClientFromConnectionString(cosmosEmulatorConnStr, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := devSvc.CreateTable(ctx, "devtable", nil); err != nil {
		t.Fatalf("path-style create: %v", err)
	}
	tc := devSvc.NewClient("devtable")
	e, _ := json.Marshal(map[string]string{"PartitionKey": "p", "RowKey": "r"})
	if _, err := tc.AddEntity(ctx, e, nil); err != nil {
		t.Fatalf("path-style insert: %v", err)
	}
	e2, _ := json.Marshal(map[string]string{"PartitionKey": "p", "RowKey": "r2"})
	if _, err := tc.SubmitTransaction(ctx, []aztables.TransactionAction{{ActionType: aztables.TransactionTypeAdd, Entity: e2}}, nil); err != nil {
		t.Fatalf("path-style batch: %v", err)
	}
	if n := countEntities(t, tc); n != 2 {
		t.Errorf("path-style: %d entities, want 2", n)
	}
	// The accounts are separate: localhost does not see devtable.
	_, err = emuSvc.NewClient("devtable").GetEntity(ctx, "p", "r", nil)
	wantCode(t, "devtable from account localhost", err, 404, "ResourceNotFound")

	// The ambiguity: a table of account localhost named devstoreaccount1.
	// Created through /Tables it exists; an insert, POST /devstoreaccount1,
	// is read as a request to account devstoreaccount1's root and fails.
	if _, err := emuSvc.CreateTable(ctx, DevAccount, nil); err != nil {
		t.Fatalf("create table %s in account localhost: %v", DevAccount, err)
	}
	_, err = emuSvc.NewClient(DevAccount).AddEntity(ctx, e, nil)
	wantCode(t, "insert into table "+DevAccount+" of account localhost", err, 400, "InvalidUri")
}

// TestCosmosEmulatorStorageProfile: without the profile nothing changes:
// account localhost is not configured, and a request to host localhost
// without an account segment fails as before (the first segment is read
// as the account).
func TestCosmosEmulatorStorageProfile(t *testing.T) {
	hs := newProfileServer(t, ProfileStorage)
	svc, err := aztables.NewServiceClientFromConnectionString(cosmosEmulatorConnStr, dialedTo(hs.Listener.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.CreateTable(context.Background(), "emutable", nil)
	wantCode(t, "storage profile", err, 400, "InvalidUri")
}

// TestCosmosEmulatorDisableProductStyleURL: --disableProductStyleUrl turns
// the emulator's host-style addressing off too (the path names the account).
func TestCosmosEmulatorDisableProductStyleURL(t *testing.T) {
	s, err := New(Config{InMemory: true, Silent: true, Profile: ProfileCosmos, DisableProductStyleURL: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.Close(); s.Close() })
	svc, err := aztables.NewServiceClientFromConnectionString(cosmosEmulatorConnStr, dialedTo(hs.Listener.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.CreateTable(context.Background(), "emutable", nil)
	wantCode(t, "--disableProductStyleUrl", err, 400, "InvalidUri")
}

func countEntities(t *testing.T, tc *aztables.Client) int {
	t.Helper()
	n := 0
	pager := tc.NewListEntitiesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatalf("list entities: %v", err)
		}
		n += len(page.Entities)
	}
	return n
}

// wantCode checks that err is the service's answer status with the Azure
// error code code.
func wantCode(t *testing.T, where string, err error, status int, code string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("%s: %v, want %d %s", where, err, status, code)
	}
	if re.StatusCode != status || re.ErrorCode != code {
		t.Fatalf("%s: %d %s, want %d %s", where, re.StatusCode, re.ErrorCode, status, code)
	}
}

// TestCosmosEmulatorAccounts: the profile configures the Cosmos DB
// emulator's account beside devstoreaccount1, in that order (the start-up
// lines print the first account's connection string first);
// AZURITE_ACCOUNTS replaces both, as it replaces devstoreaccount1; without
// the profile the default is devstoreaccount1 alone.
func TestCosmosEmulatorAccounts(t *testing.T) {
	names := func(args []string, env map[string]string) string {
		t.Helper()
		c, err := LoadConfig(args, func(k string) string { return env[k] }, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range c.Accounts {
			out = append(out, a.Name+":"+a.Keys[0])
		}
		return strings.Join(out, ";")
	}
	dev, emu := DevAccount+":"+DevKey, CosmosEmulatorAccount+":"+CosmosEmulatorKey
	if got := names([]string{"--profile", "cosmos"}, nil); got != dev+";"+emu {
		t.Errorf("--profile cosmos: %s", got)
	}
	if got := names(nil, map[string]string{"TABLEEMU_PROFILE": "cosmos"}); got != dev+";"+emu {
		t.Errorf("TABLEEMU_PROFILE=cosmos: %s", got)
	}
	if got := names(nil, nil); got != dev {
		t.Errorf("storage: %s", got)
	}
	mine := "mine:" + DevKey
	if got := names([]string{"--profile", "cosmos"}, map[string]string{"AZURITE_ACCOUNTS": mine}); got != mine {
		t.Errorf("--profile cosmos, AZURITE_ACCOUNTS=%s: %s", mine, got)
	}
	if got := (Config{Profile: ProfileCosmos}).DefaultAccounts(); len(got) != 2 || got[1].Name != CosmosEmulatorAccount || len(got[1].RawKeys[0]) != 64 {
		t.Errorf("Config.DefaultAccounts under the profile: %+v", got)
	}
}
