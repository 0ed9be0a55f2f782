package conformance

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/emulator"
)

// The SDK-facing suite run once more under the cosmos profile (issue 41,
// docs/cosmos.md "How it is tested"): each scenario of sdkSuite runs as its
// own TestX against the shared server and again in TestCosmosSuite against
// tableemu --profile cosmos, with the Go SDK in its Cosmos mode. Where
// Cosmos DB for Table answers otherwise, a scenario asserts its answer
// (tg.cosmos): every row of docs/cosmos.md is matched, so no case is
// skipped for a difference tableemu does not give.
//
// Not in the suite: the replays (TestReplayCosmos replays the Cosmos
// recordings), the tests that run the binary, crash, fault or load it, the
// benchmarks, and what Cosmos DB for Table does not serve at all (service
// properties and statistics, table ACLs, CORS: its FAQ), whose refusals
// TestCosmosRulesGoSDK checks through the SDK.

// sdkSuite is the suite: entities, tables, queries, filters, types,
// batches, SAS, errors and limits, through the Go SDK and raw requests.
var sdkSuite = []struct {
	name string
	run  func(*testing.T, *target)
}{
	{"InsertEntity", testInsertEntity},
	{"InsertEntityWire", testInsertEntityWire},
	{"GetEntity", testGetEntity},
	{"UpdateEntity", testUpdateEntity},
	{"MergeVerbs", testMergeVerbs},
	{"UpsertEntity", testUpsertEntity},
	{"DeleteEntity", testDeleteEntity},
	{"IfMatchForms", testIfMatchForms},
	{"ETagsUniquePerWrite", testETagsUniquePerWrite},
	{"AwkwardKeys", testAwkwardKeys},
	{"ForbiddenKeyCharacters", testForbiddenKeyCharacters},
	{"CreateTable", testCreateTable},
	{"CreateTableWire", testCreateTableWire},
	{"GetTableByName", testGetTableByName},
	{"DeleteTable", testDeleteTable},
	{"ListTables", testListTables},
	{"QueryPaging", testQueryPaging},
	{"QueryMetadataLevels", testQueryMetadataLevels},
	{"QueryOrdinalOrder", testQueryOrdinalOrder},
	{"FiltersOnEveryType", testFiltersOnEveryType},
	{"PagingSeesEveryEntityOnce", testPagingSeesEveryEntityOnce},
	{"PagingAwkwardKeys", testPagingAwkwardKeys},
	{"EDMRoundTrip", testEDMRoundTrip},
	{"EDMWire", testEDMWire},
	{"BadPayloads", testBadPayloads},
	{"BatchEveryAction", testBatchEveryAction},
	{"BatchFailureRollsBack", testBatchFailureRollsBack},
	{"BatchIfMatch", testBatchIfMatch},
	{"BatchLimits", testBatchLimits},
	{"BatchAwkwardKeys", testBatchAwkwardKeys},
	{"BatchAccountSAS", testBatchAccountSAS},
	{"BatchErrorCodeForGoSDK", testBatchErrorCodeForGoSDK},
	{"BatchServiceSAS", testBatchServiceSAS},
	{"BatchWire", testBatchWire},
	{"BatchLoneQuery", testBatchLoneQuery},
	{"ServiceSAS", testServiceSAS},
	{"SASFieldGivenTwice", testSASFieldGivenTwice},
	{"SASKeyRange", testSASKeyRange},
	{"AccountSAS", testAccountSAS},
	{"ErrorMetadataLevel", testErrorMetadataLevel},
	{"Limits", testLimits},
}

// TestCosmosSuite runs sdkSuite against its own tableemu --profile cosmos
// (in memory, or on PostgreSQL as onBackend says), after checking that
// the SDK is in its Cosmos mode there.
func TestCosmosSuite(t *testing.T) {
	needInProcess(t)
	tg, stop, err := startCosmos(onBackend(t, emulator.Config{InMemory: true, Silent: true}))
	must(t, err)
	defer stop()
	t.Run("CosmosMode", func(t *testing.T) { testCosmosMode(t, tg) })
	for _, sc := range sdkSuite {
		t.Run(sc.name, func(t *testing.T) { sc.run(t, tg) })
	}
}

// testCosmosMode: the SDK sends a merge, alone and in a batch, as POST
// with X-HTTP-Method: MERGE (aztables' cosmosPatchTransformPolicy), and
// tableemu takes it.
func testCosmosMode(t *testing.T, tg *target) {
	c := tg.newTable(t)
	counter := &tg.client.Transport.(*cosmosTransport).postMerges
	before := counter.Load()
	_, err := c.AddEntity(ctx(), entityJSON(t, "p", "r", "A", 1), nil)
	must(t, err)
	_, err = c.UpdateEntity(ctx(), entityJSON(t, "p", "r", "B", 2), &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge})
	must(t, err)
	_, err = c.SubmitTransaction(ctx(), []aztables.TransactionAction{action(t, aztables.TransactionTypeUpdateMerge, "p", "r", "C", 3)}, nil)
	must(t, err)
	if m, _ := getProps(t, c, "p", "r"); m["A"] != float64(1) || m["B"] != float64(2) || m["C"] != float64(3) {
		t.Fatalf("after the merges: %v", m)
	}
	if n := counter.Load() - before; n != 1 {
		t.Fatalf("the SDK sent %d requests as POST with X-HTTP-Method: MERGE, want 1 (the lone merge; the batch's "+
			"is inside its body): is it in its Cosmos mode (aztables' isCosmosEndpoint: localhost and 8902 in the URL) at %s?", n, tg.endpoint)
	}
}

// cosmosHost is the host the Go SDK takes for Cosmos DB: aztables'
// isCosmosEndpoint (service_client.go) is true for a URL that contains
// "localhost" and "8902", the Cosmos DB emulator's table port, and then
// sends merges as POST with X-HTTP-Method: MERGE (docs/cosmos.md, "The
// SDKs' Cosmos mode").
const cosmosHost = "localhost:8902"

// startCosmos runs tableemu under the cosmos profile on a free loopback
// port, and returns a target whose endpoint names localhost:8902, so that
// the SDK is in its Cosmos mode, and whose client carries every request to
// the server's real port: no test binds 8902, which a tableemu the user
// runs, or another test binary, may hold.
func startCosmos(cfg emulator.Config) (*target, func(), error) {
	cfg.Profile = emulator.ProfileCosmos
	srv, err := emulator.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	hs := httptest.NewServer(srv)
	addr := hs.Listener.Addr().String()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	acct := emulator.DefaultAccounts()[0]
	if len(cfg.Accounts) > 0 {
		acct = cfg.Accounts[0]
	}
	tg := &target{endpoint: "http://" + cosmosHost + "/" + acct.Name, account: acct.Name, key: acct.Keys[0],
		cosmos: true, client: &http.Client{Transport: &cosmosTransport{next: tr}}}
	return tg, func() { tr.CloseIdleConnections(); hs.Close(); srv.Close() }, nil
}

// cosmosTransport counts the merges sent as POST with X-HTTP-Method: MERGE.
type cosmosTransport struct {
	next       http.RoundTripper
	postMerges atomic.Int64
}

func (c *cosmosTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.Header.Get("X-HTTP-Method") == "MERGE" {
		c.postMerges.Add(1)
	}
	return c.next.RoundTrip(req)
}

// sibling starts another in-process server of tg's kind, for the
// scenarios that need their own configuration.
func (tg *target) sibling(cfg emulator.Config) (*target, func(), error) {
	if tg.cosmos {
		return startCosmos(cfg)
	}
	return startInProcess(cfg)
}

// tableNotFound is the code of an entity operation on a missing table:
// Table storage's TableNotFound, Cosmos DB's ResourceNotFound (python-cosmos
// test_new_non_existent_table; error.go).
func (tg *target) tableNotFound() string {
	if tg.cosmos {
		return "ResourceNotFound"
	}
	return "TableNotFound"
}

// permissionMismatch is the code of a request its SAS does not permit:
// Table storage's AuthorizationPermissionMismatch, Cosmos DB's Forbidden
// (net-cosmos ValidateSasCredentials; error.go).
func (tg *target) permissionMismatch() string {
	if tg.cosmos {
		return "Forbidden"
	}
	return "AuthorizationPermissionMismatch"
}

// jsonContentType is the Content-Type of a JSON answer at level
// (nometadata, minimalmetadata, fullmetadata): Table storage's names
// streaming and the charset, Cosmos DB's neither, with a space after the
// semicolon (every python-cosmos and net-cosmos recording).
func (tg *target) jsonContentType(level string) string {
	if tg.cosmos {
		return "application/json; odata=" + level
	}
	return "application/json;odata=" + level + ";streaming=true;charset=utf-8"
}
