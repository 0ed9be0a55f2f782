package transfer_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/emulator/transfer"
	"github.com/tableemu/tableemu/emulator/transfer/azuritetest"
)

// fastRetry keeps the retry tests quick: the policy is DefaultRetry's but
// for the delays.
func fastRetry(max int32) *policy.RetryOptions {
	r := transfer.DefaultRetry
	r.MaxRetries, r.RetryDelay, r.MaxRetryDelay = max, time.Millisecond, 5*time.Millisecond
	return &r
}

// checkCopy compares what OpenEndpoint read with what fillSource wrote.
func checkCopy(t *testing.T, want sourceTables, got copied, from, to time.Time, withKey bool) {
	t.Helper()
	if len(got.tables) != len(want) {
		t.Errorf("tables %v, want %d", keys(got.tables), len(want))
	}
	for name, es := range want {
		ct := got.tables[name]
		if ct == nil {
			t.Errorf("no table %s", name)
			continue
		}
		compareEntities(t, name, es, ct.entities, from, to)
		switch {
		case !withKey:
			if !ct.aclNil {
				t.Errorf("table %s: ACL %+v through a SAS, want nil (not read)", name, ct.acl)
			}
		case name == "withacl":
			if len(ct.acl) != 1 || ct.acl[0] != testPolicy {
				t.Errorf("table withacl: ACL %+v, want [%+v]", ct.acl, testPolicy)
			}
		case ct.aclNil || len(ct.acl) != 0:
			t.Errorf("table %s: ACL %+v (nil %v), want empty, not nil", name, ct.acl, ct.aclNil)
		}
	}
	if withKey && !strings.Contains(string(got.props), "https://copy.example") {
		t.Errorf("service properties %q lack the CORS rule set", got.props)
	}
}

func keys(m map[string]*copiedTable) []string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	return s
}

// A tableemu filled through the SDK is copied exactly: every EDM type at
// its edges, unicode keys, continuation past 1,000 entities, Timestamps,
// the ACL and the service properties; the progress callback hears each
// page; Close removes the spool.
func TestEndpointFromTableemu(t *testing.T) {
	cs, _ := startTableemu(t, "")
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	from := time.Now().Add(-time.Second)
	want := fillSource(t, svc)
	to := time.Now().Add(time.Second)

	spool := t.TempDir()
	var progress []int
	src, err := transfer.OpenEndpoint(context.Background(), cs, transfer.EndpointOptions{
		TempDir: spool,
		Progress: func(table string, n int) {
			if table == "alltypes" {
				progress = append(progress, n)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	checkCopy(t, want, readAll(t, src), from, to, true)
	total := len(want["alltypes"])
	if len(progress) < 2 || progress[len(progress)-1] != total {
		t.Errorf("progress of alltypes %v, want a call per page ending at %d", progress, total)
	}
	if files, _ := os.ReadDir(spool); len(files) == 0 {
		t.Errorf("no spool file under %s while the source is open", spool)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if files, _ := os.ReadDir(spool); len(files) != 0 {
		t.Errorf("spool files left after Close: %v", files)
	}
}

// Table.Entities read again (a retried store transaction) gives the same
// entities, from the spool, without asking the endpoint: after a full
// read, and after a read that stopped part way (the rest is paged from
// where it stopped).
func TestEndpointReadTwice(t *testing.T) {
	cs, counter := startTableemu(t, "")
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	from := time.Now().Add(-time.Second)
	want := fillSource(t, svc)
	to := time.Now().Add(time.Second)

	src, err := transfer.OpenEndpoint(context.Background(), cs, transfer.EndpointOptions{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	accounts, err := src.Accounts()
	if err != nil {
		t.Fatal(err)
	}
	var tab *transfer.Table
	for _, tb := range accounts[0].Tables {
		if tb.Name == "alltypes" {
			tab = tb
		}
	}
	// Stop part way, in the second page.
	stop := errors.New("stop")
	n := 0
	err = tab.Entities(func(e transfer.Entity) error {
		if n++; n == 1100 {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Fatalf("Entities stopped with %v, want fn's error", err)
	}
	first := entitiesOf(t, tab)
	compareEntities(t, "alltypes", want["alltypes"], first, from, to)
	before := counter.count(http.StatusOK)
	second := entitiesOf(t, tab)
	if after := counter.count(http.StatusOK); after != before {
		t.Errorf("the second read sent %d requests, want none (the spool)", after-before)
	}
	if len(second) != len(first) {
		t.Fatalf("second read %d entities, first %d", len(second), len(first))
	}
	for i := range first {
		a, b := first[i], second[i]
		if a.PartitionKey != b.PartitionKey || a.RowKey != b.RowKey || a.Timestamp != b.Timestamp || sameProps(a.Properties, b.Properties) != nil {
			t.Fatalf("entity %d differs: %s vs %s", i, a.Where, b.Where)
		}
	}
}

// A source answering 500 OperationTimedOut, 503 ServerBusy or closing
// the connection on every second read (--faults) is copied whole: the
// requests are retried. (The kind of each fault is drawn from the seed;
// seed 2 draws each kind within this test's requests.)
func TestEndpointRetries(t *testing.T) {
	cs, counter := startTableemu(t, "every=2,ops=QueryTables|QueryEntities|GetTableACL|GetServiceProperties,kinds=timeout|busy|drop,seed=2")
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	from := time.Now().Add(-time.Second)
	want := fillSource(t, svc)
	to := time.Now().Add(time.Second)

	src, err := transfer.OpenEndpoint(context.Background(), cs, transfer.EndpointOptions{TempDir: t.TempDir(), Retry: fastRetry(4)})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	checkCopy(t, want, readAll(t, src), from, to, true)
	if counter.count(500) == 0 || counter.count(503) == 0 || counter.count(0) == 0 {
		t.Errorf("faults answered 500 ×%d, 503 ×%d, dropped ×%d: want each kind retried", counter.count(500), counter.count(503), counter.count(0))
	}
}

// When the source keeps failing, the copy stops after the retries with
// the source's error code and a hint.
func TestEndpointRetriesRunOut(t *testing.T) {
	cs, counter := startTableemu(t, "every=1,ops=QueryEntities,kinds=busy")
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(context.Background(), "failing", nil); err != nil {
		t.Fatal(err)
	}
	src, err := transfer.OpenEndpoint(context.Background(), cs, transfer.EndpointOptions{TempDir: t.TempDir(), Retry: fastRetry(2)})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	accounts, err := src.Accounts()
	if err != nil {
		t.Fatal(err)
	}
	err = accounts[0].Tables[0].Entities(func(transfer.Entity) error { return nil })
	var te *tableemu.Error
	if !errors.As(err, &te) || te.Code != tableemu.ServerBusy || !te.Hinted() {
		t.Fatalf("err = %v, want ServerBusy with a hint", err)
	}
	if !strings.Contains(te.Message, "retries") {
		t.Errorf("message %q does not say the retries ran out", te.Message)
	}
	if n := counter.count(503); n != 3 {
		t.Errorf("%d requests answered 503, want 3 (one try and two retries)", n)
	}
}

// An account SAS on the service URL copies every table but no ACLs (a
// SAS cannot read them), and the service properties when it has srt=s; a
// table SAS URL copies its one table.
func TestEndpointSAS(t *testing.T) {
	cs, _ := startTableemu(t, "")
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	from := time.Now().Add(-time.Second)
	want := fillSource(t, svc)
	to := time.Now().Add(time.Second)
	now := time.Now().UTC()

	accountSAS := accountSASURL(t, cs, "sco")
	src, err := transfer.OpenEndpoint(context.Background(), accountSAS, transfer.EndpointOptions{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, src)
	src.Close()
	checkCopy(t, want, got, from, to, false)
	if !strings.Contains(string(got.props), "https://copy.example") {
		t.Errorf("service properties through an account SAS with srt=s: %q", got.props)
	}
	// Without srt=s the service properties cannot be read: left out, not
	// an error.
	src, err = transfer.OpenEndpoint(context.Background(), accountSASURL(t, cs, "co"), transfer.EndpointOptions{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	got = readAll(t, src)
	src.Close()
	checkCopy(t, want, got, from, to, false)
	if got.props != nil {
		t.Errorf("service properties through an account SAS without srt=s: %q, want none", got.props)
	}

	cred, err := aztables.NewSharedKeyCredential(devAccount, devKey)
	if err != nil {
		t.Fatal(err)
	}
	q, err := aztables.SASSignatureValues{Protocol: aztables.SASProtocolHTTPSandHTTP, StartTime: now.Add(-time.Hour),
		ExpiryTime: now.Add(time.Hour), Permissions: "r", TableName: "withacl"}.Sign(cred)
	if err != nil {
		t.Fatal(err)
	}
	tableSAS := tableEndpoint(cs) + "/withacl?" + q
	src, err = transfer.OpenEndpoint(context.Background(), tableSAS, transfer.EndpointOptions{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	got = readAll(t, src)
	src.Close()
	if len(got.tables) != 1 || got.tables["withacl"] == nil || got.props != nil {
		t.Fatalf("table SAS: tables %v, properties %q; want withacl alone, no properties", keys(got.tables), got.props)
	}
	compareEntities(t, "withacl", want["withacl"], got.tables["withacl"].entities, from, to)
	if !got.tables["withacl"].aclNil {
		t.Errorf("table SAS: ACL read, want nil")
	}
}

// A wrong key is the source's 403 AuthenticationFailed, with a hint that
// names the endpoint but never the key.
func TestEndpointWrongKey(t *testing.T) {
	cs, _ := startTableemu(t, "")
	wrong := strings.Replace(cs, "AccountKey=Eby8", "AccountKey=AAAA", 1)
	src, err := transfer.OpenEndpoint(context.Background(), wrong, transfer.EndpointOptions{Retry: fastRetry(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	_, err = src.Accounts()
	var te *tableemu.Error
	if !errors.As(err, &te) || te.Code != tableemu.AuthenticationFailed || !te.Hinted() {
		t.Fatalf("err = %v, want AuthenticationFailed with a hint", err)
	}
	if strings.Contains(te.Error(), "AAAA") {
		t.Errorf("the error quotes the key: %v", te)
	}
}

// Azurite 3.37.0, filled through the SDK, is copied exactly.
func TestEndpointFromAzurite(t *testing.T) {
	az := azuritetest.Start(t, "", nil)
	cs := az.ConnectionString()
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	from := time.Now().Add(-time.Second)
	want := fillSource(t, svc)
	to := time.Now().Add(time.Second)

	var pages int
	src, err := transfer.OpenEndpoint(context.Background(), cs, transfer.EndpointOptions{
		TempDir:  t.TempDir(),
		Progress: func(string, int) { pages++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	checkCopy(t, want, readAll(t, src), from, to, true)
	if pages < 3 {
		t.Errorf("%d pages read, want continuation crossed", pages)
	}

	// And through an account SAS, Azurite's too.
	src, err = transfer.OpenEndpoint(context.Background(), accountSASURL(t, cs, "sco"), transfer.EndpointOptions{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	checkCopy(t, want, readAll(t, src), from, to, false)
}

// Why the source reads the page's body itself (takeBody): the entities
// aztables' pager hands out have been through map[string]any, where a
// whole Double loses its type. If this starts to fail, the SDK keeps
// them, and takeBody may go.
func TestAztablesPagerLosesWholeDoubles(t *testing.T) {
	cs, _ := startTableemu(t, "")
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.CreateTable(ctx, "doubles", nil); err != nil {
		t.Fatal(err)
	}
	c := svc.NewClient("doubles")
	if _, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","W@odata.type":"Edm.Double","W":"2"}`), nil); err != nil {
		t.Fatal(err)
	}
	full := aztables.MetadataFormatFull
	page, err := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Format: &full}).NextPage(ctx)
	if err != nil || len(page.Entities) != 1 {
		t.Fatalf("page %v, %v", page.Entities, err)
	}
	if got := string(page.Entities[0]); !strings.Contains(got, `"W":2,`) && !strings.Contains(got, `"W":2}`) {
		t.Errorf("the SDK's entity bytes %s: W is no longer the integer 2", got)
	}
}
