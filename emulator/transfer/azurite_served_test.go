package transfer_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/emulator/transfer"
	"github.com/tableemu/tableemu/emulator/transfer/azuritetest"
)

// TestAzuriteDirServed is switching from Azurite as a user does, seen
// through the SDK: Azurite filled through the SDK (the endpoint tests'
// fillSource: every EDM type, an access policy, a CORS rule) and stopped
// with Ctrl-C; its directory imported (OpenAzurite, Import into a SQLite
// store); then a tableemu serving that store answers what Azurite,
// started again on its directory, answers: the same tables, entities,
// Timestamps, ETags, policies and CORS rule.
func TestAzuriteDirServed(t *testing.T) {
	az := azuritetest.Start(t, "", nil)
	svc, err := aztables.NewServiceClientFromConnectionString(az.ConnectionString(), nil)
	if err != nil {
		t.Fatal(err)
	}
	from := time.Now().Add(-time.Second)
	want := fillSource(t, svc)
	to := time.Now().Add(time.Second)
	az.Stop(t) // Ctrl-C: Azurite saves its database

	src, err := transfer.OpenAzurite(az.Dir)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	importInto(t, src, dir)
	src.Close()
	copyCS := serve(t, dir)
	again := azuritetest.Start(t, az.Dir, nil) // on the data it saved
	azCS := again.ConnectionString()

	readBack := func(cs string) copied {
		src, err := transfer.OpenEndpoint(context.Background(), cs, transfer.EndpointOptions{TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		return readAll(t, src)
	}
	orig, got := readBack(azCS), readBack(copyCS)
	checkCopy(t, want, orig, from, to, true) // Azurite kept what it was given
	checkCopy(t, want, got, from, to, true)
	for name, ot := range orig.tables {
		gt := got.tables[name]
		if gt == nil || len(gt.entities) != len(ot.entities) {
			continue // checkCopy said so
		}
		for i, o := range ot.entities {
			if g := gt.entities[i]; g.PartitionKey != o.PartitionKey || g.RowKey != o.RowKey || g.Timestamp != o.Timestamp {
				t.Errorf("table %s entity %d: tableemu (%q, %q) at %d, Azurite (%q, %q) at %d", name, i,
					g.PartitionKey, g.RowKey, g.Timestamp, o.PartitionKey, o.RowKey, o.Timestamp)
			}
		}
	}
	// ETags, as a client holding one from Azurite would use it: each
	// entity's odata.etag as the SDK lists it from each.
	etags := func(cs, table string) map[string]string {
		svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		pager := svc.NewClient(table).NewListEntitiesPager(nil)
		for pager.More() {
			page, err := pager.NextPage(context.Background())
			if err != nil {
				t.Fatalf("ListEntities %s: %v", table, err)
			}
			for _, raw := range page.Entities {
				var e struct {
					PartitionKey, RowKey string
					ETag                 string `json:"odata.etag"`
				}
				if err := json.Unmarshal(raw, &e); err != nil {
					t.Fatal(err)
				}
				out[e.PartitionKey+"\x00"+e.RowKey] = e.ETag
			}
		}
		return out
	}
	for name, es := range want {
		a, b := etags(azCS, name), etags(copyCS, name)
		if len(a) != len(es) || len(b) != len(es) {
			t.Errorf("%s: %d entities listed from Azurite, %d from tableemu, %d written", name, len(a), len(b), len(es))
		}
		for k, ea := range a {
			if eb := b[k]; eb != ea || ea == "" {
				t.Errorf("%s %q: ETag %s from tableemu, %s from Azurite", name, k, eb, ea)
			}
		}
	}
}
