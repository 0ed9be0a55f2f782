// Command tableemu runs the Azure Table storage emulator. Its command line
// is Azurite's (azurite-table), so it can replace it; see docs/command-line.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tableemu/tableemu/emulator"
	"github.com/tableemu/tableemu/emulator/store/sqlite"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "healthcheck":
			os.Exit(healthcheck(os.Args[2:], os.Stdout, os.Stderr)) // healthcheck.go
		case "reset", "snapshot":
			os.Exit(isolation(os.Args[1], os.Args[2:], os.Stdout, os.Stderr)) // isolation.go
		case "export", "import":
			os.Exit(transferCmd(os.Args[1], os.Args[2:], os.Stdout, os.Stderr, stderrIsTerminal())) // transfer.go
		}
	}
	os.Exit(run(commandName(os.Args[0]), os.Args[1:], os.Stdout, os.Stderr))
}

// commandName is the name tableemu was started under: the last element of
// argv[0], in lower case, without .exe. The container image links
// /usr/local/bin/azurite and azurite-table to the binary (Dockerfile), so
// that a container command or entrypoint written for Azurite's image starts
// tableemu; under those names run reads the same command line (Azurite's).
func commandName(argv0 string) string {
	return strings.TrimSuffix(strings.ToLower(filepath.Base(argv0)), ".exe")
}

// azuriteOnly are the names of Azurite's commands for the services tableemu
// does not have: started under one of them (a link of the user's own), it
// refuses rather than serve tables where blobs or queues were expected.
var azuriteOnly = map[string]string{"azurite-blob": "blob", "azurite-queue": "queue"}

// Exit codes (tableemu --help says them too).
const (
	exitFailed = 1 // the server could not start, or failed
	exitUsage  = 2 // a bad command line or AZURITE_ACCOUNTS
)

// run is the server. It checks everything that can fail — flags, accounts,
// the port, the certificate, the data directory and its lock — before it
// prints a line that says it is ready, and a start that fails creates
// nothing on disk: the port is bound before the database is opened, and
// emulator.New loads the certificate before it touches the directory.
//
// Command-line mistakes are one `tableemu: …` line on stderr (exit 2), as
// for any command. Once the server starts, every line it writes has the
// one log format of emulator.Log: information on stdout, warnings and
// errors on stderr.
//
// name is the command name (commandName): under "azurite", Azurite's
// all-in-one command, one more warning says that only the table service
// runs; under "azurite-table" (or with that word in the command line, as
// in a container command written for Azurite's image) the readiness line
// of Azurite's azurite-table follows the all-in-one's.
func run(name string, args []string, stdout, stderr io.Writer) int {
	if svc, ok := azuriteOnly[name]; ok {
		fmt.Fprintf(stderr, "tableemu: started as %s, but tableemu has no %s service, only Azure Table storage: run %s from Azurite, and tableemu (or azurite-table) for tables\n", name, svc, name)
		return exitUsage
	}
	cfg, err := emulator.LoadConfig(args, os.Getenv, stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, emulator.ErrVersion):
		io.WriteString(stdout, versionText())
		return 0
	case err != nil:
		fmt.Fprintln(stderr, "tableemu:", err)
		return exitUsage
	}
	out, errs := emulator.NewLog(stdout), emulator.NewLog(stderr)
	// Lines logged through the standard logger (net/http's, the store's,
	// the server's errors) get the same format.
	log.SetFlags(0)
	log.SetOutput(errs)
	if name == "azurite" {
		errs.Printf("warning: started as azurite: only the table service runs (tableemu has no blob or queue service)")
	}
	for _, w := range cfg.Warnings {
		errs.Printf("warning: %s", w)
	}
	setMemoryLimit(cfg, os.Getenv) // memlimit.go

	// The first SIGINT/SIGTERM shuts down gracefully: in-flight requests
	// finish and the database closes. A second one exits at once. One that
	// arrives while the server starts stops it as soon as it has started.
	sig, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()

	ln, err := net.Listen("tcp", cfg.Addr())
	if err != nil {
		errs.Printf("error: %s", listenError(cfg, err))
		return exitFailed
	}
	srv, err := emulator.New(cfg)
	if err != nil {
		ln.Close()
		errs.Printf("error: %s", startError(cfg, err))
		return exitFailed
	}
	defer srv.Close()

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
	// The service it answers as: the profile (docs/cosmos.md).
	service := "Azure Table storage"
	if cfg.Cosmos() {
		service = "Azure Cosmos DB for Table (--profile cosmos)"
	}
	if path := srv.DatabasePath(); cfg.Database != "" {
		// Never the URL as given: it may hold a password.
		out.Printf("tableemu serves %s from the PostgreSQL database %s (shared: other instances may serve it too)", service, path)
	} else if path == ":memory:" {
		out.Printf("tableemu serves %s from memory (nothing is written to disk)", service)
	} else {
		out.Printf("tableemu serves %s from %s (with its -wal and -shm files)", service, path)
	}
	for _, a := range cfg.Accounts {
		ep := emulator.Endpoint(cfg.Scheme(), addr, a.Name)
		if cfg.Cosmos() && a.Name == emulator.CosmosEmulatorAccount && reachedAsLocalhost(cfg.Host) {
			// The Cosmos DB emulator's account, in the form its documented
			// connection string has: on localhost, no account segment
			// (emulator/resource.go, docs/cosmos.md).
			ep = cfg.Scheme() + "://" + net.JoinHostPort("localhost", port) + "/"
		}
		out.Printf("endpoint %s", ep)
		out.Printf("connection string %s", emulator.ConnectionString(a, ep))
	}
	// The explorer is served on the same port (emulator/explorer); it
	// opens the development account by itself only over loopback.
	out.Printf("data explorer %s", emulator.ExplorerURL(cfg.Scheme(), addr))
	// Azurite's readiness line, word for word, for tools that wait for it
	// in the log (docker/MIGRATING.md); the suffix says who printed it.
	// The listener is open: a client that connects now is served.
	out.Printf("Azurite Table service is successfully listening at %s://%s (tableemu, Azurite-compatible)", cfg.Scheme(), listening)
	// azurite-table on its own prints another line (Azurite 3.37,
	// src/table/main.ts: "Azurite Table service successfully started on
	// HOST:PORT"); scripts written for it wait for that one.
	if name == "azurite-table" || slices.Contains(args, "azurite-table") {
		out.Printf("Azurite Table service successfully started on %s (tableemu, Azurite-compatible)", listening)
	}

	// TABLEEMU_CPUPROFILE names a file for a CPU profile of the whole run,
	// written at shutdown: how docs/benchmarks.md's profiles were taken.
	if path := os.Getenv("TABLEEMU_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err != nil {
			errs.Printf("warning: TABLEEMU_CPUPROFILE: %v", err)
		} else if err := pprof.StartCPUProfile(f); err != nil {
			errs.Printf("warning: TABLEEMU_CPUPROFILE: %v", err)
			f.Close()
		} else {
			defer f.Close()
			defer pprof.StopCPUProfile()
		}
	}

	// Serve until a signal. "shutting down" is printed before the server
	// is told to stop, and only for a signal, so that the lines come in
	// order: shutting down, then stopped.
	serveCtx, stopServing := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-sig.Done():
			stopSignals() // restore default handling: the next signal kills
			out.Printf("shutting down (a second signal exits at once)")
			stopServing()
		case <-serveCtx.Done():
		}
	}()
	serveErr := srv.Serve(serveCtx, ln, 30*time.Second)
	stopServing()
	<-watched
	if serveErr != nil {
		errs.Printf("error: %v", serveErr)
		srv.Close()
		return exitFailed
	}
	if err := srv.Close(); err != nil {
		errs.Printf("error: closing the database: %v", err)
		return exitFailed
	}
	out.Printf("stopped")
	return 0
}

// reachedAsLocalhost reports whether clients on this machine reach a
// server listening on host (--tableHost) by the name localhost: a loopback
// address, every interface, or localhost itself.
func reachedAsLocalhost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}

// listenError says why the port could not be bound, and what to do.
func listenError(cfg emulator.Config, err error) string {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Sprintf("port %d on %s is in use: another emulator (Azurite, or another tableemu) may be running; stop it, or choose another port with --tablePort (0 picks a free one)", cfg.Port, cfg.Host)
	case errors.Is(err, syscall.EACCES):
		return fmt.Sprintf("cannot listen on port %d on %s: permission denied (ports below 1024 need privileges); choose another with --tablePort", cfg.Port, cfg.Host)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return fmt.Sprintf("cannot listen on %s: it is not an address of this machine (--tableHost; 0.0.0.0 listens on all of them)", cfg.Host)
	}
	return fmt.Sprintf("cannot listen on %s: %v", cfg.Addr(), err)
}

// startError adds the way out to errors that have one.
func startError(cfg emulator.Config, err error) string {
	var le *sqlite.LockedError
	if errors.As(err, &le) {
		return le.Error() + ": stop that one, or start this one with another --location (or --inMemoryPersistence)"
	}
	var de *sqlite.DirError
	if !errors.As(err, &de) {
		return cfg.Redact(err.Error())
	}
	// A data directory that cannot be created or written (a parent the
	// user may not write, a read-only file system, a path under a file, a
	// database file or its -wal or -shm read-only): the way out is another
	// directory, or none.
	const elsewhere = "or --inMemoryPersistence to keep the data in memory"
	// A database file given where the directory goes (Azurite's
	// --location is a directory too).
	if fi, serr := os.Stat(cfg.Location); serr == nil && !fi.IsDir() && errors.Is(err, syscall.ENOTDIR) {
		return fmt.Sprintf("--location %s is a file: give the directory that holds %s (it is created if missing), %s", cfg.Location, sqlite.FileName, elsewhere)
	}
	if de.File != "" {
		return fmt.Sprintf("%s; make them writable for this user (a tableemu run as another user may have created them), start with another --location, %s", de.Error(), elsewhere)
	}
	return fmt.Sprintf("%s; start with --location naming a directory you can write, %s", de.Error(), elsewhere)
}
