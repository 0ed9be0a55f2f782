package filtercache

import (
	"unsafe"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// Scan is one page of a match scan (the engine's planMatch) over a
// table's cached entities.
type Scan struct {
	// Conds are the key range's bounds (store.PlanKeys).
	Conds []store.KeyCond
	// Match is the filter, decided with odata.Eval on each entity of the
	// range; the engine passes only filters the tree can decide (see
	// Tree.Large).
	Match odata.Expr
	// Top is the most entities the page returns; Budget, the most it
	// examines (store.ScanBudget).
	Top, Budget int
	// Big reads the stored properties of an entity whose large values
	// the cache left out, by its stored keys, in the scan's snapshot,
	// which holds the same version (see the top of filtercache.go).
	Big func(pk, rk string) ([]byte, error)
}

// Scan walks the tree as the engine's match scan reads SQLite: the same
// rows in the same order, the same filter evaluation and the same count
// of rows examined, so pages, continuations and counts are identical. It
// returns how many rows it examined, how many it passed to fn, and the
// continuation. fn's entity, and the strings in it, are valid only
// during the call.
func (t Tree) Scan(q *Scan, fn func(*edm.Entity) error) (examined, n int, next *store.Key, err error) {
	tree := t.t
	seek, conds := keySeek(q.Conds)
	// Loaded after the tree was published to this scan: it holds the
	// chunks of all its entries.
	v := tree.a.view()
	ev := cacheRow{v: v}
	get := ev.lookup
	var e edm.Entity
	walk := func(c centry) bool {
		switch keyCheck(conds, v, c) {
		case keySkip:
			return true
		case keyStop:
			return false
		}
		examined++
		if examined > q.Budget {
			// The first row past the budget: the next page starts here.
			next = &store.Key{PK: store.FromSortKey(v.pk(c)), RK: store.FromSortKey(v.rk(c))}
			return false
		}
		ev.c = c
		ok := odata.Eval(q.Match, get)
		if ev.err != nil {
			err = ev.err
			return false
		}
		if !ok {
			return true
		}
		if n == q.Top {
			next = &store.Key{PK: store.FromSortKey(v.pk(c)), RK: store.FromSortKey(v.rk(c))}
			return false
		}
		// The cache never changes an entry, so the entity may point
		// into it.
		e.PartitionKey, e.RowKey, e.Timestamp = store.FromSortKey(v.pk(c)), store.FromSortKey(v.rk(c)), c.ts
		props := bytesOf(v.slim(c))
		if c.big {
			if props, err = q.Big(v.pk(c), v.rk(c)); err != nil {
				return false
			}
		}
		if err = store.DecodeEntityProps(&e, props, true); err != nil {
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
		return edm.NewString(store.FromSortKey(r.v.pk(r.c))), true
	case "RowKey":
		return edm.NewString(store.FromSortKey(r.v.rk(r.c))), true
	case "Timestamp":
		return edm.NewDateTime(r.c.ts), true
	}
	// Exact: scans read the cache only for filters on properties whose
	// values are all in slim entries (Tree.Large).
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
