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
// Every refusal is 403 AuthenticationFailed with a detail naming the check,
// as Azurite answers and as the service answered API version 2019-02-02 —
// what the SDKs send — for an expired token ("Lifetime validation failed.
// The token is expired.", Azure/azure-sdk-for-java#8667). Newer API
// versions get 401 InvalidAuthenticationInfo with a Bearer challenge from
// the live service (Azure/azure-sdk-for-net#42859); tableemu does not
// distinguish versions here.
func VerifyBearer(req *Request, acct *Account) (*Grant, error) {
	if !IsBearer(req.Header) {
		return nil, tableemu.New(tableemu.InvalidAuthenticationInfo).WithDetail("not a Bearer authorization header")
	}
	if !req.Secure {
		return nil, authFailed("Authentication scheme Bearer is not allowed with HTTP.")
	}
	_, token, _ := strings.Cut(strings.TrimSpace(req.Header.Get("Authorization")), " ")
	token = strings.TrimSpace(token)

	var claims jwt.RegisteredClaims
	// The signature is not verified (see above); ParseUnverified still
	// checks the structure and decodes the claims. An unknown "alg" only
	// matters for verification, so ErrTokenUnverifiable is not a refusal.
	_, _, err := jwt.NewParser().ParseUnverified(token, &claims)
	if err != nil && !errors.Is(err, jwt.ErrTokenUnverifiable) {
		return nil, authFailed("The bearer token is not a well-formed JWT: %v", err)
	}
	if claims.ExpiresAt == nil || claims.NotBefore == nil || claims.IssuedAt == nil {
		return nil, authFailed("The bearer token needs exp, nbf and iat claims.")
	}
	now := req.now()
	v := jwt.NewValidator(jwt.WithTimeFunc(func() time.Time { return now }), jwt.WithExpirationRequired())
	if err := v.Validate(claims); err != nil {
		switch {
		case errors.Is(err, jwt.ErrTokenExpired):
			return nil, authFailed("Lifetime validation failed. The token is expired.")
		case errors.Is(err, jwt.ErrTokenNotValidYet):
			return nil, authFailed("Lifetime validation failed. The token is not yet valid.")
		}
		return nil, authFailed("Lifetime validation failed: %v", err)
	}
	if !issuerAllowed(claims.Issuer) {
		return nil, authFailed("Issuer validation failed. Issuer did not match: %q.", claims.Issuer)
	}
	if !audienceAllowed(claims.Audience, acct.Name) {
		return nil, authFailed("Audience validation failed. Audience did not match: %q.", []string(claims.Audience))
	}
	return &Grant{Kind: SharedKeyGrant}, nil
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
