package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkPrivateMemory is tablebench -memory on tableemu alone, built
// from this checkout, at TABLEBENCH_MEMORY_SIZES entities (default ten
// million; a comma-separated list of multiples of 100,000): it loads
// them, reads them, and fails when tableemu's private memory passes
// --cacheSize (its default) plus emulator.MemoryAllowance at any moment
// (sampled every 0.2 s). It reports the peaks for the last size. Ten
// million entities take 15 minutes and 11 GB of disk on 2 cores:
//
//	go test ./cmd/tablebench -run '^$' -bench PrivateMemory -benchtime 1x -timeout 2h
func BenchmarkPrivateMemory(b *testing.B) {
	sizes := os.Getenv("TABLEBENCH_MEMORY_SIZES")
	if sizes == "" {
		sizes = "10000000"
	}
	bin := filepath.Join(b.TempDir(), "tableemu")
	build := exec.Command("go", "build", "-o", bin, "../tableemu")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	b.ResetTimer()
	for range b.N {
		rows, err := memoryRows([]string{"-memory", "-tableemu", bin, "-sizes", sizes})
		if err != nil {
			b.Fatal(err)
		}
		last := rows[len(rows)-1]
		b.ReportMetric(float64(last.peak)/(1<<20), "peak-private-MiB")
		b.ReportMetric(float64(last.peakRSS)/(1<<20), "peak-RSS-MiB")
	}
}
