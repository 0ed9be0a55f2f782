package auth

import (
	"net/url"
	"strings"
	"time"

	"github.com/tableemu/tableemu"
)

// SAS is a shared access signature as found in a query string (docs/protocol.md
// 9.6, 9.7). Fields hold the decoded values as given; Verify checks them.
type SAS struct {
	Version         string // sv
	Services        string // ss, account SAS
	ResourceTypes   string // srt, account SAS
	Table           string // tn, service SAS
	Permissions     string // sp
	Start           string // st
	Expiry          string // se
	IP              string // sip
	Protocol        string // spr
	Identifier      string // si, service SAS stored policy
	StartPK         string // spk
	StartRK         string // srk
	EndPK           string // epk
	EndRK           string // erk
	EncryptionScope string // ses, account SAS from sv 2020-12-06
	Signature       string // sig

	q url.Values
}

// ParseSAS extracts a SAS from decoded query parameters. ok is false when
// there is no sig parameter, i.e. the request carries no SAS.
func ParseSAS(q url.Values) (s *SAS, ok bool) {
	if _, ok := q["sig"]; !ok {
		return nil, false
	}
	return &SAS{
		Version:         q.Get("sv"),
		Services:        q.Get("ss"),
		ResourceTypes:   q.Get("srt"),
		Table:           q.Get("tn"),
		Permissions:     q.Get("sp"),
		Start:           q.Get("st"),
		Expiry:          q.Get("se"),
		IP:              q.Get("sip"),
		Protocol:        q.Get("spr"),
		Identifier:      q.Get("si"),
		StartPK:         q.Get("spk"),
		StartRK:         q.Get("srk"),
		EndPK:           q.Get("epk"),
		EndRK:           q.Get("erk"),
		EncryptionScope: q.Get("ses"),
		Signature:       q.Get("sig"),
		q:               q,
	}, true
}

// IsAccount reports whether this is an account SAS (it has ss or srt);
// otherwise it is a service SAS, which needs tn.
func (s *SAS) IsAccount() bool { return s.has("ss") || s.has("srt") }

func (s *SAS) has(key string) bool { _, ok := s.q[key]; return ok }

// Verify checks the SAS against acct and the request and returns what it
// grants. The order is the one docs/protocol.md 9.8 prescribes: the fields are
// parsed, then the signature is checked, then (service SAS) the stored
// policy is applied, then the time window, source IP and protocol, then the
// signed services (account SAS). Resource type, permission, table and key
// range depend on the operation: Grant.Allow and Grant.InRange check them.
func (s *SAS) Verify(req *Request, acct *Account, opts VerifyOptions) (*Grant, error) {
	if err := s.once(); err != nil {
		return nil, err
	}
	switch {
	case s.IsUserDelegation():
		return s.verifyUserDelegation(req, acct, opts) // delegation.go
	case s.IsAccount():
		return s.verifyAccount(req, acct, opts)
	}
	return s.verifyService(req, acct, opts)
}

// verifyService checks a service (table) SAS (docs/protocol.md 9.6).
func (s *SAS) verifyService(req *Request, acct *Account, opts VerifyOptions) (*Grant, error) {
	// Field rules as Microsoft's storage emulator (the service's code)
	// applies them; every violation is 403 AuthenticationFailed.
	mac, err := s.signatureBytes()
	if err != nil {
		return nil, err
	}
	if err := s.version("2012-02-12"); err != nil {
		return nil, err
	}
	if err := s.mandatory("tn"); err != nil {
		return nil, err
	}
	if err := s.optional("si"); err != nil {
		return nil, err
	}
	// "startPk must accompany startRk", "endPk must accompany endRk" [DOC].
	if s.has("srk") && !s.has("spk") {
		return nil, authFailed("spk is required when srk is provided.")
	}
	if s.has("erk") && !s.has("epk") {
		return nil, authFailed("epk is required when erk is provided.")
	}
	revocable := s.Identifier != ""
	start, expiry, err := s.window(revocable)
	if err != nil {
		return nil, err
	}
	perms := ""
	if revocable {
		err = s.optional("sp")
	} else {
		err = s.mandatory("sp")
	}
	if err != nil {
		return nil, err
	}
	if s.has("sp") {
		if perms, err = parseServicePermissions(s.Permissions); err != nil {
			return nil, err
		}
	}
	// sip and spr exist, and are signed, from sv 2015-04-05 (DOC "Create a
	// service SAS"); before that they are not part of the SAS at all.
	withIPAndProtocol := s.Version >= "2015-04-05"
	var ipr ipRange
	var httpsOnly bool
	if withIPAndProtocol {
		if ipr, err = s.ipRange(); err != nil {
			return nil, err
		}
		if httpsOnly, err = s.httpsOnly(); err != nil {
			return nil, err
		}
	}

	candidates := s.serviceStringsToSign(acct.Name)
	if !signs(acct.Keys, candidates, mac) {
		return nil, signatureMismatch(candidates[0], "Signature did not match. String to sign used was %s", candidates[0])
	}

	if revocable {
		if start, expiry, perms, err = s.applyPolicy(opts, start, expiry, perms); err != nil {
			return nil, err
		}
	}
	if err := checkWindow(req.now(), start, expiry); err != nil {
		return nil, err
	}
	if withIPAndProtocol {
		if err := checkIP(ipr, req.RemoteIP); err != nil {
			return nil, err
		}
		if err := checkProtocol(httpsOnly, req.Secure, opts.Loose); err != nil {
			return nil, err
		}
	}
	return s.serviceGrant(perms, expiry), nil
}

// serviceGrant is what a verified service SAS grants, signed with the
// account key or a user delegation key alike: its permissions on its table
// and key range, until expiry.
func (s *SAS) serviceGrant(perms string, expiry time.Time) *Grant {
	return &Grant{
		Kind:        ServiceSASGrant,
		Table:       s.Table,
		Permissions: perms,
		Expiry:      expiry,
		keys: KeyRange{
			StartPK: s.StartPK, HasStartPK: s.has("spk"),
			StartRK: s.StartRK, HasStartRK: s.has("srk"),
			EndPK: s.EndPK, HasEndPK: s.has("epk"),
			EndRK: s.EndRK, HasEndRK: s.has("erk"),
		},
	}
}

// serviceStringsToSign builds the service SAS string-to-sign for the SAS's
// version (docs/protocol.md 9.6; DOC "Create a service SAS"), once with the table
// name lower-cased as the docs, Go and JS do, and once as given, because
// .NET's TableSasBuilder does not lower-case it. The first is the one quoted
// in a mismatch detail.
func (s *SAS) serviceStringsToSign(account string) []string {
	names := []string{strings.ToLower(s.Table)}
	if s.Table != names[0] {
		names = append(names, s.Table)
	}
	var out []string
	for _, name := range names {
		// The "/table" service prefix arrived with 2015-02-21.
		resource := "/" + account + "/" + name
		if s.Version >= "2015-02-21" {
			resource = "/table" + resource
		}
		fields := []string{s.Permissions, s.Start, s.Expiry, resource, s.Identifier}
		if s.Version >= "2015-04-05" {
			fields = append(fields, s.IP, s.Protocol)
		}
		fields = append(fields, s.Version, s.StartPK, s.StartRK, s.EndPK, s.EndRK)
		out = append(out, strings.Join(fields, "\n"))
	}
	return out
}

// applyPolicy fills start, expiry and permissions from the stored policy si
// names. Decisions (docs/protocol.md 0.1 and 9.6, with the service's code):
//   - an unknown or removed policy → 403 AuthenticationFailed;
//   - a field given both in the SAS and in the policy → 403
//     AuthenticationFailed "Access policy fields can be associated with
//     signature or SAS identifier but not both". The DOC says 400 without a
//     code, but Microsoft's storage emulator (the service's authentication
//     code) throws AuthenticationFailure with that text, and public .NET
//     samples quote the same text as what the live service answers, so the
//     observed behaviour wins over the DOC;
//   - expiry or permission in neither place → 403 AuthenticationFailed.
func (s *SAS) applyPolicy(opts VerifyOptions, start, expiry time.Time, perms string) (time.Time, time.Time, string, error) {
	var pol Policy
	ok := false
	if opts.Policy != nil {
		pol, ok = opts.Policy(s.Table, s.Identifier)
	}
	if !ok {
		return start, expiry, perms, authFailed("SAS identifier cannot be found for specified signed identifier")
	}
	if (s.has("st") && !pol.Start.IsZero()) || (s.has("se") && !pol.Expiry.IsZero()) || (s.has("sp") && pol.Permission != "") {
		return start, expiry, perms, authFailed("Access policy fields can be associated with signature or SAS identifier but not both")
	}
	if !s.has("se") && pol.Expiry.IsZero() {
		return start, expiry, perms, authFailed("Signed expiry must be specified in signature or SAS identifier")
	}
	if !s.has("sp") && pol.Permission == "" {
		return start, expiry, perms, authFailed("Signed permission must be specified in signature or SAS identifier")
	}
	if !pol.Start.IsZero() {
		start = pol.Start
	}
	if !pol.Expiry.IsZero() {
		expiry = pol.Expiry
	}
	if pol.Permission != "" {
		// The ACL handler validated the letters when the policy was set;
		// keep the ones a table SAS knows, in any order.
		perms = ""
		for _, c := range "raud" {
			if strings.ContainsRune(pol.Permission, c) {
				perms += string(c)
			}
		}
	}
	return start, expiry, perms, nil
}

// verifyAccount checks an account SAS (docs/protocol.md 9.7).
func (s *SAS) verifyAccount(req *Request, acct *Account, opts VerifyOptions) (*Grant, error) {
	if err := s.version("2015-04-05"); err != nil {
		return nil, err
	}
	for _, key := range []string{"ss", "srt", "sig", "sp"} {
		if err := s.mandatory(key); err != nil {
			return nil, err
		}
	}
	services, err := parseLetters("ss", s.Services, "bfqt")
	if err != nil {
		return nil, err
	}
	resourceTypes, err := parseLetters("srt", s.ResourceTypes, "sco")
	if err != nil {
		return nil, err
	}
	// Every account SAS permission letter any version documents; the ones
	// that mean nothing to the Table service are accepted and ignored, as
	// the DOC says ("otherwise they are ignored").
	perms, err := parseLetters("sp", s.Permissions, "rwdxylacuptfime")
	if err != nil {
		return nil, err
	}
	mac, err := s.signatureBytes()
	if err != nil {
		return nil, err
	}
	start, expiry, err := s.window(false)
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

	candidates := s.accountStringsToSign(acct.Name)
	if !signs(acct.Keys, candidates, mac) {
		return nil, signatureMismatch(candidates[0], "Signature did not match. String to sign used was %s", candidates[0])
	}
	if err := checkWindow(req.now(), start, expiry); err != nil {
		return nil, err
	}
	if err := checkIP(ipr, req.RemoteIP); err != nil {
		return nil, err
	}
	if err := checkProtocol(httpsOnly, req.Secure, opts.Loose); err != nil {
		return nil, err
	}
	if !strings.Contains(services, "t") {
		return nil, tableemu.New(tableemu.AuthorizationServiceMismatch).WithDetail("The SAS grants services '%s', which do not include the Table service (t).", s.Services)
	}
	return &Grant{
		Kind:          AccountSASGrant,
		Permissions:   perms,
		ResourceTypes: resourceTypes,
		Expiry:        expiry,
	}, nil
}

// accountStringsToSign builds both account SAS string-to-sign forms
// (docs/protocol.md 9.7): the version's own first, then the other. The form from
// sv 2020-12-06 adds the encryption scope line; SDKs that sign 2019 versions
// use the first. Trying both only widens what a key holder can sign.
func (s *SAS) accountStringsToSign(account string) []string {
	base := strings.Join([]string{account, s.Permissions, s.Services, s.ResourceTypes,
		s.Start, s.Expiry, s.IP, s.Protocol, s.Version}, "\n") + "\n"
	withScope := base + s.EncryptionScope + "\n"
	if s.Version >= "2020-12-06" {
		return []string{withScope, base}
	}
	return []string{base, withScope}
}
