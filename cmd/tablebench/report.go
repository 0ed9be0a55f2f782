package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

func printTable(w io.Writer, rs []result, ts []*target, cfg *config) {
	host, _ := os.Hostname()
	fmt.Fprintf(w, "\ntablebench: %d rounds, %s each, %d clients; %d point entities, %d scan entities; %s, %d CPUs, %s\n\n",
		cfg.rounds, cfg.duration, cfg.concurrency, cfg.pointN, cfg.scanN, host, runtime.NumCPU(), cpuModel())
	fmt.Fprintln(w, "| workload | target | rate | ratio | p50 | p99 | server CPU/op | peak RSS | private RSS | errors |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	first := map[string]float64{}
	for _, r := range rs {
		if _, ok := first[r.workload]; !ok {
			first[r.workload] = r.rate
		}
		ratio := "—"
		if base := first[r.workload]; base > 0 && r.target != ts[0].name {
			ratio = fmt.Sprintf("%.2f×", r.rate/base)
		}
		rate := fmt.Sprintf("%.0f %s/s", r.rate, r.unit)
		if r.unit == "scans" {
			rate = fmt.Sprintf("%.3f s/scan", 1/r.rate)
			if base := first[r.workload]; base > 0 && r.target != ts[0].name {
				ratio = fmt.Sprintf("%.2f× the time", base/r.rate)
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %d |\n", r.workload, r.target, rate, ratio,
			round(r.p50), round(r.p99), cpuStr(r.cpuPerOp), mib(r.peakRSS), mib(r.anon), r.errors)
	}
}

func round(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

func cpuStr(d time.Duration) string {
	if d == 0 {
		return "—"
	}
	return round(d)
}

func mib(b int64) string {
	if b < 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}

// cpu is the CPU time of every process of t, -1 if unknown.
func (t *target) cpu() time.Duration {
	if len(t.pids) == 0 {
		return -1
	}
	var sum time.Duration
	for _, pid := range t.pids {
		c := procCPU(pid)
		if c < 0 {
			return -1
		}
		sum += c
	}
	return sum
}

// procCPU is a process's user+system CPU time, from /proc; -1 if unknown.
func procCPU(pid int) time.Duration {
	if pid <= 0 {
		return -1
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	// Fields after the parenthesised command name; utime and stime are
	// fields 14 and 15 (1-based), in clock ticks (100 per second on Linux).
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return -1
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// procMem is a process's peak resident set (VmHWM) and its current private
// (anonymous) resident memory, from /proc. The peak counts file pages the
// process has mapped — for tableemu, the database pages SQLite reads
// through mmap, which the kernel can drop at will — so the private figure
// is shown as well.
func procMem(pid int) (peak, anon int64) {
	peak, anon = -1, -1
	if pid <= 0 {
		return
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "VmHWM":
			peak = kb << 10
		case "RssAnon":
			anon = kb << 10
		}
	}
	return
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}
