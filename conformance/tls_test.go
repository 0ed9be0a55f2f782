package conformance

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/golang-jwt/jwt/v5"

	"github.com/tableemu/tableemu/emulator"
)

// tlsTarget is tableemu served over HTTPS with --cert/--key, and a client
// that trusts its self-signed certificate.
type tlsTarget struct {
	*target
	client *http.Client
}

// startTLS writes a fresh self-signed certificate for 127.0.0.1 as PEM
// files, serves tableemu with them on a loopback port through
// emulator.Serve (the code path of the command), and stops it when the test
// ends.
func startTLS(t *testing.T, cfg emulator.Config) *tlsTarget {
	t.Helper()
	needInProcess(t)
	dir := t.TempDir()
	certPEM, keyPEM := selfSigned(t)
	cfg.Cert, cfg.Key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	must(t, os.WriteFile(cfg.Cert, certPEM, 0o600))
	must(t, os.WriteFile(cfg.Key, keyPEM, 0o600))
	cfg.InMemory, cfg.Silent = true, true
	srv, err := emulator.New(cfg)
	must(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(runCtx, ln, 5*time.Second) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
		srv.Close()
	})

	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(certPEM) {
		t.Fatal("bad test certificate")
	}
	acct := emulator.DefaultAccounts()[0]
	return &tlsTarget{
		target: &target{endpoint: emulator.Endpoint("https", ln.Addr().String(), acct.Name), account: acct.Name, key: acct.Keys[0]},
		client: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}},
	}
}

func selfSigned(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "tableemu test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	must(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

func (tg *tlsTarget) options() *aztables.ClientOptions {
	o := clientOptions()
	o.Transport = tg.client
	return o
}

func (tg *tlsTarget) sharedKeyService(t *testing.T) *aztables.ServiceClient {
	t.Helper()
	cred, err := aztables.NewSharedKeyCredential(tg.account, tg.key)
	must(t, err)
	svc, err := aztables.NewServiceClientWithSharedKey(tg.endpoint+"/", cred, tg.options())
	must(t, err)
	return svc
}

// TestHTTPS: Shared Key, and the SDK's own SAS helpers — whose account SAS
// is always spr=https (docs/protocol.md 13) — work unchanged over HTTPS without
// --loose.
func TestHTTPS(t *testing.T) {
	tg := startTLS(t, emulator.Config{})
	svc := tg.sharedKeyService(t)
	name := tableName()
	_, err := svc.CreateTable(ctx(), name, nil)
	must(t, err)
	c := svc.NewClient(name)
	_, err = c.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": 1}), nil)
	must(t, err)

	// Account SAS URL from the SDK.
	u, err := svc.GetAccountSASURL(aztables.AccountSASResourceTypes{Container: true, Object: true},
		aztables.AccountSASPermissions{Read: true, List: true, Create: true, Add: true}, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	must(t, err)
	if !strings.Contains(u, "spr=https") {
		t.Fatalf("the SDK's account SAS is not https-only: %s", u)
	}
	sasSvc, err := aztables.NewServiceClientWithNoCredential(u, tg.options())
	must(t, err)
	_, err = sasSvc.CreateTable(ctx(), tableName(), nil)
	must(t, err)
	_, err = sasSvc.NewClient(name).GetEntity(ctx(), "p", "r", nil)
	must(t, err)
	_, err = sasSvc.DeleteTable(ctx(), name, nil)
	wantCode(t, err, 403, "AuthorizationPermissionMismatch")

	// Service SAS URL from the SDK, and one signed https-only.
	u, err = c.GetTableSASURL(aztables.SASPermissions{Read: true}, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	must(t, err)
	ro, err := aztables.NewClientWithNoCredential(u, tg.options())
	must(t, err)
	_, err = ro.GetEntity(ctx(), "p", "r", nil)
	must(t, err)
	_, err = ro.AddEntity(ctx(), marshal(t, map[string]any{"PartitionKey": "p", "RowKey": "x"}), nil)
	wantCode(t, err, 403, "AuthorizationPermissionMismatch")
	cred, err := aztables.NewSharedKeyCredential(tg.account, tg.key)
	must(t, err)
	q, err := aztables.SASSignatureValues{Protocol: aztables.SASProtocolHTTPS, TableName: name, Permissions: "r",
		ExpiryTime: time.Now().Add(time.Hour).UTC()}.Sign(cred)
	must(t, err)
	https, err := aztables.NewClientWithNoCredential(tg.endpoint+"/"+name+"?"+q, tg.options())
	must(t, err)
	_, err = https.GetEntity(ctx(), "p", "r", nil)
	must(t, err)
}

// fakeToken is an azcore.TokenCredential handing out a fixed token, as
// azidentity would hand out one from Microsoft Entra ID.
type fakeToken string

func (f fakeToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: string(f), ExpiresOn: time.Now().Add(time.Hour)}, nil
}

func mint(t testing.TB, claims jwt.MapClaims) fakeToken {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte("tableemu does not check signatures"))
	must(t, err)
	return fakeToken(s)
}

func entraClaims(kv ...any) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{
		"aud": "https://storage.azure.com",
		"iss": "https://sts.windows.net/00000000-0000-0000-0000-000000000000/",
		"iat": now.Add(-time.Minute).Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix(),
	}
	for i := 0; i+1 < len(kv); i += 2 {
		c[kv[i].(string)] = kv[i+1]
	}
	return c
}

// TestOAuthBasic: with --oauth basic, bearer tokens for the storage
// audience from an Entra ID issuer, inside their time window, are accepted
// through the SDK's token credential path; the others are refused with
// 403 AuthenticationFailed, and table ACLs still need the account key
// (but a missing table is 404 TableNotFound first).
func TestOAuthBasic(t *testing.T) {
	tg := startTLS(t, emulator.Config{OAuth: "basic"})
	name := tableName()
	_, err := tg.sharedKeyService(t).CreateTable(ctx(), name, nil)
	must(t, err)
	tokenClient := func(tok fakeToken) *aztables.Client {
		c, err := aztables.NewClient(tg.endpoint+"/"+name, tok, tg.options())
		must(t, err)
		return c
	}
	entity := func(rk string) []byte { return marshal(t, map[string]any{"PartitionKey": "p", "RowKey": rk}) }

	good := tokenClient(mint(t, entraClaims()))
	_, err = good.AddEntity(ctx(), entity("a"), nil)
	must(t, err)
	_, err = good.GetEntity(ctx(), "p", "a", nil)
	must(t, err)
	perAccount := tokenClient(mint(t, entraClaims("aud", "https://"+tg.account+".table.core.windows.net/")))
	_, err = perAccount.GetEntity(ctx(), "p", "a", nil)
	must(t, err)

	for what, claims := range map[string]jwt.MapClaims{
		"expired":         entraClaims("exp", time.Now().Add(-time.Minute).Unix()),
		"not yet valid":   entraClaims("nbf", time.Now().Add(10*time.Minute).Unix()),
		"foreign issuer":  entraClaims("iss", "https://issuer.example/"),
		"other audience":  entraClaims("aud", "https://vault.azure.net"),
		"another account": entraClaims("aud", "https://someoneelse.table.core.windows.net"),
		"no issued-at":    {"aud": "https://storage.azure.com", "iss": "https://sts.windows.net/x/", "nbf": time.Now().Unix() - 60, "exp": time.Now().Unix() + 600},
	} {
		_, err := tokenClient(mint(t, claims)).GetEntity(ctx(), "p", "a", nil)
		if err == nil {
			t.Fatalf("%s: token accepted", what)
		}
		wantCode(t, err, 403, "AuthenticationFailed")
	}
	_, err = good.GetAccessPolicy(ctx(), nil)
	wantCode(t, err, 403, "AuthorizationFailure")
	_, err = good.SetAccessPolicy(ctx(), &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{{ID: to.Ptr("x")}}})
	wantCode(t, err, 403, "AuthorizationFailure")
	// For a table that is not there, live answers 404 TableNotFound to
	// both, token or not (docs/protocol.md 9.8).
	missing, err := aztables.NewClient(tg.endpoint+"/"+tableName(), mint(t, entraClaims()), tg.options())
	must(t, err)
	_, err = missing.GetAccessPolicy(ctx(), nil)
	wantCode(t, err, 404, "TableNotFound")
	_, err = missing.SetAccessPolicy(ctx(), nil)
	wantCode(t, err, 404, "TableNotFound")

	// Shared Key keeps working beside tokens.
	_, err = tg.sharedKeyService(t).NewClient(name).GetAccessPolicy(ctx(), nil)
	must(t, err)
}

// TestBearerWithoutOAuth: without --oauth the token is refused as the
// service refuses an unsupported scheme; with --oauth basic but plain HTTP
// (possible only when embedding, the command requires --cert) it is
// refused too.
func TestBearerWithoutOAuth(t *testing.T) {
	tg := startTLS(t, emulator.Config{})
	c, err := aztables.NewClient(tg.endpoint+"/"+tableName(), mint(t, entraClaims()), tg.options())
	must(t, err)
	_, err = c.GetEntity(ctx(), "p", "a", nil)
	wantCode(t, err, 403, "AuthenticationFailed")

	srv, err := emulator.New(emulator.Config{InMemory: true, Silent: true, OAuth: "basic"})
	must(t, err)
	hs := httptest.NewServer(srv)
	defer func() { hs.Close(); srv.Close() }()
	req, err := http.NewRequest("GET", hs.URL+"/"+emulator.DevAccount+"/Tables", nil)
	must(t, err)
	req.Header.Set("Authorization", "Bearer "+string(mint(t, entraClaims())))
	req.Header.Set("x-ms-version", "2019-02-02")
	wantRawCode(t, do(t, req), 403, "AuthenticationFailed")
}
