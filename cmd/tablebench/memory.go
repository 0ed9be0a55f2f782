package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tableemu/tableemu/emulator"
)

// tablebench -memory: the memory a server holds while it is loaded with n
// entities and then read, side by side with Azurite (docs/benchmarks.md,
// "Memory"). For each size it starts each server afresh (tableemu on a
// data directory of its own with its default flags, Azurite in memory),
// loads n entities of tablebench's ~1 KiB shape into one table of 100
// partitions (the scan table, in batches of 100), then runs the point,
// range and scan workloads over that table for -duration each, and stops
// the server. A sampler reads the server's /proc/PID/status every 0.2 s
// throughout; the table gives the peak resident set (VmHWM), the peak of
// private memory (RssAnon) and private memory at the end.
//
// A server that fails to load a size, or takes longer than -timeout, is
// stopped; the table says how many entities it held and when it stopped
// (Azurite keeps everything in the JavaScript heap). tableemu must load
// every size, and its peak private memory must stay within its cache's
// budget plus emulator.MemoryAllowance: otherwise tablebench fails.

// memWatch samples a process's memory every sampleEvery.
type memWatch struct {
	peakAnon, anon atomic.Int64 // bytes
	hwm            atomic.Int64 // VmHWM as last read: the peak resident set
	stop, done     chan struct{}
}

const sampleEvery = 200 * time.Millisecond

func watchMemory(pid int) *memWatch {
	w := &memWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(sampleEvery)
		defer tick.Stop()
		for {
			// A process that died and is not yet reaped has a status
			// without these lines.
			if st, ok := procStatus(pid); ok && st["VmHWM"] > 0 {
				w.anon.Store(st["RssAnon"])
				w.peakAnon.Store(max(w.peakAnon.Load(), st["RssAnon"]))
				w.hwm.Store(st["VmHWM"])
			}
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

func (w *memWatch) close() { close(w.stop); <-w.done }

// procStatus reads the kB fields of /proc/PID/status, in bytes.
func procStatus(pid int) (map[string]int64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, false
	}
	m := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if v, found := strings.CutSuffix(strings.TrimSpace(v), " kB"); ok && found {
			if kb, err := strconv.ParseInt(v, 10, 64); err == nil {
				m[k] = kb << 10
			}
		}
	}
	return m, true
}

// memTotal is the machine's memory, from /proc/meminfo.
func memTotal() string {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	return "?"
}

// memRow is one server at one size.
type memRow struct {
	n                     int
	server                string
	load, loadCPU         time.Duration // loadCPU: the server's CPU time until loaded, -1 unknown
	loaded                int64
	peakRSS, peak, anon   int64
	reads, result         string
	loadFailed, readFails bool
}

func runMemory(args []string) error {
	_, err := memoryRows(args)
	return err
}

// memoryRows is runMemory, which also returns its rows (the benchmark in
// memory_test.go reports them).
func memoryRows(args []string) ([]memRow, error) {
	fs := flag.NewFlagSet("tablebench -memory", flag.ContinueOnError)
	fs.Bool("memory", true, "")
	te := fs.String("tableemu", "", "the tableemu binary")
	az := fs.String("azurite", "", "Azurite's azurite-table (from npm i azurite@3.37.0); none: tableemu alone")
	sizes := fs.String("sizes", "100000,1000000,10000000", "entities loaded, each a multiple of 100000")
	dur := fs.Duration("duration", 10*time.Second, "how long each read workload runs")
	timeout := fs.Duration("timeout", time.Hour, "longest a server may take to load one size; it is stopped then")
	cache := fs.String("cacheSize", "", "tableemu's --cacheSize in MiB (none: its default; 0: no cache)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if *te == "" {
		return nil, errors.New("give -tableemu")
	}
	budget := emulator.DefaultCacheSize
	var teArgs []string
	if *cache != "" {
		var err error
		if budget, err = strconv.Atoi(*cache); err != nil || budget < 0 {
			return nil, fmt.Errorf("-cacheSize %q: want MiB", *cache)
		}
		teArgs = []string{"--cacheSize", *cache}
	}
	bound := int64(budget)<<20 + emulator.MemoryAllowance
	work, err := os.MkdirTemp("", "tablebench-memory")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)

	start := time.Now()
	var rows []memRow
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 || n%100000 != 0 {
			return nil, fmt.Errorf("-sizes: %q is not a multiple of 100000", f)
		}
		servers := []*server{{name: "tableemu", bin: *te, args: teArgs}}
		if *az != "" {
			servers = append(servers, &server{name: "Azurite", bin: *az, args: []string{"--inMemoryPersistence"}})
		}
		for _, s := range servers {
			s.port = freePort()
			if s.name == "tableemu" {
				s.dir = filepath.Join(work, fmt.Sprintf("%s-%d", s.name, n))
			}
			row, err := s.memoryRun(n, *dur, *timeout)
			if err != nil {
				return nil, err
			}
			rows = append(rows, row)
			fmt.Fprintf(os.Stderr, "tablebench: %d entities, %s: %s\n", n, s.name, row.result)
		}
	}

	host, _ := os.Hostname()
	fmt.Printf("\ntablebench -memory: entities of %d bytes of JSON in one table of 100 partitions, then point, range and scan reads, %s each, 8 clients; sampled every %s; %s, %d CPUs, %s, %s of memory; %s to %s\n\n",
		len(makeEntity("p000", 0).body), *dur, sampleEvery, host, runtime.NumCPU(), cpuModel(), memTotal(),
		start.Format("2006-01-02 15:04"), time.Now().Format("15:04"))
	fmt.Println("| entities | server | load | peak resident (VmHWM) | peak private (RssAnon) | private at the end | reads | result |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	var failed []string
	for _, r := range rows {
		load := fmt.Sprintf("%.0f s (%.0f/s", r.load.Seconds(), float64(r.loaded)/r.load.Seconds())
		if r.loadCPU >= 0 {
			load += fmt.Sprintf(", CPU %.0f s", r.loadCPU.Seconds())
		}
		load += ")"
		fmt.Printf("| %d | %s | %s | %s | %s | %s | %s | %s |\n", r.n, r.server, load, mib(r.peakRSS), mib(r.peak), mib(r.anon), r.reads, r.result)
		if r.server != "tableemu" {
			continue
		}
		switch {
		case r.loadFailed || r.readFails:
			failed = append(failed, fmt.Sprintf("tableemu at %d entities: %s", r.n, r.result))
		case r.peak > bound:
			failed = append(failed, fmt.Sprintf("tableemu at %d entities: peak private memory %s, over the cache's %d MiB plus %d MiB",
				r.n, mib(r.peak), budget, emulator.MemoryAllowance>>20))
		}
	}
	fmt.Printf("\ntableemu's bound: --cacheSize %d MiB + %d MiB = %s of private memory\n", budget, emulator.MemoryAllowance>>20, mib(bound))
	if len(failed) > 0 {
		return rows, errors.New(strings.Join(failed, "; "))
	}
	return rows, nil
}

// memoryRun starts s on an empty directory, loads n entities, reads them
// and stops it, sampling its memory all along.
func (s *server) memoryRun(n int, dur, timeout time.Duration) (memRow, error) {
	row := memRow{n: n, server: s.name}
	if _, err := s.start(); err != nil {
		return row, err
	}
	pid := s.cmd.Process.Pid
	w := watchMemory(pid)
	stopped := false
	defer func() {
		if !stopped {
			s.stop()
		}
	}()
	t, err := parseTarget(fmt.Sprintf("%s,%d,%s", s.name, pid, s.connectionString()))
	if err != nil {
		return row, err
	}
	t0 := time.Now()
	done := make(chan error, 1)
	go func() { done <- t.preload(scanTable, n) }()
	select {
	case err = <-done:
	case <-time.After(timeout):
		// Every request still waiting fails once the server is gone.
		s.cmd.Process.Kill()
		<-done
		err = fmt.Errorf("not loaded within %s (-timeout): stopped", timeout)
	}
	row.load, row.loaded = time.Since(t0), t.loaded.Load()
	row.loadCPU = procCPU(pid)
	finish := func() {
		w.close()
		row.peakRSS, row.peak, row.anon = w.hwm.Load(), w.peakAnon.Load(), w.anon.Load()
	}
	if err != nil {
		finish()
		s.stop()
		stopped = true
		row.loadFailed = true
		row.result = fmt.Sprintf("stopped at %d entities after %.0f s: %.200s", row.loaded, row.load.Seconds(), err)
		return row, nil
	}
	cfg := &config{duration: dur, concurrency: 8, rounds: 1, pointN: n, scanN: n, pointTable: scanTable}
	var reads []string
	all := map[string]workload{}
	for _, w := range workloads() {
		all[w.name] = w
	}
	var errs int64
	for _, name := range []string{"point", "range", "scan"} {
		w := all[name]
		smp := measure(t, w, cfg, 0)
		errs += smp.errors
		if w.unit == "scans" {
			reads = append(reads, fmt.Sprintf("%s %s", name, round(time.Duration(float64(time.Second)/smp.rate))))
		} else {
			reads = append(reads, fmt.Sprintf("%s %.0f/s", name, smp.rate))
		}
		if smp.firstErr != nil {
			fmt.Fprintf(os.Stderr, "tablebench: %s on %s: %v\n", name, s.name, smp.firstErr)
		}
	}
	finish()
	row.reads = strings.Join(reads, ", ")
	row.result = "ok"
	if errs > 0 {
		row.readFails = true
		row.result = fmt.Sprintf("%d reads failed", errs)
	}
	return row, nil
}
