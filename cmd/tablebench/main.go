// Command tablebench is a load generator for Azure Table storage endpoints:
// tableemu, Azurite, or anything else on loopback. It runs the same
// workloads against each target in turn, repeats rounds, and prints
// throughput, latency percentiles, CPU per operation and peak memory side
// by side, with each target's ratio to the first. See docs/benchmarks.md.
//
//	tablebench -target 'tableemu,1234,DefaultEndpointsProtocol=http;AccountName=…;AccountKey=…;TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;' \
//	           -target 'azurite,5678,…' -workloads insert,point,range -duration 10s -rounds 3
//
// tablebench -isolation measures resets and restores instead (isolation.go);
// tablebench -memory, the memory a server holds at each size (memory.go).
package main

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type config struct {
	duration    time.Duration
	concurrency int
	rounds      int
	pointN      int
	scanN       int
	pointTable  string // where point, update and mixed read and write
}

type targetList []string

func (l *targetList) String() string     { return strings.Join(*l, " ") }
func (l *targetList) Set(s string) error { *l = append(*l, s); return nil }

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "tablebench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	for _, a := range args {
		if a == "-isolation" || a == "--isolation" {
			return runIsolation(args) // isolation.go
		}
		if a == "-memory" || a == "--memory" {
			return runMemory(args) // memory.go
		}
	}
	fs := flag.NewFlagSet("tablebench", flag.ContinueOnError)
	var targets targetList
	fs.Var(&targets, "target", "name,pid,connection-string (repeat; pid may be empty; loopback only)")
	names := fs.String("workloads", "insert,point,batch,range,scan,drain,update,mixed", "workloads to run, in order")
	cfg := &config{}
	fs.DurationVar(&cfg.duration, "duration", 10*time.Second, "how long each throughput measurement runs")
	fs.IntVar(&cfg.concurrency, "concurrency", 8, "concurrent clients for throughput workloads")
	fs.IntVar(&cfg.rounds, "rounds", 3, "rounds; targets alternate within each round")
	fs.IntVar(&cfg.pointN, "point-entities", 10_000, "entities preloaded for point, update and mixed (a multiple of 10000)")
	fs.IntVar(&cfg.scanN, "scan-entities", 100_000, "entities preloaded for range, scan and drain (a multiple of 100000)")
	share := fs.Bool("share-table", false, "point, update and mixed use the scan table (scale runs: one table of -scan-entities)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg.pointTable = pointTable
	if *share {
		cfg.pointTable, cfg.pointN = scanTable, cfg.scanN
	}
	if len(targets) == 0 {
		return errors.New("give at least one -target")
	}
	if cfg.scanN%100000 != 0 {
		return errors.New("-scan-entities must be a multiple of 100000")
	}
	// preload writes 100-entity batches over 100 partitions; the reads
	// draw keys from all of them.
	if cfg.pointN <= 0 || cfg.pointN%10000 != 0 {
		return errors.New("-point-entities must be a multiple of 10000")
	}
	var ts []*target
	for _, spec := range targets {
		t, err := parseTarget(spec)
		if err != nil {
			return err
		}
		ts = append(ts, t)
	}
	all := map[string]workload{}
	for _, w := range workloads() {
		all[w.name] = w
	}
	var results []result
	failed := int64(0)
	for _, name := range strings.Split(*names, ",") {
		w, ok := all[name]
		if !ok {
			return fmt.Errorf("no workload %q", name)
		}
		for _, t := range ts {
			fmt.Fprintf(os.Stderr, "tablebench: %s: preparing %s\n", w.name, t.name)
			if err := w.setup(t, cfg); err != nil {
				return fmt.Errorf("%s on %s: %w", w.name, t.name, err)
			}
		}
		// Targets alternate round by round, so a drift in the machine's
		// load affects them alike.
		per := make([][]sample, len(ts))
		for round := 0; round < cfg.rounds; round++ {
			for i, t := range ts {
				s := measure(t, w, cfg, round)
				fmt.Fprintf(os.Stderr, "tablebench: %s round %d %s: %.1f %s/s, %d errors\n", w.name, round+1, t.name, s.rate, w.unit, s.errors)
				if s.firstErr != nil {
					fmt.Fprintf(os.Stderr, "tablebench: FIRST ERROR on %s %s: %v\n", t.name, w.name, s.firstErr)
				}
				per[i] = append(per[i], s)
				failed += s.errors
			}
		}
		for i, t := range ts {
			results = append(results, summarize(w, t, per[i]))
		}
	}
	printTable(os.Stdout, results, ts, cfg)
	if failed > 0 {
		fmt.Printf("\n!!! %d REQUESTS FAILED: the figures above are not valid !!!\n", failed)
		return fmt.Errorf("%d requests failed", failed)
	}
	return nil
}

// sample is one round of one workload on one target.
type sample struct {
	rate      float64 // units per second
	latencies []time.Duration
	errors    int64
	firstErr  error
	cpu       time.Duration // server CPU used during the round (with a pid)
	ops       int64
}

func measure(t *target, w workload, cfg *config, round int) sample {
	conc, dur := cfg.concurrency, cfg.duration
	if w.serial {
		conc = 1
	}
	var seq atomic.Int64
	// Fresh keys for every round of every run: a target that keeps its
	// data between runs must not see an insert collide with an old one.
	seq.Store(int64(round+1)<<40 | time.Now().UnixNano()%(1<<39))
	var units, ops, errs atomic.Int64
	var mu sync.Mutex
	var lats []time.Duration
	var firstErr error
	cpu0 := t.cpu()
	start := time.Now()
	deadline := start.Add(dur)
	var wg sync.WaitGroup
	for c := 0; c < conc; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(round), uint64(c)))
			var local []time.Duration
			// Serial workloads run at least once however long they take.
			for n := 0; n == 0 || time.Now().Before(deadline); n++ {
				t0 := time.Now()
				u, err := w.op(t, cfg, r, &seq)
				local = append(local, time.Since(t0))
				ops.Add(1)
				if err != nil {
					errs.Add(1)
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				units.Add(int64(u))
			}
			mu.Lock()
			lats = append(lats, local...)
			mu.Unlock()
		}(c)
	}
	wg.Wait()
	elapsed := time.Since(start)
	s := sample{rate: float64(units.Load()) / elapsed.Seconds(), latencies: lats, errors: errs.Load(), firstErr: firstErr, ops: ops.Load()}
	if cpu1 := t.cpu(); cpu0 >= 0 && cpu1 >= 0 {
		s.cpu = cpu1 - cpu0
	}
	return s
}

// result is a workload's summary on one target over all rounds.
type result struct {
	workload, unit, target string
	rate                   float64 // median of the rounds
	p50, p99               time.Duration
	cpuPerOp               time.Duration
	peakRSS, anon          int64 // bytes, -1 unknown
	errors                 int64
}

func summarize(w workload, t *target, ss []sample) result {
	r := result{workload: w.name, unit: w.unit, target: t.name, peakRSS: -1, anon: -1}
	var rates []float64
	var lats []time.Duration
	var cpu time.Duration
	var ops int64
	for _, s := range ss {
		rates = append(rates, s.rate)
		lats = append(lats, s.latencies...)
		cpu += s.cpu
		ops += s.ops
		r.errors += s.errors
	}
	sort.Float64s(rates)
	r.rate = rates[len(rates)/2]
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	if len(lats) > 0 {
		r.p50 = lats[len(lats)/2]
		r.p99 = lats[min(len(lats)-1, len(lats)*99/100)]
	}
	if t.pid > 0 && ops > 0 {
		r.cpuPerOp = cpu / time.Duration(ops)
	}
	r.peakRSS, r.anon = procMem(t.pid)
	return r
}
