package emulator

import (
	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/auth"
	"github.com/tableemu/tableemu/emulator/store"
)

// bearerGrant authorizes a request carrying "Authorization: Bearer" when
// --oauth basic is on (the token checks, and what they leave out, are in
// auth/bearer.go and docs/security.md). A request with both a token and a SAS
// goes to auth.Authenticate instead, which refuses the ambiguity.
//
// Table ACLs cannot be read or set with a token: the service authorizes
// them with the account key only (terraform-provider-azurerm documents
// that "AzureAD authentication is not supported when setting or retrieving
// ACLs for Tables", and Azurite skips token authentication for them), so
// they get 403 AuthorizationFailure, the code for an operation a valid
// credential may not perform (docs/protocol.md 9.8). The table is looked up
// first: live answered both ACL operations with a token for a table that
// does not exist 404 TableNotFound (x-ms-version 2025-07-05, the Python
// SDK's test_aad_access_policy_error), so the refusal is only for a table
// that is there.
func (s *Server) bearerGrant(c *call, req *auth.Request, acct *auth.Account) (*auth.Grant, error) {
	g, err := auth.VerifyBearer(req, acct)
	if err != nil {
		return nil, err
	}
	// (Under the cosmos profile the ACL handlers refuse both, whatever
	// the credential: Cosmos DB for Table has no table ACLs, service.go
	// cosmosUnsupported.)
	if (c.op == auth.GetTableACL || c.op == auth.SetTableACL) && !s.cosmos {
		err := s.store.ViewPoint(c.ctx(), func(tx *store.Tx) error {
			_, err := entityTable(tx, c)
			return err
		})
		if err != nil {
			return nil, storeErr(err)
		}
		return nil, tableemu.New(tableemu.AuthorizationFailure).WithDetail("Table ACLs need the account key; a bearer token cannot authorize %s.", c.op)
	}
	return g, nil
}
