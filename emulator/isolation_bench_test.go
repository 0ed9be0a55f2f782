package emulator

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata/edm"
)

// BenchmarkIsolation times Reset and Restore (isolation/isolation.go) of
// an account of n ~1 KiB entities (tablebench's shape) in 10 tables, on disk:
//
//   - reset: the account back to empty;
//   - restore-after-test: a restore after a test wrote 10 entities,
//     replaced 10 and deleted 10 (the usual per-test restore);
//   - restore-after-reset: a restore of the same snapshot after a reset,
//     which takes the parked tables back (store/sqlite/gc.go);
//   - restore-whole: a restore that copies every table: from the state of
//     another snapshot (an empty one);
//   - collect: the background deletion of a whole copy made garbage (here
//     by restoring the empty snapshot), which takes the writer in chunks
//     afterwards (store/sqlite/gc.go).
//
// Between iterations the account is put back and the garbage collected,
// with the timer stopped. docs/benchmarks.md ("Test isolation") quotes it:
//
//	go test ./emulator -run '^$' -bench Isolation -benchtime 20x
func BenchmarkIsolation(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1_000, 10_000, 100_000} {
		s, err := New(Config{Location: b.TempDir(), Silent: true})
		if err != nil {
			b.Fatal(err)
		}
		loadIsolationBench(b, s, n)
		for _, name := range []string{"fixtures", "empty"} {
			if _, err := s.Snapshot(ctx, DevAccount, name); err != nil {
				b.Fatal(err)
			}
			if err := s.Reset(ctx, DevAccount); err != nil {
				b.Fatal(err)
			}
		}
		settle := func() {
			if err := s.store.CollectGarbage(ctx); err != nil {
				b.Fatal(err)
			}
		}
		restore := func(name string) {
			if _, err := s.Restore(ctx, DevAccount, name); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("reset/%d", n), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				restore("fixtures")
				settle()
				b.StartTimer()
				if err := s.Reset(ctx, DevAccount); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("restore-after-test/%d", n), func(b *testing.B) {
			restore("fixtures")
			for i := range b.N {
				b.StopTimer()
				settle()
				isolationBenchTest(b, s, i)
				b.StartTimer()
				restore("fixtures")
			}
		})
		b.Run(fmt.Sprintf("restore-after-reset/%d", n), func(b *testing.B) {
			for i := range b.N {
				b.StopTimer()
				restore("fixtures")
				isolationBenchTest(b, s, i)
				if err := s.Reset(ctx, DevAccount); err != nil {
					b.Fatal(err)
				}
				settle()
				b.StartTimer()
				restore("fixtures")
			}
		})
		b.Run(fmt.Sprintf("restore-whole/%d", n), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				restore("empty")
				settle()
				b.StartTimer()
				restore("fixtures")
			}
		})
		b.Run(fmt.Sprintf("collect/%d", n), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				restore("fixtures")
				settle()
				restore("empty")
				b.StartTimer()
				settle()
			}
		})
		s.Close()
	}
}

// loadIsolationBench writes n entities into 10 tables of devstoreaccount1.
func loadIsolationBench(b *testing.B, s *Server, n int) {
	b.Helper()
	pad := strings.Repeat("x", 800)
	for tno := range 10 {
		err := s.store.Update(context.Background(), func(tx *store.Tx) error {
			tb, err := tx.CreateTable(DevAccount, "table"+strconv.Itoa(tno))
			if err != nil {
				return err
			}
			for i := tno; i < n; i += 10 {
				e := &edm.Entity{PartitionKey: fmt.Sprintf("p%03d", i%100), RowKey: fmt.Sprintf("r%07d", i), Properties: []edm.Property{
					{Name: "Name", Value: edm.NewString("name" + strconv.Itoa(i))},
					{Name: "Age", Value: edm.NewInt32(int32(i % 100))},
					{Name: "Pad", Value: edm.NewString(pad)},
				}}
				if err := tx.InsertEntity(tb, e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// isolationBenchTest is what a test does to the account between restores:
// 10 new entities, 10 replaced, 10 deleted, in table0.
func isolationBenchTest(b *testing.B, s *Server, round int) {
	b.Helper()
	err := s.store.Update(context.Background(), func(tx *store.Tx) error {
		tb, err := tx.GetTable(DevAccount, "table0")
		if err != nil {
			return err
		}
		for i := range 10 {
			e := &edm.Entity{PartitionKey: "new", RowKey: fmt.Sprintf("%d-%d", round, i), Timestamp: time.Now().UnixNano()}
			if err := tx.InsertEntity(tb, e); err != nil {
				return err
			}
			k := i * 10 // table0 holds the entities whose number is a multiple of 10
			if err := tx.PutEntity(tb, &edm.Entity{PartitionKey: fmt.Sprintf("p%03d", k%100), RowKey: fmt.Sprintf("r%07d", k)}, 0); err != nil {
				return err
			}
			k += 100
			if err := tx.DeleteEntity(tb, fmt.Sprintf("p%03d", k%100), fmt.Sprintf("r%07d", k)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
