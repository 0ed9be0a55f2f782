package insights

import (
	"net/http"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/auth"
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

// ServeTool answers GET /_tableemu/insights with the report of the
// account reader admits; otherwise the error, which the server writes as
// the service writes its errors. The note for the access log is "".
func (in *Insights) ServeTool(w http.ResponseWriter, r *http.Request) (note string, err error) {
	if r.Method != http.MethodGet {
		return "", tableemu.New(tableemu.UnsupportedHttpVerb)
	}
	account, err := in.reader(r)
	if err != nil {
		return "", err
	}
	in.serve(w, account)
	return "", nil
}

// reader returns the account whose insights r may read, or the refusal: 401 NoAuthenticationInformation unsigned, 403
// AuthenticationFailed for a SAS, an unknown account or a bad signature,
// 400 InvalidAuthenticationInfo for a malformed Authorization header.
func (in *Insights) reader(r *http.Request) (string, error) {
	if _, sas := auth.ParseSAS(r.URL.Query()); sas {
		return "", tableemu.New(tableemu.AuthenticationFailed).WithDetail("a SAS for the insights report").WithHint(
			"the insights report takes no SAS (a SAS grants operations on tables); sign the request with the account key (Shared Key), as the explorer at /_tableemu/ does.")
	}
	if len(r.Header.Values("Authorization")) == 0 {
		if dev := in.cfg.DevAccount; dev != "" && auth.Loopback(r) {
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
	if in.cfg.Accounts[name] == nil {
		return "", tableemu.New(tableemu.AuthenticationFailed).WithDetail(
			"Cannot find the claimed account when trying to GetProperties for the account %s.", name)
	}
	if err := in.cfg.VerifySharedKey(r, name); err != nil {
		return "", err
	}
	return name, nil
}
