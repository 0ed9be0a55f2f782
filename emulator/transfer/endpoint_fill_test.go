package transfer_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/emulator"
	"github.com/tableemu/tableemu/emulator/transfer"
	"github.com/tableemu/tableemu/odata/edm"
)

// What the endpoint tests write into a source through the SDK and expect
// OpenEndpoint to read back, type for type.

// manyEntities is the generated part of the all-types table: more than
// the 1,000 a page holds, so the copy follows continuation tokens.
const manyEntities = 1200

// sourceTables is what fillSource creates: name → entities in key order.
type sourceTables map[string][]*edm.Entity

func mustGuid(s string) edm.Value {
	v, err := edm.NewGuid(s)
	if err != nil {
		panic(err)
	}
	return v
}

func dt(s string) edm.Value {
	ticks, err := edm.ParseDateTime(s)
	if err != nil {
		panic(err)
	}
	return edm.NewDateTime(ticks)
}

// allTypes is a table holding every EDM type at its edges, unicode keys
// (astral included) and manyEntities more.
func allTypes() []*edm.Entity {
	large := make([]byte, 64<<10-1) // under the 64 KiB property limit
	for i := range large {
		large[i] = byte(i * 7)
	}
	es := []*edm.Entity{
		{PartitionKey: "edges", RowKey: "max", Properties: []edm.Property{
			{Name: "I32", Value: edm.NewInt32(math.MaxInt32)},
			{Name: "I64", Value: edm.NewInt64(math.MaxInt64)},
			{Name: "Dbl", Value: edm.NewDouble(math.MaxFloat64)},
			{Name: "When", Value: dt("9999-12-31T23:59:59.9999999Z")},
			{Name: "Id", Value: mustGuid("ffffffff-ffff-ffff-ffff-ffffffffffff")},
			{Name: "Bin", Value: edm.NewBinary(large)},
			{Name: "Yes", Value: edm.NewBoolean(true)},
			{Name: "Str", Value: edm.NewString("astral 😀 𝄞, quotes \" ' and \\ ä")},
		}},
		{PartitionKey: "edges", RowKey: "min", Properties: []edm.Property{
			{Name: "I32", Value: edm.NewInt32(math.MinInt32)},
			{Name: "I64", Value: edm.NewInt64(math.MinInt64)},
			{Name: "Dbl", Value: edm.NewDouble(math.SmallestNonzeroFloat64)},
			{Name: "When", Value: dt("1601-01-01T00:00:00Z")},
			{Name: "Id", Value: mustGuid("00000000-0000-0000-0000-000000000000")},
			{Name: "Bin", Value: edm.NewBinary([]byte{})},
			{Name: "No", Value: edm.NewBoolean(false)},
			{Name: "Str", Value: edm.NewString("")},
		}},
		{PartitionKey: "edges", RowKey: "doubles", Properties: []edm.Property{
			{Name: "NaN", Value: edm.NewDouble(math.NaN())},
			{Name: "Inf", Value: edm.NewDouble(math.Inf(1))},
			{Name: "NegInf", Value: edm.NewDouble(math.Inf(-1))},
			{Name: "Whole", Value: edm.NewDouble(2)},
			{Name: "BigWhole", Value: edm.NewDouble(1e15)},
			{Name: "Zero", Value: edm.NewDouble(0)},
			{Name: "Tenth", Value: edm.NewDouble(0.1)},
			{Name: "Neg", Value: edm.NewDouble(-1.5)},
		}},
		{PartitionKey: "edges", RowKey: "ticks", Properties: []edm.Property{
			{Name: "When", Value: dt("2021-09-08T18:58:49.7704959Z")},
			{Name: "Tick", Value: dt("2021-09-08T18:58:49.0000001Z")},
		}},
		{PartitionKey: "edges", RowKey: "none"},
		{PartitionKey: "ключ-😀", RowKey: "𝄞 ä 中", Properties: []edm.Property{
			{Name: "Note", Value: edm.NewString("unicode keys")},
		}},
	}
	for i := range manyEntities {
		es = append(es, &edm.Entity{
			PartitionKey: fmt.Sprintf("p%02d", i/100),
			RowKey:       fmt.Sprintf("r%04d", i),
			Properties: []edm.Property{
				{Name: "N", Value: edm.NewInt32(int32(i))},
				{Name: "Big", Value: edm.NewInt64(int64(i) << 40)},
				{Name: "Half", Value: edm.NewDouble(float64(i) + 0.5)},
				{Name: "Whole", Value: edm.NewDouble(float64(i))},
				{Name: "At", Value: edm.NewDateTime(edm.TicksFromTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)) + int64(i)*10_000_001)},
				{Name: "Id", Value: mustGuid(fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i))},
				{Name: "Bytes", Value: edm.NewBinary([]byte{byte(i), byte(i >> 8), 0, 0xff})},
				{Name: "S", Value: edm.NewString("row " + strconv.Itoa(i))},
			},
		})
	}
	return es
}

// entityJSON is e as an SDK user writes it: every property but strings
// and booleans annotated, Doubles too, so that a whole Double stays one
// after aztables' map[string]any (it sends 2.0 as 2).
func entityJSON(e *edm.Entity) []byte {
	m := map[string]any{"PartitionKey": e.PartitionKey, "RowKey": e.RowKey}
	for _, p := range e.Properties {
		v := p.Value
		if v.T != edm.String && v.T != edm.Boolean {
			m[p.Name+"@odata.type"] = v.T.Name()
		}
		switch v.T {
		case edm.String, edm.Guid:
			m[p.Name] = v.S
		case edm.Boolean:
			m[p.Name] = v.Bool()
		case edm.Int32:
			m[p.Name] = v.N
		case edm.Int64:
			m[p.Name] = strconv.FormatInt(v.N, 10)
		case edm.Double:
			if edm.IsSpecialDouble(v.F) {
				m[p.Name] = string(edm.AppendDouble(nil, v.F))
			} else {
				m[p.Name] = v.F
			}
		case edm.DateTime:
			m[p.Name] = string(edm.AppendDateTime(nil, v.N))
		case edm.Binary:
			m[p.Name] = base64.StdEncoding.EncodeToString(v.B)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// The development account's well-known name and key, which
// emulator.DefaultAccounts and Azurite serve.
const (
	devAccount = "devstoreaccount1"
	devKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// tableEndpoint is a connection string's TableEndpoint.
func tableEndpoint(cs string) string {
	_, ep, _ := strings.Cut(cs, "TableEndpoint=")
	ep, _, _ = strings.Cut(ep, ";")
	return ep
}

// accountSASURL is an account SAS URL (ss=t, srt=srt, sp=rl) for the
// development account at cs's endpoint. The SDK's GetAccountSASURL signs
// spr=https only; the test servers speak http, so both are signed here.
func accountSASURL(t testing.TB, cs, srt string) string {
	t.Helper()
	cred, err := aztables.NewSharedKeyCredential(devAccount, devKey)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	qp, err := aztables.AccountSASSignatureValues{Protocol: aztables.SASProtocolHTTPSandHTTP, StartTime: now.Add(-time.Hour),
		ExpiryTime: now.Add(time.Hour), Permissions: "rl", Services: "t", ResourceTypes: srt}.Sign(cred)
	if err != nil {
		t.Fatal(err)
	}
	return tableEndpoint(cs) + "/?" + qp.Encode()
}

// testPolicy is the stored access policy fillSource sets on "withacl".
var testPolicy = transferPolicy{"policy1", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), time.Date(2027, 6, 7, 8, 9, 10, 0, time.UTC), "raud"}

type transferPolicy struct {
	id            string
	start, expiry time.Time
	perm          string
}

// fillSource creates, through the SDK: "alltypes" (allTypes), "empty" (no
// entities) and "withacl" (one entity and testPolicy), and a CORS rule in
// the service properties.
func fillSource(t *testing.T, svc *aztables.ServiceClient) sourceTables {
	t.Helper()
	ctx := context.Background()
	want := sourceTables{"alltypes": allTypes(), "empty": nil,
		"withacl": {{PartitionKey: "p", RowKey: "r", Properties: []edm.Property{{Name: "V", Value: edm.NewInt32(1)}}}}}
	for name, es := range want {
		if _, err := svc.CreateTable(ctx, name, nil); err != nil {
			t.Fatalf("CreateTable %s: %v", name, err)
		}
		c := svc.NewClient(name)
		// Batches of one partition, at most 100 operations each.
		for i := 0; i < len(es); {
			j := i
			var actions []aztables.TransactionAction
			for j < len(es) && es[j].PartitionKey == es[i].PartitionKey && j-i < 100 {
				actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: entityJSON(es[j])})
				j++
			}
			if len(actions) == 1 {
				if _, err := c.AddEntity(ctx, actions[0].Entity, nil); err != nil {
					t.Fatalf("AddEntity %s (%s, %s): %v", name, es[i].PartitionKey, es[i].RowKey, err)
				}
			} else if _, err := c.SubmitTransaction(ctx, actions, nil); err != nil {
				t.Fatalf("SubmitTransaction %s from (%s, %s): %v", name, es[i].PartitionKey, es[i].RowKey, err)
			}
			i = j
		}
	}
	p := testPolicy
	_, err := svc.NewClient("withacl").SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{{
		ID: to.Ptr(p.id), AccessPolicy: &aztables.AccessPolicy{Start: &p.start, Expiry: &p.expiry, Permission: &p.perm},
	}}})
	if err != nil {
		t.Fatalf("SetAccessPolicy: %v", err)
	}
	_, err = svc.SetProperties(ctx, aztables.ServiceProperties{Cors: []*aztables.CorsRule{{
		AllowedOrigins: to.Ptr("https://copy.example"), AllowedMethods: to.Ptr("GET"), AllowedHeaders: to.Ptr("*"),
		ExposedHeaders: to.Ptr("*"), MaxAgeInSeconds: to.Ptr(int32(60)),
	}}}, nil)
	if err != nil {
		t.Fatalf("SetProperties: %v", err)
	}
	return want
}

// statusCounter counts the statuses a server answers, for the retry
// tests: a real server's responses, counted on their way out.
type statusCounter struct {
	mu     sync.Mutex
	counts map[int]int
	next   http.Handler
}

func (c *statusCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &statusWriter{ResponseWriter: w, status: 200}
	defer func() {
		status := rec.status
		v := recover()
		if v != nil {
			status = 0 // the connection was closed without a response (--faults kinds=drop)
		}
		c.mu.Lock()
		c.counts[status]++
		c.mu.Unlock()
		if v != nil {
			panic(v)
		}
	}()
	c.next.ServeHTTP(rec, r)
}

func (c *statusCounter) count(status int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[status]
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

// startTableemu starts an in-memory tableemu on a loopback port with
// --faults spec ("" for none) and returns its connection string.
func startTableemu(t testing.TB, faults string) (string, *statusCounter) {
	t.Helper()
	srv, err := emulator.New(emulator.Config{InMemory: true, Silent: true, Faults: faults})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	counter := &statusCounter{counts: map[int]int{}, next: srv}
	hs := httptest.NewServer(counter)
	t.Cleanup(hs.Close)
	account := emulator.DefaultAccounts()[0]
	return emulator.ConnectionString(account, emulator.Endpoint("http", hs.Listener.Addr().String(), account.Name)), counter
}

// copied is what a Source gave: each table's entities (copies) and
// policies, the account's properties.
type copied struct {
	props  []byte
	tables map[string]*copiedTable
}

type copiedTable struct {
	acl      []transferPolicy
	aclNil   bool
	entities []transfer.Entity
}

// readAll reads every account, table and entity of src.
func readAll(t *testing.T, src transfer.Source) copied {
	t.Helper()
	accounts, err := src.Accounts()
	if err != nil {
		t.Fatalf("Accounts: %v", err)
	}
	if len(accounts) != 1 || accounts[0].Name != "" {
		t.Fatalf("accounts = %+v, want one with no name", accounts)
	}
	got := copied{props: accounts[0].Properties, tables: map[string]*copiedTable{}}
	for _, tab := range accounts[0].Tables {
		ct := &copiedTable{aclNil: tab.ACL == nil}
		for _, id := range tab.ACL {
			ct.acl = append(ct.acl, transferPolicy{id.ID, id.Start, id.Expiry, id.Permission})
		}
		ct.entities = entitiesOf(t, tab)
		got.tables[tab.Name] = ct
	}
	return got
}

func entitiesOf(t *testing.T, tab *transfer.Table) []transfer.Entity {
	t.Helper()
	var es []transfer.Entity
	err := tab.Entities(func(e transfer.Entity) error {
		c := *e.Entity
		c.Properties = append([]edm.Property(nil), e.Properties...)
		e.Entity = &c
		es = append(es, e)
		return nil
	})
	if err != nil {
		t.Fatalf("Entities of %s: %v", tab.Name, err)
	}
	return es
}

// sameValue is exact equality: NaN equals NaN, -0 is not 0, bytes equal.
func sameValue(a, b edm.Value) bool {
	if a.T != b.T {
		return false
	}
	switch a.T {
	case edm.Double:
		return math.Float64bits(a.F) == math.Float64bits(b.F) || math.IsNaN(a.F) && math.IsNaN(b.F)
	case edm.Binary:
		return bytes.Equal(a.B, b.B) && (a.B == nil) == (b.B == nil)
	}
	return edm.Equal(a, b)
}

// compareEntities checks got against want, entity by entity in key
// order, property by property, and that every Timestamp is the source's
// (kept, within the fill's time).
func compareEntities(t *testing.T, table string, want []*edm.Entity, got []transfer.Entity, from, to time.Time) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("table %s: %d entities, want %d", table, len(got), len(want))
	}
	wantBy := map[[2]string]*edm.Entity{}
	for _, w := range want {
		wantBy[[2]string{w.PartitionKey, w.RowKey}] = w
	}
	bad := 0
	for _, g := range got {
		w := wantBy[[2]string{g.PartitionKey, g.RowKey}]
		if w == nil {
			t.Errorf("table %s: unexpected entity (%q, %q)", table, g.PartitionKey, g.RowKey)
			continue
		}
		if !g.KeepTimestamp || g.Timestamp < edm.TicksFromTime(from) || g.Timestamp > edm.TicksFromTime(to) {
			t.Errorf("%s: Timestamp %s (kept %v), want the source's, between %s and %s", g.Where,
				edm.AppendDateTime(nil, g.Timestamp), g.KeepTimestamp, from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano))
		}
		if err := sameProps(w.Properties, g.Properties); err != nil && bad < 10 {
			bad++
			t.Errorf("%s: %v", g.Where, err)
		}
	}
}

func sameProps(want, got []edm.Property) error {
	if len(want) != len(got) {
		return fmt.Errorf("%d properties %v, want %d", len(got), names(got), len(want))
	}
	byName := map[string]edm.Value{}
	for _, p := range got {
		byName[p.Name] = p.Value
	}
	for _, p := range want {
		g, ok := byName[p.Name]
		if !ok {
			return fmt.Errorf("no property %s", p.Name)
		}
		if !sameValue(p.Value, g) {
			return fmt.Errorf("%s = %s %s, want %s %s", p.Name, g.T.Name(), short(g), p.Value.T.Name(), short(p.Value))
		}
	}
	return nil
}

func names(ps []edm.Property) []string {
	var s []string
	for _, p := range ps {
		s = append(s, p.Name)
	}
	return s
}

func short(v edm.Value) string {
	s := fmt.Sprintf("%v", v)
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}
