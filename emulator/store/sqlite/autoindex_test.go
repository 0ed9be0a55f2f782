package sqlite

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// TestAutomaticIndex: a sparse filter that keeps scanning a large table gets
// an index after autoIndexScans scans; later pages read through it (the
// query plan says so), give the same answer, and the index goes with the
// table.
func TestAutomaticIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 25,000 entities")
	}
	s := open(t)
	ctx := context.Background()
	var tb Table
	const n = autoIndexMinRows + 5000
	err := s.Update(ctx, func(tx *Tx) error {
		var err error
		if tb, err = tx.CreateTable("a", "big"); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			e := &edm.Entity{PartitionKey: fmt.Sprintf("p%02d", i%50), RowKey: fmt.Sprintf("r%06d", i),
				Properties: []edm.Property{{Name: "Tag", Value: edm.NewString(fmt.Sprintf("t%d", i%1000))}, {Name: "N", Value: edm.NewInt32(int32(i))}}}
			if err := tx.InsertEntity(tb, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	query := func(filter string) EntityPage {
		t.Helper()
		f, err := odata.ParseFilter(filter)
		if err != nil {
			t.Fatal(err)
		}
		var page EntityPage
		err = s.View(ctx, func(tx *Tx) error {
			page, err = tx.QueryEntities(tb, EntityQuery{Filter: f, Top: 1000})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return page
	}
	for i := 0; i < autoIndexScans; i++ {
		p := query("Tag eq 't7'")
		if p.Index != "" || p.Scanned != n || len(p.Entities) != n/1000 {
			t.Fatalf("scan %d: index %q, scanned %d, %d entities", i, p.Index, p.Scanned, len(p.Entities))
		}
	}
	s.autoIdx.wg.Wait()
	p := query("Tag eq 't7'")
	if p.Index == "" || len(p.Entities) != n/1000 || p.Entities[0].RowKey != "r000007" {
		t.Fatalf("after indexing: index %q, %d entities", p.Index, len(p.Entities))
	}
	// Another class of literal needs its own index.
	if p := query("Tag eq 5"); p.Index != "" {
		t.Fatalf("an Int32 literal used the String index %s", p.Index)
	}
	// The plan searches the index.
	err = s.View(ctx, func(tx *Tx) error {
		f, _ := odata.ParseFilter("Tag eq 't7' and N gt 100")
		pl, err := tx.plan(tb, EntityQuery{Filter: f, Top: 1000})
		if err != nil {
			return err
		}
		var detail string
		var id, parent, notused int
		if err := tx.queryRow("EXPLAIN QUERY PLAN "+pl.sql, pl.args...).Scan(&id, &parent, &notused, &detail); err != nil {
			return err
		}
		if !strings.HasPrefix(detail, "SEARCH entities USING INDEX "+pl.index) {
			t.Errorf("plan %q", detail)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Deleting the table drops its indexes.
	if err := s.Update(ctx, func(tx *Tx) error { return tx.DeleteTable("a", "big") }); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := s.testRow(`SELECT count(*) FROM sqlite_master WHERE name LIKE 'auto\_%' ESCAPE '\'`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d automatic indexes left after the table was deleted (%v)", left, err)
	}
}

func TestIndexNames(t *testing.T) {
	for _, k := range []indexKey{{1, 's', "Tag"}, {42, 'n', "Ünï_名"}, {7, 'N', "_x"}} {
		got, ok := parseIndexName(k.name())
		if !ok || got != k {
			t.Errorf("%v -> %s -> %v", k, k.name(), got)
		}
	}
	for _, bad := range []string{"auto", "auto_x_s_54", "auto_1_ss_54", "other_1_s_54", "auto_1_s_zz"} {
		if _, ok := parseIndexName(bad); ok {
			t.Errorf("%s parsed", bad)
		}
	}
}
