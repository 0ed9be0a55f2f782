package conformance

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/emulator"
)

// tableSASQuery is the query string of a SAS the Go SDK signs for table.
func tableSASQuery(t *testing.T, tg *target, table string, perms aztables.SASPermissions) string {
	t.Helper()
	cred, err := aztables.NewSharedKeyCredential(tg.account, tg.key)
	must(t, err)
	c, err := aztables.NewClientWithSharedKey(tg.endpoint+"/"+table, cred, tg.options())
	must(t, err)
	sasURL, err := c.GetTableSASURL(perms, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	must(t, err)
	// GetTableSASURL drops the slash before the table when the endpoint
	// has none (docs/protocol.md 13); keep only its query string.
	u, err := url.Parse(sasURL)
	must(t, err)
	return u.RawQuery
}

// sasClient is a client for table authorised only by a SAS query string.
func sasClient(t *testing.T, tg *target, table, query string) *aztables.Client {
	t.Helper()
	sc, err := aztables.NewClientWithNoCredential(tg.endpoint+"/"+table+"?"+query, tg.options())
	must(t, err)
	return sc
}

func tableSASClient(t *testing.T, tg *target, table string, perms aztables.SASPermissions) *aztables.Client {
	t.Helper()
	return sasClient(t, tg, table, tableSASQuery(t, tg, table, perms))
}

func testServiceSAS(t *testing.T, tg *target) {
	c, name := tg.newNamedTable(t)
	_, err := c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r"}), nil)
	must(t, err)

	ro := tableSASClient(t, tg, name, aztables.SASPermissions{Read: true})
	if _, err := ro.GetEntity(ctx(), "p", "r", nil); err != nil {
		t.Fatalf("read with a read SAS: %v", err)
	}
	_, err = ro.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "new"}), nil)
	wantCode(t, err, 403, tg.permissionMismatch())
	_, err = ro.DeleteEntity(ctx(), "p", "r", nil)
	wantCode(t, err, 403, tg.permissionMismatch())

	// Upserts need add and update.
	add := tableSASClient(t, tg, name, aztables.SASPermissions{Add: true})
	_, err = add.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "added"}), nil)
	must(t, err)
	_, err = add.UpsertEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "added"}), nil)
	wantCode(t, err, 403, tg.permissionMismatch())

	// A table SAS reaches only its table.
	_, other := tg.newNamedTable(t)
	oc := sasClient(t, tg, other, tableSASQuery(t, tg, name, aztables.SASPermissions{Read: true}))
	_, err = oc.GetEntity(ctx(), "p", "r", nil)
	wantCode(t, err, 403, "AuthorizationFailure")
}

func TestServiceSAS(t *testing.T) { testServiceSAS(t, shared) }

// testSASFieldGivenTwice: a SAS whose sig or a signed field appears twice
// in the query is 403 AuthenticationFailed, even with the same value twice;
// the same SAS given once is served (docs/protocol.md 0.1).
func testSASFieldGivenTwice(t *testing.T, tg *target) {
	c, name := tg.newNamedTable(t)
	_, err := c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r"}), nil)
	must(t, err)
	q, err := url.ParseQuery(tableSASQuery(t, tg, name, aztables.SASPermissions{Read: true}))
	must(t, err)
	unsigned := map[string]string{"Authorization": ""}
	r := tg.raw(t, "GET", entityPath(name, "p", "r")+"?"+q.Encode(), unsigned, nil)
	if r.StatusCode != 200 {
		t.Fatalf("the SAS once: %d %s", r.StatusCode, r.body)
	}
	for key := range q {
		for _, again := range []string{q.Get(key), "x"} {
			r := tg.raw(t, "GET", entityPath(name, "p", "r")+"?"+q.Encode()+"&"+url.Values{key: {again}}.Encode(), unsigned, nil)
			wantRawCode(t, r, 403, "AuthenticationFailed")
		}
	}
}

func TestSASFieldGivenTwice(t *testing.T) { testSASFieldGivenTwice(t, shared) }

func testSASKeyRange(t *testing.T, tg *target) {
	// The Go SDK signs spk/srk/epk/erk but never sends them (docs/protocol.md
	// 13), so this SAS is built by hand: sv=2019-02-02, the service SAS
	// string-to-sign of docs/protocol.md 9.6.
	c, name := tg.newNamedTable(t)
	for _, pk := range []string{"a", "b", "c"} {
		_, err := c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": pk, "RowKey": "1"}), nil)
		must(t, err)
		_, err = c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": pk, "RowKey": "2"}), nil)
		must(t, err)
	}
	st := time.Now().Add(-time.Minute).UTC().Format("2006-01-02T15:04:05Z")
	se := time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05Z")
	sts := strings.Join([]string{"raud", st, se, "/table/" + tg.account + "/" + strings.ToLower(name), "", "", "", "2019-02-02", "a", "2", "b", "1"}, "\n")
	q := url.Values{"sv": {"2019-02-02"}, "tn": {name}, "sp": {"raud"}, "st": {st}, "se": {se},
		"spk": {"a"}, "srk": {"2"}, "epk": {"b"}, "erk": {"1"}, "sig": {sign(t, tg.key, sts)}}
	sc := sasClient(t, tg, name, q.Encode())
	if tg.cosmos {
		// Cosmos DB refuses such a SAS outright: 405 MethodNotAllowed
		// "Shared access signature with PartitionKey or RowKey are not
		// supported" (python-cosmos test_sas_add_outside_range).
		_, err := sc.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "a", "RowKey": "3"}), nil)
		wantCode(t, err, 405, "MethodNotAllowed")
		return
	}

	rows, _ := listAll(t, sc, nil)
	if len(rows) != 2 || rows[0].PartitionKey != "a" || rows[0].RowKey != "2" || rows[1].PartitionKey != "b" || rows[1].RowKey != "1" {
		t.Fatalf("query inside the key range returned %v", rows)
	}
	if _, err := sc.GetEntity(ctx(), "a", "2", nil); err != nil {
		t.Fatalf("get inside the range: %v", err)
	}
	// Outside the range an entity is hidden, not forbidden: a point read
	// finds nothing (404 ResourceNotFound, as live answers: .NET recording
	// ValidateSasCredentialsWithRowKeyAndPartitionKeyRanges, replayed by
	// TestReplayNET), while writes are refused (docs/protocol.md 0.1).
	for _, k := range [][2]string{{"a", "1"}, {"b", "2"}, {"c", "1"}} {
		_, err := sc.GetEntity(ctx(), k[0], k[1], nil)
		wantCode(t, err, 404, "ResourceNotFound")
		_, err = sc.UpsertEntity(ctx(), marshal(t, map[string]any{"PartitionKey": k[0], "RowKey": k[1]}), nil)
		wantCode(t, err, 403, "AuthorizationFailure")
		_, err = sc.DeleteEntity(ctx(), k[0], k[1], nil)
		wantCode(t, err, 403, "AuthorizationFailure")
	}
	_, err := sc.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "c", "RowKey": "0"}), nil)
	wantCode(t, err, 403, "AuthorizationFailure")
}

func TestSASKeyRange(t *testing.T) { testSASKeyRange(t, shared) }

func testAccountSAS(t *testing.T, tg *target) {
	needInProcess(t)
	// The Go SDK signs every account SAS with spr=https (docs/protocol.md 13):
	// over plain HTTP it is refused unless --loose.
	for _, loose := range []bool{false, true} {
		own, stop, err := tg.sibling(onBackend(t, emulator.Config{InMemory: true, Silent: true, Loose: loose}))
		must(t, err)
		defer stop()
		cred, err := aztables.NewSharedKeyCredential(own.account, own.key)
		must(t, err)
		svc, err := aztables.NewServiceClientWithSharedKey(own.endpoint+"/", cred, own.options())
		must(t, err)
		sasURL, err := svc.GetAccountSASURL(aztables.AccountSASResourceTypes{Container: true, Object: true},
			aztables.AccountSASPermissions{Read: true, List: true, Create: true}, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
		must(t, err)
		sasSvc, err := aztables.NewServiceClientWithNoCredential(sasURL, own.options())
		must(t, err)
		_, err = sasSvc.CreateTable(ctx(), tableName(), nil)
		if !loose {
			wantCode(t, err, 403, "AuthorizationProtocolMismatch")
			if !strings.Contains(err.Error(), "--loose") {
				t.Fatalf("the refusal should name --loose: %v", err)
			}
			continue
		}
		must(t, err)
		// Delete is not granted.
		p := sasSvc.NewListTablesPager(nil)
		page, err := p.NextPage(ctx())
		must(t, err)
		_, err = sasSvc.DeleteTable(ctx(), *page.Tables[0].Name, nil)
		wantCode(t, err, 403, tg.permissionMismatch())
	}
}

func TestAccountSAS(t *testing.T) { testAccountSAS(t, shared) }

// testErrorMetadataLevel: an error the Table service answers carries the
// odata level the request asked for in its Content-Type, also when it is
// found before the operation runs, as live answers a SAS refusal to a
// fullmetadata request (docs/protocol.md 8.1; .NET recording
// ValidateAccountSasCredentialsWithResourceTypesAsync, replayed by
// TestReplayNET). No recording shows nometadata; the rule is the same. A
// request whose credentials do not authenticate it — none, a bad
// signature — is answered by the service's front end instead: plain
// application/json and no x-ms-version, whatever level it asked for
// (docs/protocol.md 0.1; the Python SDK's test_new_invalid_key, replayed by
// TestReplayPython).
func testErrorMetadataLevel(t *testing.T, tg *target) {
	name := tableName()
	for _, level := range []string{"nometadata", "minimalmetadata", "fullmetadata"} {
		leveled := tg.jsonContentType(level)
		format := "$format=" + urlQueryEscape("application/json;odata="+level)
		cases := []struct {
			what   string
			path   string
			hdr    map[string]string
			status int
			code   string
			want   string // Content-Type
		}{
			{"no credentials", "/Tables?" + format, map[string]string{"Authorization": ""}, 401, "NoAuthenticationInformation", "application/json"},
			{"a bad signature", "/Tables?" + format, map[string]string{"Authorization": "SharedKeyLite " + tg.account + ":AAAA"}, 403, "AuthenticationFailed", "application/json"},
			{"Accept, no credentials", "/Tables", map[string]string{"Authorization": "", "Accept": "application/json;odata=" + level}, 401, "NoAuthenticationInformation", "application/json"},
			{"a missing table", "/" + name + "()?" + format, nil, 404, tg.tableNotFound(), leveled},
		}
		for _, tc := range cases {
			r := tg.raw(t, "GET", tc.path, tc.hdr, nil)
			wantRawCode(t, r, tc.status, tc.code)
			if ct := r.Header.Get("Content-Type"); ct != tc.want {
				t.Errorf("%s, %s: Content-Type %q, want %q", level, tc.what, ct, tc.want)
			}
			// The front end sends no x-ms-version, but for a request with
			// no credentials at all (docs/protocol.md 0.1); the Table
			// service its echo. Cosmos DB sends none (every recording).
			none := tc.want == "application/json" && tc.code != "NoAuthenticationInformation" || tg.cosmos
			if v := r.Header.Values("x-ms-version"); none != (len(v) == 0) {
				t.Errorf("%s, %s: x-ms-version %q; the front end sends none but to no credentials, the Table service its echo", level, tc.what, v)
			}
		}
	}
}

func TestErrorMetadataLevel(t *testing.T) { testErrorMetadataLevel(t, shared) }
