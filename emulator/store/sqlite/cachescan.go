package sqlite

import (
	"unsafe"

	"github.com/google/btree"

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
// continuation.
func scanCached(tree *btree.BTreeG[*centry], p *plannedQuery, top int, fn func(*edm.Entity) error) (examined, n int, next *Key, err error) {
	seek, conds := keySeek(p.bounds.Conds)
	ev := cacheRow{}
	get := ev.lookup
	var e edm.Entity
	tree.AscendGreaterOrEqual(&seek, func(c *centry) bool {
		switch keyCheck(conds, c) {
		case keySkip:
			return true
		case keyStop:
			return false
		}
		examined++
		if examined > scanBudget {
			// The first row past the budget: the next page starts here.
			next = &Key{PK: fromSortKey(c.pk), RK: fromSortKey(c.rk)}
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
			next = &Key{PK: fromSortKey(c.pk), RK: fromSortKey(c.rk)}
			return false
		}
		// The cache never changes an entry, so the entity may point
		// into it.
		e.PartitionKey, e.RowKey, e.Timestamp = fromSortKey(c.pk), fromSortKey(c.rk), c.ts
		if e.Properties, err = store.DecodePropsInto(e.Properties[:0], bytesOf(c.props), true); err != nil {
			return false
		}
		if err = fn(&e); err != nil {
			return false
		}
		n++
		return true
	})
	return examined, n, next, err
}

func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// cacheRow is the getter odata.Eval reads a cached entity with.
type cacheRow struct {
	c   *centry
	err error
}

func (r *cacheRow) lookup(name string) (edm.Value, bool) {
	switch name {
	case "PartitionKey":
		return edm.NewString(fromSortKey(r.c.pk)), true
	case "RowKey":
		return edm.NewString(fromSortKey(r.c.rk)), true
	case "Timestamp":
		return edm.NewDateTime(r.c.ts), true
	}
	v, ok, err := store.LookupProp(bytesOf(r.c.props), name)
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

// keySeek is where a walk of the range starts: the greatest of the
// lower bounds, as (PartitionKey, RowKey) in stored form.
func keySeek(conds []store.KeyCond) (centry, []store.KeyCond) {
	var seek centry
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
	return seek, conds
}

// keyCheck places a row against the range. Rows come in key order, so a
// row above an upper bound on PartitionKey or on the pair ends the range;
// so does one above an upper bound on RowKey, which store.PlanKeys sets
// only with the PartitionKey fixed, so that the rest of the partition is
// above it too and the next partitions are outside.
func keyCheck(conds []store.KeyCond, c *centry) keyVerdict {
	v := keyIn
	for _, k := range conds {
		d := k.Compare(c.pk, c.rk)
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
