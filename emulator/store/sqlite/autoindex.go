package sqlite

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strconv"
	"strings"
	"sync"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// Automatic property indexes.
//
// A filter on a property that is not a key has to examine every entity in
// the key range: about 55 ms per 100,000 entities of 1 KiB here, however
// few match (docs/benchmarks.md, "First scans").
// When a table is filtered on the same property repeatedly, tableemu adds a
// SQLite expression index for it, partial to that table, so that later
// queries read only the entities whose property is in range. The index
// changes how rows are found, never which: the query still applies the whole
// compiled filter, and the results and their order are the same (the
// differential test runs with and without indexes).
//
// An index covers one property and one class of literal: the stored types a
// literal of that class compares with (sqlfilter.go comparableTypes). Only
// eq, gt and ge comparisons use it: for ne, lt and le an entity holding the
// property with another type also matches (odata's mismatch rule), and such
// entities are not in the index.
//
// Indexes are named auto_<table id>_<class>_<hex of the property name>; the
// names alone describe them, so the set is read back from sqlite_master at
// start.

// autoIndexMinRows is the smallest table worth indexing: below it a scan is
// a few milliseconds.
const autoIndexMinRows = 20_000

// autoIndexScans is how many scans filtering on a property it takes before
// the property is indexed.
const autoIndexScans = 2

// autoIndexPerTable bounds the indexes of one table: each one costs every
// write to the table an index update.
const autoIndexPerTable = 8

// rangeIndexMax is the most entities a gt/ge comparison may select through an
// index: matches come out of it in property order and must be sorted by key
// for each page, which beats a scan only when they are few.
const rangeIndexMax = 5000

// indexKey names one automatic index.
type indexKey struct {
	tid   int64
	class byte // the literal class: a type letter, or 'n' (Int32) or 'N' (Int64)
	prop  string
}

func (k indexKey) name() string {
	return fmt.Sprintf("auto_%d_%c_%x", k.tid, k.class, k.prop)
}

// parseIndexName reads an automatic index's name back into its key.
func parseIndexName(name string) (indexKey, bool) {
	parts := strings.SplitN(name, "_", 4)
	if len(parts) != 4 || parts[0] != "auto" || len(parts[2]) != 1 {
		return indexKey{}, false
	}
	tid, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return indexKey{}, false
	}
	var prop []byte
	if _, err := fmt.Sscanf(parts[3], "%x", &prop); err != nil {
		return indexKey{}, false
	}
	return indexKey{tid: tid, class: parts[2][0], prop: string(prop)}, true
}

// literalClass is the index class a literal's comparisons use, and the
// stored types it covers.
func literalClass(t edm.Type) (byte, []edm.Type) {
	switch t {
	case edm.Int32:
		return 'n', comparableTypes(t)
	case edm.Int64:
		return 'N', comparableTypes(t)
	}
	return store.TypeLetters[t], comparableTypes(t)
}

// indexExpr is the indexed expression: the property's value when it is
// stored with one of the class's types. It is written with literal paths
// (not parameters) because SQLite matches a query to an expression index by
// the expression's text.
func indexExpr(prop string, types []edm.Type) string {
	var b strings.Builder
	if len(types) > 1 {
		b.WriteString("coalesce(")
	}
	for i, t := range types {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("json_extract(props, '$.\"")
		b.WriteString(strings.ReplaceAll(store.PropKey(prop, t), "'", "''"))
		b.WriteString("\"')")
	}
	if len(types) > 1 {
		b.WriteByte(')')
	}
	return b.String()
}

// autoIndexes is the store's set of automatic indexes and its record of
// which property filters keep scanning.
type autoIndexes struct {
	mu       sync.Mutex
	have     map[indexKey]bool
	scans    map[indexKey]int
	building map[indexKey]bool
	wg       sync.WaitGroup
	disabled bool
}

func (a *autoIndexes) load(ctx context.Context, s *Store) error {
	a.have = map[indexKey]bool{}
	a.scans = map[indexKey]int{}
	a.building = map[indexKey]bool{}
	return s.withWriter(func(c *conn) error {
		rows, err := c.query(ctx, `SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'auto\_%' ESCAPE '\'`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if k, ok := parseIndexName(rows.Text(0)); ok {
				a.have[k] = true
			}
		}
		return rows.Close()
	})
}

func (a *autoIndexes) has(k indexKey) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.have[k]
}

// indexable is a top-level conjunct an automatic index can serve.
type indexable struct {
	key   indexKey
	cmp   *odata.Compare
	types []edm.Type
}

// indexableConjuncts lists the filter's top-level comparisons that an index
// could serve: eq, gt or ge on a user property, with a literal whose
// comparisons compile (not NaN; no string that SQLite would order unlike
// the service).
func indexableConjuncts(tid int64, filter odata.Expr) []indexable {
	var out []indexable
	for _, e := range odata.Conjuncts(filter) {
		c, ok := e.(*odata.Compare)
		if !ok || (c.Op != odata.Eq && c.Op != odata.Gt && c.Op != odata.Ge) {
			continue
		}
		switch c.Prop {
		case "PartitionKey", "RowKey", "Timestamp":
			continue
		}
		if c.Lit.T == edm.Double && c.Lit.F != c.Lit.F { // NaN
			continue
		}
		if c.Lit.T == edm.String && c.Op != odata.Eq && !utf8OrderSafe(c.Lit.S) {
			continue
		}
		class, types := literalClass(c.Lit.T)
		out = append(out, indexable{key: indexKey{tid: tid, class: class, prop: c.Prop}, cmp: c, types: types})
	}
	return out
}

// noteScan records that a query scanned the table filtering on these
// conjuncts, and starts building an index for one that keeps recurring.
func (s *Store) noteScan(cands []indexable) {
	a := &s.autoIdx
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.disabled || s.closed.Load() {
		return
	}
	for _, c := range cands {
		k := c.key
		if a.have[k] || a.building[k] {
			continue
		}
		a.scans[k]++
		if a.scans[k] < autoIndexScans {
			continue
		}
		perTable := 0
		for h := range a.have {
			if h.tid == k.tid {
				perTable++
			}
		}
		if perTable >= autoIndexPerTable {
			continue
		}
		a.building[k] = true
		a.wg.Add(1)
		go s.buildIndex(k, c.types)
		return // one at a time
	}
}

// buildIndex creates an automatic index if the table is large enough. It
// runs in the background: the query that asked for it has already been
// answered by a scan.
func (s *Store) buildIndex(k indexKey, types []edm.Type) {
	a := &s.autoIdx
	defer a.wg.Done()
	built := false
	table := fmt.Sprintf("#%d", k.tid) // for the log line: the table's name once read
	err := s.Update(context.Background(), func(tx *Tx) error {
		var account, name string
		switch err := tx.queryRow(`SELECT account, name FROM tables WHERE id = ?`, k.tid).Scan(&account, &name); {
		case errors.Is(err, errNoRows) || err == nil && account == retiredAccount:
			return nil // deleted, or retired by a reset or restore (gc.go), since the scans
		case err == nil:
			table = account + "/" + name
		}
		var n int
		err := tx.queryRow(
			`SELECT count(*) FROM (SELECT 1 FROM entities WHERE tid = ? LIMIT ?)`, k.tid, autoIndexMinRows).Scan(&n)
		if err != nil || n < autoIndexMinRows {
			return err
		}
		built = true
		_, err = tx.exec(fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON entities(%s, pk, rk) WHERE tid = %d`,
			k.name(), indexExpr(k.prop, types), k.tid))
		return err
	})
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.building, k)
	switch {
	case err != nil:
		log.Printf("indexing property %q of table %s: %v", k.prop, table, err)
	case built:
		a.have[k] = true
		log.Printf("indexed property %q of table %s: repeated filters on it now read only matching entities", k.prop, table)
	default:
		a.scans[k] = 0 // a small table; count again from zero
	}
}

// dropIndexes removes a table's automatic indexes, inside the transaction
// that deletes the table.
func (tx *Tx) dropIndexes(tid int64) error {
	a := &tx.s.autoIdx
	a.mu.Lock()
	var drop []indexKey
	for k := range a.have {
		if k.tid == tid {
			drop = append(drop, k)
		}
	}
	for k := range a.scans {
		if k.tid == tid {
			delete(a.scans, k)
		}
	}
	a.mu.Unlock()
	for _, k := range drop {
		if _, err := tx.exec("DROP INDEX IF EXISTS " + k.name()); err != nil {
			return err
		}
	}
	a.mu.Lock()
	for _, k := range drop {
		delete(a.have, k)
	}
	a.mu.Unlock()
	return nil
}

// IndexNow builds the automatic index a filter's comparison would use,
// whatever the table's size, and waits for it. It exists for tests and
// benchmarks, which need the indexed path without waiting for repeats.
func (s *Store) IndexNow(ctx context.Context, t Table, filter odata.Expr) error {
	for _, c := range indexableConjuncts(t.ID, filter) {
		k := c.key
		err := s.Update(ctx, func(tx *Tx) error {
			_, err := tx.exec(fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON entities(%s, pk, rk) WHERE tid = %d`,
				k.name(), indexExpr(k.prop, c.types), k.tid))
			return err
		})
		if err != nil {
			return err
		}
		s.autoIdx.mu.Lock()
		s.autoIdx.have[k] = true
		s.autoIdx.mu.Unlock()
	}
	return nil
}
