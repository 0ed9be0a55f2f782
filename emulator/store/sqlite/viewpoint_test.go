package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/tableemu/tableemu/odata/edm"
)

// TestViewPointMapsWhenQuiet: ViewPoint reads without the memory map while
// writes are coming and with it once none has come for quietPeriod; every
// read sees the latest commit either way.
func TestViewPointMapsWhenQuiet(t *testing.T) {
	s := open(t)
	s.quietPeriod = 200 * time.Millisecond
	ctx := context.Background()
	var tb Table
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Update(ctx, func(tx *Tx) error { var err error; tb, err = tx.CreateTable("a", "t"); return err }))
	put := func(v string) {
		t.Helper()
		must(s.Update(ctx, func(tx *Tx) error {
			return tx.PutEntity(tb, &edm.Entity{PartitionKey: "p", RowKey: "r", Properties: []edm.Property{{Name: "V", Value: edm.NewString(v)}}}, 0)
		}))
	}
	read := func() (mapped bool, v string) {
		t.Helper()
		must(s.ViewPoint(ctx, func(tx *Tx) error {
			var size int64
			if err := tx.queryRow("PRAGMA mmap_size").Scan(&size); err != nil {
				return err
			}
			e, err := tx.GetEntity(tb, "p", "r")
			if err != nil {
				return err
			}
			val, _ := e.Get("V")
			mapped, v = size > 0, val.S
			return nil
		}))
		return mapped, v
	}
	for i, v := range []string{"one", "two"} {
		put(v)
		if mapped, got := read(); mapped || got != v {
			t.Fatalf("%d: right after a commit: mapped %v, read %q; want unmapped, %q", i, mapped, got, v)
		}
		time.Sleep(300 * time.Millisecond)
		if mapped, got := read(); !mapped || got != v {
			t.Fatalf("%d: after a quiet period: mapped %v, read %q; want mapped, %q", i, mapped, got, v)
		}
	}
}
