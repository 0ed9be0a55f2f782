package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

func open(t *testing.T) *Store {
	t.Helper()
	s, err := openStore(context.Background(), Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestTablesAndEntities(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	var tb Table
	err := s.Update(ctx, func(tx *Tx) error {
		var err error
		tb, err = tx.CreateTable("acct", "MyTable")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(ctx, func(tx *Tx) error { _, err := tx.CreateTable("acct", "mytable"); return err })
	if !errors.Is(err, ErrTableExists) {
		t.Fatalf("case-insensitive duplicate: %v", err)
	}
	// Same name in another account is another table.
	if err := s.Update(ctx, func(tx *Tx) error { _, err := tx.CreateTable("other", "MyTable"); return err }); err != nil {
		t.Fatal(err)
	}

	// A failing closure leaves nothing behind.
	boom := errors.New("boom")
	err = s.Update(ctx, func(tx *Tx) error {
		if err := tx.InsertEntity(tb, &edm.Entity{PartitionKey: "p", RowKey: "rolled back"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	err = s.View(ctx, func(tx *Tx) error { _, err := tx.GetEntity(tb, "p", "rolled back"); return err })
	if !errors.Is(err, ErrEntityNotFound) {
		t.Fatalf("rolled-back insert visible: %v", err)
	}

	var first, second int64
	err = s.Update(ctx, func(tx *Tx) error {
		e := &edm.Entity{PartitionKey: "p", RowKey: "r", Properties: []edm.Property{{Name: "A", Value: edm.NewInt32(1)}}}
		if err := tx.InsertEntity(tb, e); err != nil {
			return err
		}
		first = e.Timestamp
		if err := tx.InsertEntity(tb, &edm.Entity{PartitionKey: "p", RowKey: "r"}); !errors.Is(err, ErrEntityExists) {
			t.Errorf("duplicate insert: %v", err)
		}
		e2 := &edm.Entity{PartitionKey: "p", RowKey: "r"}
		if err := tx.PutEntity(tb, e2, first); err != nil {
			return err
		}
		second = e2.Timestamp
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if second <= first {
		t.Fatalf("timestamps %d then %d", first, second)
	}
	err = s.Update(ctx, func(tx *Tx) error { return tx.DeleteTable("acct", "MYTABLE") })
	if err != nil {
		t.Fatal(err)
	}
	err = s.View(ctx, func(tx *Tx) error { _, err := tx.GetTable("acct", "MyTable"); return err })
	if !errors.Is(err, ErrTableNotFound) {
		t.Fatal(err)
	}
}

func TestQueryUsesKeyRanges(t *testing.T) {
	s, tb := openNine(t)
	ctx := context.Background()
	var err error
	// The design guide's query shapes, and the primary-key search SQLite
	// plans for each: a point query, range queries and a partition scan
	// search the key; only a filter without PartitionKey scans the table.
	for _, tc := range []struct {
		filter string
		plan   string // the SEARCH line of EXPLAIN QUERY PLAN
		found  int
	}{
		{"PartitionKey eq 'p2' and RowKey eq 'b'", "(tid=? AND pk=? AND rk=?)", 1},
		{"PartitionKey eq 'p2' and RowKey ge 'b'", "(tid=? AND pk=? AND rk>?)", 2},
		{"PartitionKey eq 'p2' and RowKey ge 'a' and RowKey lt 'c'", "(tid=? AND pk=? AND rk>? AND rk<?)", 2},
		{"PartitionKey eq 'p2'", "(tid=? AND pk=?)", 3},
		{"PartitionKey eq 'p2' and Name eq 'x'", "(tid=? AND pk=?)", 0},
		{"PartitionKey ge 'p2'", "(tid=? AND pk>?)", 6},
		{"PartitionKey gt 'p1' and PartitionKey lt 'p3'", "(tid=? AND pk>? AND pk<?)", 3},
		{"RowKey eq 'b'", "(tid=?)", 3},                                                 // a table scan
		{"PartitionKey eq 5", "(tid=?)", 0},                                             // a type mismatch bounds nothing
		{"PartitionKey eq 'p1' or RowKey eq 'c'", "(tid=?)", 5},                         // or: a table scan
		{"PartitionKey eq 'p2' and RowKey ge '\uE000'", "(tid=? AND pk=? AND rk>?)", 0}, // residual in Go
	} {
		f, err := odata.ParseFilter(tc.filter)
		if err != nil {
			t.Fatal(err)
		}
		q := EntityQuery{Filter: f, Top: 1000}
		var plan []string
		err = s.View(ctx, func(tx *Tx) error {
			p, err := tx.plan(tb, q)
			if err != nil {
				return err
			}
			rows, err := tx.query("EXPLAIN QUERY PLAN "+p.sql, p.args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var id, parent, notused int
				var detail string
				if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
					return err
				}
				plan = append(plan, detail)
			}
			return rows.Close()
		})
		if err != nil {
			t.Fatal(err)
		}
		joined := strings.Join(plan, " | ")
		if !strings.Contains(joined, "SEARCH entities USING PRIMARY KEY "+tc.plan) || strings.Contains(joined, "SCAN entities") {
			t.Errorf("%s: plan %q, want a primary-key search %s", tc.filter, joined, tc.plan)
		}
		var page EntityPage
		err = s.View(ctx, func(tx *Tx) error {
			page, err = tx.QueryEntities(tb, q)
			return err
		})
		if err != nil || len(page.Entities) != tc.found {
			t.Errorf("%s: %v, %d entities, want %d", tc.filter, err, len(page.Entities), tc.found)
		}
	}
	// Key range restriction (a SAS scope): (p1,c) .. whole of p2.
	var page EntityPage
	err = s.View(ctx, func(tx *Tx) error {
		page, err = tx.QueryEntities(tb, EntityQuery{Top: 1000, Range: &KeyRange{From: &Key{PK: "p1", RK: "c"}, To: true, ToPK: "p2"}})
		return err
	})
	if err != nil || len(page.Entities) != 4 {
		t.Fatalf("range: %v, %d entities", err, len(page.Entities))
	}
}

func TestOpenRejectsGarbage(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(strings.Repeat("not a database ", 1000)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := openStore(context.Background(), Options{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), FileName) {
		t.Fatalf("garbage database: %v", err)
	}
}

func timeAt(year int) time.Time { return time.Date(year, 6, 1, 12, 0, 0, 123456700, time.UTC) }

// openNine opens a store with one table of nine entities: PartitionKeys
// p1-p3, each with RowKeys a-c.
func openNine(t *testing.T) (*Store, Table) {
	t.Helper()
	s := open(t)
	var tb Table
	err := s.Update(context.Background(), func(tx *Tx) error {
		var err error
		if tb, err = tx.CreateTable("a", "t"); err != nil {
			return err
		}
		for _, pk := range []string{"p1", "p2", "p3"} {
			for _, rk := range []string{"a", "b", "c"} {
				if err := tx.InsertEntity(tb, &edm.Entity{PartitionKey: pk, RowKey: rk}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, tb
}

// testRow runs a one-row query in a read transaction of s.
func (s *Store) testRow(query string, args ...any) testRow { return testRow{s, query, args} }

type testRow struct {
	s     *Store
	query string
	args  []any
}

func (r testRow) Scan(dest ...any) error {
	return r.s.View(context.Background(), func(tx *Tx) error { return tx.queryRow(r.query, r.args...).Scan(dest...) })
}

// TestViewPoint checks the two kinds of reader: View's read through a
// memory map and ViewPoint's do not, and both see every committed write.
func TestViewPoint(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	var tb Table
	for i := range 3 {
		err := s.Update(ctx, func(tx *Tx) error {
			var err error
			if i == 0 {
				tb, err = tx.CreateTable("a", "t")
				return err
			}
			return tx.InsertEntity(tb, &edm.Entity{PartitionKey: "p", RowKey: strconv.Itoa(i)})
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []struct {
			view func(context.Context, func(*Tx) error) error
			mmap bool
		}{{s.View, true}, {s.ViewPoint, false}} {
			err := v.view(ctx, func(tx *Tx) error {
				var size int64
				if err := tx.queryRow("PRAGMA mmap_size").Scan(&size); err != nil {
					return err
				}
				if (size > 0) != v.mmap {
					t.Errorf("mmap_size %d, want a map: %v", size, v.mmap)
				}
				if i == 0 {
					return nil
				}
				_, err := tx.GetEntity(tb, "p", strconv.Itoa(i))
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestTableCache checks that readers never see a table lookup older than
// the last acknowledged create or delete, across delete, recreate under the
// same name in another case, and a write that failed after creating.
func TestTableCache(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	lookup := func() (Table, error) {
		var tb Table
		err := s.ViewPoint(ctx, func(tx *Tx) error {
			var err error
			tb, err = tx.GetTable("a", "Cached")
			return err
		})
		return tb, err
	}
	create := func(name string) Table {
		var tb Table
		if err := s.Update(ctx, func(tx *Tx) error {
			var err error
			tb, err = tx.CreateTable("a", name)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return tb
	}
	first := create("cached")
	for range 2 { // the second lookup comes from the cache
		if got, err := lookup(); err != nil || got != first {
			t.Fatalf("lookup: %+v %v, want %+v", got, err, first)
		}
	}
	if err := s.Update(ctx, func(tx *Tx) error { return tx.DeleteTable("a", "CACHED") }); err != nil {
		t.Fatal(err)
	}
	if got, err := lookup(); !errors.Is(err, ErrTableNotFound) {
		t.Fatalf("after delete: %+v %v", got, err)
	}
	second := create("CACHED")
	for range 2 {
		if got, err := lookup(); err != nil || got != second {
			t.Fatalf("after recreate: %+v %v, want %+v", got, err, second)
		}
	}
	// A write transaction sees its own delete, whatever readers cached.
	err := s.Update(ctx, func(tx *Tx) error {
		if err := tx.DeleteTable("a", "cached"); err != nil {
			return err
		}
		if _, err := tx.GetTable("a", "cached"); !errors.Is(err, ErrTableNotFound) {
			t.Errorf("inside the deleting write: %v", err)
		}
		return errors.New("roll back")
	})
	if err == nil {
		t.Fatal("the write did not fail")
	}
	if got, err := lookup(); err != nil || got != second {
		t.Fatalf("after a rolled-back delete: %+v %v, want %+v", got, err, second)
	}
}
