package sqlite

import (
	"context"
	"unsafe"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// cacheScans lets match scans read the filter cache (filtercache.go);
// tests turn it off to compare with the scan through SQLite.
var cacheScans = true

// scanCached is the match scan of plan p (planMatch) over a table's
// cached entities: the same rows in the same order as the statement
// would read, the same filter evaluation and the same count of rows
// examined, so pages, continuations and counts are identical. It returns
// how many rows it examined, how many it passed to fn, and the
// continuation. An entity whose large values the cache left out is read
// from SQLite when the page returns it, in the transaction's snapshot,
// which holds the same version (see the top of filtercache.go).
func (tx *Tx) scanCached(tree *ctree, t Table, p *plannedQuery, top int, fn func(*edm.Entity) error) (examined, n int, next *Key, err error) {
	seek, conds := keySeek(p.bounds.Conds)
	// Loaded after the tree was published to this scan: it holds the
	// chunks of all its entries.
	v := tree.a.view()
	ev := cacheRow{v: v}
	get := ev.lookup
	var e edm.Entity
	// The entities read from SQLite here are scattered over the file, a
	// page each. Through the memory map every such page would stay in the
	// resident set while the map lasts (a million entities' scans held
	// 780 MiB of it: docs/benchmarks.md), where with read() they are the
	// kernel's page cache and 2 MiB of the reader's. SQLite applies
	// mmap_size when the pragma is prepared, to the connection's pager
	// (later pages are read, pages already mapped stay until it remaps),
	// so execScript, which prepares each time, runs it.
	unmapped := false
	defer func() {
		if unmapped {
			if merr := tx.c.execScript(context.Background(), "PRAGMA "+mmapOn); merr != nil && err == nil {
				err = merr
			}
		}
	}()
	walk := func(c centry) bool {
		switch keyCheck(conds, v, c) {
		case keySkip:
			return true
		case keyStop:
			return false
		}
		examined++
		if examined > scanBudget {
			// The first row past the budget: the next page starts here.
			next = &Key{PK: fromSortKey(v.pk(c)), RK: fromSortKey(v.rk(c))}
			return false
		}
		ev.c = c
		ok := odata.Eval(p.match, get)
		if ev.err != nil {
			err = ev.err
			return false
		}
		if !ok {
			return true
		}
		if n == top {
			next = &Key{PK: fromSortKey(v.pk(c)), RK: fromSortKey(v.rk(c))}
			return false
		}
		// The cache never changes an entry, so the entity may point
		// into it.
		e.PartitionKey, e.RowKey, e.Timestamp = fromSortKey(v.pk(c)), fromSortKey(v.rk(c)), c.ts
		props := bytesOf(v.slim(c))
		if c.big {
			if tx.c.mapped && !unmapped {
				if err = tx.c.execScript(tx.ctx, "PRAGMA mmap_size = 0"); err != nil {
					return false
				}
				unmapped = true
			}
			if err = tx.queryRow(`SELECT props FROM entities WHERE tid = ? AND pk = ? AND rk = ?`, t.ID, v.pk(c), v.rk(c)).Scan(&props); err != nil {
				return false
			}
		}
		if e.Properties, err = store.DecodePropsInto(e.Properties[:0], props, true); err != nil {
			return false
		}
		if err = fn(&e); err != nil {
			return false
		}
		n++
		return true
	}
	if seek.pk == "" && seek.rk == "" {
		// From the first entity: a walk from a key compares it with
		// entities at every level it descends.
		tree.Ascend(walk)
	} else {
		p := keyProbe(seek.pk, seek.rk)
		tree.AscendGreaterOrEqual(p, walk)
		releaseProbe(p)
	}
	return examined, n, next, err
}

// cacheable says whether a filter can be decided on slim entries: it
// reads no property some entity has a value of too large for them.
func cacheable(f odata.Expr, large map[string]bool) bool {
	ok := true
	known := filterNames(f, func(n string) { ok = ok && !large[n] })
	return ok && known
}

func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// cacheRow is the getter odata.Eval reads a cached entity with.
type cacheRow struct {
	c   centry // a copy: a pointer to the walk's variable would escape
	v   view
	err error
}

func (r *cacheRow) lookup(name string) (edm.Value, bool) {
	switch name {
	case "PartitionKey":
		return edm.NewString(fromSortKey(r.v.pk(r.c))), true
	case "RowKey":
		return edm.NewString(fromSortKey(r.v.rk(r.c))), true
	case "Timestamp":
		return edm.NewDateTime(r.c.ts), true
	}
	// Exact: scans read the cache only for filters on properties whose
	// values are all in slim entries (cacheable).
	v, ok, err := store.LookupProp(bytesOf(r.v.slim(r.c)), name)
	if err != nil {
		r.err = err
		return edm.Value{}, false
	}
	return v, ok
}

type keyVerdict uint8

const (
	keyIn   keyVerdict = iota
	keySkip            // before the range's start: the next row may be in it
	keyStop            // past the range: so is every later row
)

// storedKey is a (PartitionKey, RowKey) pair in stored form.
type storedKey struct{ pk, rk string }

// keySeek is where a walk of the range starts: the greatest of the
// lower bounds, as (PartitionKey, RowKey) in stored form. Every row from
// there on meets the lower bounds (a RowKey bound comes only with the
// PartitionKey fixed, and the seek starts in that partition), so it also
// returns the conditions left to check on each row: the upper bounds.
func keySeek(conds []store.KeyCond) (seek storedKey, upper []store.KeyCond) {
	eqPK, fixed := "", false
	for _, c := range conds {
		if c.Col == store.KeyPK && c.Op == odata.Eq {
			eqPK, fixed = c.PK, true
		}
	}
	raise := func(pk, rk string) {
		if pk > seek.pk || pk == seek.pk && rk > seek.rk {
			seek.pk, seek.rk = pk, rk
		}
	}
	for _, c := range conds {
		// The least key above a string s is s + "\x00".
		switch c.Op {
		case odata.Eq, odata.Ge, odata.Gt:
		default:
			continue
		}
		gt := ""
		if c.Op == odata.Gt {
			gt = "\x00"
		}
		switch c.Col {
		case store.KeyPK:
			raise(c.PK+gt, "")
		case store.KeyPair:
			raise(c.PK, c.RK+gt)
		case store.KeyRK:
			if fixed {
				raise(eqPK, c.RK+gt)
			}
		}
	}
	for _, c := range conds {
		if c.Op == odata.Eq || c.Op == odata.Lt || c.Op == odata.Le {
			upper = append(upper, c)
		}
	}
	return seek, upper
}

// keyCheck places a row against the range's bounds. Rows come in key order, so a
// row above an upper bound on PartitionKey or on the pair ends the range;
// so does one above an upper bound on RowKey, which store.PlanKeys sets
// only with the PartitionKey fixed, so that the rest of the partition is
// above it too and the next partitions are outside.
func keyCheck(conds []store.KeyCond, rows view, c centry) keyVerdict {
	v := keyIn
	for _, k := range conds {
		d := k.Compare(rows.pk(c), rows.rk(c))
		switch k.Op {
		case odata.Eq:
			if d > 0 {
				return keyStop
			}
			if d < 0 {
				v = keySkip
			}
		case odata.Lt:
			if d >= 0 {
				return keyStop
			}
		case odata.Le:
			if d > 0 {
				return keyStop
			}
		case odata.Gt:
			if d <= 0 {
				v = keySkip
			}
		case odata.Ge:
			if d < 0 {
				v = keySkip
			}
		}
	}
	return v
}
