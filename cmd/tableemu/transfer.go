package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/emulator"
	"github.com/tableemu/tableemu/emulator/transfer"
)

// `tableemu export` and `tableemu import`: data in and out
// (docs/transfer.md) from the command line, on a running server, a data
// directory or a PostgreSQL database as where.go decides. Offline they
// run the Server's Export and Import; online, transfer.Client, which
// sends the same work to the server's endpoints: the same sinks and
// sources either way.

const transferHelp = `Usage: tableemu export [--account NAME] [--tables A,B] [--force] [--format jsonl|csv] DIR [server flags]
       tableemu import [--account NAME] [--tables A,B] [--mode fail|replace|merge] DIR|FILE.jsonl [server flags]
       tableemu import [...] --from "CONNECTION STRING|SAS URL" [server flags]
       tableemu import [...] --from-azurite DIR [server flags]
       tableemu import [...] FILE.csv|DIR [server flags]   (Storage Explorer's CSV)

export writes an account's tables to DIR, one JSON Lines file per table
(each line an entity, its EDM types kept) and a manifest with the tables'
stored access policies and the account's service properties. import reads
such a directory, or one FILE.jsonl (a table named after the file), into
the account: each table in one transaction, all of it or none; a line the
service would refuse is named, with why. It also reads:
  FILE.csv            a table exported by Azure Storage Explorer (or a
                      directory of such files and no .jsonl, a table a file)
  --from SOURCE       another Table endpoint (Azure, Azurite, another
                      tableemu): a connection string or a URL with a SAS,
                      types and Timestamps kept
  --from-azurite DIR  what an Azurite table service kept in its data
                      directory (stop it with Ctrl-C first), every account's
                      tables to the account of the same name
See docs/transfer.md.

Where: a running server at --tableHost and --tablePort (default
127.0.0.1:10002; https with --cert, whose certificate is trusted); or, with
--location DIR, that data directory: through the server that holds it, at
the port it announced, or directly in DIR/tableemu.sqlite when no server runs
on it; or, with --database URL (or TABLEEMU_DATABASE), that PostgreSQL
database directly, for every instance serving it.

  --account NAME      the account (default: the first of AZURITE_ACCOUNTS,
                      devstoreaccount1 when it is unset)
  --accountKey KEY    its key, to sign the requests (default: from
                      AZURITE_ACCOUNTS, or devstoreaccount1's public key)
  --tables A,B        only these tables (any case); default: all
  --force             export into a DIR that holds an earlier export,
                      replacing it (its tables this export lacks go too)
  --format csv        export Azure Storage Explorer's CSV, a <table>.csv a
                      table, instead of JSON Lines (no policies or service
                      properties: the CSV has no place for them)
  --mode MODE         what import does with a table the account has: fail
                      (the default; nothing is imported), replace (the
                      table is deleted and imported again) or merge (the
                      source's entities are written over the table's)
  Other server flags (--silent, --loose, ...) are accepted and ignored.

Progress goes to stderr: on a terminal one line, updated as the entities
go; otherwise a line per table when it is done. Exit status: 0 done,
1 failed (one line on stderr says why), 2 bad command line.
`

// xferArgs is a parsed export or import command line.
type xferArgs struct {
	where
	cmd  string // "export" or "import"
	path string // DIR, or FILE.jsonl
	from string // import --from: a connection string or SAS URL
	// fromAzurite is import --from-azurite: an Azurite data directory.
	fromAzurite string
	tables      []string
	force       bool
	format      string // export --format: "jsonl" ("") or "csv"
	mode        transfer.Mode
	// progress hears how far each table has come, and copying how far a
	// table read from another endpoint (progressPrinter).
	progress func(transfer.Progress)
	copying  func(table string, entities int)
}

// parseTransfer reads `tableemu export|import ...`.
func parseTransfer(cmd string, args []string, stdout io.Writer) (xferArgs, error) {
	a := xferArgs{cmd: cmd}
	own := map[string]bool{"tables": true, "force": false, "format": true}
	if cmd == "import" {
		own = map[string]bool{"tables": true, "mode": true, "from": true, "from-azurite": true}
	}
	w, vals, pos, err := splitArgs(args, own)
	if errors.Is(err, flag.ErrHelp) {
		io.WriteString(stdout, transferHelp)
		return a, err
	}
	if err != nil {
		return a, err
	}
	a.where = w
	a.create = cmd == "import"
	what := map[string]string{"export": "DIR", "import": "DIR or FILE.jsonl"}[cmd]
	a.from, a.fromAzurite = vals["from"], vals["from-azurite"]
	switch n := len(pos); {
	case a.from != "" && a.fromAzurite != "":
		return a, errors.New("--from or --from-azurite, not both")
	case n == 0 && (a.from != "" || a.fromAzurite != ""):
	case n > 0 && a.from != "":
		return a, fmt.Errorf("--from or %s, not both: %q", what, pos[0])
	case n > 0 && a.fromAzurite != "":
		return a, fmt.Errorf("--from-azurite or %s, not both: %q", what, pos[0])
	case n == 0 && cmd == "import":
		return a, errors.New("say what to import: tableemu import DIR or FILE.jsonl, tableemu import --from SOURCE, or tableemu import --from-azurite DIR")
	case n == 0:
		return a, fmt.Errorf("say where: tableemu %s %s", cmd, what)
	case n == 1:
		a.path = pos[0]
	default:
		return a, fmt.Errorf("one %s, not %q and %q", what, pos[0], pos[1])
	}
	if v, ok := vals["tables"]; ok {
		a.tables = []string{}
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				a.tables = append(a.tables, n)
			}
		}
		if len(a.tables) == 0 {
			return a, errors.New("--tables names no table: give names separated by commas")
		}
	}
	a.force = vals["force"] == "true"
	switch a.format = vals["format"]; a.format {
	case "", "jsonl", "csv":
	default:
		return a, fmt.Errorf("--format %s: the formats are jsonl (the default) and csv (Azure Storage Explorer's)", a.format)
	}
	a.mode = transfer.Mode(vals["mode"])
	switch a.mode {
	case "", transfer.ModeFail, transfer.ModeReplace, transfer.ModeMerge:
	default:
		return a, fmt.Errorf("--mode %s: the modes are fail (the default), replace and merge", a.mode)
	}
	return a, nil
}

// transferCmd runs `tableemu export|import ARGS` and returns the exit
// code. tty says stderr is a terminal: progress is then one line,
// rewritten.
func transferCmd(cmd string, args []string, stdout, stderr io.Writer, tty bool) int {
	prefix := "tableemu " + cmd + ": "
	a, err := parseTransfer(cmd, args, stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		fmt.Fprintln(stderr, prefix+err.Error())
		return exitUsage
	}
	p := &progressPrinter{w: stderr, tty: tty, prefix: prefix}
	a.progress, a.copying = p.report, p.copying
	lines, err := a.run()
	p.end()
	if err != nil {
		fmt.Fprintln(stderr, prefix+oneLineError(err))
		return exitFailed
	}
	for _, l := range lines {
		fmt.Fprintln(stdout, prefix+l)
	}
	return 0
}

// stderrIsTerminal reports whether progress may rewrite its line.
func stderrIsTerminal() bool {
	fd := os.Stderr.Fd()
	return isatty.IsTerminal(fd) || isatty.IsCygwinTerminal(fd)
}

// oneLineError is err on one line: a service error as status, code and
// message (with tableemu's hint), as reset and snapshot print them.
func oneLineError(err error) string {
	var e *tableemu.Error
	if !errors.As(err, &e) {
		return strings.ReplaceAll(err.Error(), "\n", " ")
	}
	msg := strings.ReplaceAll(e.Message, "\n", " ")
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, msg)
}

func (a xferArgs) options() transfer.Options {
	return transfer.Options{Account: a.account, Tables: a.tables, Mode: a.mode, Progress: a.progress}
}

// run acts where the arguments say and returns the lines to print.
func (a xferArgs) run() ([]string, error) {
	if a.cmd == "export" {
		return a.act(a.exportOffline, a.exportOnline)
	}
	return a.act(a.importOffline, a.importOnline)
}

func (a xferArgs) summary(sum transfer.Summary) string {
	if a.cmd == "export" {
		return fmt.Sprintf("%s: %d tables, %d entities exported to %s", a.account, sum.Tables, sum.Entities, a.path)
	}
	from, into := a.path, a.account
	switch {
	case a.from != "":
		from = "the endpoint of --from" // never the string itself: it may hold a key
	case a.fromAzurite != "":
		from, into = "Azurite's "+a.fromAzurite, "the accounts of the same names"
	}
	return fmt.Sprintf("%d tables, %d entities imported from %s into %s, mode %s", sum.Tables, sum.Entities, from, into, modeOrFail(a.mode))
}

// modeOrFail is m, or the default mode when none was given.
func modeOrFail(m transfer.Mode) transfer.Mode {
	if m == "" {
		return transfer.ModeFail
	}
	return m
}

// sink is where an export writes: JSON Lines, or with --format csv
// Storage Explorer's CSV (docs/transfer.md).
func (a xferArgs) sink() (transfer.Sink, error) {
	if a.format == "csv" {
		return transfer.NewCSVSink(a.path, a.force)
	}
	return transfer.NewDirSink(a.path, a.force)
}

func (a xferArgs) exportOffline(srv *emulator.Server) ([]string, error) {
	sink, err := a.sink()
	if err != nil {
		return nil, err
	}
	sum, err := srv.Export(context.Background(), sink, a.options()) // aborts sink on failure
	if cerr := sink.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return []string{a.summary(sum)}, nil
}

func (a xferArgs) client(base string, c *http.Client) *transfer.Client {
	return &transfer.Client{Base: base, Key: a.key, HTTP: c, UserAgent: "tableemu-" + a.cmd}
}

func (a xferArgs) exportOnline(base string, c *http.Client) ([]string, error) {
	sink, err := a.sink()
	if err != nil {
		return nil, err
	}
	sum, err := a.client(base, c).Export(context.Background(), sink, a.options()) // closes sink, aborted on failure
	if err != nil {
		return nil, connectOr(base, err)
	}
	return []string{a.summary(sum)}, nil
}

func (a xferArgs) importOffline(srv *emulator.Server) ([]string, error) {
	src, err := openSource(a)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	sum, err := srv.Import(context.Background(), src, a.options())
	if err != nil {
		return nil, err
	}
	return append(skipped(src), a.summary(sum)), nil
}

// skipped says which tables of src were left out, and why (an Azurite
// table whose name Azure does not allow): "<where>: not imported: <why>".
func skipped(src transfer.Source) []string {
	if az, ok := src.(*transfer.AzuriteSource); ok {
		return slices.Clone(az.Skipped())
	}
	return nil
}

func (a xferArgs) importOnline(base string, c *http.Client) ([]string, error) {
	src, err := openSource(a)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	sum, err := a.client(base, c).Import(context.Background(), src, a.options())
	if err != nil {
		return nil, connectOr(base, err)
	}
	return append(skipped(src), a.summary(sum)), nil
}

// connectOr is err, or for a server that does not answer what to do
// (connectError).
func connectOr(base string, err error) error {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return connectError(base, err)
	}
	return err
}

// openSource opens what an import reads. The one switch of formats: each
// format of package transfer is one case here (and, when it has one, one
// flag in parseTransfer's own).
func openSource(a xferArgs) (transfer.Source, error) {
	switch {
	case a.from != "":
		// Another Table endpoint: a connection string or a SAS URL
		// (docs/transfer.md, "From another Table endpoint").
		return transfer.OpenEndpoint(context.Background(), a.from, transfer.EndpointOptions{Progress: a.copying})
	case a.fromAzurite != "":
		// An Azurite data directory: every account's tables go to the
		// account of the same name (docs/transfer.md, "From Azurite").
		return transfer.OpenAzurite(a.fromAzurite)
	case strings.EqualFold(filepath.Ext(a.path), ".csv") || csvDir(a.path):
		// Azure Storage Explorer's CSV: one FILE.csv, a table named after
		// it, or a directory of them (docs/transfer.md, "Storage
		// Explorer's CSV").
		return transfer.OpenCSV(a.path)
	default:
		// A directory an export wrote (or of JSON Lines files), or one
		// FILE.jsonl.
		return transfer.OpenDir(a.path)
	}
}

// csvDir reports whether dir holds CSV files and nothing of JSON Lines
// (no .jsonl file, no manifest): Storage Explorer's exports, one table a
// file.
func csvDir(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	csv := false
	for _, e := range entries {
		switch ext := strings.ToLower(filepath.Ext(e.Name())); {
		case ext == ".jsonl" || e.Name() == transfer.ManifestName:
			return false
		case ext == ".csv":
			csv = true
		}
	}
	return csv
}

// progressPrinter shows Progress on stderr: on a terminal, one line
// rewritten (\r) at most a few times a second, ended when its table is
// done; otherwise one line per table, at its end.
type progressPrinter struct {
	w      io.Writer
	tty    bool
	prefix string
	mu     sync.Mutex // Client.Import reports from its encoding goroutine
	last   time.Time
	table  string // the table last shown
	open   bool   // a \r line is on the screen
}

// progressInterval is how often the terminal line is rewritten at most.
const progressInterval = 250 * time.Millisecond

func (p *progressPrinter) report(pr transfer.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := fmt.Sprintf("%s: %s entities", pr.Table, thousands(pr.Entities))
	switch {
	case !p.tty && pr.Done:
		fmt.Fprintf(p.w, "%s%s\n", p.prefix, line)
	case !p.tty:
	case pr.Done:
		fmt.Fprintf(p.w, "\r\033[K%s\n", line)
		p.open, p.table = false, ""
	case pr.Table != p.table || time.Since(p.last) >= progressInterval:
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.last, p.table, p.open = time.Now(), pr.Table, true
	}
}

// copying shows how far a table read from another endpoint has come: on
// a terminal only (elsewhere the import's line per table says enough).
func (p *progressPrinter) copying(table string, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && (table != p.table || time.Since(p.last) >= progressInterval) {
		fmt.Fprintf(p.w, "\r\033[Kcopying %s: %s entities", table, thousands(n))
		p.last, p.table, p.open = time.Now(), table, true
	}
}

// end ends a line left open by a failure, so the error starts its own.
func (p *progressPrinter) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
}

// thousands is n with commas between groups of three digits: 12,345.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
