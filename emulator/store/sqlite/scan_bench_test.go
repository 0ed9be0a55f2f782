package sqlite

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// scanBenchStore opens a store holding tablebench's scan table: n ~1 KiB
// entities in 100 partitions, with Name, Age, Score, Flag, Pad and Tag
// (cmd/tablebench makeEntity). TABLEEMU_SCAN_BENCH_DIR keeps the database
// between runs; TABLEEMU_SCAN_BENCH_N sets n (default 100,000).
func scanBenchStore(b *testing.B) (*Store, Table, int) {
	b.Helper()
	n := 100_000
	if v := os.Getenv("TABLEEMU_SCAN_BENCH_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	dir := os.Getenv("TABLEEMU_SCAN_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	} else {
		dir = fmt.Sprintf("%s/%d", dir, n)
	}
	ctx := context.Background()
	s, err := openStore(ctx, Options{Dir: dir, NoAutoIndex: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	var t Table
	err = s.View(ctx, func(tx *Tx) error {
		t, err = tx.GetTable("a", "scan")
		return err
	})
	if err == nil {
		return s, t, n
	}
	err = s.Update(ctx, func(tx *Tx) error {
		t, err = tx.CreateTable("a", "scan")
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	pad := strings.Repeat("x", 800)
	const chunk = 10_000
	for start := 0; start < n; start += chunk {
		err := s.Update(ctx, func(tx *Tx) error {
			for i := start; i < start+chunk && i < n; i++ {
				e := &edm.Entity{PartitionKey: fmt.Sprintf("p%03d", i%100), RowKey: fmt.Sprintf("r%07d", i),
					Properties: []edm.Property{
						{Name: "Name", Value: edm.NewString("name" + strconv.Itoa(i))},
						{Name: "Age", Value: edm.NewInt32(int32(i % 100))},
						{Name: "Score", Value: edm.NewDouble(float64(i) + 0.5)},
						{Name: "Flag", Value: edm.NewBoolean(i%2 == 0)},
						{Name: "Pad", Value: edm.NewString(pad)},
						{Name: "Tag", Value: edm.NewString("t" + strconv.Itoa(i%1000))},
					}}
				if err := tx.InsertEntity(t, e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return s, t, n
}

// BenchmarkFirstScan pages through a sparse filter on a non-key property
// with no automatic index: every entity of the table is examined, as on a
// table's first scans (issue 16, "the first scan"), from the filter cache
// and from SQLite. ns/op is one whole scan; cpu-ns/row is the process's
// CPU time per entity examined, which moves less than wall time on a
// shared machine.
func BenchmarkFirstScan(b *testing.B) {
	s, t, n := scanBenchStore(b)
	s.loadTable(t.ID) // a table from an earlier run (TABLEEMU_SCAN_BENCH_DIR)
	s.fc.WaitLoads()
	if _, ok := s.fc.Keys(t.ID); !ok {
		b.Fatal("the table is not in the filter cache")
	}
	for _, from := range []string{"cache", "sqlite"} {
		b.Run(from, func(b *testing.B) {
			cacheScans = from == "cache"
			defer func() { cacheScans = true }()
			firstScans(b, s, t, n)
		})
	}
}

func firstScans(b *testing.B, s *Store, t Table, n int) {
	for _, tc := range []struct {
		name, filter string
		want         int
	}{
		{"eq-string", "Tag eq 't7'", n / 1000},
		{"gt-double", fmt.Sprintf("Score gt %d.0", n-101), 101},
		{"and-or", "Age eq 7 and (Tag eq 't7' or Flag eq false)", n / 100},
	} {
		f, err := odata.ParseFilter(tc.filter)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			cpu0 := cpuNow()
			for i := 0; i < b.N; i++ {
				got := 0
				var start *Key
				for {
					var res ScanResult
					err := s.View(context.Background(), func(tx *Tx) error {
						var err error
						res, err = tx.ScanEntities(t, EntityQuery{Filter: f, Top: 1000, Start: start}, func(*edm.Entity) error {
							got++
							return nil
						})
						return err
					})
					if err != nil {
						b.Fatal(err)
					}
					if res.Next == nil {
						break
					}
					start = res.Next
				}
				if got != tc.want {
					b.Fatalf("%d entities, want %d", got, tc.want)
				}
			}
			b.ReportMetric(float64(cpuNow()-cpu0)/float64(b.N)/float64(n), "cpu-ns/row")
		})
	}
}

// BenchmarkRawScan is the floor under BenchmarkFirstScan: SQLite
// stepping through every row of the same table in key order, reading the
// keys alone, then the props column too, with no filter.
func BenchmarkRawScan(b *testing.B) {
	s, t, n := scanBenchStore(b)
	for _, tc := range []struct{ name, cols string }{{"keys", "pk, rk, ts"}, {"props", "pk, rk, ts, props"}} {
		q := "SELECT " + tc.cols + " FROM entities WHERE tid = ? ORDER BY pk, rk"
		b.Run(tc.name, func(b *testing.B) {
			cpu0 := cpuNow()
			for i := 0; i < b.N; i++ {
				err := s.View(context.Background(), func(tx *Tx) error {
					rows, err := tx.query(q, t.ID)
					if err != nil {
						return err
					}
					defer rows.Close()
					for rows.Next() {
					}
					return rows.Close()
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuNow()-cpu0)/float64(b.N)/float64(n), "cpu-ns/row")
		})
	}
}

// cpuNow is the process's CPU time (user and system) in nanoseconds: on a
// shared machine it moves less than wall time.
func cpuNow() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkIndexedCount measures a sparse filter read through an automatic
// index, without and with the service's count (CountScanned, for insights
// and throttling): "cached" repeats the count on connections that saw no
// commit, "count" is the count query itself, what the first query on each
// connection pays.
func BenchmarkIndexedCount(b *testing.B) {
	s, t, n := scanBenchStore(b)
	ctx := context.Background()
	f, err := odata.ParseFilter("Tag eq 't7'")
	if err != nil {
		b.Fatal(err)
	}
	if err := s.IndexNow(ctx, t, f); err != nil {
		b.Fatal(err)
	}
	// The index must not outlive the benchmark in a kept database: the
	// first-scan benchmarks would read through it.
	defer s.Update(ctx, func(tx *Tx) error { return tx.dropIndexes(t.ID) })
	for _, tc := range []struct {
		name  string
		count bool
	}{{"indexed", false}, {"cached", true}} {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				err := s.View(ctx, func(tx *Tx) error {
					page, err := tx.QueryEntities(t, EntityQuery{Filter: f, Top: 1000, CountScanned: tc.count})
					if err == nil && (page.Index == "" || len(page.Entities) != n/1000 || tc.count && page.Scanned != n) {
						err = fmt.Errorf("index %q, %d entities, scanned %d", page.Index, len(page.Entities), page.Scanned)
					}
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("count", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			err := s.View(ctx, func(tx *Tx) error {
				var got int
				err := tx.queryRow("SELECT count(*) FROM entities WHERE tid = ?", t.ID).Scan(&got)
				if err == nil && got != n {
					err = fmt.Errorf("%d", got)
				}
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
