package conformance

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/emulator"
)

// ownServer is a fresh in-process tableemu for tests that change
// account-wide settings, so they cannot leak into other tests.
func ownServer(t *testing.T, cfg emulator.Config) *target {
	t.Helper()
	needInProcess(t)
	cfg.InMemory, cfg.Silent = true, true
	tg, stop, err := startInProcess(onBackend(t, cfg))
	must(t, err)
	t.Cleanup(stop)
	return tg
}

// TestServicePropertiesRoundTrip: a new account's defaults, then Set/Get
// through the SDK; elements left out keep their values and an empty
// <Cors/> clears the rules (docs/protocol.md 0.1, 3.5).
func TestServicePropertiesRoundTrip(t *testing.T) {
	tg := ownServer(t, emulator.Config{})
	svc := tg.service(t)
	got, err := svc.GetProperties(ctx(), nil)
	must(t, err)
	p := got.ServiceProperties
	if p.Logging == nil || *p.Logging.Version != "1.0" || *p.Logging.Read || *p.Logging.Write || *p.Logging.Delete || *p.Logging.RetentionPolicy.Enabled ||
		p.HourMetrics == nil || *p.HourMetrics.Enabled || p.MinuteMetrics == nil || *p.MinuteMetrics.Enabled || len(p.Cors) != 0 {
		t.Fatalf("defaults: %+v", p)
	}

	// What the SDK's own tests do: change one part of what Get returned.
	p.Logging = &aztables.Logging{Read: to.Ptr(true), Write: to.Ptr(true), Delete: to.Ptr(true), Version: to.Ptr("1.0"),
		RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(5))}}
	p.HourMetrics = &aztables.Metrics{Enabled: to.Ptr(true), IncludeAPIs: to.Ptr(true), Version: to.Ptr("1.0"),
		RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(7))}}
	p.Cors = []*aztables.CorsRule{{AllowedHeaders: to.Ptr("x-ms-meta-data*"), AllowedMethods: to.Ptr("PUT,GET"), AllowedOrigins: to.Ptr("www.xyz.com"),
		ExposedHeaders: to.Ptr("x-ms-meta-source*"), MaxAgeInSeconds: to.Ptr(int32(500))}}
	_, err = svc.SetProperties(ctx(), p, nil)
	must(t, err)
	got, err = svc.GetProperties(ctx(), nil)
	must(t, err)
	q := got.ServiceProperties
	if !*q.Logging.Read || *q.Logging.RetentionPolicy.Days != 5 || !*q.HourMetrics.Enabled || !*q.HourMetrics.IncludeAPIs ||
		*q.HourMetrics.RetentionPolicy.Days != 7 || *q.MinuteMetrics.Enabled || len(q.Cors) != 1 ||
		*q.Cors[0].AllowedMethods != "PUT,GET" || *q.Cors[0].AllowedOrigins != "www.xyz.com" || *q.Cors[0].MaxAgeInSeconds != 500 ||
		*q.Cors[0].AllowedHeaders != "x-ms-meta-data*" || *q.Cors[0].ExposedHeaders != "x-ms-meta-source*" {
		t.Fatalf("after Set: %+v %+v %+v", q.Logging, q.HourMetrics, q.Cors)
	}

	// Only MinuteMetrics: the rest keeps its values.
	_, err = svc.SetProperties(ctx(), aztables.ServiceProperties{MinuteMetrics: &aztables.Metrics{Enabled: to.Ptr(false), Version: to.Ptr("1.0"),
		RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(false)}}}, nil)
	must(t, err)
	got, err = svc.GetProperties(ctx(), nil)
	must(t, err)
	if !*got.Logging.Read || !*got.HourMetrics.Enabled || len(got.Cors) != 1 {
		t.Fatalf("a partial Set lost values: %+v", got.ServiceProperties)
	}
	// An empty Cors element clears the rules. The Go SDK cannot send one:
	// an empty Cors slice marshals to nothing, and a document that sets
	// nothing is refused, as by the service (docs/protocol.md 3.5).
	_, err = svc.SetProperties(ctx(), aztables.ServiceProperties{Cors: []*aztables.CorsRule{}}, nil)
	wantCode(t, err, 400, "InvalidXmlDocument")
	r := tg.raw(t, "PUT", "/?restype=service&comp=properties", xmlHeaders, []byte("<StorageServiceProperties><Cors/></StorageServiceProperties>"))
	if r.StatusCode != 202 {
		t.Fatalf("<Cors/>: %d %s", r.StatusCode, r.body)
	}
	got, err = svc.GetProperties(ctx(), nil)
	must(t, err)
	if len(got.Cors) != 0 || !*got.Logging.Read {
		t.Fatalf("<Cors/> did not clear the rules only: %+v", got.ServiceProperties)
	}
}

// TestServicePropertiesWire: the response shapes of docs/protocol.md 2.2 and
// 3.5, and the refusals, as OData XML errors with x-ms-error-code.
func TestServicePropertiesWire(t *testing.T) {
	tg := ownServer(t, emulator.Config{})
	const path = "/?restype=service&comp=properties"
	r := tg.raw(t, "GET", path, xmlHeaders, nil)
	if r.StatusCode != 200 || !strings.HasPrefix(string(r.body), "\uFEFF<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceProperties>") ||
		r.Header.Get("Content-Type") != "application/xml" || r.Header.Get("Cache-Control") != "" {
		t.Fatalf("Get: %d %v %q", r.StatusCode, r.Header, r.body)
	}
	for _, want := range []string{"<Logging><Version>1.0</Version><Read>false</Read><Write>false</Write><Delete>false</Delete><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging>",
		"<HourMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics>"} {
		if !strings.Contains(string(r.body), want) {
			t.Fatalf("Get body lacks %s: %s", want, r.body)
		}
	}

	good := `<StorageServiceProperties><MinuteMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>false</IncludeAPIs><RetentionPolicy><Enabled>true</Enabled><Days>365</Days></RetentionPolicy></MinuteMetrics></StorageServiceProperties>`
	r = tg.raw(t, "PUT", path, map[string]string{"Content-Type": "application/xml", "Accept": "application/xml", "x-ms-client-request-id": "c1"}, []byte(good))
	if r.StatusCode != 202 || len(r.body) != 0 || r.Header.Get("Cache-Control") != "" || r.Header.Get("x-ms-client-request-id") != "c1" || r.Header.Get("x-ms-request-id") == "" {
		t.Fatalf("Set: %d %v %q", r.StatusCode, r.Header, r.body)
	}

	rule := func(methods, origins string) string {
		return "<CorsRule><AllowedMethods>" + methods + "</AllowedMethods><AllowedOrigins>" + origins +
			"</AllowedOrigins><AllowedHeaders></AllowedHeaders><ExposedHeaders></ExposedHeaders><MaxAgeInSeconds>5</MaxAgeInSeconds></CorsRule>"
	}
	retention := func(days string) string {
		return "<StorageServiceProperties><HourMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>true</Enabled>" + days + "</RetentionPolicy></HourMetrics></StorageServiceProperties>"
	}
	bad := map[string]string{
		"empty properties":            "<StorageServiceProperties/>",
		"empty body":                  "",
		"not XML":                     "<StorageServiceProperties><Logging>",
		"retention 366 days":          retention("<Days>366</Days>"),
		"retention 0 days":            retention("<Days>0</Days>"),
		"retention no days":           retention(""),
		"six CORS rules":              "<StorageServiceProperties><Cors>" + strings.Repeat(rule("GET", "*"), 6) + "</Cors></StorageServiceProperties>",
		"CORS method":                 "<StorageServiceProperties><Cors>" + rule("FETCH", "*") + "</Cors></StorageServiceProperties>",
		"CORS no origins":             "<StorageServiceProperties><Cors>" + rule("GET", "") + "</Cors></StorageServiceProperties>",
		"CORS rule missing age":       "<StorageServiceProperties><Cors><CorsRule><AllowedMethods>GET</AllowedMethods><AllowedOrigins>*</AllowedOrigins><AllowedHeaders/><ExposedHeaders/></CorsRule></Cors></StorageServiceProperties>",
		"metrics without IncludeAPIs": "<StorageServiceProperties><HourMetrics><Version>1.0</Version><Enabled>true</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics></StorageServiceProperties>",
		"logging without Read":        "<StorageServiceProperties><Logging><Version>1.0</Version><Write>true</Write><Delete>true</Delete><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging></StorageServiceProperties>",
		"bool not a bool":             "<StorageServiceProperties><HourMetrics><Version>1.0</Version><Enabled>maybe</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics></StorageServiceProperties>",
	}
	for what, body := range bad {
		t.Run(what, func(t *testing.T) {
			r := tg.raw(t, "PUT", path, xmlHeaders, []byte(body))
			wantRawCode(t, r, 400, "InvalidXmlDocument")
			if !strings.Contains(string(r.body), `<m:error xmlns:m="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata">`) {
				t.Fatalf("not an OData XML error: %s", r.body)
			}
		})
	}
	// The SDK sees the code too (its TestSetTooManyCors and
	// TestRetentionTooLong).
	svc := tg.service(t)
	rules := make([]*aztables.CorsRule, 6)
	for i := range rules {
		rules[i] = &aztables.CorsRule{AllowedHeaders: to.Ptr(""), AllowedMethods: to.Ptr("PUT"), AllowedOrigins: to.Ptr("www.xyz.com"), ExposedHeaders: to.Ptr(""), MaxAgeInSeconds: to.Ptr(int32(500))}
	}
	_, err := svc.SetProperties(ctx(), aztables.ServiceProperties{Cors: rules}, nil)
	wantCode(t, err, 400, "InvalidXmlDocument")
}

// TestServicePropertiesAuthorization: account SAS srt=s with r reads and w
// writes; a service SAS never reaches them (docs/protocol.md 9.6, 9.7).
func TestServicePropertiesAuthorization(t *testing.T) {
	tg := ownServer(t, emulator.Config{Loose: true})
	cred, err := aztables.NewSharedKeyCredential(tg.account, tg.key)
	must(t, err)
	svc, err := aztables.NewServiceClientWithSharedKey(tg.endpoint+"/", cred, clientOptions())
	must(t, err)
	sasSvc := func(perms aztables.AccountSASPermissions, rt aztables.AccountSASResourceTypes) *aztables.ServiceClient {
		u, err := svc.GetAccountSASURL(rt, perms, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
		must(t, err)
		c, err := aztables.NewServiceClientWithNoCredential(u, clientOptions())
		must(t, err)
		return c
	}
	reader := sasSvc(aztables.AccountSASPermissions{Read: true}, aztables.AccountSASResourceTypes{Service: true})
	got, err := reader.GetProperties(ctx(), nil)
	must(t, err)
	_, err = reader.SetProperties(ctx(), got.ServiceProperties, nil)
	wantCode(t, err, 403, "AuthorizationPermissionMismatch")
	writer := sasSvc(aztables.AccountSASPermissions{Write: true}, aztables.AccountSASResourceTypes{Service: true})
	_, err = writer.SetProperties(ctx(), got.ServiceProperties, nil)
	must(t, err)
	objects := sasSvc(aztables.AccountSASPermissions{Read: true}, aztables.AccountSASResourceTypes{Object: true})
	_, err = objects.GetProperties(ctx(), nil)
	wantCode(t, err, 403, "AuthorizationResourceTypeMismatch")

	// A service SAS on the service root.
	_, name := tg.newNamedTable(t)
	q := tableSASQuery(t, tg, name, aztables.SASPermissions{Read: true})
	r := do(t, mustRequest(t, "GET", tg.endpoint+"/?restype=service&comp=properties&"+q))
	wantRawCode(t, r, 403, "AuthorizationFailure")
}

// TestServiceStats: Get Table Service Stats answers on the secondary
// endpoint, and is refused on the primary (docs/protocol.md 3.6).
func TestServiceStats(t *testing.T) {
	needInProcess(t)
	cred, err := aztables.NewSharedKeyCredential(shared.account, shared.key)
	must(t, err)
	secondary, err := aztables.NewServiceClientWithSharedKey(shared.endpoint+"-secondary/", cred, clientOptions())
	must(t, err)
	st, err := secondary.GetStatistics(ctx(), nil)
	must(t, err)
	if st.GeoReplication == nil || st.GeoReplication.Status == nil || *st.GeoReplication.Status != aztables.GeoReplicationStatusLive ||
		st.GeoReplication.LastSyncTime == nil || time.Since(*st.GeoReplication.LastSyncTime) > time.Minute {
		t.Fatalf("stats %+v", st.GeoReplication)
	}
	// Properties are readable on the secondary too.
	_, err = secondary.GetProperties(ctx(), nil)
	must(t, err)

	_, err = shared.service(t).GetStatistics(ctx(), nil)
	wantCode(t, err, 400, "InvalidQueryParameterValue")

	// Python's azure-data-tables builds a path-style secondary URL by
	// putting "-secondary" in front of the primary's path, so the account
	// segment comes twice: /acct-secondary/acct/?restype=service&comp=stats,
	// and /acct-secondary/acct/t() for a read. Both are served, signed over
	// the path as sent or, as that SDK signs it, over the primary's path.
	c, name := shared.newNamedTable(t)
	_, err = c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r"}), nil)
	must(t, err)
	for _, path := range []string{"-secondary/" + shared.account + "/?restype=service&comp=stats", "-secondary/" + shared.account + "/" + name + "()"} {
		req := mustRequest(t, "GET", shared.endpoint+path)
		req.Header.Set("Accept", "application/json;odata=nometadata")
		shared.signLite(t, req)
		if r := do(t, req); r.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, r.StatusCode, r.body)
		}
	}
	req := mustRequest(t, "GET", shared.endpoint+"-secondary/"+shared.account+"/?restype=service&comp=stats")
	date := time.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("Authorization", "SharedKeyLite "+shared.account+":"+sign(t, shared.key, date+"\n/"+shared.account+"/"+shared.account+"/?comp=stats"))
	if r := do(t, req); r.StatusCode != 200 {
		t.Fatalf("signed over the primary's path: %d %s", r.StatusCode, r.body)
	}
}

func mustRequest(t *testing.T, method, u string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	must(t, err)
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("Accept", "application/xml")
	return req
}
