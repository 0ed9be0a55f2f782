package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/store/sqlite"
	"github.com/tableemu/tableemu/odata/edm"
)

// The store operations behind a point read, an insert and a 100-entity
// $batch, each as the emulator runs them (the table looked up in the same
// transaction), on this engine and on SQLite, for docs/postgres.md:
//
//	go test -run '^$' -bench . -benchtime 2000x ./emulator/store/postgres/
//
// PostgreSQL is the harness's (emulator/store/postgres/pgtest) or TABLEEMU_TEST_POSTGRES.

func benchEngines(b *testing.B, fn func(b *testing.B, s *store.Store)) {
	b.Run("postgres", func(b *testing.B) { fn(b, open(b)) })
	b.Run("sqlite", func(b *testing.B) {
		s, err := sqlite.Open(context.Background(), sqlite.Options{Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		fn(b, s)
	})
}

func benchEntity(pk, rk string) *edm.Entity {
	return &edm.Entity{PartitionKey: pk, RowKey: rk, Properties: []edm.Property{
		{Name: "Name", Value: edm.NewString("a customer of some length")},
		{Name: "Age", Value: edm.NewInt32(42)},
		{Name: "Balance", Value: edm.NewDouble(1234.5)},
		{Name: "Joined", Value: edm.NewDateTime(638000000000000000)},
	}}
}

func benchTable(b *testing.B, s *store.Store) {
	b.Helper()
	if err := s.Update(context.Background(), func(tx *store.Tx) error {
		_, err := tx.CreateTable("acct", "bench")
		return err
	}); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkPointRead(b *testing.B) {
	benchEngines(b, func(b *testing.B, s *store.Store) {
		benchTable(b, s)
		ctx := context.Background()
		if err := s.Update(ctx, func(tx *store.Tx) error {
			t, err := tx.GetTable("acct", "bench")
			if err != nil {
				return err
			}
			for i := range 1000 {
				if err := tx.InsertEntity(t, benchEntity("p", fmt.Sprintf("r%04d", i))); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			err := s.ViewPoint(ctx, func(tx *store.Tx) error {
				t, err := tx.GetTable("acct", "bench")
				if err != nil {
					return err
				}
				_, err = tx.GetEntity(t, "p", fmt.Sprintf("r%04d", i%1000))
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkInsert(b *testing.B) {
	benchEngines(b, func(b *testing.B, s *store.Store) {
		benchTable(b, s)
		ctx := context.Background()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			err := s.Update(ctx, func(tx *store.Tx) error {
				t, err := tx.GetTable("acct", "bench")
				if err != nil {
					return err
				}
				return tx.InsertEntity(t, benchEntity("p", fmt.Sprintf("r%09d", i)))
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkBatch100(b *testing.B) {
	benchEngines(b, func(b *testing.B, s *store.Store) {
		benchTable(b, s)
		ctx := context.Background()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			err := s.Update(ctx, func(tx *store.Tx) error {
				t, err := tx.GetTable("acct", "bench")
				if err != nil {
					return err
				}
				for j := range 100 {
					if err := tx.InsertEntity(t, benchEntity(fmt.Sprintf("p%09d", i), fmt.Sprintf("r%03d", j))); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkQuery1000 reads a page of 1000 entities through a filter that
// every entity passes (so the filter is evaluated in Go on each).
func BenchmarkQuery1000(b *testing.B) {
	benchEngines(b, func(b *testing.B, s *store.Store) {
		benchTable(b, s)
		ctx := context.Background()
		var t store.Table
		if err := s.Update(ctx, func(tx *store.Tx) error {
			var err error
			if t, err = tx.GetTable("acct", "bench"); err != nil {
				return err
			}
			for i := range 1000 {
				if err := tx.InsertEntity(t, benchEntity("p", fmt.Sprintf("r%04d", i))); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		f := mustFilter(b, "Age eq 42")
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			n := 0
			err := s.View(ctx, func(tx *store.Tx) error {
				_, err := tx.ScanEntities(t, store.EntityQuery{Filter: f, Top: 1000}, func(*edm.Entity) error { n++; return nil })
				return err
			})
			if err != nil || n != 1000 {
				b.Fatal(err, n)
			}
		}
	})
}
