package conformance

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/emulator"
)

// TestCosmosRulesGoSDK: the Go SDK, in its Cosmos mode (startCosmos), against tableemu --profile cosmos meets
// what Azure Cosmos DB for Table refuses or does not support (docs/cosmos.md,
// "What Cosmos DB refuses or does not support") as ResponseErrors naming
// Cosmos DB's codes: empty keys, its key sizes and reserved property names
// (etag taken, one of its spellings kept),
// table ACLs and service properties, a table named in another case, a SAS
// naming a key range.
func TestCosmosRulesGoSDK(t *testing.T) {
	tg, stop, err := startCosmos(emulator.Config{InMemory: true, Silent: true})
	must(t, err)
	defer stop()
	c, name := tg.newNamedTable(t)
	_, err = c.AddEntity(ctx(), entityJSON(t, "p", "r"), nil)
	must(t, err)

	_, err = c.AddEntity(ctx(), entityJSON(t, "p", ""), nil)
	wantCode(t, err, 400, "PropertiesNeedValue")
	_, err = c.AddEntity(ctx(), entityJSON(t, "", "r"), nil)
	wantCode(t, err, 400, "PropertiesNeedValue")
	_, err = c.AddEntity(ctx(), entityJSON(t, "p", strings.Repeat("r", 256)), nil)
	wantCode(t, err, 400, "PropertyValueTooLarge")
	_, err = c.AddEntity(ctx(), entityJSON(t, "p", "named", "ResourceId", "x"), nil)
	wantCode(t, err, 400, "PropertyNameInvalid")
	// etag is taken, and of etag and Etag the first sent alone kept
	// (python-cosmos …test_etag_duplicate_field). aztables re-encodes
	// the entity with its members sorted by name, so Etag goes first.
	_, err = c.AddEntity(ctx(), []byte(`{"PartitionKey":"p","RowKey":"etag","etag":"bar","Etag":"baz"}`), nil)
	must(t, err)
	got, err := c.GetEntity(ctx(), "p", "etag", nil)
	must(t, err)
	if v := string(got.Value); !strings.Contains(v, `"Etag":"baz"`) || strings.Contains(v, `"etag":`) {
		t.Errorf("etag and Etag inserted, read back %s: want Etag alone, the first the SDK sent", v)
	}

	_, err = c.GetAccessPolicy(ctx(), nil)
	wantCode(t, err, 405, "MethodNotAllowed")
	_, err = c.SetAccessPolicy(ctx(), nil)
	wantCode(t, err, 405, "MethodNotAllowed")
	svc := tg.service(t)
	_, err = svc.GetProperties(ctx(), nil)
	wantCode(t, err, 405, "MethodNotAllowed")
	_, err = svc.SetProperties(ctx(), aztables.ServiceProperties{}, nil)
	wantCode(t, err, 405, "MethodNotAllowed")

	// A name in another case is another table (docs/cosmos.md, "table
	// names"): none until created, then one beside the first, each with
	// its own entities, written one by one or in a batch.
	upper := strings.ToUpper(name)
	uc := svc.NewClient(upper)
	_, err = uc.GetEntity(ctx(), "p", "r", nil)
	wantCode(t, err, 404, "ResourceNotFound")
	_, err = svc.CreateTable(ctx(), upper, nil)
	must(t, err)
	defer svc.DeleteTable(ctx(), upper, nil)
	_, err = svc.CreateTable(ctx(), upper, nil)
	wantCode(t, err, 409, "TableAlreadyExists")
	_, err = uc.AddEntity(ctx(), entityJSON(t, "p", "upper"), nil)
	must(t, err)
	_, err = uc.SubmitTransaction(ctx(), []aztables.TransactionAction{action(t, aztables.TransactionTypeAdd, "p", "batch")}, nil)
	must(t, err)
	for cl, want := range map[*aztables.Client]string{c: "etag r", uc: "batch upper"} {
		var keys []string
		pager := cl.NewListEntitiesPager(nil)
		for pager.More() {
			page, err := pager.NextPage(ctx())
			must(t, err)
			for _, e := range page.Entities {
				var m map[string]any
				must(t, json.Unmarshal(e, &m))
				keys = append(keys, fmt.Sprint(m["RowKey"]))
			}
		}
		slices.Sort(keys)
		if got := strings.Join(keys, " "); got != want {
			t.Errorf("entities' RowKeys %q, want %q (each table its own)", got, want)
		}
	}

	// A SAS naming a key range. The SDK's GetTableSASURL signs spk and
	// epk but leaves them out of the URL (docs/protocol.md, "Service
	// SAS"), so the URL is built from Sign and the two parameters.
	cred, err := aztables.NewSharedKeyCredential(tg.account, tg.key)
	must(t, err)
	for _, ranged := range []bool{true, false} {
		v := aztables.SASSignatureValues{Permissions: "r", TableName: name, StartTime: time.Now().Add(-time.Minute).UTC(), ExpiryTime: time.Now().Add(time.Hour).UTC()}
		if ranged {
			v.StartPartitionKey, v.EndPartitionKey = "a", "z"
		}
		q, err := v.Sign(cred)
		must(t, err)
		if ranged {
			q += "&spk=a&epk=z"
		}
		sc, err := aztables.NewClientWithNoCredential(tg.endpoint+"/"+name+"?"+q, tg.options())
		must(t, err)
		_, err = sc.GetEntity(ctx(), "p", "r", nil)
		if !ranged {
			must(t, err)
			continue
		}
		wantCode(t, err, 405, "MethodNotAllowed")
	}
}

// TestCosmosOAuthACL: under the profile a bearer token meets the same 405
// MethodNotAllowed for table ACLs as the account key (Cosmos DB for Table
// has none), where Table storage refuses the token 403
// AuthorizationFailure (TestOAuthBasic).
func TestCosmosOAuthACL(t *testing.T) {
	tg := startTLS(t, emulator.Config{OAuth: "basic", Profile: emulator.ProfileCosmos})
	name := tableName()
	_, err := tg.sharedKeyService(t).CreateTable(ctx(), name, nil)
	must(t, err)
	c, err := aztables.NewClient(tg.endpoint+"/"+name, mint(t, entraClaims()), tg.options())
	must(t, err)
	_, err = c.GetAccessPolicy(ctx(), nil)
	wantCode(t, err, 405, "MethodNotAllowed")
	_, err = c.SetAccessPolicy(ctx(), nil)
	wantCode(t, err, 405, "MethodNotAllowed")
}
