package main

import (
	"net/http"
	"strconv"
	"strings"
)

// pageSize is the service's largest page.
const pageSize = 1000

// filterSQL turns a filter of comparisons joined by "and" — a key or a
// property against a string literal — into SQL on the stored JSON, with
// its arguments; ok is false for anything else.
func filterSQL(f string) (sql string, args []any, ok bool) {
	if strings.TrimSpace(f) == "" {
		return "", nil, true
	}
	ops := map[string]string{"eq": "=", "ne": "<>", "gt": ">", "ge": ">=", "lt": "<", "le": "<="}
	var b strings.Builder
	for _, term := range strings.Split(f, " and ") {
		name, rest, _ := strings.Cut(strings.TrimSpace(term), " ")
		op, lit, _ := strings.Cut(rest, " ")
		v, isStr := quoted(lit)
		sqlOp, known := ops[op]
		if !isStr || !known || !plainName(name) {
			return "", nil, false
		}
		b.WriteString(" AND ")
		switch name {
		case "PartitionKey":
			b.WriteString("pk")
		case "RowKey":
			b.WriteString("rk")
		default:
			b.WriteString("json_extract(body, '$." + name + "')")
		}
		b.WriteString(" " + sqlOp + " ?")
		args = append(args, v)
	}
	return b.String(), args, true
}

func plainName(s string) bool {
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// queryEntities answers one page of a query: up to pageSize entities in
// key order from the continuation on, with the next one's keys in the
// continuation headers.
func (s *server) queryEntities(w http.ResponseWriter, r *http.Request, table string) {
	q := r.URL.Query()
	where, args, ok := filterSQL(q.Get("$filter"))
	if !ok {
		fail(w, 501, "NotImplemented")
		return
	}
	top := pageSize
	if t, err := strconv.Atoi(q.Get("$top")); err == nil && t > 0 && t < top {
		top = t
	}
	sql := `SELECT pk, rk, ts, body FROM entities WHERE t = ?`
	all := []any{table}
	if npk := q.Get("NextPartitionKey"); npk != "" {
		sql += ` AND (pk, rk) >= (?, ?)`
		all = append(all, npk, q.Get("NextRowKey"))
	}
	sql += where + ` ORDER BY pk, rk LIMIT ?`
	all = append(append(all, args...), int64(top+1))

	d := <-s.query
	defer s.query.put(d)
	st, err := d.prepare(sql, all...)
	if err != nil {
		fail(w, 500, "InternalError")
		return
	}
	defer st.reset()
	out := s.buf()
	defer s.bufs.Put(out)
	out.WriteString(`{"odata.metadata":"` + s.base + `/$metadata#` + table + `","value":[`)
	n := 0
	for {
		row, err := st.step()
		if err != nil {
			fail(w, 500, "InternalError")
			return
		}
		if !row {
			break
		}
		if n == top {
			w.Header().Set("x-ms-continuation-NextPartitionKey", string(st.bytes(0)))
			w.Header().Set("x-ms-continuation-NextRowKey", string(st.bytes(1)))
			break
		}
		if n > 0 {
			out.WriteByte(',')
		}
		s.entity(out, table, false, st.int(2), st.bytes(3))
		n++
	}
	out.WriteString(`]}`)
	h := w.Header()
	h.Set("Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(out.Len()))
	w.Write(out.Bytes())
}
