package transfer_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/auth"
	"github.com/tableemu/tableemu/emulator"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/store/sqlite"
	"github.com/tableemu/tableemu/emulator/transfer"
	"github.com/tableemu/tableemu/emulator/transfer/azuritetest"
)

// End to end: a source filled through the SDK → OpenEndpoint →
// transfer.Import into a SQLite store → a tableemu serving that store
// holds the same tables, entities (types, Timestamps), policies and
// service properties, read back through OpenEndpoint and the SDK.

// importInto imports src into devstoreaccount1 of a new SQLite store in
// dir, as the server's import would, and closes the store.
func importInto(t *testing.T, src transfer.Source, dir string) transfer.Summary {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tr := transfer.New(transfer.Config{
		Store:      st,
		Accounts:   map[string]*auth.Account{devAccount: {Name: devAccount}},
		DevAccount: devAccount,
		GetProps: func(ctx context.Context, account string) ([]byte, error) {
			var doc string
			err := st.View(ctx, func(tx *store.Tx) error {
				var err error
				doc, _, err = tx.ServiceProperties(account)
				return err
			})
			return []byte(doc), err
		},
		SetProps: func(ctx context.Context, account string, doc []byte) error {
			return st.Update(ctx, func(tx *store.Tx) error { return tx.SetServiceProperties(account, string(doc)) })
		},
	})
	var progress []transfer.Progress
	sum, err := tr.Import(ctx, src, transfer.Options{Mode: transfer.ModeFail, Progress: func(p transfer.Progress) { progress = append(progress, p) }})
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	if len(progress) == 0 {
		t.Errorf("Import reported no progress")
	}
	return sum
}

// serve starts a tableemu on the data directory dir.
func serve(t *testing.T, dir string) string {
	t.Helper()
	srv, err := emulator.New(emulator.Config{Location: dir, Silent: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	account := emulator.DefaultAccounts()[0]
	return emulator.ConnectionString(account, emulator.Endpoint("http", hs.Listener.Addr().String(), account.Name))
}

// copyAndCompare copies the source at cs into a new store, serves it and
// compares the two endpoints: what fillSource wrote, entity by entity,
// the Timestamps of the source exactly, and the ETags the SDK reads from
// each (tableemu's and Azurite's are both W/"datetime'<Timestamp>'").
func copyAndCompare(t *testing.T, cs string, want sourceTables, from, to time.Time) {
	t.Helper()
	src, err := transfer.OpenEndpoint(context.Background(), cs, transfer.EndpointOptions{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sum := importInto(t, src, dir)
	src.Close()
	total := 0
	for _, es := range want {
		total += len(es)
	}
	if sum.Tables != len(want) || sum.Entities != total {
		t.Errorf("Import: %+v, want %d tables and %d entities", sum, len(want), total)
	}

	copyCS := serve(t, dir)
	readBack := func(cs string) copied {
		src, err := transfer.OpenEndpoint(context.Background(), cs, transfer.EndpointOptions{TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		return readAll(t, src)
	}
	orig, got := readBack(cs), readBack(copyCS)
	checkCopy(t, want, got, from, to, true)
	for name, ot := range orig.tables {
		gt := got.tables[name]
		if gt == nil || len(gt.entities) != len(ot.entities) {
			continue // checkCopy said so
		}
		for i, o := range ot.entities {
			g := gt.entities[i]
			if g.PartitionKey != o.PartitionKey || g.RowKey != o.RowKey || g.Timestamp != o.Timestamp {
				t.Errorf("table %s entity %d: copy (%q, %q) at %d, source (%q, %q) at %d", name, i,
					g.PartitionKey, g.RowKey, g.Timestamp, o.PartitionKey, o.RowKey, o.Timestamp)
				break
			}
		}
	}

	// ETags, as a client holding one from the source would use it.
	etag := func(cs, table, pk, rk string) string {
		svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := svc.NewClient(table).GetEntity(context.Background(), pk, rk, nil)
		if err != nil {
			t.Fatalf("GetEntity %s (%s, %s): %v", table, pk, rk, err)
		}
		return string(resp.ETag)
	}
	for _, key := range [][3]string{{"alltypes", "edges", "ticks"}, {"alltypes", "ключ-😀", "𝄞 ä 中"}, {"withacl", "p", "r"}} {
		if a, b := etag(cs, key[0], key[1], key[2]), etag(copyCS, key[0], key[1], key[2]); a != b || a == "" {
			t.Errorf("%v: ETag %s in the copy, %s in the source", key, b, a)
		}
	}
}

// A tableemu's account, copied into a SQLite store, is the same account.
func TestEndpointImportFromTableemu(t *testing.T) {
	cs, _ := startTableemu(t, "")
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	from := time.Now().Add(-time.Second)
	want := fillSource(t, svc)
	to := time.Now().Add(time.Second)
	copyAndCompare(t, cs, want, from, to)
}

// Azurite's account, copied into a SQLite store, is the same account.
func TestEndpointImportFromAzurite(t *testing.T) {
	az := azuritetest.Start(t, "", nil)
	cs := az.ConnectionString()
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	from := time.Now().Add(-time.Second)
	want := fillSource(t, svc)
	to := time.Now().Add(time.Second)
	copyAndCompare(t, cs, want, from, to)
}
