package pgtest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The throwaway clusters accept TLS as well as plain connections, with a
// self-signed certificate made at initdb: URL gives plain ones
// (sslmode=disable), and TLS turns one into a URL that asks for TLS. pgx
// handles a TLS connection differently in places (since v5.10 it sends its
// cancel requests over TLS too), which tests of those places must cover.

// writeCert writes a self-signed certificate for 127.0.0.1 and its key as
// the data directory's server.crt and server.key, owned by the server's
// user, the key readable by it alone (PostgreSQL refuses it otherwise).
func writeCert(dataDir string, cred *credentialT) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(30 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	for name, block := range map[string]*pem.Block{
		"server.crt": {Type: "CERTIFICATE", Bytes: der},
		"server.key": {Type: "EC PRIVATE KEY", Bytes: kder},
	} {
		path := filepath.Join(dataDir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			return err
		}
		if err := giveTo(path, cred); err != nil {
			return err
		}
	}
	return nil
}

// TLS returns dbURL asking for TLS (sslmode=require: encrypted, the
// certificate not checked), and skips t when the server does not offer it
// (a TABLEEMU_TEST_POSTGRES server without TLS).
func TLS(t testing.TB, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("sslmode", "require")
	u.RawQuery = q.Encode()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Skipf("PostgreSQL does not accept TLS here (%v): the throwaway cluster does; set ssl=on on %s's server", err, EnvURL)
	}
	conn.Close(ctx)
	return u.String()
}
