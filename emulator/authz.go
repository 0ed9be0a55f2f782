package emulator

import (
	"net"
	"net/http"
	"net/netip"

	"github.com/tableemu/tableemu/apierr"
	"github.com/tableemu/tableemu/auth"
)

// authorize verifies the request's credentials and that they allow c.op
// on the addressed table. Entity key ranges of a SAS are checked where the
// keys are known: in the entity handlers and the query.
func (s *Server) authorize(c *call) error {
	if c.op == auth.Preflight {
		return nil // CORS preflight is unauthenticated (PROTOCOL.md 3.7)
	}
	acct := s.accounts[c.res.account]
	if acct == nil {
		// Azure would fail name resolution; Azurite answers 404
		// ResourceNotFound, which tells a client the account is wrong.
		return apierr.New(apierr.ResourceNotFound).WithDetail("no account %q (AZURITE_ACCOUNTS sets the accounts)", c.res.account)
	}
	req := &auth.Request{
		Method:         c.verb,
		Header:         c.r.Header,
		Query:          c.r.URL.Query(),
		CanonicalPaths: auth.CanonicalPaths(c.res.account, c.res.rawPath),
		Secure:         c.r.TLS != nil,
		RemoteIP:       remoteIP(c.r),
		Now:            s.now(),
	}
	g, err := auth.Authenticate(req, acct, auth.VerifyOptions{Loose: s.cfg.Loose})
	if err != nil {
		return err
	}
	if err := g.Allow(c.op, c.res.table); err != nil {
		return err
	}
	c.acct, c.grant = acct, g
	return nil
}

// inScope refuses a single-entity operation outside a SAS key range
// (PROTOCOL.md 0.1).
func (c *call) inScope(pk, rk string) error {
	if c.grant != nil && !c.grant.InRange(pk, rk) {
		return auth.OutOfRange()
	}
	return nil
}

func remoteIP(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}
