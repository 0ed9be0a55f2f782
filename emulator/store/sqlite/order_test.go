package sqlite

import (
	"context"
	"strings"
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// TestCreationOrderPlan: a query in creation order reads entities_by_seq in
// its order, with no sort, for every way a page is planned (unfiltered, a
// filter compiled to SQL, a match scan, key bounds, a continuation).
func TestCreationOrderPlan(t *testing.T) {
	ctx := context.Background()
	s, err := openStore(ctx, Options{Dir: t.TempDir(), CreationOrder: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var tb Table
	if err := s.Update(ctx, func(tx *Tx) error {
		if tb, err = tx.CreateTable("a", "t"); err != nil {
			return err
		}
		for _, k := range []string{"p2/c", "p1/b", "p2/a", "p1/a"} {
			pk, rk, _ := strings.Cut(k, "/")
			if err := tx.InsertEntity(tb, &edm.Entity{PartitionKey: pk, RowKey: rk, Properties: []edm.Property{{Name: "N", Value: edm.NewInt32(1)}}}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		filter string
		start  *Key
		want   string
	}{
		{"", nil, "p1/b p1/a p2/c p2/a"},
		{"PartitionKey eq 'p2'", nil, "p2/c p2/a"},
		{"N eq 1", nil, "p1/b p1/a p2/c p2/a"},
		{"Timestamp gt datetime'2000-01-01T00:00:00Z'", nil, "p1/b p1/a p2/c p2/a"},
		{"PartitionKey eq 'p1' and RowKey ge 'a' and N eq 1", nil, "p1/b p1/a"},
		{"", &Key{PK: "p1", RK: "a", Seq: 2}, "p1/a p2/c p2/a"},
		{"N eq 1", &Key{PK: "p2", RK: "c", Seq: 1}, "p2/c p2/a"},
	} {
		q := EntityQuery{Top: 1000, Order: store.OrderCreation, Start: tc.start}
		if tc.filter != "" {
			if q.Filter, err = odata.ParseFilter(tc.filter); err != nil {
				t.Fatal(err)
			}
		}
		var plan []string
		var page EntityPage
		err := s.View(ctx, func(tx *Tx) error {
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
			if err := rows.Close(); err != nil {
				return err
			}
			page, err = tx.QueryEntities(tb, q)
			return err
		})
		if err != nil {
			t.Fatalf("%q: %v", tc.filter, err)
		}
		joined := strings.Join(plan, " | ")
		if !strings.Contains(joined, "USING INDEX entities_by_seq") || strings.Contains(joined, "TEMP B-TREE") {
			t.Errorf("%q from %v: plan %q, want entities_by_seq without a sort", tc.filter, tc.start, joined)
		}
		var got []string
		for _, e := range page.Entities {
			got = append(got, e.PartitionKey+"/"+e.RowKey)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%q from %v: %v, want %s", tc.filter, tc.start, got, tc.want)
		}
	}
}

// TestPageFullFromCache: a page read from the filter cache ends at the
// entity its callback answers store.ErrPageFull for, as one read from
// SQLite does.
func TestPageFullFromCache(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	var tb Table
	if err := s.Update(ctx, func(tx *Tx) (err error) {
		if tb, err = tx.CreateTable("a", "full"); err != nil {
			return err
		}
		for _, rk := range []string{"a", "b", "c", "d"} {
			if err := tx.InsertEntity(tb, &edm.Entity{PartitionKey: "p", RowKey: rk, Properties: []edm.Property{{Name: "N", Value: edm.NewInt32(1)}}}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	f, _ := odata.ParseFilter("N eq 1")
	for _, cached := range []bool{true, false} {
		cacheScans = cached
		before := s.cacheHits.Load()
		var got []string
		var res ScanResult
		err := s.View(ctx, func(tx *Tx) (err error) {
			res, err = tx.ScanEntities(tb, EntityQuery{Top: 1000, Filter: f}, func(e *edm.Entity) error {
				if e.RowKey == "c" {
					return store.ErrPageFull
				}
				got = append(got, strings.Clone(e.RowKey)) // e points into the row buffer
				return nil
			})
			return err
		})
		cacheScans = true
		if err != nil || res.Next == nil || res.Next.RK != "c" || strings.Join(got, " ") != "a b" {
			t.Errorf("cached %v: %v, next %+v, %v; want a b, next c", cached, got, res.Next, err)
		}
		if hits := s.cacheHits.Load() - before; (hits > 0) != cached {
			t.Errorf("cached %v: %d pages from the cache", cached, hits)
		}
	}
}
