// Package conformance holds black-box tests of the Table service wire
// protocol, driven through the official Go SDK (aztables) and, where the
// SDK cannot express a request, through raw signed HTTP.
//
// By default the tests start tableemu in process. To run them against any
// other endpoint — Azurite, or a real storage account — set
//
//	TABLEEMU_TEST_CONNECTION_STRING   a connection string with AccountName,
//	                                  AccountKey and TableEndpoint (or
//	                                  EndpointSuffix)
//
// Tests that need to restart or reconfigure the server skip themselves
// against an external endpoint. Every test creates its own tables with
// random names and deletes them afterwards, so a shared account is safe.
package conformance
