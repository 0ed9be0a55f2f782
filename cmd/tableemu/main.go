// Command tableemu runs the Azure Table storage emulator. Its command line
// is Azurite's (azurite-table), so it can replace it; see README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"

	"github.com/tableemu/tableemu/emulator"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "healthcheck" {
		os.Exit(healthcheck(os.Args[2:], os.Stdout, os.Stderr)) // healthcheck.go
	}
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	cfg, err := emulator.LoadConfig(args, os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tableemu:", err)
		return 2
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintln(os.Stderr, "tableemu: warning:", w)
	}
	// TABLEEMU_CPUPROFILE names a file for a CPU profile of the whole run,
	// written at shutdown: how BENCHMARKS.md's profiles were taken.
	if path := os.Getenv("TABLEEMU_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tableemu:", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "tableemu:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	srv, err := emulator.New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tableemu:", err)
		return 1
	}
	defer srv.Close()

	ln, err := net.Listen("tcp", cfg.Addr())
	if err != nil {
		fmt.Fprintln(os.Stderr, "tableemu:", err)
		return 1
	}
	// Print the address as given, not as Go reports it (0.0.0.0 becomes
	// [::]); clients on this machine, or through a container's published
	// port, reach every interface at 127.0.0.1, as Azurite's connection
	// string says.
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	listening := net.JoinHostPort(cfg.Host, port)
	addr := listening
	if ip := net.ParseIP(cfg.Host); ip != nil && ip.IsUnspecified() {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	where := srv.DatabasePath()
	if cfg.InMemory {
		where = "memory (nothing is kept on disk)"
	}
	fmt.Printf("tableemu: serving Azure Table storage from %s\n", where)
	for _, a := range cfg.Accounts {
		ep := emulator.Endpoint(cfg.Scheme(), addr, a.Name)
		fmt.Printf("tableemu: endpoint %s\n", ep)
		fmt.Printf("tableemu: connection string %s\n", emulator.ConnectionString(a, ep))
	}
	// Azurite's readiness line, word for word, for tools that wait for it
	// in the log (docker/MIGRATING.md); the suffix says who printed it.
	fmt.Printf("Azurite Table service is successfully listening at %s://%s (tableemu, Azurite-compatible)\n", cfg.Scheme(), listening)

	// The first SIGINT/SIGTERM shuts down gracefully: in-flight requests
	// finish and the database closes. A second one exits at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // restore default handling: the next signal kills
		fmt.Fprintln(os.Stderr, "tableemu: shutting down (signal again to exit at once)")
	}()
	if err := srv.Serve(ctx, ln, 30*time.Second); err != nil {
		fmt.Fprintln(os.Stderr, "tableemu:", err)
		return 1
	}
	if err := srv.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "tableemu: closing database:", err)
		return 1
	}
	fmt.Fprintln(os.Stderr, "tableemu: stopped")
	return 0
}
