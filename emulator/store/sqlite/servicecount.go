package sqlite

import (
	"strconv"
	"strings"
)

// The service's count of a page read through an automatic index.
//
// Design insight reports what the service would do (docs/protocol.md
// 6.6): it has no index on a property, so a filter on one examines every
// entity of its key range. When tableemu's own automatic index
// (autoindex.go) serves a page, it reads only the entities the index
// selects; ScanResult.Read says so, and ScanResult.Scanned still says what
// the service examines for the same results: every entity of the key
// range the page covers, from its start (the continuation, or the start
// of the range) to its continuation, or to the end of the range on the
// last page. That is exact, with one difference of shape: a scan stops a
// page after ScanBudget entities, and an indexed page does not, so an
// indexed page may hold results the service returns over several pages;
// Scanned then covers them all. Over a whole query the totals are the
// same with and without the index.
//
// The count steps through the key range without reading properties,
// about half the cost of scanning it. It is needed only when insights or
// throttling ask (CountScanned), and a reader keeps it for as long as its
// connection sees no new commit: repeated queries over an unchanged table
// count once per connection.

// countScanned sets res.Read to the entities a page read through its
// automatic index (those the index selected, in the page's key range and
// before its continuation) and res.Scanned to the entities of that key
// range.
func (tx *Tx) countScanned(t Table, p plannedQuery, res *ScanResult) error {
	// The partial index's condition tid = N must be in the query as a
	// literal for SQLite to use it (plan.go).
	where := "tid = " + strconv.FormatInt(t.ID, 10) + " AND " + p.indexSQL + p.bounds.And()
	args := append(append([]any{}, p.indexArgs...), p.bounds.Args...)
	rangeWhere := "tid = ?" + p.bounds.And()
	rangeArgs := append([]any{t.ID}, p.bounds.Args...)
	if res.Next != nil {
		where += " AND (pk, rk) < (?, ?)"
		rangeWhere += " AND (pk, rk) < (?, ?)"
		args = append(args, sortKey(res.Next.PK), sortKey(res.Next.RK))
		rangeArgs = append(rangeArgs, sortKey(res.Next.PK), sortKey(res.Next.RK))
	}
	if err := tx.queryRow("SELECT count(*) FROM entities INDEXED BY "+p.index+" WHERE "+where, args...).Scan(&res.Read); err != nil {
		return err
	}
	n, err := tx.rangeCount("SELECT count(*) FROM entities WHERE "+rangeWhere, rangeArgs)
	res.Scanned = n
	return err
}

// rangeCounts holds each connection's counts of key ranges (by its match
// slot, scanfunc.go), with the data version they were counted at. Only the
// goroutine holding the connection touches its entry.
var rangeCounts [maxScanSlots]struct {
	version int64
	m       map[string]int
}

// maxRangeCounts bounds one connection's counts; past it they start
// again empty.
const maxRangeCounts = 256

// rangeCount runs a count query, or returns its earlier answer on this
// connection when no commit has happened since (PRAGMA data_version
// changes when another connection commits). Write transactions do not
// cache: their own changes do not move the version.
func (tx *Tx) rangeCount(q string, args []any) (int, error) {
	var n int
	slot := -1
	if tx.reader {
		if sl, ok, err := matchSlot(tx.c); err != nil {
			return 0, err
		} else if ok {
			slot = sl
		}
	}
	if slot < 0 {
		return n, tx.queryRow(q, args...).Scan(&n)
	}
	var version int64
	if err := tx.queryRow("PRAGMA data_version").Scan(&version); err != nil {
		return 0, err
	}
	c := &rangeCounts[slot]
	if c.m == nil || c.version != version || len(c.m) >= maxRangeCounts {
		c.version, c.m = version, map[string]int{}
	}
	var key strings.Builder
	key.WriteString(q)
	for _, a := range args {
		key.WriteByte(0)
		switch v := a.(type) {
		case int64:
			key.WriteString(strconv.FormatInt(v, 10))
		case string:
			key.WriteString(strconv.Quote(v))
		default:
			// Key bounds are table ids and key strings only.
			return n, tx.queryRow(q, args...).Scan(&n)
		}
	}
	if n, ok := c.m[key.String()]; ok {
		return n, nil
	}
	if err := tx.queryRow(q, args...).Scan(&n); err != nil {
		return 0, err
	}
	c.m[key.String()] = n
	return n, nil
}
