package emulator

import (
	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/auth"
	"github.com/tableemu/tableemu/emulator/explorer"
)

// Who may read GET /_tableemu/insights. The report carries data —
// partition keys, filters with their literal values, the keys of entities
// near the size limits — so it follows the explorer's rule, no data
// without credentials (docs/explorer.md):
//
//   - unsigned, it is served only where the explorer opens the development
//     account by itself: a loopback connection (both ends) under a loopback
//     host name, on a server whose devstoreaccount1 has its public key. It
//     then holds that account's tables, so `curl
//     http://127.0.0.1:10002/_tableemu/insights` works on the default set-up;
//   - otherwise the request is signed with Shared Key, exactly as a Table
//     API request is (package auth, the same canonicalized resource: the
//     account, then the path as sent, "/<account>/_tableemu/insights"), and
//     the report holds only the signing account's tables. The URL names no
//     account, so the account is the one the Authorization header claims.
//
// There is one way in: a SAS is refused, since it grants operations on
// tables, not this report; and a refusal says what to do.

// insightsReader returns the account whose insights c may read, or the
// refusal: 401 NoAuthenticationInformation unsigned, 403
// AuthenticationFailed for a SAS, an unknown account or a bad signature,
// 400 InvalidAuthenticationInfo for a malformed Authorization header.
func (s *Server) insightsReader(c *call) (string, error) {
	r := c.r
	if _, sas := auth.ParseSAS(r.URL.Query()); sas {
		return "", tableemu.New(tableemu.AuthenticationFailed).WithDetail("a SAS for the insights report").WithHint(
			"the insights report takes no SAS (a SAS grants operations on tables); sign the request with the account key (Shared Key), as the explorer at /_tableemu/ does.")
	}
	if len(r.Header.Values("Authorization")) == 0 {
		if dev := publicDevAccount(s.cfg.Accounts); dev != "" && explorer.Loopback(r) {
			return dev, nil
		}
		return "", tableemu.New(tableemu.NoAuthenticationInformation).WithHint(
			"the insights report is served without credentials only over loopback (127.0.0.1, localhost) " +
				"and only when devstoreaccount1 has its public key. Sign the request with the account key " +
				"(Shared Key over /<account>/_tableemu/insights), as the explorer at /_tableemu/ does; the report then holds that account's tables.")
	}
	name, err := auth.SharedKeyAccount(r.Header)
	if err != nil {
		return "", err
	}
	acct := s.accounts[name]
	if acct == nil {
		return "", tableemu.New(tableemu.AuthenticationFailed).WithDetail(
			"Cannot find the claimed account when trying to GetProperties for the account %s.", name)
	}
	c.res = resource{account: name, rawPath: r.URL.EscapedPath()}
	if _, err := auth.VerifySharedKey(s.authRequest(c), acct); err != nil {
		return "", err
	}
	return name, nil
}

// publicDevAccount returns the development account's name when it is
// configured with its well-known (public) key, else "": then, and only
// then, a loopback client needs no credentials to see its data through
// the explorer or the insights report.
func publicDevAccount(accounts []Account) string {
	for _, a := range accounts {
		if a.Name == DevAccount && len(a.Keys) > 0 && a.Keys[0] == DevKey {
			return a.Name
		}
	}
	return ""
}
