package emulator

import (
	"net/http"
	"strings"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/auth"
)

// hint adds tableemu's sentence to the errors an emulator user meets first
// and cannot act on from the service's text alone (docs/protocol.md 8.3).
// The code, status and the service's message stay as they are
// (tableemu.Error.WithHint), so SDKs parse the error as Azure's. Hints that
// depend only on the failing input (a table name) are added where the
// error is made; these depend on the server's configuration or on the
// request as a whole, so writeError asks here.
func (c *call) hint(e *tableemu.Error) *tableemu.Error {
	if e.Hinted() {
		return e // hinted where it was made, for its own case (insights/access.go)
	}
	if (e.Code == tableemu.AuthenticationFailed || e.Status == http.StatusUnauthorized && e.Code == tableemu.InvalidAuthenticationInfo) &&
		auth.IsBearer(c.r.Header) {
		// A bearer token refused (auth.VerifyBearer, or any token
		// without --oauth): 403, or 401 from x-ms-version 2019-12-12 on.
		if c.s.cfg.OAuth == "" {
			return e.WithHint("it accepts Microsoft Entra ID bearer tokens only when started with --oauth basic " +
				"(and --cert and --key: tokens need HTTPS); otherwise sign with the account key or use a SAS.")
		}
		if c.s.debug != nil {
			return e.WithHint("why the bearer token was refused is in its --debug log.")
		}
		return e.WithHint("start it with --debug FILE to log why the bearer token was refused.")
	}
	switch e.Code {
	case tableemu.NoAuthenticationInformation:
		return e.WithHint("the request carries no credentials. Sign it with the account key, " +
			"as an SDK does given the connection string tableemu prints when it starts, or add a SAS to the URL.")
	case tableemu.AuthenticationFailed:
		if c.s.debug != nil {
			return e.WithHint("the reason, and for a signature mismatch the string tableemu signed, are in its --debug log.")
		}
		return e.WithHint("start it with --debug FILE to log the reason, and for a signature mismatch " +
			"the string tableemu signed, to compare with the one your client signed.")
	case tableemu.InvalidUri, tableemu.ResourceNotFound:
		// Only when the URL's account is missing (a path tableemu cannot
		// read an account from) or not served. A ResourceNotFound for an
		// entity of a served account is the service's answer and needs
		// none; /_tableemu/insights has no account and hints on its own.
		switch {
		case c.res.account == "" && e.Code != tableemu.InvalidUri:
			return e
		case c.res.account != "" && c.s.accounts[c.res.account] != nil:
			if e.Code == tableemu.InvalidUri && c.res.kind == kService {
				return c.endpointHint(e)
			}
			return e
		}
		return e.WithHint("%s URLs are /<account>/Tables…, e.g. %s/Tables; the accounts here are %s (AZURITE_ACCOUNTS sets them).",
			c.accountProblem(), c.exampleEndpoint(), c.s.accountList())
	}
	return e
}

// endpointHint explains an InvalidUri for an account's endpoint itself, as
// printed at start (or as a secondary or host-style URL) and pasted into a
// browser or curl: nothing is served at that URL without a query, so say
// where the tables are, under the same endpoint.
func (c *call) endpointHint(e *tableemu.Error) *tableemu.Error {
	ep, what := c.endpointFor(c.res.account), "endpoint"
	switch {
	case c.res.hostStyle:
		// The Host names the account (and "-secondary"): the endpoint
		// is the server's root under that name.
		scheme, _, _ := strings.Cut(ep, "://")
		ep, what = scheme+"://"+c.r.Host, "host-style endpoint"
		if c.res.secondary {
			what = "host-style secondary endpoint"
		}
	case c.res.secondary:
		ep, what = ep+secondarySuffix, "secondary endpoint"
	}
	if c.res.secondary {
		return e.WithHint("this URL is the %s of account %s, where no operation is served: its tables are at %s/Tables, "+
			"a table's entities at %s/<table>() and the service stats at %s/?restype=service&comp=stats; "+
			"an SDK given the endpoint or the connection string builds these URLs.",
			what, quoteHint(c.res.account), ep, ep, ep)
	}
	return e.WithHint("this URL is the %s of account %s, where no operation is served: its tables are at %s/Tables "+
		"and a table's entities at %s/<table>(); an SDK given the endpoint or the connection string builds these URLs.",
		what, quoteHint(c.res.account), ep, ep)
}

// accountProblem says what is wrong with the URL's account.
func (c *call) accountProblem() string {
	p := "there is no account " + quoteHint(c.res.account) + " here (the first segment of the path names the account)."
	if c.res.account == "" {
		p = "this URL names no account."
	}
	if c.s.cfg.DisableProductStyleURL {
		// A host-style URL (devstoreaccount1.table.localhost) to a server
		// that reads the account from the path only.
		if label, ok := c.s.accountInHost(c.r.Host); ok {
			p += " The host name names account " + quoteHint(strings.TrimSuffix(label, secondarySuffix)) +
				", but with --disableProductStyleUrl tableemu takes the account from the path only."
		}
	}
	return p
}

// exampleEndpoint is the first account's endpoint as this request reached
// the server: http://127.0.0.1:10002/devstoreaccount1.
func (c *call) exampleEndpoint() string {
	name := DevAccount
	if len(c.s.cfg.Accounts) > 0 {
		name = c.s.cfg.Accounts[0].Name
	}
	return c.endpointFor(name)
}

// endpointFor is account's path-style endpoint as this request reached the
// server.
func (c *call) endpointFor(account string) string {
	scheme := "http"
	if c.r.TLS != nil {
		scheme = "https"
	}
	host := c.r.Host
	if host == "" {
		host = "127.0.0.1:10002"
	}
	return Endpoint(scheme, host, account)
}

// accountList names the configured accounts, at most ten of them.
func (s *Server) accountList() string {
	var names []string
	for i, a := range s.cfg.Accounts {
		if i == 10 {
			names = append(names, "…")
			break
		}
		names = append(names, a.Name)
	}
	return strings.Join(names, ", ")
}

// quoteHint quotes user input for a hint, cut short if long.
func quoteHint(s string) string {
	return "\"" + clipText(s) + "\""
}
