package emulator

import (
	"net/http"
	"strings"

	"github.com/tableemu/tableemu/edm"
	"github.com/tableemu/tableemu/emulator/wire"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/store"
)

// getEntity: GET /<table>(PK,RK), with an optional $select
// (PROTOCOL.md 3.9).
func (s *Server) getEntity(c *call) error {
	if err := c.addressed(); err != nil {
		return err
	}
	sel, err := odata.ParseSelect(c.r.URL.Query().Get("$select"))
	if err != nil {
		return filterErr(err)
	}
	var e *edm.Entity
	var t store.Table
	err = s.store.View(c.r.Context(), func(tx *store.Tx) error {
		var err error
		if t, err = entityTable(tx, c); err != nil {
			return err
		}
		e, err = tx.GetEntity(t, c.res.pk, c.res.rk)
		return storeErr(err)
	})
	if err != nil {
		return err
	}
	c.w.Header().Set("ETag", wire.ETag(e.Timestamp))
	c.writeJSON(http.StatusOK, wire.AppendEntityDocument(nil, e, c.encodeOptions(t.Name, sel)))
	return nil
}

// queryEntities: GET /<table>() with $filter, $select, $top and the
// NextPartitionKey/NextRowKey continuation (PROTOCOL.md 3.8, 6).
func (s *Server) queryEntities(c *call) error {
	q := c.r.URL.Query()
	filter, top, sel, err := parseQueryOptions(q)
	if err != nil {
		return err
	}
	eq := store.EntityQuery{Filter: filter, Top: top}
	if npk := q.Get("NextPartitionKey"); npk != "" {
		start := &store.Key{}
		if start.PK, err = decodeToken(npk); err != nil {
			return err
		}
		if nrk := q.Get("NextRowKey"); nrk != "" {
			if start.RK, err = decodeToken(nrk); err != nil {
				return err
			}
		}
		eq.Start = start
	}
	if kr, ok := c.grant.KeyRange(); ok {
		// A SAS key range: the query sees only entities inside it
		// (PROTOCOL.md 0.1).
		r := &store.KeyRange{To: kr.HasEndPK, ToPK: kr.EndPK, ToRK: kr.EndRK, HasToRK: kr.HasEndRK}
		if kr.HasStartPK {
			r.From = &store.Key{PK: kr.StartPK, RK: kr.StartRK}
		}
		eq.Range = r
	}
	var page store.EntityPage
	var t store.Table
	err = s.store.View(c.r.Context(), func(tx *store.Tx) error {
		var err error
		if t, err = entityTable(tx, c); err != nil {
			return err
		}
		page, err = tx.QueryEntities(t, eq)
		return storeErr(err)
	})
	if err != nil {
		return err
	}
	opts := c.encodeOptions(t.Name, sel)
	b := make([]byte, 0, 256+len(page.Entities)*256)
	b = append(b, '{')
	if c.level != wire.NoMetadata {
		meta := c.baseURL() + "/$metadata#" + t.Name
		if len(sel) > 0 {
			meta += "&$select=" + strings.Join(sel, ",")
		}
		b = append(b, `"odata.metadata":`...)
		b = edm.AppendJSONString(b, meta)
		b = append(b, ',')
	}
	b = append(b, `"value":[`...)
	for i, e := range page.Entities {
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendEntity(b, e, opts)
	}
	b = append(b, "]}"...)
	if page.Next != nil {
		// Both headers whenever more results exist, neither on the last
		// page (PROTOCOL.md 0.1).
		c.w.Header().Set("x-ms-continuation-NextPartitionKey", encodeToken(page.Next.PK))
		c.w.Header().Set("x-ms-continuation-NextRowKey", encodeToken(page.Next.RK))
	}
	c.writeJSON(http.StatusOK, b)
	return nil
}
