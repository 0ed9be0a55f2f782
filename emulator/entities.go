package emulator

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/wire"
	"github.com/tableemu/tableemu/odata/edm"
)

// writeKind is what an entity write does (docs/protocol.md 3.10-3.13).
type writeKind int

const (
	opInsert writeKind = iota + 1
	opReplace
	opMerge
	opInsertOrReplace
	opInsertOrMerge
	opDelete
)

// condition is an If-Match header: absent, "*", or one ETag.
type condition struct {
	present bool
	any     bool
	ts      int64 // the Timestamp the ETag names; -1 if it names none of ours
}

// parseIfMatch reads If-Match (docs/protocol.md 0.1, 3.11). The service
// issues only weak ETags, so it accepts "*" or a weak ETag, W/"…" with the
// prefix in either case; a weak ETag it did not issue matches nothing and
// gives 412 UpdateConditionNotSatisfied, whatever is inside the quotes. A
// strong ETag ("wrong", or even one of ours without its W/) or anything else
// is 400 InvalidInput (live behaviour reported in Azurite issue 1229).
func parseIfMatch(h http.Header) (condition, error) {
	vals, ok := h["If-Match"]
	if !ok {
		return condition{}, nil
	}
	v := strings.TrimSpace(strings.Join(vals, ","))
	if v == "*" {
		return condition{present: true, any: true}, nil
	}
	if len(v) >= 4 && (v[0] == 'W' || v[0] == 'w') && v[1] == '/' {
		q := v[2:]
		if q[0] == '"' && q[len(q)-1] == '"' && !strings.Contains(q[1:len(q)-1], `"`) {
			if ts, ok := wire.ParseETag(q); ok {
				return condition{present: true, ts: ts}, nil
			}
			return condition{present: true, ts: -1}, nil
		}
	}
	return condition{}, tableemu.Newf(tableemu.InvalidInput,
		"The etag value '%s' specified in one of the request headers is not valid. Please make sure only one etag value is specified and is valid.", v)
}

// entityWrite is one entity operation, from a single request or a $batch
// part: both run apply inside a store transaction.
type entityWrite struct {
	kind   writeKind
	pk, rk string
	entity *edm.Entity // the body's properties; nil for delete
	cond   condition
}

// apply performs w on table t and returns the entity as stored (nil after a
// delete). Existence and If-Match follow docs/protocol.md 3.11-3.13: with an
// If-Match the entity must exist (404) and match (412); without one, PUT
// and MERGE are upserts. sentOrder keeps the properties in the order sent
// (Server.cosmos; see below).
func (w *entityWrite) apply(tx *store.Tx, t store.Table, sentOrder bool) (*edm.Entity, error) {
	if w.kind == opInsert {
		if err := tx.InsertEntity(t, w.entity); err != nil {
			return nil, storeErr(err)
		}
		return w.entity, nil
	}
	old, err := tx.GetEntity(t, w.pk, w.rk)
	switch {
	case errors.Is(err, store.ErrEntityNotFound):
		if w.cond.present || w.kind == opDelete {
			return nil, tableemu.New(tableemu.ResourceNotFound)
		}
		old = nil
	case err != nil:
		return nil, storeErr(err)
	case w.cond.present && !w.cond.any && w.cond.ts != old.Timestamp:
		return nil, tableemu.New(tableemu.UpdateConditionNotSatisfied)
	}
	if w.kind == opDelete {
		return nil, storeErr(tx.DeleteEntity(t, w.pk, w.rk))
	}
	next := w.entity
	var prev int64
	if old != nil {
		prev = old.Timestamp
		if w.kind == opMerge || w.kind == opInsertOrMerge {
			next = merge(old, w.entity)
			if err := wire.ValidateEntity(next); err != nil {
				return nil, err
			}
		}
	}
	if next == w.entity {
		next = &edm.Entity{PartitionKey: w.entity.PartitionKey, RowKey: w.entity.RowKey, Properties: slices.Clone(w.entity.Properties), Keys: w.entity.Keys}
	}
	// An entity written by Update, Merge or either upsert keeps its
	// properties sorted by name, where an insert keeps the order sent: the
	// live service answers so every time its recordings show it
	// (docs/protocol.md 4.1; docs/replay.md). Cosmos DB for Table keeps the
	// order sent there too, and a merge into an existing entity keeps the
	// stored properties where they were and adds the new ones after them,
	// as merge leaves them (python-cosmos test_update_entity,
	// test_merge_entity, test_insert_or_merge_entity_with_existing_entity;
	// net-cosmos UpsertAndQueryWithSingleQuoteNames; docs/cosmos.md).
	//
	// Where the keys stand goes with the order: a replace or an upsert
	// that replaces takes the body's places, a merge into an existing
	// entity keeps the stored ones (merge). The storage profile, sorting,
	// keeps none (the keys first: what it always stored), so that an
	// entity it writes is stored as before.
	if !sentOrder {
		slices.SortFunc(next.Properties, func(a, b edm.Property) int { return strings.Compare(a.Name, b.Name) })
		next.Keys = edm.KeyPlaces{}
	}
	if err := tx.PutEntity(t, next, prev); err != nil {
		return nil, storeErr(err)
	}
	return next, nil
}

// merge applies a Merge body to the stored entity: properties in the body
// replace value and type, the others stay, and new ones follow them
// (docs/protocol.md 3.12); apply then sorts the result by name (not under
// the cosmos profile). The keys stay where the stored entity has them
// (edm.KeyPlaces counts the properties before each, so the new ones
// follow the keys too): Cosmos DB keeps a merged entity's properties
// where they were, and the keys, which no recording shows merged into an
// entity that has them elsewhere than first, are taken to stay as well
// (not in the evidence, docs/cosmos.md). The result takes over old's
// property slice (old is GetEntity's copy, which apply no longer reads):
// a new slice was a tenth of a merge's allocation.
func merge(old, body *edm.Entity) *edm.Entity {
	out := &edm.Entity{PartitionKey: old.PartitionKey, RowKey: old.RowKey, Properties: old.Properties, Keys: old.Keys}
	old.Properties = nil
	for _, p := range body.Properties {
		replaced := false
		for i := range out.Properties {
			if out.Properties[i].Name == p.Name {
				out.Properties[i].Value = p.Value
				replaced = true
				break
			}
		}
		if !replaced {
			out.Properties = append(out.Properties, p)
		}
	}
	return out
}

// readBody reads a request body within the server's limit.
func readBody(r *http.Request) ([]byte, error) {
	var b []byte
	var err error
	if n := r.ContentLength; n > 0 && n <= maxBody {
		// One buffer of the declared size, where ReadAll would grow one
		// from 512 bytes, copying as it goes (a point of every write's
		// allocations). net/http's reader ends at Content-Length.
		b = make([]byte, n)
		if _, err = io.ReadFull(r.Body, b); err == io.ErrUnexpectedEOF {
			err = fmt.Errorf("the body ended before its Content-Length of %d bytes", n)
		}
	} else {
		b, err = io.ReadAll(r.Body)
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, tableemu.New(tableemu.RequestBodyTooLarge)
	}
	if err != nil {
		return nil, tableemu.New(tableemu.InvalidInput).WithDetail("reading the body: %v", err)
	}
	return b, nil
}

// decodeEntityBody decodes and validates an entity body, from a request or
// a $batch part. The body is the request's, read for this request alone
// and never changed: the entity's strings share its memory
// (wire.DecodeEntityShared), and what outlives the request copies them
// (insights). For URL-addressed writes (fromURL) the keys come from the
// URL: keys in the body are ignored, since the service addresses the entity
// by its URL (an SDK that escapes body keys differently, as aztables'
// EDMEntity does, still writes the entity the URL names). cosmos reads
// typed values as Azure Cosmos DB for Table does (wire.DecodeOptions),
// keeps one property named etag in any case (wire.CosmosETagProperties)
// and adds what only it refuses (wire.CosmosTypedKeys: keys typed
// otherwise in a URL-addressed write; wire.ValidateCosmosEntity: empty
// keys, its key sizes, its reserved property names).
func decodeEntityBody(body []byte, pk, rk string, fromURL, cosmos bool) (*edm.Entity, error) {
	d, err := wire.DecodeEntityWith(body, wire.DecodeOptions{Shared: true, Cosmos: cosmos})
	if err != nil {
		return nil, err
	}
	e := &d.Entity
	if cosmos {
		wire.CosmosETagProperties(e)
	}
	if fromURL {
		if cosmos {
			if err := d.CosmosTypedKeys(); err != nil {
				return nil, err
			}
		}
		e.PartitionKey, e.RowKey = pk, rk
	} else if err := d.RequireKeys(); err != nil {
		return nil, err
	}
	if err := wire.ValidateKey("PartitionKey", e.PartitionKey); err != nil {
		return nil, err
	}
	if err := wire.ValidateKey("RowKey", e.RowKey); err != nil {
		return nil, err
	}
	if err := wire.ValidateEntity(e); err != nil {
		return nil, err
	}
	if cosmos {
		if err := wire.ValidateCosmosEntity(e); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// entityTable reads the table of an entity operation; a missing table is
// 404 TableNotFound for every entity operation, unless its name breaks the
// naming rules (docs/protocol.md 0.1). Under the cosmos profile the store
// finds a table by its exact name only: "Table names in Azure Table storage
// aren't case-sensitive, but they are in Azure Cosmos DB for Table"
// (learn.microsoft.com/azure/cosmos-db/table/faq; docs/cosmos.md), and the
// store is opened with ExactTableNames (store.go, store.TableKey).
func entityTable(tx *store.Tx, c *call) (store.Table, error) {
	t, err := tx.GetTable(c.res.account, c.res.table)
	if err != nil {
		return t, missingTable(c.res.table, err)
	}
	return t, nil
}

// missingTable is the error of an entity operation whose table lookup
// failed with err. No table can have a name that breaks the rules, so the
// name is checked only here, off the path of every request that finds its
// table.
func missingTable(name string, err error) error {
	if errors.Is(err, store.ErrTableNotFound) {
		if nameErr := entityTableNameError(name); nameErr != nil {
			return nameErr
		}
	}
	return storeErr(err)
}

// runWrite applies one entity write in its own transaction and returns
// the table and the entity as stored.
func (s *Server) runWrite(c *call, w *entityWrite) (t store.Table, stored *edm.Entity, err error) {
	if s.thr != nil {
		if err := s.thr.Admit(c.res.account, c.res.table, w.pk, true, 1); err != nil {
			return t, nil, err
		}
	}
	err = s.store.Update(c.ctx(), func(tx *store.Tx) error {
		if t, err = entityTable(tx, c); err != nil {
			return err
		}
		stored, err = w.apply(tx, t, s.cosmos)
		return err
	})
	if err == nil && s.ins != nil {
		if stored == nil { // a delete: its keys still count as a write
			s.noteWrites(c, t.Name, &edm.Entity{PartitionKey: w.pk, RowKey: w.rk})
		} else {
			s.noteWrites(c, t.Name, stored)
		}
	}
	return t, stored, err
}

// addressed checks the entity a URL addresses: its keys are usable and
// inside the credential's key range.
func (c *call) addressed() error {
	if c.res.keyErr != nil {
		return c.res.keyErr
	}
	return c.inScope(c.res.pk, c.res.rk)
}

// insertEntity: POST /<table> (docs/protocol.md 3.10).
func (s *Server) insertEntity(c *call) error {
	pref := prefer(c.r.Header)
	if pref != "" {
		c.w.Header()["Preference-Applied"] = preferenceApplied(pref) // canonical: see ServeHTTP
	}
	body, err := readBody(c.r)
	if err != nil {
		return err
	}
	e, err := decodeEntityBody(body, "", "", false, s.cosmos)
	if err != nil {
		if tableemu.From(err).Code == tableemu.PropertiesNeedValue {
			// The service finds the table before it misses the keys: a
			// body without them to a missing table is 404 TableNotFound
			// (docs/protocol.md 0.1, the create-table body sent below a
			// table name).
			if lookErr := s.store.ViewPoint(c.ctx(), func(tx *store.Tx) error {
				_, err := entityTable(tx, c)
				return err
			}); lookErr != nil {
				return lookErr
			}
		}
		return err
	}
	if err := c.inScope(e.PartitionKey, e.RowKey); err != nil {
		return err
	}
	t, _, err := s.runWrite(c, &entityWrite{kind: opInsert, pk: e.PartitionKey, rk: e.RowKey, entity: e})
	if err != nil {
		return err
	}
	rep := insertReply(c.encodeOptions(t.Name, nil), e, pref)
	// Canonical names straight in the map, values in the call (see
	// ServeHTTP and release).
	h := c.w.Header()
	c.etagHdr[0], c.locHdr[0] = rep.etag, rep.location
	h["Etag"] = c.etagHdr[:]
	h["Location"] = c.locHdr[:]
	if rep.status == http.StatusNoContent {
		if !s.cosmos {
			// Cosmos DB for Table sends Location only (.NET
			// recording TableQueryableWithInvalidQuery, net-cosmos).
			h["Dataserviceid"] = c.locHdr[:]
		}
		c.writeNoContent(http.StatusNoContent)
		return nil
	}
	c.writeJSON(http.StatusCreated, rep.body)
	return nil
}

// reply is the outcome of a successful insert, as a single request and a
// $batch part both answer it.
type reply struct {
	status   int
	etag     string
	location string // also the DataServiceId of a 204
	body     []byte // the 201 echo; nil for 204
}

// insertReply is the answer to an insert of e (docs/protocol.md 3.10): 204 with
// Location and DataServiceId under Prefer: return-no-content, otherwise 201
// echoing the entity at o's metadata level; an ETag either way.
func insertReply(o *wire.Options, e *edm.Entity, pref string) reply {
	r := reply{
		status:   http.StatusCreated,
		etag:     wire.ETag(e.Timestamp),
		location: string(appendLocationURL(make([]byte, 0, len(o.BaseURL)+len(o.Table)+len(e.PartitionKey)+len(e.RowKey)+30), o, e)),
	}
	if pref == "return-no-content" {
		r.status = http.StatusNoContent
		return r
	}
	r.body = wire.AppendEntityDocument(nil, e, o)
	return r
}

// appendLocationURL appends the URL of entity e as a Location header gives
// it: as Table storage escapes its keys (wire.EntityPath), or under the
// cosmos profile as Cosmos DB does (wire.AppendCosmosLocationPath).
func appendLocationURL(b []byte, o *wire.Options, e *edm.Entity) []byte {
	b = append(append(b, o.BaseURL...), '/')
	if o.Cosmos {
		return wire.AppendCosmosLocationPath(b, o.Table, e.PartitionKey, e.RowKey)
	}
	return wire.AppendEntityPath(b, o.Table, e.PartitionKey, e.RowKey)
}

func (c *call) encodeOptions(table string, sel []string) *wire.Options {
	o := &wire.Options{Level: c.level, BaseURL: c.baseURL(), Account: c.res.account, Table: table, Select: sel, Cosmos: c.s.cosmos}
	if len(sel) > 0 {
		o.SelectEcho = selectEcho(c.query().Get("$select"))
	}
	return o
}

// selectEcho is a $select as odata.metadata shows it: live echoes the value
// it was sent, not the names it read from it — "age, sex" (sent
// "age,%20sex") comes back "age,%20sex", "age%2Csex" comes back "age,sex"
// (the Python SDK's test_query_entities_with_select, sync and async) — so
// the decoded value is escaped again as .NET's Uri.EscapeUriString does:
// everything but URL syntax (RFC 3986 unreserved and reserved characters)
// as %XX of its UTF-8 bytes (docs/protocol.md 3.9).
func selectEcho(v string) string {
	const keep = "-._~!#$&'()*+,/:;=?@[]"
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		ch := v[i]
		if 'a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z' || '0' <= ch && ch <= '9' || strings.IndexByte(keep, ch) >= 0 {
			b.WriteByte(ch)
			continue
		}
		b.WriteByte('%')
		b.WriteByte("0123456789ABCDEF"[ch>>4])
		b.WriteByte("0123456789ABCDEF"[ch&15])
	}
	return b.String()
}

// writeEntity serves Update, Merge and the two upserts, which differ only
// in kind: PUT or MERGE/PATCH, with or without If-Match.
func (s *Server) writeEntity(kind writeKind) handler {
	return func(c *call) error {
		if err := c.addressed(); err != nil {
			return err
		}
		cond, err := parseIfMatch(c.r.Header)
		if err != nil {
			return err
		}
		body, err := readBody(c.r)
		if err != nil {
			return err
		}
		e, err := decodeEntityBody(body, c.res.pk, c.res.rk, true, s.cosmos)
		if err != nil {
			return err
		}
		_, stored, err := s.runWrite(c, &entityWrite{kind: kind, pk: c.res.pk, rk: c.res.rk, entity: e, cond: cond})
		if err != nil {
			return err
		}
		c.etagHdr[0] = wire.ETag(stored.Timestamp)
		c.w.Header()["Etag"] = c.etagHdr[:] // canonical: see ServeHTTP
		c.writeNoContent(http.StatusNoContent)
		return nil
	}
}

// deleteEntity: DELETE /<table>(PK,RK); If-Match is required
// (docs/protocol.md 3.13).
func (s *Server) deleteEntity(c *call) error {
	if err := c.addressed(); err != nil {
		return err
	}
	cond, err := parseIfMatch(c.r.Header)
	if err != nil {
		return err
	}
	if !cond.present {
		// The live code is unconfirmed (docs/protocol.md 3.13); a missing
		// required header is MissingRequiredHeader in the service's table.
		return tableemu.New(tableemu.MissingRequiredHeader).WithDetail("Delete Entity needs If-Match (* or an ETag)")
	}
	if _, _, err := s.runWrite(c, &entityWrite{kind: opDelete, pk: c.res.pk, rk: c.res.rk, cond: cond}); err != nil {
		return err
	}
	c.writeNoContent(http.StatusNoContent)
	return nil
}
