package auth

import (
	"crypto/sha256"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tableemu/tableemu"
)

// sharedKeyGrant is every Shared Key request's grant: everything. One value,
// shared; no caller changes a Grant.
var sharedKeyGrant = &Grant{Kind: SharedKeyGrant}

// VerifySharedKey verifies an "Authorization: SharedKey acct:sig" or
// "SharedKeyLite acct:sig" header in its Table-service form (docs/protocol.md
// 9.3–9.5) and returns a full-access Grant.
//
// Outcomes, from Microsoft's storage emulator authentication code (the
// service's own, decompiled) and live captures where they differ:
//   - no Authorization header → 401 NoAuthenticationInformation (docs/protocol.md
//     0.1; the caller adds WWW-Authenticate: BearerChallenge);
//   - a malformed header — unknown scheme, no "account:signature" pair,
//     signature not base64, the header twice → 400 InvalidAuthenticationInfo.
//     The live service answered exactly this for "Authorization:
//     SharedAccessSignature sig=…" (Azure/iothub-explorer#58) and for a Basic
//     header (ACR troubleshooting docs); the emulator code raises
//     InvalidAuthenticationInfoException for a bad pair and bad base64;
//   - "Bearer" → refused as a token the account does not accept
//     (tokenRefused: 403 AuthenticationFailed, or from x-ms-version
//     2019-12-12 on 401 InvalidAuthenticationInfo with a challenge): the
//     service knows the scheme; tableemu has no token support here (a
//     caller that implements --oauth handles Bearer before calling this);
//   - no date, an unparseable date, or one more than MaxClockSkew from
//     req.Now, a different account, or a wrong signature → 403
//     AuthenticationFailed with a detail saying which.
func VerifySharedKey(req *Request, acct *Account) (*Grant, error) {
	lite, claimed, sig, err := parseSharedKey(req.Header)
	if err != nil {
		return nil, err
	}
	var macBuf [sha256.Size + 16]byte // base64's DecodedLen of a MAC is 33
	mac, ok := decodeSignatureInto(macBuf[:0], sig)
	if !ok {
		return nil, tableemu.New(tableemu.InvalidAuthenticationInfo).WithDetail("Signature is not a valid base64 string.")
	}

	date, otherDate, err := requestDates(req)
	if err != nil {
		return nil, err
	}
	dates := [2]string{date, otherDate}
	nDates := 1
	if otherDate != "" {
		nDates = 2
	}
	// Clients sign the primary account name even on the -secondary endpoint
	// (docs/protocol.md 13); accept the secondary name in the header too.
	if claimed != acct.Name && claimed != acct.Name+"-secondary" {
		return nil, authFailed("Cannot find the claimed account when trying to GetProperties for the account %s.", claimed)
	}
	if len(req.CanonicalPaths) == 0 {
		return nil, tableemu.New(tableemu.InternalError).WithDetail("auth: Request.CanonicalPaths is empty")
	}

	// CanonicalizedResource (docs/protocol.md 9.5): only comp takes part, with
	// the first value as the SDKs take it.
	comp := ""
	if v, ok := req.Query["comp"]; ok && len(v) > 0 {
		comp = "?comp=" + v[0]
	}
	// The strings to sign, built one after another in one buffer (the
	// caller's Scratch when it is large enough: no allocation), and where
	// each ends.
	size := 0
	for _, date := range dates[:nDates] {
		for _, p := range req.CanonicalPaths {
			size += len(req.Method) + len(first(req.Header["Content-Md5"])) + len(first(req.Header["Content-Type"])) + len(date) + len(p) + len(comp) + 5
		}
	}
	buf := req.Scratch[:0]
	if cap(buf) < size+sha256.Size { // and room for signsAll's sums
		buf = make([]byte, 0, size+sha256.Size)
	}
	var endsArr [8]int
	ends := endsArr[:0]
	for _, date := range dates[:nDates] {
		for _, p := range req.CanonicalPaths {
			if lite {
				// 9.4: Date \n CanonicalizedResource.
				buf = append(buf, date...)
			} else {
				// 9.3: no x-ms-* header block, unlike blob and queue.
				buf = append(buf, req.Method...)
				buf = append(append(buf, '\n'), first(req.Header["Content-Md5"])...)
				buf = append(append(buf, '\n'), first(req.Header["Content-Type"])...)
				buf = append(append(buf, '\n'), date...)
			}
			buf = append(append(append(buf, '\n'), p...), comp...)
			ends = append(ends, len(buf))
		}
	}
	if !signsAll(acct.Keys, buf, ends, mac) {
		// The wording the live service puts in AuthenticationErrorDetail for
		// a Shared Key mismatch.
		first := string(buf[:ends[0]])
		return nil, signatureMismatch(first, "The MAC signature found in the HTTP request '%s' is not the same as any computed signature. Server used following string to sign: '%s'.", sig, first)
	}
	return sharedKeyGrant, nil
}

// SharedKeyAccount returns the account a Shared Key (or Shared Key Lite)
// Authorization header claims, refusing the header as VerifySharedKey does
// when it is missing or malformed. It is for requests whose URL names no
// account (tableemu's /_tableemu/insights): the caller looks the account up
// and then verifies the signature with VerifySharedKey.
func SharedKeyAccount(h http.Header) (string, error) {
	_, claimed, _, err := parseSharedKey(h)
	return strings.TrimSuffix(claimed, "-secondary"), err
}

// parseSharedKey reads "SharedKey account:signature" (or SharedKeyLite).
func parseSharedKey(h http.Header) (lite bool, claimed, sig string, err error) {
	values := h["Authorization"] // canonical name: no conversion per request
	switch {
	case len(values) == 0:
		return false, "", "", tableemu.New(tableemu.NoAuthenticationInformation)
	case len(values) > 1:
		return false, "", "", tableemu.New(tableemu.InvalidAuthenticationInfo).WithDetail("Duplicate authorization headers found.")
	}
	header := strings.TrimSpace(values[0])
	scheme, params, _ := strings.Cut(header, " ")
	switch {
	case strings.EqualFold(scheme, "SharedKey"):
	case strings.EqualFold(scheme, "SharedKeyLite"):
		lite = true
	case strings.EqualFold(scheme, "Bearer"):
		return false, "", "", tokenRefused(h, "Authentication scheme Bearer is not supported by this emulator without --oauth basic; use Shared Key or a SAS.")
	default:
		return false, "", "", tableemu.New(tableemu.InvalidAuthenticationInfo).WithDetail("Authentication scheme %s is not supported.", scheme)
	}

	// "account:signature"; empty pieces are dropped as the service does
	// (String.Split with RemoveEmptyEntries), so "a::sig" still parses.
	// Counted in place: no slice of the pieces to allocate.
	var parts [2]string
	n := 0
	for rest, more := strings.TrimSpace(params), true; more; {
		var p string
		p, rest, more = strings.Cut(rest, ":")
		if p != "" {
			if n < len(parts) {
				parts[n] = p
			}
			n++
		}
	}
	if n != 2 {
		return false, "", "", tableemu.New(tableemu.InvalidAuthenticationInfo).WithDetail("Authorization value '%s' is invalid.", header)
	}
	return lite, parts[0], parts[1], nil
}

// requestDates returns the date values to try in the string-to-sign:
// x-ms-date if present, else Date (docs/protocol.md 9.3), then the other one when
// both are present and differ, for robustness ("" otherwise). The first one must be a valid HTTP date
// within MaxClockSkew of the server clock (docs/protocol.md 0.1).
func requestDates(req *Request) (primary, other string, err error) {
	xms := req.Header["X-Ms-Date"]
	date := req.Header["Date"]
	switch {
	case len(xms) > 0:
		primary = xms[0]
		if len(date) > 0 {
			other = date[0]
		}
	case len(date) > 0:
		primary = date[0]
	}
	if strings.TrimSpace(primary) == "" {
		return "", "", authFailed("Request date header not specified.")
	}
	t, err := parseDate(primary)
	if err != nil {
		return "", "", authFailed("The Date header in the request is incorrect.")
	}
	now := req.now()
	switch {
	case t.Before(now.Add(-MaxClockSkew)):
		return "", "", authFailed("Request date header too old: '%s'.", rfc1123(t))
	case t.After(now.Add(MaxClockSkew)):
		return "", "", authFailed("Request date header too far in the future: '%s'; the server time is '%s'.", rfc1123(t), rfc1123(now))
	}
	if other == primary {
		other = ""
	}
	return primary, other, nil
}

// first is a header's first value, or "".
func first(v []string) string {
	if len(v) > 0 {
		return v[0]
	}
	return ""
}

// parseDate is http.ParseTime, remembering the last date it parsed:
// concurrent clients send the same date for every request within a
// second, and parsing it was a tenth of the signature check.
func parseDate(v string) (time.Time, error) {
	if last := lastDate.Load(); last != nil && last.text == v {
		return last.t, nil
	}
	t, err := http.ParseTime(v)
	if err == nil {
		lastDate.Store(&parsedDate{text: strings.Clone(v), t: t})
	}
	return t, err
}

type parsedDate struct {
	text string
	t    time.Time
}

var lastDate atomic.Pointer[parsedDate]
