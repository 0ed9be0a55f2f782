package conformance

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

var xmlHeaders = map[string]string{"Accept": "application/xml", "Content-Type": "application/xml", "DataServiceVersion": ""}

// TestTableACLRoundTrip: Set/Get Table ACL through the SDK keep each
// policy's fields, absent ones included; SetAccessPolicy(nil) clears them
// (docs/protocol.md 3.4, 13).
func TestTableACLRoundTrip(t *testing.T) {
	c, name := shared.newNamedTable(t)
	start := time.Date(2042, 1, 1, 1, 1, 1, 1, time.UTC) // the SDK sends RFC 3339 with nanoseconds
	expiry := time.Date(2043, 2, 3, 4, 5, 6, 700_000_000, time.UTC)
	ids := []*aztables.SignedIdentifier{
		{ID: to.Ptr("full"), AccessPolicy: &aztables.AccessPolicy{Start: &start, Expiry: &expiry, Permission: to.Ptr("raud")}},
		{ID: to.Ptr("partial"), AccessPolicy: &aztables.AccessPolicy{Permission: to.Ptr("r")}},
		{ID: to.Ptr("empty")},
	}
	_, err := c.SetAccessPolicy(ctx(), &aztables.SetAccessPolicyOptions{TableACL: ids})
	must(t, err)
	got, err := c.GetAccessPolicy(ctx(), nil)
	must(t, err)
	if len(got.SignedIdentifiers) != 3 {
		t.Fatalf("got %d identifiers", len(got.SignedIdentifiers))
	}
	full, partial, empty := got.SignedIdentifiers[0], got.SignedIdentifiers[1], got.SignedIdentifiers[2]
	if *full.ID != "full" || !full.AccessPolicy.Start.Equal(start.Truncate(100)) || !full.AccessPolicy.Expiry.Equal(expiry) || *full.AccessPolicy.Permission != "raud" {
		t.Fatalf("full policy came back as %+v", full.AccessPolicy)
	}
	if *partial.ID != "partial" || partial.AccessPolicy == nil || *partial.AccessPolicy.Permission != "r" || partial.AccessPolicy.Start != nil || partial.AccessPolicy.Expiry != nil {
		t.Fatalf("partial policy came back as %+v", partial.AccessPolicy)
	}
	if *empty.ID != "empty" || empty.AccessPolicy != nil {
		t.Fatalf("empty policy came back as %+v", empty.AccessPolicy)
	}

	// The XML the service writes: no BOM, times with seven fractional
	// digits, an empty policy as a bare Id.
	r := shared.raw(t, "GET", "/"+name+"?comp=acl", xmlHeaders, nil)
	body := string(r.body)
	if r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/xml" || strings.HasPrefix(body, "\uFEFF") {
		t.Fatalf("Get ACL: %d %q %q", r.StatusCode, r.Header.Get("Content-Type"), body)
	}
	for _, want := range []string{"<Start>2042-01-01T01:01:01.0000000Z</Start>", "<Expiry>2043-02-03T04:05:06.7000000Z</Expiry>",
		"<SignedIdentifier><Id>empty</Id></SignedIdentifier>"} {
		if !strings.Contains(body, want) {
			t.Fatalf("Get ACL body lacks %s: %s", want, body)
		}
	}

	_, err = c.SetAccessPolicy(ctx(), nil)
	must(t, err)
	got, err = c.GetAccessPolicy(ctx(), nil)
	must(t, err)
	if len(got.SignedIdentifiers) != 0 {
		t.Fatalf("SetAccessPolicy(nil) left %d identifiers", len(got.SignedIdentifiers))
	}
}

// TestTableACLValidation: bodies the service refuses, with its code
// (docs/protocol.md 0.1, 3.4).
func TestTableACLValidation(t *testing.T) {
	_, name := shared.newNamedTable(t)
	policy := func(inner string) string {
		return "<SignedIdentifiers><SignedIdentifier><Id>p</Id><AccessPolicy>" + inner + "</AccessPolicy></SignedIdentifier></SignedIdentifiers>"
	}
	six := "<SignedIdentifiers>" + strings.Repeat("<SignedIdentifier><Id>x</Id></SignedIdentifier>", 6) + "</SignedIdentifiers>"
	bad := map[string]string{
		"six identifiers": six,
		"no Id":           "<SignedIdentifiers><SignedIdentifier><AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>",
		"empty Id":        "<SignedIdentifiers><SignedIdentifier><Id></Id></SignedIdentifier></SignedIdentifiers>",
		"long Id":         "<SignedIdentifiers><SignedIdentifier><Id>" + strings.Repeat("i", 65) + "</Id></SignedIdentifier></SignedIdentifiers>",
		"bad letter":      policy("<Permission>rw</Permission>"),
		"repeated letter": policy("<Permission>rr</Permission>"),
		"bad start":       policy("<Start>yesterday</Start>"),
		"bad expiry":      policy("<Expiry>2042-13-01</Expiry>"),
		"not XML":         "<SignedIdentifiers><SignedIdentifier>",
		"wrong root":      "<Policies/>",
		"trailing junk":   "<SignedIdentifiers/><x/>",
	}
	for what, body := range bad {
		t.Run(what, func(t *testing.T) {
			wantRawCode(t, shared.raw(t, "PUT", "/"+name+"?comp=acl", xmlHeaders, []byte(body)), 400, "InvalidXmlDocument")
		})
	}
	// The accepted forms: five identifiers, every time form, letters in
	// any order, empty elements.
	five := "<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers>" +
		"<SignedIdentifier><Id>a</Id><AccessPolicy><Start>2042-01-01</Start><Expiry>2042-01-02T03:04Z</Expiry><Permission>dar</Permission></AccessPolicy></SignedIdentifier>" +
		"<SignedIdentifier><Id>b</Id><AccessPolicy><Start>2042-01-01T00:00:00Z</Start><Expiry>2042-01-01T00:00:00.1234567Z</Expiry></AccessPolicy></SignedIdentifier>" +
		"<SignedIdentifier><Id>c</Id><AccessPolicy><Start></Start><Expiry></Expiry><Permission></Permission></AccessPolicy></SignedIdentifier>" +
		"<SignedIdentifier><Id>d</Id><AccessPolicy/></SignedIdentifier>" +
		"<SignedIdentifier><Id>" + strings.Repeat("e", 64) + "</Id></SignedIdentifier></SignedIdentifiers>"
	if r := shared.raw(t, "PUT", "/"+name+"?comp=acl", xmlHeaders, []byte(five)); r.StatusCode != 204 {
		t.Fatalf("five valid identifiers: %d %s", r.StatusCode, r.body)
	}

	missing := tableName()
	wantRawCode(t, shared.raw(t, "GET", "/"+missing+"?comp=acl", xmlHeaders, nil), 404, "TableNotFound")
	wantRawCode(t, shared.raw(t, "PUT", "/"+missing+"?comp=acl", xmlHeaders, []byte("<SignedIdentifiers/>")), 404, "TableNotFound")
}

// TestTableACLNeedsAccountKey: no SAS may read or set an ACL (docs/protocol.md
// 3.4, 9.6).
func TestTableACLNeedsAccountKey(t *testing.T) {
	_, name := shared.newNamedTable(t)
	sc := tableSASClient(t, shared, name, aztables.SASPermissions{Read: true, Add: true, Update: true, Delete: true})
	_, err := sc.GetAccessPolicy(ctx(), nil)
	wantCode(t, err, 403, "AuthorizationFailure")
	_, err = sc.SetAccessPolicy(ctx(), nil)
	wantCode(t, err, 403, "AuthorizationFailure")
}

// TestDeleteTableDeletesACL: a table created again under the same name
// starts with no policies (docs/protocol.md 3.3).
func TestDeleteTableDeletesACL(t *testing.T) {
	svc := shared.service(t)
	name := tableName()
	_, err := svc.CreateTable(ctx(), name, nil)
	must(t, err)
	c := svc.NewClient(name)
	_, err = c.SetAccessPolicy(ctx(), &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{{ID: to.Ptr("p"), AccessPolicy: &aztables.AccessPolicy{Permission: to.Ptr("r")}}}})
	must(t, err)
	_, err = svc.DeleteTable(ctx(), name, nil)
	must(t, err)
	_, err = svc.CreateTable(ctx(), name, nil)
	must(t, err)
	t.Cleanup(func() { svc.DeleteTable(ctx(), name, nil) })
	got, err := c.GetAccessPolicy(ctx(), nil)
	must(t, err)
	if len(got.SignedIdentifiers) != 0 {
		t.Fatalf("the new table has %d policies", len(got.SignedIdentifiers))
	}
}

// policySAS signs a service SAS that names stored policy id, with only the
// fields the policy leaves out, through the SDK's signer.
func policySAS(t *testing.T, table, id string, v aztables.SASSignatureValues) string {
	t.Helper()
	cred, err := aztables.NewSharedKeyCredential(shared.account, shared.key)
	must(t, err)
	v.TableName, v.Identifier = table, id
	q, err := v.Sign(cred)
	must(t, err)
	return q
}

// TestStoredAccessPolicy: a SAS naming a policy takes its fields from it;
// changing or removing the policy takes effect at once (docs/protocol.md 0.1,
// 3.4, 9.6).
func TestStoredAccessPolicy(t *testing.T) {
	c, name := shared.newNamedTable(t)
	_, err := c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r"}), nil)
	must(t, err)
	setPolicies := func(ids ...*aztables.SignedIdentifier) {
		t.Helper()
		_, err := c.SetAccessPolicy(ctx(), &aztables.SetAccessPolicyOptions{TableACL: ids})
		must(t, err)
	}
	hour := time.Now().Add(time.Hour).UTC()
	setPolicies(
		&aztables.SignedIdentifier{ID: to.Ptr("reader"), AccessPolicy: &aztables.AccessPolicy{Expiry: &hour, Permission: to.Ptr("r")}},
		&aztables.SignedIdentifier{ID: to.Ptr("open"), AccessPolicy: &aztables.AccessPolicy{}},
	)
	// The SDK lower-cases tn; the policy is found regardless.
	reader := sasClient(t, shared, name, policySAS(t, strings.ToUpper(name), "reader", aztables.SASSignatureValues{}))
	if _, err := reader.GetEntity(ctx(), "p", "r", nil); err != nil {
		t.Fatalf("read through the policy: %v", err)
	}
	_, err = reader.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "new"}), nil)
	wantCode(t, err, 403, "AuthorizationPermissionMismatch")

	// A field in both the SAS and the policy is refused; a field in
	// neither too.
	both := sasClient(t, shared, name, policySAS(t, name, "reader", aztables.SASSignatureValues{Permissions: "r"}))
	_, err = both.GetEntity(ctx(), "p", "r", nil)
	wantCode(t, err, 403, "AuthenticationFailed")
	neither := sasClient(t, shared, name, policySAS(t, name, "open", aztables.SASSignatureValues{Permissions: "r"}))
	_, err = neither.GetEntity(ctx(), "p", "r", nil)
	wantCode(t, err, 403, "AuthenticationFailed")
	// The SAS may supply what the policy leaves out.
	filled := sasClient(t, shared, name, policySAS(t, name, "open", aztables.SASSignatureValues{Permissions: "ra", ExpiryTime: hour}))
	_, err = filled.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "filled"}), nil)
	must(t, err)

	// Widening the policy widens every SAS that names it, at once.
	setPolicies(&aztables.SignedIdentifier{ID: to.Ptr("reader"), AccessPolicy: &aztables.AccessPolicy{Expiry: &hour, Permission: to.Ptr("ra")}})
	_, err = reader.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "new"}), nil)
	must(t, err)
	// A policy that starts later, or has expired, refuses.
	later, past := time.Now().Add(30*time.Minute).UTC(), time.Now().Add(-time.Minute).UTC()
	setPolicies(&aztables.SignedIdentifier{ID: to.Ptr("reader"), AccessPolicy: &aztables.AccessPolicy{Start: &later, Expiry: &hour, Permission: to.Ptr("r")}})
	_, err = reader.GetEntity(ctx(), "p", "r", nil)
	wantCode(t, err, 403, "AuthenticationFailed")
	setPolicies(&aztables.SignedIdentifier{ID: to.Ptr("reader"), AccessPolicy: &aztables.AccessPolicy{Expiry: &past, Permission: to.Ptr("r")}})
	_, err = reader.GetEntity(ctx(), "p", "r", nil)
	wantCode(t, err, 403, "AuthenticationFailed")

	// Removing the policy revokes the signature immediately.
	setPolicies(&aztables.SignedIdentifier{ID: to.Ptr("reader"), AccessPolicy: &aztables.AccessPolicy{Expiry: &hour, Permission: to.Ptr("r")}})
	if _, err := reader.GetEntity(ctx(), "p", "r", nil); err != nil {
		t.Fatalf("restored policy: %v", err)
	}
	_, err = c.SetAccessPolicy(ctx(), nil)
	must(t, err)
	_, err = reader.GetEntity(ctx(), "p", "r", nil)
	wantCode(t, err, 403, "AuthenticationFailed")
	// So does renaming it.
	setPolicies(&aztables.SignedIdentifier{ID: to.Ptr("Reader"), AccessPolicy: &aztables.AccessPolicy{Expiry: &hour, Permission: to.Ptr("r")}})
	_, err = reader.GetEntity(ctx(), "p", "r", nil)
	wantCode(t, err, 403, "AuthenticationFailed")

	// A policy of one table does not serve a SAS for another.
	_, other := shared.newNamedTable(t)
	q, _ := url.ParseQuery(policySAS(t, other, "Reader", aztables.SASSignatureValues{}))
	oc := sasClient(t, shared, other, q.Encode())
	_, err = oc.GetEntity(ctx(), "p", "r", nil)
	wantCode(t, err, 403, "AuthenticationFailed")
}
