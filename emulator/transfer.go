package emulator

import (
	"bytes"
	"context"
	"encoding/xml"

	"github.com/tableemu/tableemu/emulator/transfer"
)

// Data in and out (docs/transfer.md) is emulator/transfer: import an
// account's tables from JSON Lines files (and the other formats its
// package names) and export them, from Go through the Server's methods
// below and over HTTP under /_tableemu/accounts/{account}/export and
// import, which serveTool hands it before the isolation endpoints, whose
// prefix it shares. The server lends it, as it lends isolation, its store,
// accounts and error mapping, Shared Key verification, and its service
// properties through the cache (getProps, setProps), so that an import's
// properties are in force at once, CORS included.
//
// Its HTTP requests have the isolation endpoints' time limit,
// Config.IsolationTimeout (DefaultIsolationTimeout when zero).

// newTransfer lends the transfer operations what they need of s.
func newTransfer(s *Server) *transfer.Transfer {
	return transfer.New(transfer.Config{
		Store:      s.store,
		Accounts:   s.accounts,
		DevAccount: publicDevAccount(s.cfg.Accounts),
		GetProps:   s.getProps,
		SetProps:   s.setProps,
		StoreError: storeErr,
		Authorize: s.authorizeAccount(accountTool{one: "an export or import", many: "exports and imports",
			noSAS: "a SAS grants operations on tables, not an account's whole data", by: "tableemu export and import", doc: "docs/transfer.md"}),
		Timeout: s.cfg.IsolationTimeout,
		Order:   s.entityOrder(),
		// The store's: under the profile names differing in case are
		// tables of their own (docs/cosmos.md, "table names").
		ExactTableNames: s.cosmos,
	})
}

// Import writes src's tables into the store, each table in one
// transaction, all of it or none: a source account with a name goes to
// the account of that name, one without to o.Account. A table the account
// has already is refused, replaced or merged as o.Mode says (fail by
// default); the source's service properties, when it has any, are set as
// Set Table Service Properties sets them, after the account's tables. It
// is what `tableemu import` runs with --location or --database; see
// docs/transfer.md for the sources (transfer.OpenDir, OpenCSV,
// OpenAzurite, OpenEndpoint).
func (s *Server) Import(ctx context.Context, src transfer.Source, o transfer.Options) (transfer.Summary, error) {
	return s.xfer.Import(ctx, src, o)
}

// Export writes o.Account's tables (o.Tables of them, when given) to
// sink, with their stored access policies and the account's service
// properties: each table from one consistent read, its entities streamed
// (never a whole table in memory). The caller closes sink; a failed
// export has told it first (transfer.Aborter), so that a
// transfer.NewDirSink leaves its directory as it was.
func (s *Server) Export(ctx context.Context, sink transfer.Sink, o transfer.Options) (transfer.Summary, error) {
	return s.xfer.Export(ctx, sink, o)
}

// getProps is account's service properties as the Get Table Service
// Properties body (docs/protocol.md 3.5), read through the cache.
func (s *Server) getProps(ctx context.Context, account string) ([]byte, error) {
	p, err := s.props.get(ctx, s.store, account)
	if err != nil {
		return nil, storeErr(err)
	}
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>`)
	if err := xml.NewEncoder(&b).Encode(p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// setProps stores doc, a Set Table Service Properties body, as that
// operation does (service.go): validated, merged into the account's, and
// cached under the cache's turn.
func (s *Server) setProps(ctx context.Context, account string, doc []byte) error {
	req := &serviceProperties{}
	if err := decodeXML(doc, req); err != nil {
		return err
	}
	if err := req.validate(); err != nil {
		return err
	}
	return storeErr(s.props.set(ctx, s.store, account, req))
}
