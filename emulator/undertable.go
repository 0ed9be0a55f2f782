package emulator

import "github.com/tableemu/tableemu"

// Requests below a table name, "/<t>/…": what a client sends when it was
// given a table's URL ("…/account/t") where the account's endpoint goes.
// The service reads "<t>" as the table and answers each form as below
// (docs/protocol.md 0.1; live: the .NET SDK's ThrowsWithTableNameInUri
// recording, and azure-data-tables' test_client_with_url_ends_with_table_name).
// POST "/<t>/Tables", a create-table request gone astray, is Insert Entity
// into <t> (routes.go): 404 TableNotFound, or 400 PropertiesNeedValue for a
// body that holds a table name instead of keys.

// underTableQuery: GET "/<t>/Tables" is 501 NotImplemented.
func (s *Server) underTableQuery(c *call) error {
	return tableemu.New(tableemu.NotImplemented)
}

// underTableKeys: "/<t>/Tables('x')" addresses <t> with one key where an
// entity has two: 400 InvalidInput, whatever the method, without
// Cache-Control as the service's other parser errors (errors.go parserError).
func (s *Server) underTableKeys(c *call) error {
	return tableemu.Newf(tableemu.InvalidInput,
		"The number of keys specified in the URI does not match number of key properties for the resource '%s.%s'.", c.res.account, clipText(c.res.table))
}

// underTableBatch: POST "/<t>/$batch" is 415 MediaTypeNotSupported.
func (s *Server) underTableBatch(c *call) error {
	return tableemu.New(tableemu.MediaTypeNotSupported)
}

// underTableService: service properties or stats at "/<t>/" are 400
// InvalidQueryParameterValue, an OData XML error as from the service's
// front end: no x-ms-version (live, x-ms-version 2025-07-05: the Get and
// Set Service Properties of azure-data-tables'
// test_client_with_url_ends_with_table_name, whose PUT carries an XML
// body the route takes as is).
func (s *Server) underTableService(c *call) error {
	c.frontEnd = true
	return tableemu.New(tableemu.InvalidQueryParameterValue)
}
