// Package auth verifies the credentials a Table service request carries —
// Shared Key, Shared Key Lite, service SAS and account SAS (docs/protocol.md 9) —
// and turns them into a Grant that says which operations, on which table and
// which key range, the request may perform. It knows nothing of storage or
// routing: the caller describes the request in a Request, supplies the
// account's keys and (for stored access policies) a lookup callback, and asks
// the Grant about each operation it is about to run.
//
// Every refusal is an *tableemu.Error. Outcomes follow docs/protocol.md 0.1 and 9.8;
// where that leaves a choice open the decision and its evidence are noted at
// the place it is made.
package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/tableemu/tableemu"
)

// BearerChallenge is the WWW-Authenticate value to send with a 401
// NoAuthenticationInformation (docs/protocol.md 0.1). The live service names the
// account's tenant in authorization_uri, e.g.
// "Bearer authorization_uri=https://login.microsoftonline.com/72f988bf-…/oauth2/authorize resource_id=https://storage.azure.com"
// (captured in Azure/azure-sdk-for-js storage recordings and quoted in
// Azure/azure-sdk-for-js#9528). An emulator has no tenant, so it names the
// multi-tenant authority "common", which token libraries accept as an
// authority and which keeps the challenge parseable by SDKs that read the
// tenant from the path (azure-sdk-for-java StorageBearerTokenChallengeAuthorizationPolicy).
const BearerChallenge = "Bearer authorization_uri=https://login.microsoftonline.com/common/oauth2/authorize resource_id=https://storage.azure.com"

// MaxClockSkew is how far a Shared Key request's date may be from the
// server clock, either way (docs/protocol.md 0.1).
const MaxClockSkew = 15 * time.Minute

// Account is one storage account the emulator serves.
type Account struct {
	Name string
	// Keys are the account keys, already base64-decoded: key1 and
	// optionally key2. A signature made with any of them is accepted.
	Keys [][]byte
}

// Request is what auth needs to know about one HTTP request.
type Request struct {
	Method string
	Header http.Header
	// Query holds the decoded query parameters.
	Query url.Values
	// CanonicalPaths are the candidate canonicalized-resource paths without
	// the ?comp part, e.g. "/devstoreaccount1/devstoreaccount1/Tables", the
	// first built from the raw (still percent-encoded) request path. A Shared
	// Key signature matching any of them is accepted (docs/protocol.md 9.5).
	// CanonicalPaths builds the usual set.
	CanonicalPaths []string
	// Secure reports whether the request arrived over TLS.
	Secure   bool
	RemoteIP netip.Addr
	// Now is the server clock; zero means time.Now().
	Now time.Time
	// Scratch, if not nil, is a buffer the verification may use for the
	// strings to sign instead of allocating one: a caller that reuses its
	// Request keeps it (it holds nothing once the call returns).
	Scratch []byte
}

func (r *Request) now() time.Time {
	if r.Now.IsZero() {
		return time.Now()
	}
	return r.Now
}

// VerifyOptions carries the caller's settings and lookups for SAS checks.
type VerifyOptions struct {
	// Loose accepts an spr=https SAS over plain HTTP (the --loose flag).
	// The Go SDK signs every account SAS with spr=https (docs/protocol.md 13), so
	// an emulator served over HTTP needs this to accept them.
	Loose bool
	// Policy looks up the stored access policy id on table (Set Table
	// ACL). table is the SAS's tn, which clients may have lower-cased, so the
	// lookup should compare table names case-insensitively as the service
	// does. A nil Policy means no table has policies.
	Policy func(table, id string) (Policy, bool)
}

// Policy is one stored access policy (docs/protocol.md 3.4). Each field may be
// left out, in which case the SAS must supply it (docs/protocol.md 9.6).
type Policy struct {
	Start      time.Time // zero when the policy has no Start
	Expiry     time.Time // zero when the policy has no Expiry
	Permission string    // "" when the policy has no Permission
}

// Authenticate verifies whichever credential req carries: the Authorization
// header (Shared Key / Shared Key Lite) or a SAS in the query string.
//
// A request with neither is 401 NoAuthenticationInformation; the caller adds
// WWW-Authenticate: BearerChallenge. A request with both is 400
// InvalidAuthenticationInfo, as Microsoft's storage emulator (whose
// authentication code is the service's) rejects it with "Ambiguous
// authentication scheme credentials provided".
func Authenticate(req *Request, acct *Account, opts VerifyOptions) (*Grant, error) {
	hasAuth := len(req.Header["Authorization"]) > 0
	sas, hasSAS := ParseSAS(req.Query)
	switch {
	case hasAuth && hasSAS:
		return nil, tableemu.New(tableemu.InvalidAuthenticationInfo).WithDetail(
			"Ambiguous authentication scheme credentials provided. Request contains authentication credentials for signed access and authenticated access.")
	case hasSAS:
		return sas.Verify(req, acct, opts)
	default:
		return VerifySharedKey(req, acct)
	}
}

// CanonicalPaths returns the canonicalized-resource candidates for a request
// to account (the primary account name) whose path as sent, still
// percent-encoded, is escapedPath (e.g. "/devstoreaccount1/Tables" in path
// style, "/Tables" for a host-style URL):
//
//   - "/" + account + escapedPath, the form every SDK signs (docs/protocol.md 9.5);
//   - the same with the path percent-decoded, because clients differ in how
//     they encode ' ( ) and spaces ("encoding drift");
//   - for a path-style "-secondary" account segment, both forms again with the
//     primary name in that segment, since clients sign either (docs/protocol.md 9.5);
//   - for "/<account>-secondary/<account>/…", the form Python's
//     azure-data-tables sends to a path-style secondary (the primary's path
//     behind a "-secondary" segment), the primary's path "/<account>/…":
//     that SDK signs a request before it moves it to the secondary.
//
// An empty path becomes "/".
func CanonicalPaths(account, escapedPath string) []string {
	return AppendCanonicalPaths(nil, account, escapedPath)
}

// AppendCanonicalPaths appends CanonicalPaths(account, escapedPath) to
// dst. The candidates share one string: with dst's room, a request whose
// path has no percent-escape costs one allocation, one with escapes two.
func AppendCanonicalPaths(dst []string, account, escapedPath string) []string {
	if escapedPath == "" {
		escapedPath = "/"
	}
	// The paths below the "/" + account every candidate starts with.
	var arr [8]string
	paths := append(arr[:0], escapedPath)
	if dec, err := url.PathUnescape(escapedPath); err == nil && dec != escapedPath {
		paths = append(paths, dec)
	}
	for _, p := range paths[:len(paths):len(paths)] {
		if rest, ok := cutSecondary(p, account); ok && (rest == "" || rest[0] == '/') {
			paths = append(paths, "/"+account+rest)
			if len(rest) > len(account)+1 && rest[0] == '/' && strings.HasPrefix(rest[1:], account) && rest[1+len(account)] == '/' {
				paths = append(paths, rest)
			}
		}
	}
	size := 0
	for _, p := range paths {
		size += 1 + len(account) + len(p)
	}
	var b strings.Builder
	b.Grow(size)
	var ends [len(arr)]int
	kept := ends[:0]
	for i, p := range paths {
		if contains(paths[:i], p) {
			continue
		}
		b.WriteByte('/')
		b.WriteString(account)
		b.WriteString(p)
		kept = append(kept, b.Len())
	}
	all, start := b.String(), 0
	for _, end := range kept {
		dst = append(dst, all[start:end])
		start = end
	}
	return dst
}

// cutSecondary is strings.CutPrefix(p, "/"+account+"-secondary") without
// building the prefix.
func cutSecondary(p, account string) (string, bool) {
	const suffix = "-secondary"
	if len(p) < 1+len(account)+len(suffix) || p[0] != '/' || p[1:1+len(account)] != account || p[1+len(account):1+len(account)+len(suffix)] != suffix {
		return p, false
	}
	return p[1+len(account)+len(suffix):], true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// signs reports whether mac is the HMAC-SHA256 of any of stringsToSign under
// any of keys. Comparison is constant-time per candidate (hmac.Equal).
// Shared Key passes byte slices it built in one buffer; converting a string
// to write it into the hash would copy it.
func signs[T string | []byte](keys [][]byte, stringsToSign []T, mac []byte) bool {
	ok := false
	var sum [sha256.Size]byte
	for _, key := range keys {
		pool := macPool(key)
		h := pool.Get().(hash.Hash)
		for _, s := range stringsToSign {
			h.Reset()
			h.Write([]byte(s))
			// Keep looping after a match so the time taken does not say which
			// key or candidate matched.
			if hmac.Equal(h.Sum(sum[:0]), mac) {
				ok = true
			}
		}
		pool.Put(h)
	}
	return ok
}

// signsAll is signs for the strings to sign that buf holds one after
// another, the i-th ending at ends[i] (VerifySharedKey builds them so, with
// no slice per string to allocate). The sums go to buf's spare capacity
// when it has room for one, else to a buffer of their own.
func signsAll(keys [][]byte, buf []byte, ends []int, mac []byte) bool {
	ok := false
	sum := buf[len(buf):]
	if cap(sum) < sha256.Size {
		sum = make([]byte, 0, sha256.Size)
	}
	for _, key := range keys {
		pool := macPool(key)
		h := pool.Get().(hash.Hash)
		start := 0
		for _, end := range ends {
			h.Reset()
			h.Write(buf[start:end])
			start = end
			// As signs: keep looping after a match.
			if hmac.Equal(h.Sum(sum[:0]), mac) {
				ok = true
			}
		}
		pool.Put(h)
	}
	return ok
}

// macPools holds HMAC-SHA256 states per account key. A fresh hmac.New
// hashes the key into its inner and outer pads on every request — twice
// the SHA-256 blocks of the signature itself, the costliest step of
// authorising a point read — where a state that has been Reset once
// restores its keyed pads from a saved copy. Keys come from the
// configured accounts only, so the map stays small.
var macPools struct {
	sync.RWMutex
	m map[string]*sync.Pool // of hash.Hash
}

func macPool(key []byte) *sync.Pool {
	macPools.RLock()
	p := macPools.m[string(key)]
	macPools.RUnlock()
	if p != nil {
		return p
	}
	macPools.Lock()
	defer macPools.Unlock()
	if p = macPools.m[string(key)]; p == nil {
		k := string(key)
		p = &sync.Pool{New: func() any { return hmac.New(sha256.New, []byte(k)) }}
		if macPools.m == nil {
			macPools.m = map[string]*sync.Pool{}
		}
		macPools.m[k] = p
	}
	return p
}

// decodeSignature decodes a base64 signature. A '+' that arrived unescaped
// in a query string has been decoded to a space by then; put it back.
func decodeSignature(sig string) ([]byte, bool) {
	return decodeSignatureInto(nil, sig)
}

// decodeSignatureInto is decodeSignature appending to dst: a caller with
// room for a SHA-256 MAC on its stack allocates nothing for a signature
// of that size.
func decodeSignatureInto(dst []byte, sig string) ([]byte, bool) {
	sig = strings.ReplaceAll(sig, " ", "+")
	if n := base64.StdEncoding.DecodedLen(len(sig)); cap(dst) < n {
		dst = make([]byte, 0, n)
	}
	// AppendDecode reads the text as bytes; the string is not written.
	b, err := base64.StdEncoding.AppendDecode(dst[:0], unsafe.Slice(unsafe.StringData(sig), len(sig)))
	return b, err == nil
}

// authFailed is 403 AuthenticationFailed with a detail for the XML
// AuthenticationErrorDetail element and logs (docs/protocol.md 9.8).
func authFailed(format string, args ...any) *tableemu.Error {
	return tableemu.New(tableemu.AuthenticationFailed).WithDetail(format, args...)
}

// SignatureError is the refusal of a request whose signature no account
// key reproduces: 403 AuthenticationFailed (Err), plus the string the server
// signed — the first candidate, built from the path as sent. The emulator's
// --debug log prints it so a user can compare it with the string their
// client signed, as Azurite's debug log does (docs/protocol.md 9.8).
type SignatureError struct {
	Err          *tableemu.Error
	StringToSign string
}

func (e *SignatureError) Error() string { return e.Err.Error() }
func (e *SignatureError) Unwrap() error { return e.Err }

func signatureMismatch(stringToSign, format string, args ...any) error {
	return &SignatureError{Err: authFailed(format, args...), StringToSign: stringToSign}
}

// rfc1123 formats t as the service does in authentication details
// (.NET "R": "Tue, 01 Nov 2022 07:39:51 GMT").
func rfc1123(t time.Time) string { return t.UTC().Format(http.TimeFormat) }
