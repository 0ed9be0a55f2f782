package conformance

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu/emulator"
)

// User delegation keys and SAS for tables (docs/protocol.md 9.10), over
// HTTPS with --oauth basic as an application signed in with Microsoft Entra
// ID meets them.

const udkPath = "/?restype=service&comp=userdelegationkey"

// udkAnswer is a Get User Delegation Key answer.
type udkAnswer struct {
	XMLName       xml.Name `xml:"UserDelegationKey"`
	SignedOid     string
	SignedTid     string
	SignedStart   string
	SignedExpiry  string
	SignedService string
	SignedVersion string
	Value         string
}

// postUDK sends Get User Delegation Key with body, authorized by
// authorization ("" for none), at x-ms-version version, to path below the
// account ("" for udkPath).
func postUDK(t *testing.T, tg *tlsTarget, path, authorization, version, body string) *rawResponse {
	t.Helper()
	if path == "" {
		path = udkPath
	}
	req, err := http.NewRequest("POST", tg.endpoint+path, strings.NewReader(body))
	must(t, err)
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("x-ms-version", version)
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := tg.client.Do(req)
	must(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(t, err)
	return &rawResponse{Response: resp, body: b}
}

func keyInfo(start, expiry time.Time) string {
	s := `<?xml version='1.0' encoding='utf-8'?>` + "\n<KeyInfo>"
	if !start.IsZero() {
		s += "<Start>" + start.UTC().Format("2006-01-02T15:04:05Z") + "</Start>"
	}
	return s + "<Expiry>" + expiry.UTC().Format("2006-01-02T15:04:05Z") + "</Expiry></KeyInfo>"
}

func readUDK(t *testing.T, r *rawResponse) udkAnswer {
	t.Helper()
	if r.StatusCode != 200 {
		t.Fatalf("Get User Delegation Key: %d %s: %s", r.StatusCode, r.Header.Get("x-ms-error-code"), r.body)
	}
	if !bytes.HasPrefix(r.body, []byte("\uFEFF<?xml version=\"1.0\" encoding=\"utf-8\"?><UserDelegationKey>")) {
		t.Fatalf("answer does not start as live's does: %q", r.body)
	}
	var k udkAnswer
	must(t, xml.Unmarshal(bytes.TrimPrefix(r.body, []byte("\uFEFF")), &k))
	return k
}

// TestGetUserDelegationKey: a bearer token gets a key for its oid and tid,
// at x-ms-version 2025-07-05, as live answered azure-data-tables
// test_get_user_delegation_key; the key is derived, so another tableemu
// with the same account key hands out the same one; every other
// credential, an older version and each body rule are refused with the
// service's code.
func TestGetUserDelegationKey(t *testing.T) {
	tg := startTLS(t, emulator.Config{OAuth: "basic"})
	token := "Bearer " + string(mint(t, entraClaims("oid", "62c18f92-db7d-44d1-be01-46057bcaf9e2", "tid", "72f988bf-86f1-41af-91ab-2d7cd011db47")))
	now := time.Now().Truncate(time.Second)
	body := keyInfo(now, now.Add(time.Hour))

	r := postUDK(t, tg, "", token, "2025-07-05", body)
	k := readUDK(t, r)
	if r.Header.Get("Content-Type") != "application/xml" || r.Header.Get("x-ms-version") != "2025-07-05" {
		t.Errorf("headers %v", r.Header)
	}
	want := udkAnswer{XMLName: k.XMLName, SignedOid: "62c18f92-db7d-44d1-be01-46057bcaf9e2", SignedTid: "72f988bf-86f1-41af-91ab-2d7cd011db47",
		SignedStart: now.UTC().Format("2006-01-02T15:04:05Z"), SignedExpiry: now.Add(time.Hour).UTC().Format("2006-01-02T15:04:05Z"),
		SignedService: "t", SignedVersion: "2025-07-05", Value: k.Value}
	if k != want {
		t.Errorf("key\n got %+v\nwant %+v", k, want)
	}
	if v, err := base64.StdEncoding.DecodeString(k.Value); err != nil || len(v) != 32 {
		t.Errorf("Value %q is not a base64 256-bit key", k.Value)
	}
	// Derived, not stored: the same request to another tableemu with
	// the same account (as after a restart) gets the same key.
	other := startTLS(t, emulator.Config{OAuth: "basic"})
	if k2 := readUDK(t, postUDK(t, other, "", token, "2025-07-05", body)); k2.Value != k.Value {
		t.Errorf("another instance derived %s, the first %s", k2.Value, k.Value)
	}
	// Another identity, another key.
	if k3 := readUDK(t, postUDK(t, tg, "", "Bearer "+string(mint(t, entraClaims("oid", "someone-else"))), "2025-07-05", body)); k3.Value == k.Value {
		t.Error("two identities got the same key")
	}
	// Without Start the key is valid from now.
	if k4 := readUDK(t, postUDK(t, tg, "", token, "2025-07-05", keyInfo(time.Time{}, now.Add(time.Hour)))); k4.SignedStart < now.Add(-time.Minute).UTC().Format("2006-01-02T15:04:05Z") {
		t.Errorf("no Start: SignedStart %s", k4.SignedStart)
	}

	// The refusals, each with the service's code.
	cases := []struct {
		name, path, auth, version, body string
		status                          int
		code                            string
	}{
		{"no credentials", "", "", "2025-07-05", body, 401, "NoAuthenticationInformation"},
		{"before 2025-07-05", "", token, "2024-08-04", body, 400, "InvalidUri"},
		{"malformed XML", "", token, "2025-07-05", "<KeyInfo><Expiry>", 400, "InvalidXmlDocument"},
		{"another root", "", token, "2025-07-05", "<Key/>", 400, "InvalidXmlDocument"},
		{"no Expiry", "", token, "2025-07-05", "<KeyInfo><Start>" + now.UTC().Format(time.RFC3339) + "</Start></KeyInfo>", 400, "MissingRequiredXmlNode"},
		{"Expiry past", "", token, "2025-07-05", keyInfo(now.Add(-2*time.Hour), now.Add(-time.Hour)), 400, "InvalidXmlNodeValue"},
		{"Expiry over seven days", "", token, "2025-07-05", keyInfo(now, now.Add(7*24*time.Hour+time.Minute)), 400, "InvalidXmlNodeValue"},
		{"Start after Expiry", "", token, "2025-07-05", keyInfo(now.Add(2*time.Hour), now.Add(time.Hour)), 400, "InvalidXmlNodeValue"},
		{"Expiry not a time", "", token, "2025-07-05", "<KeyInfo><Expiry>tomorrow</Expiry></KeyInfo>", 400, "InvalidXmlNodeValue"},
		{"below a table name", "/sometable" + udkPath, token, "2025-07-05", body, 400, "InvalidQueryParameterValue"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := postUDK(t, tg, c.path, c.auth, c.version, c.body)
			if r.StatusCode != c.status || r.Header.Get("x-ms-error-code") != c.code || errorCodeInBody(r) != c.code {
				t.Fatalf("%d %s (body %s), want %d %s", r.StatusCode, r.Header.Get("x-ms-error-code"), r.body, c.status, c.code)
			}
		})
	}

	// Shared Key, signed as the Go SDK signs (aztables' credential), and
	// an account SAS: only a token may get a key. Live Blob storage
	// answers an account key's request 403 AuthenticationFailed.
	t.Run("shared key", func(t *testing.T) {
		req, err := http.NewRequest("POST", tg.endpoint+udkPath, strings.NewReader(body))
		must(t, err)
		req.Header.Set("x-ms-version", "2025-07-05")
		req.Header.Set("Content-Type", "application/xml")
		tg.signLite(t, req)
		resp, err := tg.client.Do(req)
		must(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		r := &rawResponse{Response: resp, body: b}
		if r.StatusCode != 403 || r.Header.Get("x-ms-error-code") != "AuthenticationFailed" || !strings.Contains(string(b), "Microsoft Entra ID token") {
			t.Fatalf("%d %s: %s", r.StatusCode, r.Header.Get("x-ms-error-code"), b)
		}
	})
	t.Run("account SAS", func(t *testing.T) {
		u, err := tg.sharedKeyService(t).GetAccountSASURL(aztables.AccountSASResourceTypes{Service: true, Container: true, Object: true},
			aztables.AccountSASPermissions{Read: true, Write: true, Add: true, Create: true, List: true}, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
		must(t, err)
		_, q, _ := strings.Cut(u, "?")
		r := postUDK(t, tg, udkPath+"&"+q, "", "2025-07-05", body)
		if r.StatusCode != 403 || r.Header.Get("x-ms-error-code") != "AuthenticationFailed" {
			t.Fatalf("%d %s: %s", r.StatusCode, r.Header.Get("x-ms-error-code"), r.body)
		}
	})
}

// udkSASQuery signs a user delegation SAS for table with key k, here,
// apart from tableemu's auth package: the table string-to-sign of
// docs/protocol.md 9.10 (the service SAS's fields with the key's in place
// of si, then skdutid and sduoid, empty here). extra adds fields (spk, epk).
func udkSASQuery(t *testing.T, account, table, sp string, k udkAnswer, start, expiry time.Time, extra map[string]string) url.Values {
	t.Helper()
	f := map[string]string{"sv": "2025-07-05", "tn": table, "sp": sp, "spr": "https",
		"st": start.UTC().Format("2006-01-02T15:04:05Z"), "se": expiry.UTC().Format("2006-01-02T15:04:05Z"),
		"skoid": k.SignedOid, "sktid": k.SignedTid, "skt": k.SignedStart, "ske": k.SignedExpiry, "sks": k.SignedService, "skv": k.SignedVersion}
	for kk, v := range extra {
		f[kk] = v
	}
	sts := strings.Join([]string{f["sp"], f["st"], f["se"], "/table/" + account + "/" + strings.ToLower(table),
		f["skoid"], f["sktid"], f["skt"], f["ske"], f["sks"], f["skv"], "", "",
		"", f["spr"], f["sv"], f["spk"], f["srk"], f["epk"], f["erk"]}, "\n")
	key, err := base64.StdEncoding.DecodeString(k.Value)
	must(t, err)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(sts))
	q := url.Values{}
	for kk, v := range f {
		q.Set(kk, v)
	}
	q.Set("sig", base64.StdEncoding.EncodeToString(m.Sum(nil)))
	return q
}

// TestUserDelegationSAS: a user delegation SAS signed with a key from Get
// User Delegation Key works through the Go SDK as a table SAS does —
// insert and query with sp=raud — and is held to its permissions, its key
// range and its signature exactly as one signed with the account key.
func TestUserDelegationSAS(t *testing.T) {
	tg := startTLS(t, emulator.Config{OAuth: "basic"})
	name := tableName()
	_, err := tg.sharedKeyService(t).CreateTable(ctx(), name, nil)
	must(t, err)
	token := "Bearer " + string(mint(t, entraClaims("oid", "11059fcc-5514-4800-b5f8-49808b9cfab6", "tid", "72f988bf-86f1-41af-91ab-2d7cd011db47")))
	now := time.Now().Truncate(time.Second)
	k := readUDK(t, postUDK(t, tg, "", token, "2025-07-05", keyInfo(now.Add(-5*time.Minute), now.Add(time.Hour))))

	client := func(q url.Values) *aztables.Client {
		c, err := aztables.NewClientWithNoCredential(tg.endpoint+"/"+name+"?"+q.Encode(), tg.options())
		must(t, err)
		return c
	}
	entity := func(pk, rk string) []byte {
		return marshal(t, map[string]any{"PartitionKey": pk, "RowKey": rk, "Value": "v"})
	}

	full := client(udkSASQuery(t, tg.account, name, "raud", k, now.Add(-5*time.Minute), now.Add(time.Hour), nil))
	_, err = full.AddEntity(ctx(), entity("pk", "rk1"), nil)
	must(t, err)
	got, err := full.GetEntity(ctx(), "pk", "rk1", nil)
	must(t, err)
	if !strings.Contains(string(got.Value), `"Value":"v"`) {
		t.Errorf("read back %s", got.Value)
	}
	pager := full.NewListEntitiesPager(nil)
	page, err := pager.NextPage(ctx())
	must(t, err)
	if len(page.Entities) != 1 {
		t.Errorf("query: %d entities", len(page.Entities))
	}

	// A batch, each operation checked against the SAS's table and
	// permissions as for a service SAS.
	_, err = full.SubmitTransaction(ctx(), []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: entity("pk", "rk2")},
		{ActionType: aztables.TransactionTypeUpdateMerge, Entity: entity("pk", "rk1")},
	}, nil)
	must(t, err)

	// Too narrow: read only, then a key range.
	ro := client(udkSASQuery(t, tg.account, name, "r", k, now.Add(-5*time.Minute), now.Add(time.Hour), nil))
	_, err = ro.AddEntity(ctx(), entity("pk", "rk2"), nil)
	wantCode(t, err, 403, "AuthorizationPermissionMismatch")
	ranged := client(udkSASQuery(t, tg.account, name, "raud", k, now.Add(-5*time.Minute), now.Add(time.Hour), map[string]string{"spk": "a", "epk": "m"}))
	_, err = ranged.AddEntity(ctx(), entity("z", "1"), nil)
	wantCode(t, err, 403, "AuthorizationFailure")
	// Another table.
	_, err = tg.sharedKeyService(t).CreateTable(ctx(), name+"x", nil)
	must(t, err)
	otherTable, err := aztables.NewClientWithNoCredential(tg.endpoint+"/"+name+"x?"+udkSASQuery(t, tg.account, name, "raud", k, now.Add(-5*time.Minute), now.Add(time.Hour), nil).Encode(), tg.options())
	must(t, err)
	_, err = otherTable.AddEntity(ctx(), entity("pk", "rk"), nil)
	wantCode(t, err, 403, "AuthorizationFailure")

	// Keys tableemu never issued: a field altered after signing, a key
	// made up.
	altered := udkSASQuery(t, tg.account, name, "raud", k, now.Add(-5*time.Minute), now.Add(time.Hour), nil)
	altered.Set("skoid", "00000000-5514-4800-b5f8-49808b9cfab6")
	_, err = client(altered).GetEntity(ctx(), "pk", "rk1", nil)
	wantCode(t, err, 403, "AuthenticationFailed")
	made := k
	made.Value = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	_, err = client(udkSASQuery(t, tg.account, name, "raud", made, now.Add(-5*time.Minute), now.Add(time.Hour), nil)).GetEntity(ctx(), "pk", "rk1", nil)
	wantCode(t, err, 403, "AuthenticationFailed")
	// A SAS window already past.
	_, err = client(udkSASQuery(t, tg.account, name, "raud", k, now.Add(-5*time.Minute), now.Add(-time.Minute), nil)).GetEntity(ctx(), "pk", "rk1", nil)
	wantCode(t, err, 403, "AuthenticationFailed")
}
