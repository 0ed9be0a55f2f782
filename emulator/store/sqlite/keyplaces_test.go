package sqlite

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// TestFilterCacheKeyPlaces: a scan from the filter cache gives where each
// entity's keys stand (store.DecodeEntityProps) as a scan of SQLite does,
// for an entity whose values all fit the cache's slim form and for one
// with a value it leaves out (read back from SQLite).
func TestFilterCacheKeyPlaces(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	var tb Table
	if err := s.Update(ctx, func(tx *Tx) (err error) { tb, err = tx.CreateTable("a", "kp"); return }); err != nil {
		t.Fatal(err)
	}
	var err error
	places := []edm.KeyPlaces{{}, {PK: 2, RK: 2}, {PK: 1, RK: 2}, {RKFirst: true}, {PK: 2, RK: 2, RKFirst: true}}
	err = s.Update(ctx, func(tx *Tx) error {
		for i, at := range places {
			for _, big := range []bool{false, true} {
				text := "short"
				if big {
					text = strings.Repeat("long", 40)
				}
				e := &edm.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%d-%v", i, big), Keys: at, Properties: []edm.Property{
					{Name: "V", Value: edm.NewInt32(int32(i))}, {Name: "T", Value: edm.NewString(text)}}}
				if err := tx.InsertEntity(tb, e); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := odata.ParseFilter("V ge 0")
	if err != nil {
		t.Fatal(err)
	}
	render := func(cached bool) (string, int64) {
		cacheScans = cached
		defer func() { cacheScans = true }()
		before := s.cacheHits.Load()
		var b strings.Builder
		err := s.View(ctx, func(tx *Tx) error {
			page, err := tx.QueryEntities(tb, EntityQuery{Filter: f, Top: 1000})
			for _, e := range page.Entities {
				fmt.Fprintf(&b, "%s %+v\n", fingerprint(e), e.Keys)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return b.String(), s.cacheHits.Load() - before
	}
	got, hits := render(true)
	want, _ := render(false)
	if got != want || hits == 0 {
		t.Fatalf("from the cache (%d hits):\n%s\nfrom SQLite:\n%s", hits, got, want)
	}
	for i, at := range places {
		for _, big := range []bool{false, true} {
			if line := fmt.Sprintf("p|%d-%v|V=Edm.Int32:%d|", i, big, i); !strings.Contains(want, line) ||
				!strings.Contains(strings.SplitAfter(want[strings.Index(want, line):], "\n")[0], fmt.Sprintf(" %+v\n", at)) {
				t.Errorf("%s: not read back with its keys at %+v:\n%s", line, at, want)
			}
		}
	}
}
