package transfer

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/store/sqlite"
	"github.com/tableemu/tableemu/odata/edm"
)

// Export and import of 100,000 entities of about 1 KiB on SQLite (issue
// 40's figures, docs/benchmarks.md "Data in and out"), and the same at
// 10,000, so that the peak heap of the two shows whether it grows with
// the table (it must not: the export streams, the import writes as it
// reads, and the SQLite engine bounds what a transaction records for its
// filter cache, maxCacheOps):
//
//	go test -run '^$' -bench 'Transfer' -benchtime 1x ./emulator/transfer/
//
// Each iteration exports the filled store into a new directory, or
// imports that directory into a new store. Reported besides the time:
// peak-heap-MiB, the largest heap (live and not yet swept objects,
// sampled every 2 ms) above what the process held before; kept-heap-MiB,
// what of it is still live after the run (the SQLite engine's filter cache
// does not keep a table written in one large transaction: it loads it
// when a scan wants it); and on Linux
// peak-rss-MiB, the process's peak resident set (VmHWM, reset before the
// run), which includes SQLite's page cache and everything the Go runtime
// holds.

// benchEntity is entity i of the benchmark: ten properties of every
// common type, about 1,000 bytes as a JSON line (tablebench's insert
// workload writes entities of the same size).
func benchEntity(i int) *edm.Entity {
	g, _ := edm.NewGuid(fmt.Sprintf("c9da6455-213d-42c9-9a79-%012x", i))
	return &edm.Entity{
		PartitionKey: fmt.Sprintf("p%03d", i%100),
		RowKey:       fmt.Sprintf("%08d", i),
		Properties: []edm.Property{
			prop("Name", edm.NewString("customer "+strconv.Itoa(i))),
			prop("Email", edm.NewString(fmt.Sprintf("customer%d@example.com", i))),
			prop("Notes", edm.NewString(strings.Repeat("lorem ipsum dolor sit amet ", 26)[:700])),
			prop("Count", edm.NewInt32(int32(i))),
			prop("Total", edm.NewInt64(int64(i)*1_000_003)),
			prop("Price", edm.NewDouble(float64(i)/7)),
			prop("When", edm.NewDateTime(edm.MinDateTime+int64(i)*edm.TicksPerSecond)),
			prop("ID", g),
			prop("Active", edm.NewBoolean(i%2 == 0)),
			prop("Tag", edm.NewString("tag-"+strconv.Itoa(i%37))),
		},
	}
}

// genTable is a source table of n benchEntities, made as they are read.
func genTable(name string, n int) *Table {
	return &Table{Name: name, Entities: func(fn func(Entity) error) error {
		for i := range n {
			if err := fn(Entity{Entity: benchEntity(i), Where: strconv.Itoa(i)}); err != nil {
				return err
			}
		}
		return nil
	}}
}

func benchStore(b *testing.B) *store.Store {
	st, err := sqlite.Open(ctx, sqlite.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

func BenchmarkTransfer(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		benchTransfer(b, n, benchStore)
	}
}

// BenchmarkTransferPostgres is BenchmarkTransfer's 100,000 on PostgreSQL
// (the throwaway server of pgtest, on the same machine): an import sends
// its rows 1,000 at a time (postgres/pending.go's maxPending).
func BenchmarkTransferPostgres(b *testing.B) {
	benchTransfer(b, 100_000, func(b *testing.B) *store.Store { return engines[1].open(b) })
}

func benchTransfer(b *testing.B, n int, open func(*testing.B) *store.Store) {
	st := open(b)
	tr := newTransfer(st)
	if _, err := tr.Import(ctx, &memSource{[]Account{{Tables: []*Table{genTable("bench", n)}}}}, Options{Account: "a1"}); err != nil {
		b.Fatal(err)
	}
	// The last export is the next sub-benchmark's source: under a
	// directory of the parent's.
	out, dir := b.TempDir(), ""
	b.Run(fmt.Sprintf("export/n=%d", n), func(b *testing.B) {
		for range b.N {
			d, err := os.MkdirTemp(out, "export")
			if err != nil {
				b.Fatal(err)
			}
			dir = d
			measure(b, func() {
				sink, err := NewDirSink(dir, false)
				if err != nil {
					b.Fatal(err)
				}
				if sum, err := tr.Export(ctx, sink, Options{Account: "a1"}); err != nil || sum.Entities != n {
					b.Fatal(sum, err)
				}
				if err := sink.Close(); err != nil {
					b.Fatal(err)
				}
			})
		}
		if fi, err := os.Stat(filepath.Join(dir, "bench.jsonl")); err == nil {
			b.ReportMetric(float64(fi.Size())/float64(n), "bytes/entity")
		}
	})
	b.Run(fmt.Sprintf("import/n=%d", n), func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			target := newTransfer(open(b))
			src, err := OpenDir(dir)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			measure(b, func() {
				if sum, err := target.Import(ctx, src, Options{Account: "a1"}); err != nil || sum.Entities != n {
					b.Fatal(sum, err)
				}
			})
		}
	})
}

// measure runs fn and reports its peak heap above the heap before, and
// on Linux the process's peak resident set while it ran.
func measure(b *testing.B, fn func()) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	// Writing 5 to clear_refs resets VmHWM to the current resident set
	// (proc(5)).
	rssReset := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			peak = max(peak, read())
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(stop)
	wg.Wait()
	peak = max(peak, read())
	b.ReportMetric(float64(peak-min(peak, base))/(1<<20), "peak-heap-MiB")
	runtime.GC()
	b.ReportMetric(float64(int64(read())-int64(base))/(1<<20), "kept-heap-MiB")
	if rssReset {
		if kb := vmHWM(); kb > 0 {
			b.ReportMetric(float64(kb)/1024, "peak-rss-MiB")
		}
	}
}

// vmHWM is the process's peak resident set in KiB, from /proc/self/status.
func vmHWM() int {
	s, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(s), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}
