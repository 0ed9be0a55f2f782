package auth

import (
	"net/netip"
	"strings"
	"time"

	"github.com/tableemu/tableemu"
)

// SAS field parsing and the checks that follow the signature. A malformed
// field is 403 AuthenticationFailed, as in Microsoft's storage emulator code
// ("Signature fields not well formed.", "sv is mandatory. Cannot be empty",
// "st is optional but cannot be empty"); the details below reuse its wording.

// sasFields are the query parameters a SAS consists of: every signed field
// of a service, account or user delegation SAS, and sig.
var sasFields = []string{"sv", "ss", "srt", "tn", "sp", "st", "se", "sip", "spr", "si", "spk", "srk", "epk", "erk", "ses", "sig",
	"skoid", "sktid", "skt", "ske", "sks", "skv", "skdutid", "sduoid"}

// once refuses a SAS that gives one of its fields twice: the service takes
// neither the first nor the last (docs/protocol.md 0.1).
func (s *SAS) once() error {
	for _, key := range sasFields {
		if len(s.q[key]) > 1 {
			return authFailed("Signature fields not well formed: %s is given %d times.", key, len(s.q[key]))
		}
	}
	return nil
}

func (s *SAS) mandatory(key string) error {
	if strings.TrimSpace(s.q.Get(key)) == "" {
		return authFailed("%s is mandatory. Cannot be empty", key)
	}
	return nil
}

func (s *SAS) optional(key string) error {
	if s.has(key) && strings.TrimSpace(s.q.Get(key)) == "" {
		return authFailed("%s is optional but cannot be empty", key)
	}
	return nil
}

// signatureBytes decodes sig, which must be a base64 HMAC-SHA256 (32 bytes).
func (s *SAS) signatureBytes() ([]byte, error) {
	if err := s.mandatory("sig"); err != nil {
		return nil, err
	}
	mac, ok := decodeSignature(s.Signature)
	if !ok {
		return nil, authFailed("Signature fields not well formed: sig is not base64.")
	}
	if len(mac) != 32 {
		return nil, authFailed("Signature size is invalid")
	}
	return mac, nil
}

// version checks sv: present, shaped YYYY-MM-DD, and not before min.
// Versions of that shape compare correctly as strings.
func (s *SAS) version(min string) error {
	if err := s.mandatory("sv"); err != nil {
		return err
	}
	if !validVersion(s.Version) || s.Version < min {
		return authFailed("sv is either not in the correct format or is not equal or later than version %s", min)
	}
	return nil
}

func validVersion(v string) bool {
	if len(v) != 10 || v[4] != '-' || v[7] != '-' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if i != 4 && i != 7 && (v[i] < '0' || v[i] > '9') {
			return false
		}
	}
	return true
}

// window parses st and se. se is required unless a stored policy may
// supply it (revocable, i.e. si is set).
func (s *SAS) window(revocable bool) (start, expiry time.Time, err error) {
	if err := s.optional("st"); err != nil {
		return start, expiry, err
	}
	if s.has("st") {
		if start, err = parseSASTime("st", s.Start); err != nil {
			return start, expiry, err
		}
	}
	if revocable {
		err = s.optional("se")
	} else {
		err = s.mandatory("se")
	}
	if err != nil {
		return start, expiry, err
	}
	if s.has("se") {
		if expiry, err = parseSASTime("se", s.Expiry); err != nil {
			return start, expiry, err
		}
	}
	return start, expiry, nil
}

// sasTimeLayouts are the ISO 8601 UTC forms the service accepts for st, se
// and ACL times (docs/protocol.md 3.4, 9.6). Go's parser takes a fractional second
// after the seconds field without the layout naming it, so
// "2021-07-08T09:10:09.0000000Z" matches the third.
var sasTimeLayouts = []string{
	"2006-01-02",
	"2006-01-02T15:04Z",
	"2006-01-02T15:04:05Z",
	time.RFC3339Nano, // an explicit offset; lenient, the signature covers the text
}

// ParseTime parses a SAS or stored-policy time in one of the accepted
// ISO 8601 UTC forms (YYYY-MM-DD, …Thh:mmZ, …Thh:mm:ssZ, fractional seconds).
func ParseTime(v string) (time.Time, bool) {
	for _, layout := range sasTimeLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

func parseSASTime(key, v string) (time.Time, error) {
	t, ok := ParseTime(v)
	if !ok {
		return t, authFailed("Signature fields not well formed: %s '%s' is not an ISO 8601 UTC time.", key, v)
	}
	return t, nil
}

// checkWindow is the validity check: start (now when absent) ≤ now < expiry.
// The detail wording is the service's (docs/protocol.md 9.8), times in RFC 1123.
func checkWindow(now, start, expiry time.Time) error {
	if !start.IsZero() && !start.Before(expiry) {
		return authFailed("Signed expiry time [%s] has to be after signed start time [%s]", rfc1123(expiry), rfc1123(start))
	}
	from := start
	if from.IsZero() {
		from = now
	}
	if now.Before(from) || !now.Before(expiry) {
		return authFailed("Signature not valid in the specified time frame: Start [%s] - Expiry [%s] - Current [%s]", rfc1123(from), rfc1123(expiry), rfc1123(now))
	}
	return nil
}

// ipRange is a parsed sip: one address or an inclusive range. The zero value
// allows every address.
type ipRange struct {
	from, to netip.Addr
}

func (s *SAS) ipRange() (ipRange, error) {
	if err := s.optional("sip"); err != nil {
		return ipRange{}, err
	}
	if !s.has("sip") {
		return ipRange{}, nil
	}
	r, ok := parseIPRange(strings.TrimSpace(s.IP))
	if !ok {
		return r, authFailed("Signature fields not well formed: sip '%s' is not an IP address or an a.b.c.d-e.f.g.h range.", s.IP)
	}
	return r, nil
}

func parseIPRange(v string) (ipRange, bool) {
	lo, hi, isRange := strings.Cut(v, "-")
	from, err := netip.ParseAddr(strings.TrimSpace(lo))
	if err != nil {
		return ipRange{}, false
	}
	to := from
	if isRange {
		if to, err = netip.ParseAddr(strings.TrimSpace(hi)); err != nil {
			return ipRange{}, false
		}
	}
	from, to = from.Unmap(), to.Unmap()
	if from.Is4() != to.Is4() || to.Less(from) {
		return ipRange{}, false
	}
	return ipRange{from, to}, true
}

func (r ipRange) contains(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsValid() && ip.Is4() == r.from.Is4() &&
		r.from.Compare(ip) <= 0 && ip.Compare(r.to) <= 0
}

func checkIP(r ipRange, ip netip.Addr) error {
	if !r.from.IsValid() || r.contains(ip) {
		return nil
	}
	// The documented message names the address (docs/protocol.md 8.3).
	return tableemu.Newf(tableemu.AuthorizationSourceIPMismatch,
		"This request is not authorized to perform this operation using this source IP %s.", ip.Unmap()).
		WithDetail("The SAS allows %s.", r)
}

func (r ipRange) String() string {
	if r.from == r.to {
		return r.from.String()
	}
	return r.from.String() + "-" + r.to.String()
}

// httpsOnly parses spr: "https" or "https,http" (the default); HTTP alone is
// not a permitted value (DOC "Create a service SAS").
func (s *SAS) httpsOnly() (bool, error) {
	if err := s.optional("spr"); err != nil {
		return false, err
	}
	switch strings.ReplaceAll(strings.ToLower(s.Protocol), " ", "") {
	case "https":
		return true, nil
	case "", "https,http", "http,https":
		return false, nil
	}
	return false, authFailed("Signature fields not well formed: spr '%s' is not 'https' or 'https,http'.", s.Protocol)
}

// checkProtocol refuses an spr=https SAS over plain HTTP (docs/protocol.md 0.1),
// unless --loose. The message names the flag: the Go SDK signs every account
// SAS with spr=https (docs/protocol.md 13), so this is what users of an HTTP
// emulator hit first, and most SDKs show the message, not the detail.
func checkProtocol(httpsOnly, secure, loose bool) error {
	if !httpsOnly || secure || loose {
		return nil
	}
	return tableemu.New(tableemu.AuthorizationProtocolMismatch).
		WithHint("the SAS allows HTTPS only (spr=https) and the request came over HTTP; " +
			"serve HTTPS (--cert/--key) or start tableemu with --loose to accept it.").
		WithDetail("spr=https over http; --loose accepts it")
}

// parseServicePermissions checks a table SAS sp: letters from "raud", each
// at most once and in that order, as the DOC requires and the service's
// code enforces.
func parseServicePermissions(sp string) (string, error) {
	last := -1
	for i := 0; i < len(sp); i++ {
		j := strings.IndexByte("raud", sp[i])
		if j <= last {
			return "", authFailed("Signature fields not well formed: sp '%s' must be letters of 'raud', in that order.", sp)
		}
		last = j
	}
	return sp, nil
}

// parseLetters checks that v uses only letters from allowed, each once.
func parseLetters(key, v, allowed string) (string, error) {
	for i := 0; i < len(v); i++ {
		if strings.IndexByte(allowed, v[i]) < 0 || strings.IndexByte(v[:i], v[i]) >= 0 {
			return "", authFailed("Signature fields not well formed: unexpected or repeated character '%c' in %s '%s'.", v[i], key, v)
		}
	}
	return v, nil
}
