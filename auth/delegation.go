package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"strconv"
	"strings"
	"time"
)

// User delegation keys and user delegation SAS for tables (docs/protocol.md
// 9.10). Service version 2025-07-05 brought to Table storage what Blob
// storage has had since 2018-11-09: an application signed in with Microsoft
// Entra ID asks for a user delegation key (Get User Delegation Key, POST
// /?restype=service&comp=userdelegationkey, bearer-signed only) and signs
// table SAS tokens with it instead of the account key (Azure Storage blog,
// "Announcing public preview of user delegation SAS for Azure Tables, Azure
// Files and Azure Queues"; azure-data-tables 12.8.0b1's
// TableServiceClient.get_user_delegation_key and
// generate_table_sas(user_delegation_key=…)).
//
// tableemu stores no keys. The key it hands out is an HMAC-SHA256, under
// the account key, of the fields the key is returned with and every SAS
// signed with it repeats (skoid, sktid, skt, ske, sks, skv, skdutid), so a
// SAS is verified by deriving the key again from its own fields: the
// emulator needs no table of keys and its keys outlive a restart, as on
// Azure. Azurite derives its blob keys from the same fields, but under a
// constant seed known to everyone (src/blob/utils/utils.ts
// getUserDelegationKeyValue); keyed with the account key, a key cannot be
// made without the account key, and altering any field (another object id,
// a longer key window) changes the key, so the SAS no longer verifies.

// DelegationVersion is the first service version whose Table service has
// user delegation keys and SAS.
const DelegationVersion = "2025-07-05"

// MaxDelegationKeyLifetime is how far after now a key's expiry may be:
// "within seven days of the current time" (Learn, Get User Delegation Key).
const MaxDelegationKeyLifetime = 7 * 24 * time.Hour

// DelegationTimeLayout is how a key's SignedStart and SignedExpiry are
// written: ISO 8601 UTC to the second, as the live answer has them
// (2026-04-14T05:02:33Z, azure-data-tables test_get_user_delegation_key).
const DelegationTimeLayout = "2006-01-02T15:04:05Z"

// Identity is who a bearer token names: the Microsoft Entra object id
// (oid) and tenant id (tid) a user delegation key is issued to.
type Identity struct {
	ObjectID string
	TenantID string
}

// DelegationKey is a user delegation key's signed fields.
type DelegationKey struct {
	ObjectID string    // SignedOid, skoid
	TenantID string    // SignedTid, sktid
	Start    time.Time // SignedStart, skt
	Expiry   time.Time // SignedExpiry, ske
	Service  string    // SignedService, sks: "t"
	Version  string    // SignedVersion, skv
	// DelegatedUserTenantID is SignedDelegatedUserTid, skdutid: the
	// tenant of the user a key's SAS is for, when the key was asked for
	// with one (DelegatedUserTid); "" otherwise.
	DelegatedUserTenantID string
}

// Value is the key itself (32 bytes; base64 in the answer's Value): the
// HMAC-SHA256 under accountKey of account and the key's fields, each
// length-prefixed so that no two field lists give the same input. Times
// count to the second in UTC, so a client that writes skt with a
// fraction of zeros gets the same key.
func (k DelegationKey) Value(account string, accountKey []byte) []byte {
	b := make([]byte, 0, 256)
	for _, f := range []string{"tableemu user delegation key 1", account, k.ObjectID, k.TenantID,
		k.Start.UTC().Format(DelegationTimeLayout), k.Expiry.UTC().Format(DelegationTimeLayout),
		k.Service, k.Version, k.DelegatedUserTenantID} {
		b = strconv.AppendInt(b, int64(len(f)), 10)
		b = append(b, ':')
		b = append(b, f...)
	}
	m := hmac.New(sha256.New, accountKey)
	m.Write(b)
	return m.Sum(nil)
}

// IsUserDelegation reports whether the SAS is signed with a user
// delegation key: it names the key's object id (skoid).
func (s *SAS) IsUserDelegation() bool { return s.has("skoid") }

// verifyUserDelegation checks a user delegation SAS for a table: a service
// SAS in all but its key (docs/protocol.md 9.6, 9.10). Field rules first,
// every violation 403 AuthenticationFailed, then the signature, then the
// key's window and the SAS's window, source IP and protocol. The grant is a
// service SAS's: permissions, table and key range are checked per
// operation exactly as for one signed with the account key.
func (s *SAS) verifyUserDelegation(req *Request, acct *Account, opts VerifyOptions) (*Grant, error) {
	mac, err := s.signatureBytes()
	if err != nil {
		return nil, err
	}
	if err := s.version(DelegationVersion); err != nil {
		return nil, err
	}
	for _, key := range []string{"tn", "skoid", "sktid", "skt", "ske", "sks", "skv"} {
		if err := s.mandatory(key); err != nil {
			return nil, err
		}
	}
	if err := s.optional("skdutid"); err != nil {
		return nil, err
	}
	// "Stored access policies are not supported for a user delegation
	// SAS" (Learn, Create a user delegation SAS).
	if s.has("si") {
		return nil, authFailed("A user delegation SAS cannot name a stored access policy (si).")
	}
	// A delegated user's SAS (sduoid) is valid only with that user's
	// bearer token beside it; tableemu takes one credential per request
	// (Authenticate), so it cannot honour one.
	if s.has("sduoid") {
		return nil, authFailed("sduoid: a user delegation SAS for a delegated user needs that user's bearer token as well, which tableemu does not support.").
			WithHint("sign the SAS without a delegated user object id (sduoid).")
	}
	if s.has("srk") && !s.has("spk") {
		return nil, authFailed("spk is required when srk is provided.")
	}
	if s.has("erk") && !s.has("epk") {
		return nil, authFailed("epk is required when erk is provided.")
	}
	start, expiry, err := s.window(false)
	if err != nil {
		return nil, err
	}
	if err := s.mandatory("sp"); err != nil {
		return nil, err
	}
	perms, err := parseServicePermissions(s.Permissions)
	if err != nil {
		return nil, err
	}
	ipr, err := s.ipRange()
	if err != nil {
		return nil, err
	}
	httpsOnly, err := s.httpsOnly()
	if err != nil {
		return nil, err
	}
	keyStart, err := parseSASTime("skt", s.q.Get("skt"))
	if err != nil {
		return nil, err
	}
	keyExpiry, err := parseSASTime("ske", s.q.Get("ske"))
	if err != nil {
		return nil, err
	}
	if s.q.Get("sks") != "t" {
		return nil, authFailed("sks '%s' is not the Table service's key (t).", s.q.Get("sks"))
	}
	if !validVersion(s.q.Get("skv")) {
		return nil, authFailed("Signature fields not well formed: skv '%s' is not a version.", s.q.Get("skv"))
	}

	key := DelegationKey{
		ObjectID: s.q.Get("skoid"), TenantID: s.q.Get("sktid"),
		Start: keyStart, Expiry: keyExpiry,
		Service: s.q.Get("sks"), Version: s.q.Get("skv"),
		DelegatedUserTenantID: s.q.Get("skdutid"),
	}
	// Any of the account's keys may have derived it (a key handed out
	// before the account key was rotated to key2 still works while key1
	// is configured).
	keys := make([][]byte, len(acct.Keys))
	for i, k := range acct.Keys {
		keys[i] = key.Value(acct.Name, k)
	}
	candidates := s.delegationStringsToSign(acct.Name)
	if !signsOnce(keys, candidates, mac) {
		return nil, signatureMismatch(candidates[0], "Signature did not match. String to sign used was %s", candidates[0])
	}

	now := req.now()
	if !keyStart.Before(keyExpiry) || now.Before(keyStart) || !now.Before(keyExpiry) {
		return nil, authFailed("Signed key not valid in the specified time frame: Start [%s] - Expiry [%s] - Current [%s]", rfc1123(keyStart), rfc1123(keyExpiry), rfc1123(now))
	}
	if err := checkWindow(now, start, expiry); err != nil {
		return nil, err
	}
	if err := checkIP(ipr, req.RemoteIP); err != nil {
		return nil, err
	}
	if err := checkProtocol(httpsOnly, req.Secure, opts.Loose); err != nil {
		return nil, err
	}
	if keyExpiry.Before(expiry) {
		expiry = keyExpiry // the SAS stops working with its key
	}
	return s.serviceGrant(perms, expiry), nil
}

// signsOnce is signs for keys used once: derived keys differ for every
// identity and key window, so they must not enter signs' pools, which are
// kept for the life of the process per key.
func signsOnce(keys [][]byte, stringsToSign []string, mac []byte) bool {
	ok := false
	var sum [sha256.Size]byte
	for _, key := range keys {
		h := hmac.New(sha256.New, key)
		for _, s := range stringsToSign {
			h.Reset()
			h.Write([]byte(s))
			// As signs: keep looping after a match.
			if hmac.Equal(h.Sum(sum[:0]), mac) {
				ok = true
			}
		}
	}
	return ok
}

// delegationStringsToSign builds the user delegation SAS string-to-sign
// for a table, the service SAS's fields with the key's in place of the
// stored policy id:
//
//	sp st se /table/<account>/<table> skoid sktid skt ske sks skv skdutid sduoid sip spr sv spk srk epk erk
//
// one per line. The key's fields follow the canonicalized resource and
// end with skdutid and sduoid as in every user delegation SAS from
// 2025-07-05 on (Learn, Create a user delegation SAS; the Azure SDKs' queue
// and file forms at that version: Azure/azure-sdk-for-rust azure_storage_sas
// queue_udk_string_to_sign, fifteen lines, and azure-storage-file-share's
// _FileSharedAccessHelper), and the table's key range ends it as in the
// service SAS (serviceStringsToSign). The second form leaves out skdutid
// and sduoid, the layout of the key's fields before 2025-07-05 (Blob
// storage), in case a client signs a table SAS so: trying it only widens
// what the holder of the key can sign. Each form comes with the table name
// lower-cased and as given, as for a service SAS; the first is the one
// quoted in a mismatch detail.
func (s *SAS) delegationStringsToSign(account string) []string {
	names := []string{strings.ToLower(s.Table)}
	if s.Table != names[0] {
		names = append(names, s.Table)
	}
	q := s.q.Get
	var out []string
	for _, withDelegatedUser := range []bool{true, false} {
		for _, name := range names {
			fields := []string{s.Permissions, s.Start, s.Expiry, "/table/" + account + "/" + name,
				q("skoid"), q("sktid"), q("skt"), q("ske"), q("sks"), q("skv")}
			if withDelegatedUser {
				fields = append(fields, q("skdutid"), q("sduoid"))
			}
			fields = append(fields, s.IP, s.Protocol, s.Version, s.StartPK, s.StartRK, s.EndPK, s.EndRK)
			out = append(out, strings.Join(fields, "\n"))
		}
	}
	return out
}
