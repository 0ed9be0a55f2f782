package sqlite

import (
	"context"
	"fmt"
	"testing"

	"github.com/tableemu/tableemu/odata/edm"
)

// TestFilterCacheLargeTransaction: a transaction that writes more than
// maxCacheOps entities (an import's whole table) records each table it
// wrote once, not each entity; at its commit the cache forgets those
// tables, and scans answer from SQLite, as they do before a table is
// loaded, until a scan has the table loaded again. Tables the
// transaction created, and writes before and after the bound, all count.
func TestFilterCacheLargeTransaction(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	var small, big Table
	ent := func(i int) *edm.Entity {
		return &edm.Entity{PartitionKey: fmt.Sprintf("p%d", i%7), RowKey: fmt.Sprintf("r%06d", i),
			Properties: []edm.Property{{Name: "Tag", Value: edm.NewString(fmt.Sprintf("t%d", i%10))}}}
	}
	err := s.Update(ctx, func(tx *Tx) error {
		var err error
		if small, err = tx.CreateTable("a", "small"); err != nil {
			return err
		}
		for i := range 20 {
			if err := tx.InsertEntity(small, ent(i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.fc.Keys(small.ID); !ok {
		t.Fatal("a table written by this process is not cached")
	}
	ops := 0
	err = s.Update(ctx, func(tx *Tx) error {
		for i := 20; i < 25; i++ { // before the bound
			if err := tx.InsertEntity(small, ent(i)); err != nil {
				return err
			}
		}
		var err error
		if big, err = tx.CreateTable("a", "big"); err != nil {
			return err
		}
		for i := range maxCacheOps + 100 {
			if err := tx.InsertEntity(big, ent(i)); err != nil {
				return err
			}
		}
		for i := 0; i < 3; i++ { // after it
			if err := tx.DeleteEntity(small, ent(i).PartitionKey, ent(i).RowKey); err != nil {
				return err
			}
			if err := tx.PutEntity(small, ent(100+i), 0); err != nil {
				return err
			}
		}
		ops = len(tx.cacheOps)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ops > 3 {
		t.Errorf("the transaction recorded %d changes for the cache, want a Create and a Touch a table", ops)
	}
	for _, tb := range []Table{small, big} {
		if _, ok := s.fc.Keys(tb.ID); ok {
			t.Errorf("table %s is still cached after a transaction wrote it past the bound", tb.Name)
		}
		want, _ := scanAll(t, s, tb, "Tag eq 't3'", 50, false)
		got, _ := scanAll(t, s, tb, "Tag eq 't3'", 50, true)
		if got != want {
			t.Errorf("table %s: a scan with the cache answers\n%s\nwithout\n%s", tb.Name, got, want)
		}
	}
	// A scan that examines enough of big in SQLite (loadMinRows) has it
	// loaded again, and scans then read the cache.
	scanAll(t, s, big, "Tag eq 'none'", 50, true)
	s.fc.WaitLoads()
	if _, ok := s.fc.Keys(big.ID); !ok {
		t.Fatal("big was not loaded again by a scan")
	}
	want, _ := scanAll(t, s, big, "Tag eq 't3'", 50, false)
	got, hits := scanAll(t, s, big, "Tag eq 't3'", 50, true)
	if hits == 0 || got != want {
		t.Errorf("big, loaded: %d pages from the cache; got\n%s\nwant\n%s", hits, got, want)
	}
}
