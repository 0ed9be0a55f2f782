package main

import (
	"runtime/debug"

	"github.com/tableemu/tableemu/emulator"
)

// setMemoryLimit sets the Go memory limit to what the configuration's
// cache allows (emulator.MemoryLimit), unless the user set GOMEMLIMIT,
// which the runtime has applied already. Without a limit the collector
// lets the heap grow to twice what is live before it collects (GOGC=100):
// a full 512 MiB cache took 1.1 GiB of private memory (docs/benchmarks.md,
// "Memory").
func setMemoryLimit(cfg emulator.Config, getenv func(string) string) {
	if limit := emulator.MemoryLimit(cfg); limit > 0 && getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit)
	}
}
