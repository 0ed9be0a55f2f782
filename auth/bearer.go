package auth

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tableemu/tableemu"
)

// Bearer tokens for --oauth basic. tableemu checks what Azurite's "basic"
// OAuth level checks (Azure/Azurite src/table/authentication/
// TableTokenAuthenticator.ts) and nothing more:
//
//   - the request came over HTTPS;
//   - the token is a well-formed JWT whose claims decode;
//   - exp, nbf and iat are present, and nbf ≤ now < exp (no clock skew);
//   - iss starts with an Azure AD token service prefix (issuerPrefixes);
//   - aud is the storage audience (audienceAllowed), and a per-account
//     audience names this account.
//
// It does NOT verify the signature (there is no key to verify it with: no
// tenant, no JWKS), nor the tenant, scopes, roles or any RBAC assignment.
// Any holder of a well-formed token with those claims is let in with the
// account key's rights. That is the point of an emulator's basic level —
// code written for Microsoft Entra ID runs unchanged — and the reason it is
// only offered together with HTTPS, on a local emulator.

// issuerPrefixes are the token issuers accepted, by prefix (the tenant id
// that follows is not checked): Azurite's VALID_ISSUE_PREFIXES — the public,
// Germany, China and test clouds' v1 token services — plus the v2.0
// endpoint's https://login.microsoftonline.com/, which issues the tokens an
// application that asks for v2 tokens receives.
var issuerPrefixes = []string{
	"https://sts.windows.net/",
	"https://sts.microsoftonline.de/",
	"https://sts.chinacloudapi.cn/",
	"https://sts.windows-ppe.net",
	"https://login.microsoftonline.com/",
}

// storageAudiences are the account-independent storage audiences (Azurite's
// VALID_TABLE_AUDIENCES): the storage resource URI, with or without a
// trailing slash, and the storage application id.
var storageAudiences = []string{
	"https://storage.azure.com",
	"https://storage.azure.com/",
	"e406a681-f3d4-42a8-90b6-c2b029497af1",
}

// accountAudienceSuffixes are the per-account table endpoint audiences
// ("https://<account>.table.core.windows.net" and the sovereign clouds'),
// accepted only for the account the request addresses.
var accountAudienceSuffixes = []string{
	".table.core.windows.net",
	".table.core.chinacloudapi.cn",
	".table.core.usgovcloudapi.net",
	".table.core.cloudapi.de",
}

// IsBearer reports whether h carries an Authorization header with the
// Bearer scheme.
func IsBearer(h http.Header) bool {
	v := h.Values("Authorization")
	if len(v) != 1 {
		return false
	}
	scheme, _, _ := strings.Cut(strings.TrimSpace(v[0]), " ")
	return strings.EqualFold(scheme, "Bearer")
}

// VerifyBearer verifies "Authorization: Bearer <JWT>" for acct as described
// at the top of this file. The Grant it returns has the account key's
// rights (Kind SharedKeyGrant): basic OAuth checks no role assignments. The
// caller refuses the operations the service does not authorize with tokens
// (table ACLs).
//
// Every refusal names the check in its detail and follows the x-ms-version
// the request names (tokenRefused): 401 InvalidAuthenticationInfo with a
// Bearer challenge from 2019-12-12 on, 403 AuthenticationFailed before.
func VerifyBearer(req *Request, acct *Account) (*Grant, error) {
	if !IsBearer(req.Header) {
		return nil, tableemu.New(tableemu.InvalidAuthenticationInfo).WithDetail("not a Bearer authorization header")
	}
	if !req.Secure {
		return nil, tokenRefused(req.Header, "Authentication scheme Bearer is not allowed with HTTP.")
	}
	_, token, _ := strings.Cut(strings.TrimSpace(req.Header.Get("Authorization")), " ")
	token = strings.TrimSpace(token)

	var claims entraClaims
	// The signature is not verified (see above); ParseUnverified still
	// checks the structure and decodes the claims. An unknown "alg" only
	// matters for verification, so ErrTokenUnverifiable is not a refusal.
	_, _, err := jwt.NewParser().ParseUnverified(token, &claims)
	if err != nil && !errors.Is(err, jwt.ErrTokenUnverifiable) {
		return nil, tokenRefused(req.Header, "The bearer token is not a well-formed JWT: %v", err)
	}
	if claims.ExpiresAt == nil || claims.NotBefore == nil || claims.IssuedAt == nil {
		return nil, tokenRefused(req.Header, "The bearer token needs exp, nbf and iat claims.")
	}
	now := req.now()
	v := jwt.NewValidator(jwt.WithTimeFunc(func() time.Time { return now }), jwt.WithExpirationRequired())
	if err := v.Validate(&claims); err != nil {
		switch {
		case errors.Is(err, jwt.ErrTokenExpired):
			return nil, tokenRefused(req.Header, "Lifetime validation failed. The token is expired.")
		case errors.Is(err, jwt.ErrTokenNotValidYet):
			return nil, tokenRefused(req.Header, "Lifetime validation failed. The token is not yet valid.")
		}
		return nil, tokenRefused(req.Header, "Lifetime validation failed: %v", err)
	}
	if !issuerAllowed(claims.Issuer) {
		return nil, tokenRefused(req.Header, "Issuer validation failed. Issuer did not match: %q.", claims.Issuer)
	}
	if !audienceAllowed(claims.Audience, acct.Name) {
		return nil, tokenRefused(req.Header, "Audience validation failed. Audience did not match: %q.", []string(claims.Audience))
	}
	return &Grant{Kind: SharedKeyGrant, Identity: claims.identity()}, nil
}

// entraClaims are the claims of a Microsoft Entra ID access token that
// tableemu reads: the registered ones it checks, and the object and tenant
// ids a user delegation key is issued to.
type entraClaims struct {
	jwt.RegisteredClaims
	ObjectID string `json:"oid"`
	TenantID string `json:"tid"`
}

// zeroGUID stands in for an id a token does not carry.
const zeroGUID = "00000000-0000-0000-0000-000000000000"

// identity is who the token names. Entra ID puts oid and tid in every
// access token for a user or a service principal; a hand-made token may
// lack them, so the object id falls back to sub and the tenant id to the
// one in the issuer (https://sts.windows.net/<tid>/), then to zeros.
func (c *entraClaims) identity() *Identity {
	id := &Identity{ObjectID: c.ObjectID, TenantID: c.TenantID}
	if id.ObjectID == "" {
		id.ObjectID = c.Subject
	}
	if id.ObjectID == "" {
		id.ObjectID = zeroGUID
	}
	if id.TenantID == "" {
		for _, p := range issuerPrefixes {
			if rest, ok := strings.CutPrefix(c.Issuer, p); ok {
				id.TenantID, _, _ = strings.Cut(strings.TrimPrefix(rest, "/"), "/")
				break
			}
		}
	}
	if id.TenantID == "" {
		id.TenantID = zeroGUID
	}
	return id
}

// challengeVersion is the first x-ms-version whose requests get a Bearer
// challenge when their token is refused (tokenRefused).
const challengeVersion = "2019-12-12"

// tokenRefused is the refusal of a request whose bearer token the account
// does not accept, as the service answers the x-ms-version in h
// (docs/protocol.md 9.9):
//
//   - from 2019-12-12 on, 401 InvalidAuthenticationInfo "Server failed to
//     authenticate the request. Please refer to the information in the
//     www-authenticate header.", with the Bearer challenge writeError adds
//     to every 401 — live at 2020-12-06 (azure-data-tables recording
//     test_challenge_auth_supported_version, a token of another tenant),
//     and at 2019-12-12 Azure/azure-sdk-for-net#43114 found the challenge
//     (for a request without a token) where 2018-11-09 had none;
//   - before, and without x-ms-version (tableemu's default, 2019-02-02),
//     403 AuthenticationFailed — live at 2019-07-07 (recording
//     test_challenge_auth_unsupported_version), the answer the SDKs'
//     challenge policies call an unsupported version.
//
// Versions compare as the dates they are (YYYY-MM-DD).
func tokenRefused(h http.Header, format string, args ...any) *tableemu.Error {
	if v := h["X-Ms-Version"]; len(v) > 0 && v[0] >= challengeVersion {
		e := tableemu.New(tableemu.InvalidAuthenticationInfo)
		e.Status = http.StatusUnauthorized
		e.Message = tableemu.New(tableemu.NoAuthenticationInformation).Message
		return e.WithDetail(format, args...)
	}
	return authFailed(format, args...)
}

func issuerAllowed(iss string) bool {
	for _, p := range issuerPrefixes {
		if strings.HasPrefix(iss, p) {
			return true
		}
	}
	return false
}

// audienceAllowed reports whether one of the token's audiences is the
// storage audience or this account's table endpoint.
func audienceAllowed(auds jwt.ClaimStrings, account string) bool {
	for _, aud := range auds {
		for _, a := range storageAudiences {
			if aud == a {
				return true
			}
		}
		host, ok := strings.CutPrefix(strings.TrimSuffix(aud, "/"), "https://")
		if !ok {
			continue
		}
		for _, suffix := range accountAudienceSuffixes {
			if name, ok := strings.CutSuffix(host, suffix); ok && name == account {
				return true
			}
		}
	}
	return false
}
