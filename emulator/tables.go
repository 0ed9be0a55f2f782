package emulator

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/wire"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// baseURL is the service root the response's odata links are built on:
// scheme://host plus, in path style, the account as addressed
// (docs/protocol.md 4.1).
func (c *call) baseURL() string {
	// Clients send the same host and account every time: the last one
	// built is kept, as a string it would cost an allocation per request.
	tls := c.r.TLS != nil
	if last := c.s.lastBase.Load(); last != nil && last.tls == tls && last.host == c.r.Host &&
		last.account == c.res.account && last.secondary == c.res.secondary && last.hostStyle == c.res.hostStyle {
		return last.url
	}
	scheme := "http"
	if tls {
		scheme = "https"
	}
	b := scheme + "://" + c.r.Host
	if !c.res.hostStyle {
		acct := c.res.account
		if c.res.secondary {
			acct += secondarySuffix
		}
		b += "/" + acct
	}
	c.s.lastBase.Store(&baseURL{tls: tls, host: c.r.Host, account: c.res.account, secondary: c.res.secondary, hostStyle: c.res.hostStyle, url: b})
	return b
}

// baseURL is a service root and what it was built from (call.baseURL).
type baseURL struct {
	tls, secondary, hostStyle bool
	host, account, url        string
}

// validateTableName applies the service's naming rules and its exact codes
// (wire.ValidateTableName, docs/protocol.md 1.4).
func validateTableName(name string) error { return wire.ValidateTableName(name) }

// entityTableNameError refuses a table name that breaks the naming rules
// in an entity operation (insert, upsert, delete, query, ACLs, $batch):
// the codes of Create Table, but InvalidResourceName's message spelt
// correctly, as the service sends it there (docs/protocol.md 0.1). The
// Python SDK turns exactly these into its table-name ValueError.
func entityTableNameError(name string) *tableemu.Error {
	return wire.TableNameError(name, tableemu.Newf(tableemu.InvalidResourceName, "The specified resource name contains invalid characters."))
}

// createTable: POST /Tables {"TableName":"name"} (docs/protocol.md 3.2).
func (s *Server) createTable(c *call) error {
	pref := prefer(c.r.Header)
	if pref != "" {
		// Echoed on errors too, as the service does (docs/protocol.md 3.2).
		c.w.Header().Set("Preference-Applied", pref)
	}
	body, err := readBody(c.r)
	if err != nil {
		return err
	}
	d, err := wire.DecodeEntity(body)
	if err != nil {
		return err
	}
	var name string
	for _, p := range d.Entity.Properties {
		if p.Name == "TableName" && p.Value.T == edm.String {
			name = p.Value.S
		}
	}
	if name == "" {
		return tableemu.New(tableemu.PropertiesNeedValue).WithDetail("the body has no TableName string")
	}
	if err := validateTableName(name); err != nil {
		return err
	}
	legacy := false // under the profile: the name is held by a table created without it
	err = s.store.Update(c.ctx(), func(tx *store.Tx) error {
		_, err := tx.CreateTable(c.res.account, name)
		if errors.Is(err, store.ErrTableExists) && s.cosmos {
			_, gerr := tx.GetTable(c.res.account, name)
			legacy = errors.Is(gerr, store.ErrTableNotFound)
		}
		return err
	})
	if legacy {
		// The store under the profile holds "Orders" beside "orders",
		// as Cosmos DB for Table does (its names are case-sensitive,
		// FAQ), but a table created without the profile holds its
		// name in every case (store.TableKey; docs/cosmos.md).
		return tableemu.New(tableemu.TableAlreadyExists).WithHint(
			"a table whose name differs from %s only in case was created without --profile cosmos and holds the name in every case; delete it, or create the table under another name (docs/cosmos.md, \"table names\").", name)
	}
	if err != nil {
		return storeErr(err)
	}
	link := c.baseURL() + "/Tables('" + name + "')"
	c.w.Header().Set("Location", link)
	if s.cosmos {
		// Cosmos DB for Table answers Create Table with an ETag, the
		// time of the creation, as an entity's (every Create Table
		// recorded from it, conformance/testdata/recordings/python-cosmos
		// and net-cosmos; docs/cosmos.md). Table storage sends none.
		c.w.Header()["Etag"] = []string{wire.ETag(edm.TicksFromTime(s.now()))}
	}
	if pref == "return-no-content" {
		c.w.Header().Set("DataServiceId", link)
		c.writeNoContent(http.StatusNoContent)
		return nil
	}
	b := c.appendTable(nil, name, true)
	c.writeJSON(http.StatusCreated, b)
	return nil
}

// appendTable writes one table object; document adds the odata.metadata of
// a single-table response.
func (c *call) appendTable(b []byte, name string, document bool) []byte {
	base := c.baseURL()
	b = append(b, '{')
	// Cosmos DB for Table writes a single table's odata.metadata after
	// TableName (every Create Table recorded from it, python-cosmos
	// test_create_table; docs/cosmos.md).
	metaLast := c.s.cosmos
	if c.level != wire.NoMetadata && document && !metaLast {
		b = append(b, `"odata.metadata":`...)
		b = edm.AppendJSONString(b, base+"/$metadata#Tables/@Element")
		b = append(b, ',')
	}
	if c.level == wire.FullMetadata {
		b = append(b, `"odata.type":`...)
		b = edm.AppendJSONString(b, c.res.account+".Tables")
		b = append(b, `,"odata.id":`...)
		b = edm.AppendJSONString(b, base+"/Tables('"+name+"')")
		b = append(b, `,"odata.editLink":`...)
		b = edm.AppendJSONString(b, "Tables('"+name+"')")
		b = append(b, ',')
	}
	b = append(b, `"TableName":`...)
	b = edm.AppendJSONString(b, name)
	if c.level != wire.NoMetadata && document && metaLast {
		b = append(b, `,"odata.metadata":`...)
		b = edm.AppendJSONString(b, base+"/$metadata#Tables/@Element")
	}
	return append(b, '}')
}

// sameTable reports whether names a and b name one table: in any case, or
// under the cosmos profile exactly (docs/cosmos.md, "table names").
func sameTable(a, b string, cosmos bool) bool {
	if cosmos {
		return a == b
	}
	return strings.EqualFold(a, b)
}

// getTable: GET /Tables('name'), the legacy SDKs' existence check
// (docs/protocol.md 0.1).
func (s *Server) getTable(c *call) error {
	var t store.Table
	err := s.store.ViewPoint(c.ctx(), func(tx *store.Tx) error {
		var err error
		t, err = tx.GetTable(c.res.account, c.res.table)
		return err
	})
	if errors.Is(err, store.ErrTableNotFound) {
		return tableemu.New(tableemu.ResourceNotFound)
	}
	if err != nil {
		return storeErr(err)
	}
	c.writeJSON(http.StatusOK, c.appendTable(nil, t.Name, true))
	return nil
}

// deleteTable: DELETE /Tables('name'). A missing (or invalid, or reserved)
// name is 404 ResourceNotFound, not TableNotFound (docs/protocol.md 1.4).
func (s *Server) deleteTable(c *call) error {
	err := s.store.Update(c.ctx(), func(tx *store.Tx) error {
		return tx.DeleteTable(c.res.account, c.res.table)
	})
	if errors.Is(err, store.ErrTableNotFound) {
		return tableemu.New(tableemu.ResourceNotFound)
	}
	if err != nil {
		return storeErr(err)
	}
	c.writeNoContent(http.StatusNoContent)
	return nil
}

// queryTables: GET /Tables with $filter on TableName, $top and the
// NextTableName continuation (docs/protocol.md 3.1).
func (s *Server) queryTables(c *call) error {
	q := c.query()
	filter, top, _, err := parseQueryOptions(q, odata.MaxTop)
	if err != nil {
		return err
	}
	tq := store.TableQuery{Filter: filter, Top: top}
	if tok := q.Get("NextTableName"); tok != "" {
		if tq.After, err = s.tableAfter(tok); err != nil {
			return err
		}
	}
	var page store.TablePage
	err = s.store.View(c.ctx(), func(tx *store.Tx) error {
		page, err = tx.QueryTables(c.res.account, tq)
		return err
	})
	if err != nil {
		return storeErr(err)
	}
	// Cosmos DB for Table writes odata.metadata after value (every Query
	// Tables recorded from it, python-cosmos test_query_tables; docs/cosmos.md).
	metaLast := s.cosmos
	b := []byte{'{'}
	if c.level != wire.NoMetadata && !metaLast {
		b = append(b, `"odata.metadata":`...)
		b = edm.AppendJSONString(b, c.baseURL()+"/$metadata#Tables")
		b = append(b, ',')
	}
	b = append(b, `"value":[`...)
	for i, t := range page.Tables {
		if i > 0 {
			b = append(b, ',')
		}
		b = c.appendTable(b, t.Name, false)
	}
	b = append(b, ']')
	if c.level != wire.NoMetadata && metaLast {
		b = append(b, `,"odata.metadata":`...)
		b = edm.AppendJSONString(b, c.baseURL()+"/$metadata#Tables")
	}
	b = append(b, '}')
	if page.Next != "" {
		c.w.Header().Set("x-ms-continuation-NextTableName", s.tableToken(page.Next))
	}
	c.writeJSON(http.StatusOK, b)
	return nil
}

// parseQueryOptions reads $filter, $top (default 1000, at most maxTop) and
// $select, shared by Query Tables and Query Entities.
func parseQueryOptions(q map[string][]string, maxTop int) (odata.Expr, int, []string, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	var filter odata.Expr
	if f := get("$filter"); strings.TrimSpace(f) != "" {
		var err error
		if filter, err = odata.ParseFilter(f); err != nil {
			return nil, 0, nil, filterErr(err)
		}
	}
	top, err := odata.ParseTopUpTo(get("$top"), maxTop)
	if err != nil {
		return nil, 0, nil, filterErr(err)
	}
	if top == 0 {
		top = odata.MaxTop
	}
	sel, err := odata.ParseSelect(get("$select"))
	if err != nil {
		return nil, 0, nil, filterErr(err)
	}
	return filter, top, sel, nil
}

// filterErr is the error of a query option that does not parse: the
// *odata.Error itself, which unwraps to the *tableemu.Error the writer
// sends, so that the writer can tell an error of the URL (Cosmos DB for
// Table answers those "Request url is invalid.", errors.go).
func filterErr(err error) error {
	var oe *odata.Error
	if errors.As(err, &oe) {
		return oe
	}
	return err
}

// Continuation tokens look like the service's, "1!<length>!<base64>"
// (docs/protocol.md 6.6), with the URL-safe alphabet and no padding so they
// survive any query-string handling. Clients treat them as opaque.
func encodeToken(key string) string {
	enc := base64.RawURLEncoding.EncodeToString([]byte(key))
	return "1!" + itoa(len(enc)) + "!" + enc
}

func decodeToken(tok string) (string, error) {
	bad := tableemu.New(tableemu.InvalidInput).WithDetail("continuation token %q was not issued by tableemu", tok)
	rest, ok := strings.CutPrefix(tok, "1!")
	if !ok {
		return "", bad
	}
	n, enc, ok := strings.Cut(rest, "!")
	if !ok || n != itoa(len(enc)) {
		return "", bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return "", bad
	}
	return string(raw), nil
}
