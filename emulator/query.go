package emulator

import (
	"net/http"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/wire"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// getEntity: GET /<table>(PK,RK), with an optional $select
// (docs/protocol.md 3.9).
func (s *Server) getEntity(c *call) error {
	if c.res.keyErr != nil {
		return c.res.keyErr
	}
	hidden := c.hidden(c.res.pk, c.res.rk) // outside the SAS key range: not found
	sel, err := odata.ParseSelect(c.query().Get("$select"))
	if err != nil {
		return filterErr(err)
	}
	if s.thr != nil {
		if err := s.thr.Admit(c.res.account, c.res.table, c.res.pk, true, 1); err != nil {
			return err
		}
	}
	// The entity is encoded inside the transaction, while the store
	// lends it (store.ReadEntity): its row is not copied.
	c.point.hidden, c.point.sel = hidden, sel
	b := getBuf()
	c.point.body = (*b)[:0]
	if err := s.store.ViewPoint(c.ctx(), c.pointRead); err != nil {
		putBuf(b)
		return err
	}
	if s.ins != nil {
		s.noteQuery(c, c.point.t.Name, "", store.ScanResult{Shape: store.PointQuery, Scanned: 1}, 1)
	}
	c.etagHdr[0] = wire.ETag(c.point.ts)
	c.w.Header()["Etag"] = c.etagHdr[:] // canonical spelling: see ServeHTTP
	c.writeJSON(http.StatusOK, c.point.body)
	*b = c.point.body // keep what the buffer grew to
	putBuf(b)
	return nil
}

// readPoint is getEntity's transaction, c.pointRead: it reads the entity
// c addresses and encodes it into c.point.body.
func (c *call) readPoint(tx *store.Tx) error {
	// An engine may run the closure again (PostgreSQL's ViewPoint, when
	// its first statement went alone): start the body afresh.
	c.point.body = c.point.body[:0]
	t, err := entityTable(tx, c)
	if err != nil {
		return err
	}
	c.point.t = t
	if c.point.hidden {
		return outOfRangeRead()
	}
	return storeErr(tx.ReadEntity(t, c.res.pk, c.res.rk, c.pointEncode))
}

// encodePoint is readPoint's ReadEntity callback, c.pointEncode: it
// encodes e, which is valid only during the call, into c.point.body.
func (c *call) encodePoint(e *edm.Entity) error {
	c.point.ts = e.Timestamp
	c.point.body = wire.AppendEntityDocument(c.point.body, e, c.encodeOptions(c.point.t.Name, c.point.sel))
	return nil
}

// queryEntities: GET /<table>() with $filter, $select, $top and the
// NextPartitionKey/NextRowKey continuation (docs/protocol.md 3.8, 6), in
// Cosmos DB for Table's form under the profile (cosmospaging.go).
func (s *Server) queryEntities(c *call) error {
	q := c.query()
	filter, top, sel, err := parseQueryOptions(q, s.maxTop())
	if err != nil {
		return err
	}
	eq := store.EntityQuery{Filter: filter, Top: top, CountScanned: s.ins != nil || s.thr != nil}
	if s.cosmos {
		// Cosmos DB for Table answers a partition's entities in the order
		// they were created (docs/cosmos.md, "order of query results").
		eq.Order = store.OrderCreation
	}
	pk, onePartition := store.FixedPartition(filter)
	if s.thr != nil {
		if err := s.thr.Admit(c.res.account, c.res.table, pk, onePartition, 0); err != nil {
			return err
		}
	}
	if npk := q.Get("NextPartitionKey"); npk != "" {
		if eq.Start, err = s.entityStart(npk, q.Get("NextRowKey")); err != nil {
			return err
		}
	}
	if kr, ok := c.grant.KeyRange(); ok {
		// A SAS key range: the query sees only entities inside it
		// (docs/protocol.md 0.1).
		r := &store.KeyRange{To: kr.HasEndPK, ToPK: kr.EndPK, ToRK: kr.EndRK, HasToRK: kr.HasEndRK}
		if kr.HasStartPK {
			r.From = &store.Key{PK: kr.StartPK, RK: kr.StartRK}
		}
		eq.Range = r
	}
	// Entities are encoded as the scan reads them: the store hands each
	// one over only for the duration of the call (store.ScanEntities).
	buf := getBuf()
	defer putBuf(buf)
	b := *buf
	var res store.ScanResult
	var returned int
	var tableName string
	err = s.store.View(c.ctx(), func(tx *store.Tx) error {
		t, err := entityTable(tx, c)
		if err != nil {
			return err
		}
		opts := c.encodeOptions(t.Name, sel)
		var meta string
		if c.level != wire.NoMetadata {
			meta = c.baseURL() + "/$metadata#" + t.Name
			if len(sel) > 0 && !s.cosmos {
				// Cosmos DB for Table shows no $select in
				// odata.metadata (test_query_entities_with_select,
				// python-cosmos; docs/cosmos.md).
				meta += "&$select=" + opts.SelectEcho
			}
		}
		b = append(b[:0], '{')
		// Cosmos DB for Table writes odata.metadata after value (every
		// query of entities recorded from it, e.g. test_query_user_filter
		// in python-cosmos; docs/cosmos.md), as in Query Tables.
		metaLast := s.cosmos
		if meta != "" && !metaLast {
			b = append(b, `"odata.metadata":`...)
			b = edm.AppendJSONString(b, meta)
			b = append(b, ',')
		}
		b = append(b, `"value":[`...)
		tableName = t.Name
		res, err = tx.ScanEntities(t, eq, func(e *edm.Entity) error {
			mark := len(b)
			if returned > 0 {
				b = append(b, ',')
			}
			returned++
			b = wire.AppendEntity(b, e, opts)
			if s.cosmos && len(b) > cosmosMaxPage && returned > 1 {
				// Cosmos DB ends a page at its response size limit
				// (cosmospaging.go): this entity starts the next.
				b, returned = b[:mark], returned-1
				return store.ErrPageFull
			}
			return nil
		})
		b = append(b, ']')
		if meta != "" && metaLast {
			b = append(b, `,"odata.metadata":`...)
			b = edm.AppendJSONString(b, meta)
		}
		b = append(b, '}')
		return storeErr(err)
	})
	if err != nil {
		return err
	}
	if s.thr != nil {
		s.thr.Charge(c.res.account, c.res.table, pk, onePartition, max(res.Scanned, returned))
	}
	if s.ins != nil {
		f := ""
		if filter != nil {
			f = filter.String()
		}
		s.noteQuery(c, tableName, f, res, returned)
	}
	if res.Next != nil {
		c.setEntityNext(res.Next, eq.Start != nil)
	}
	*buf = b // keep the grown buffer for the pool
	c.writeJSON(http.StatusOK, b)
	return nil
}
