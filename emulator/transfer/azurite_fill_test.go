package transfer

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/transfer/azuritetest"
	"github.com/tableemu/tableemu/odata/edm"
)

// What the Azurite tests write through the SDK and expect back.

const (
	secondName  = "second"
	secondKey   = "c2Vjb25kIGFjY291bnQncyBrZXkgZm9yIHRlc3Rz" // base64, as Azurite requires
	skippedName = "$MetricsImported"                         // Azurite creates it; Azure refuses the name
)

// azuriteAccounts is AZURITE_ACCOUNTS for two accounts (devKey: endpoint.go).
var azuriteAccounts = "AZURITE_ACCOUNTS=devstoreaccount1:" + devKey + ";" + secondName + ":" + secondKey

// azProp is one property as the test sends it and as it must be read.
type azProp struct {
	name string
	json string // the value's JSON
	typ  string // its @odata.type, "" for none
	want edm.Value
}

// wantEntity is an entity written to Azurite: its properties and, once
// read back from Azurite, its Timestamp and ETag as Azurite answered them.
type wantEntity struct {
	pk, rk    string
	props     []azProp
	timestamp string
	etag      string
}

func (w *wantEntity) body() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"PartitionKey":%s,"RowKey":%s`, jsonString(w.pk), jsonString(w.rk))
	for _, p := range w.props {
		fmt.Fprintf(&b, `,%s:%s`, jsonString(p.name), p.json)
		if p.typ != "" {
			fmt.Fprintf(&b, `,%s:%q`, jsonString(p.name+"@odata.type"), p.typ)
		}
	}
	b.WriteString("}")
	return b.Bytes()
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

func azDT(s string) edm.Value {
	ticks, err := edm.ParseDateTime(s)
	if err != nil {
		panic(err)
	}
	return edm.NewDateTime(ticks)
}

// azEveryType is an entity holding every EDM type at its edges.
func azEveryType(pk, rk string) *wantEntity {
	big := make([]byte, 64*1024) // the service's largest Binary
	for i := range big {
		big[i] = byte(i*7 + i/256)
	}
	long := strings.Repeat("ж", 32*1024) // the longest String: 32 K UTF-16 units
	g, _ := edm.NewGuid("c9da6455-213d-42c9-9a79-3e9149a57833")
	return &wantEntity{pk: pk, rk: rk, props: []azProp{
		{"Str", `"héllo \"quoted\" \\ \n\t 😀"`, "", edm.NewString("héllo \"quoted\" \\ \n\t 😀")},
		{"Empty", `""`, "", edm.NewString("")},
		{"Long", jsonString(long), "", edm.NewString(long)},
		{"I32Min", "-2147483648", "", edm.NewInt32(math.MinInt32)},
		{"I32Max", "2147483647", "Edm.Int32", edm.NewInt32(math.MaxInt32)},
		{"I64Min", `"-9223372036854775808"`, "Edm.Int64", edm.NewInt64(math.MinInt64)},
		{"I64Max", `"9223372036854775807"`, "Edm.Int64", edm.NewInt64(math.MaxInt64)},
		{"DblHalf", "1.5", "Edm.Double", edm.NewDouble(1.5)},
		{"DblWhole", "3.0", "Edm.Double", edm.NewDouble(3)},
		{"DblTiny", "4.9e-324", "Edm.Double", edm.NewDouble(4.9e-324)},
		{"DblHuge", "1.7976931348623157e308", "Edm.Double", edm.NewDouble(math.MaxFloat64)},
		{"DblNaN", `"NaN"`, "Edm.Double", edm.NewDouble(math.NaN())},
		{"DblInf", `"Infinity"`, "Edm.Double", edm.NewDouble(math.Inf(1))},
		{"DblNegInf", `"-Infinity"`, "Edm.Double", edm.NewDouble(math.Inf(-1))},
		{"BoolT", "true", "", edm.NewBoolean(true)},
		{"BoolF", "false", "Edm.Boolean", edm.NewBoolean(false)},
		{"When", `"2021-09-08T18:58:49.7704959Z"`, "Edm.DateTime", azDT("2021-09-08T18:58:49.7704959Z")},
		{"WhenMin", `"1601-01-01T00:00:00Z"`, "Edm.DateTime", azDT("1601-01-01T00:00:00Z")},
		{"WhenMax", `"9999-12-31T23:59:59.9999999Z"`, "Edm.DateTime", azDT("9999-12-31T23:59:59.9999999Z")},
		{"Guid", `"C9DA6455-213D-42C9-9A79-3E9149A57833"`, "Edm.Guid", g},
		{"Bin", `"AAEC/v8="`, "Edm.Binary", edm.NewBinary([]byte{0, 1, 2, 0xfe, 0xff})},
		{"BinEmpty", `""`, "Edm.Binary", edm.NewBinary([]byte{})},
		{"BinBig", jsonString(base64.StdEncoding.EncodeToString(big)), "Edm.Binary", edm.NewBinary(big)},
	}}
}

func azSimple(pk, rk string, n int) *wantEntity {
	return &wantEntity{pk: pk, rk: rk, props: []azProp{
		{"N", fmt.Sprint(n), "", edm.NewInt32(int32(n))},
		{"Name", jsonString(fmt.Sprintf("entity %d", n)), "", edm.NewString(fmt.Sprintf("entity %d", n))},
	}}
}

// azuriteData is what fillAzurite wrote: account → table → entities by
// "pk\x00rk", each table's access policies, each account's CORS rules.
type azuriteData struct {
	entities map[string]map[string]map[string]*wantEntity
	acls     map[string][]store.SignedIdentifier // "account/table"
	cors     map[string][]*aztables.CorsRule
}

// fillAzurite writes two accounts' tables through the Go SDK: every EDM
// type, keys in several scripts, an empty RowKey, entities replaced,
// merged, deleted and written in a batch, access policies, and service
// properties with CORS rules. Then it reads each entity back from Azurite
// for the Timestamp and ETag Azurite gives it.
func fillAzurite(t *testing.T, a *azuritetest.Azurite) *azuriteData {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	dev, err := aztables.NewServiceClientFromConnectionString(a.ConnectionString(), nil)
	must(nil, err)
	cred, err := aztables.NewSharedKeyCredential(secondName, secondKey)
	must(nil, err)
	second, err := aztables.NewServiceClientWithSharedKey(strings.Replace(a.Endpoint, "devstoreaccount1", secondName, 1), cred, nil)
	must(nil, err)

	d := &azuriteData{entities: map[string]map[string]map[string]*wantEntity{}, acls: map[string][]store.SignedIdentifier{}, cors: map[string][]*aztables.CorsRule{}}
	add := func(svc *aztables.ServiceClient, account, table string, es ...*wantEntity) {
		t.Helper()
		if d.entities[account] == nil {
			d.entities[account] = map[string]map[string]*wantEntity{}
		}
		if d.entities[account][table] == nil {
			d.entities[account][table] = map[string]*wantEntity{}
			must(svc.CreateTable(ctx, table, nil))
		}
		for _, e := range es {
			must(svc.NewClient(table).AddEntity(ctx, e.body(), nil))
			d.entities[account][table][e.pk+"\x00"+e.rk] = e
		}
	}

	add(dev, "devstoreaccount1", "Types", azEveryType("edges", "1"), azEveryType("ключ 😀 é", "行 ü"), azSimple("p", "", 0))
	add(dev, "devstoreaccount1", "Orders", azSimple("o1", "a", 1), azSimple("o1", "b", 2), azSimple("o2", "a", 3))
	add(second, secondName, "Other", azEveryType("second", "x"))
	orders := dev.NewClient("Orders")

	// Replaced: Azurite removes the document and inserts the new one.
	repl := azSimple("o1", "a", 10)
	must(orders.UpsertEntity(ctx, repl.body(), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}))
	d.entities["devstoreaccount1"]["Orders"]["o1\x00a"] = repl
	// Merged: properties added to the stored ones.
	merged := azSimple("o1", "b", 2)
	extra := azProp{"Extra", `"9007199254740993"`, "Edm.Int64", edm.NewInt64(9007199254740993)}
	must(orders.UpdateEntity(ctx, (&wantEntity{pk: "o1", rk: "b", props: []azProp{extra}}).body(),
		&aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge}))
	merged.props = append(merged.props, extra)
	d.entities["devstoreaccount1"]["Orders"]["o1\x00b"] = merged
	// Deleted: gone from the database.
	must(orders.DeleteEntity(ctx, "o2", "a", nil))
	delete(d.entities["devstoreaccount1"]["Orders"], "o2\x00a")
	// A batch.
	var batch []aztables.TransactionAction
	for i := 0; i < 5; i++ {
		e := azSimple("batch", fmt.Sprintf("r%02d", i), 100+i)
		batch = append(batch, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: e.body()})
		d.entities["devstoreaccount1"]["Orders"][e.pk+"\x00"+e.rk] = e
	}
	must(orders.SubmitTransaction(ctx, batch, nil))

	// A table Azurite lets through and Azure refuses: not imported.
	must(dev.CreateTable(ctx, skippedName, nil))
	must(dev.NewClient(skippedName).AddEntity(ctx, azSimple("s", "s", 1).body(), nil))

	// Access policies. Azurite refuses a policy without start and expiry
	// (400), so both have them.
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	expiry := time.Date(2027, 6, 7, 8, 9, 10, 0, time.UTC)
	acl := []*aztables.SignedIdentifier{
		{ID: to.Ptr("readers"), AccessPolicy: &aztables.AccessPolicy{Start: &start, Expiry: &expiry, Permission: to.Ptr("r")}},
		{ID: to.Ptr("writers"), AccessPolicy: &aztables.AccessPolicy{Start: &start, Expiry: &expiry, Permission: to.Ptr("raud")}},
	}
	must(orders.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{TableACL: acl}))
	d.acls["devstoreaccount1/Orders"] = []store.SignedIdentifier{
		{ID: "readers", Start: start, Expiry: expiry, Permission: "r"},
		{ID: "writers", Start: start, Expiry: expiry, Permission: "raud"},
	}
	d.acls["devstoreaccount1/Types"] = []store.SignedIdentifier{}
	d.acls[secondName+"/Other"] = []store.SignedIdentifier{}

	// Service properties with CORS (Azurite refuses an empty
	// ExposedHeaders, though Azure takes it).
	d.cors["devstoreaccount1"] = []*aztables.CorsRule{
		{AllowedOrigins: to.Ptr("http://app.example"), AllowedMethods: to.Ptr("GET,PUT,MERGE"), AllowedHeaders: to.Ptr("x-ms-meta-a,x-ms-meta-b*"),
			ExposedHeaders: to.Ptr("x-ms-request-id"), MaxAgeInSeconds: to.Ptr(int32(600))},
		{AllowedOrigins: to.Ptr("*"), AllowedMethods: to.Ptr("GET"), AllowedHeaders: to.Ptr("*"), ExposedHeaders: to.Ptr("*"), MaxAgeInSeconds: to.Ptr(int32(0))},
	}
	must(dev.SetProperties(ctx, aztables.ServiceProperties{
		Cors: d.cors["devstoreaccount1"],
		HourMetrics: &aztables.Metrics{Version: to.Ptr("1.0"), Enabled: to.Ptr(true), IncludeAPIs: to.Ptr(true),
			RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(7))}},
	}, nil))
	d.cors[secondName] = []*aztables.CorsRule{{AllowedOrigins: to.Ptr("http://second.example"), AllowedMethods: to.Ptr("DELETE"),
		AllowedHeaders: to.Ptr("x-a"), ExposedHeaders: to.Ptr("x-b"), MaxAgeInSeconds: to.Ptr(int32(5))}}
	must(second.SetProperties(ctx, aztables.ServiceProperties{Cors: d.cors[secondName]}, nil))

	// Each entity's Timestamp and ETag as Azurite answers them.
	for account, tables := range d.entities {
		svc := dev
		if account == secondName {
			svc = second
		}
		for table, es := range tables {
			pager := svc.NewClient(table).NewListEntitiesPager(nil)
			n := 0
			for pager.More() {
				page, err := pager.NextPage(ctx)
				must(nil, err)
				for _, raw := range page.Entities {
					var got struct {
						PartitionKey, RowKey, Timestamp string
						ETag                            string `json:"odata.etag"`
					}
					must(nil, json.Unmarshal(raw, &got))
					w := es[got.PartitionKey+"\x00"+got.RowKey]
					if w == nil {
						t.Fatalf("Azurite has %s/%s (%q, %q), which the test did not write", account, table, got.PartitionKey, got.RowKey)
					}
					w.timestamp, w.etag = got.Timestamp, got.ETag
					n++
				}
			}
			if n != len(es) {
				t.Fatalf("Azurite has %d entities in %s/%s; the test wrote %d", n, account, table, len(es))
			}
		}
	}
	return d
}
