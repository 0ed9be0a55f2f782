package emulator

import (
	"net"
	"net/http"
	"net/netip"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/auth"
	"github.com/tableemu/tableemu/emulator/store"
)

// authorize verifies the request's credentials and that they allow c.op
// on the addressed table. Entity key ranges of a SAS are checked where the
// keys are known: in the entity handlers and the query.
func (s *Server) authorize(c *call) error {
	if c.op == auth.Preflight {
		return nil // CORS preflight is unauthenticated (docs/protocol.md 3.7)
	}
	acct := s.accounts[c.res.account]
	if acct == nil {
		// Azure would fail name resolution; Azurite answers 404
		// ResourceNotFound, which tells a client the account is wrong.
		return tableemu.New(tableemu.ResourceNotFound).WithDetail("no account %q (AZURITE_ACCOUNTS sets the accounts)", c.res.account)
	}
	req := s.authRequest(c)
	var g *auth.Grant
	var err error
	if s.cfg.OAuth != "" && auth.IsBearer(c.r.Header) && !c.query().Has("sig") {
		g, err = s.bearerGrant(c, req, acct)
	} else {
		var lookupErr error
		g, err = auth.Authenticate(req, acct, auth.VerifyOptions{
			Loose:  s.cfg.Loose,
			Policy: s.policyLookup(c, &lookupErr),
		})
		if lookupErr != nil {
			// The store failed: a 500, not a refusal that would blame
			// the signature.
			return storeErr(lookupErr)
		}
	}
	if err != nil {
		return err
	}
	if _, ranged := g.KeyRange(); ranged && s.cosmos {
		// Cosmos DB for Table refuses a SAS that names a key range,
		// whatever the entity: 405 MethodNotAllowed (python-cosmos
		// test_table_entity_cosmos…test_sas_add_outside_range;
		// docs/cosmos.md). Table storage checks the range (inScope).
		return tableemu.NewCosmos(tableemu.MethodNotAllowed, tableemu.CosmosSASKeyRange).WithHint(
			"Azure Cosmos DB for Table takes no spk, srk, epk or erk in a shared access signature: sign one without them.")
	}
	if c.res.secondary && c.op.Writes() {
		// The secondary is a read-only copy (docs/protocol.md 0.1).
		return tableemu.New(tableemu.InsufficientAccountPermissions).WithHint(
			"%s%s is the read-only secondary endpoint, as on Azure: send writes to the primary, %s.", c.res.account, secondarySuffix, c.res.account)
	}
	table := c.res.table
	if c.op == auth.Batch && g.Kind == auth.ServiceSASGrant {
		// The $batch URL names no table; a table SAS may reach it, and
		// each operation inside is checked against the SAS's table
		// (docs/protocol.md 7.4, batch.go).
		table = g.Table
	}
	if err := g.Allow(c.op, table); err != nil {
		return err
	}
	c.acct, c.grant = acct, g
	return nil
}

// authRequest describes c to package auth: its method as sent, headers,
// query, the canonicalized-resource candidates of its account and path,
// and the connection.
// It lives in the call, as do its paths and the buffer for the strings to
// sign (nothing to allocate per request).
func (s *Server) authRequest(c *call) *auth.Request {
	c.authReq = auth.Request{
		Method:         c.verb,
		Header:         c.r.Header,
		Query:          c.query(),
		CanonicalPaths: auth.AppendCanonicalPaths(c.paths[:0], c.res.account, c.res.rawPath),
		Secure:         c.r.TLS != nil,
		RemoteIP:       remoteIP(c.r),
		Now:            s.now(),
		Scratch:        c.scratch,
	}
	return &c.authReq
}

// policyLookup is the stored access policy lookup for a SAS with si
// (docs/protocol.md 3.4, 9.6). It reads the store on every request, so a policy
// changed or removed by Set Table ACL takes effect at once (the service
// takes up to 30 s; docs/protocol.md 3.4) and a removed one fails with 403
// AuthenticationFailed (docs/protocol.md 0.1). The table is the SAS's tn, looked
// up without regard to case. A store failure is kept in *failed.
func (s *Server) policyLookup(c *call, failed *error) func(table, id string) (auth.Policy, bool) {
	return func(table, id string) (auth.Policy, bool) {
		var si store.SignedIdentifier
		var ok bool
		err := s.store.ViewPoint(c.ctx(), func(tx *store.Tx) error {
			var err error
			si, ok, err = tx.AccessPolicy(c.res.account, table, id)
			return err
		})
		if err != nil {
			*failed = err
			return auth.Policy{}, false
		}
		return auth.Policy{Start: si.Start, Expiry: si.Expiry, Permission: si.Permission}, ok
	}
}

// inScope refuses a write outside a SAS key range: 403
// AuthorizationFailure (docs/protocol.md 0.1). Reads go through hidden.
func (c *call) inScope(pk, rk string) error {
	if c.hidden(pk, rk) {
		return auth.OutOfRange()
	}
	return nil
}

// hidden reports whether the entity (pk, rk) is outside the key range of
// the request's SAS. A point read of such an entity finds nothing: live
// answers 404 ResourceNotFound although the entity exists, as a query
// leaves it out (docs/protocol.md 0.1; .NET SDK recording
// ValidateSasCredentialsWithRowKeyAndPartitionKeyRanges, replayed by
// conformance/replay_test.go).
func (c *call) hidden(pk, rk string) bool {
	return c.grant != nil && !c.grant.InRange(pk, rk)
}

// outOfRangeRead is the answer to a point read outside the key range: the
// service's not-found, with the reason for the --debug log.
func outOfRangeRead() error {
	return tableemu.New(tableemu.ResourceNotFound).WithDetail("The entity is outside the key range of the shared access signature.")
}

func remoteIP(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}
