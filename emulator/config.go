package emulator

import (
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/tableemu/tableemu/emulator/faults"
)

// DevAccount and DevKey are the well-known development storage account
// and key every Azure SDK and Azurite know (docs/protocol.md 9.1).
const (
	DevAccount = "devstoreaccount1"
	DevKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// Account is a storage account: its name and one or two keys, as base64
// text (for connection strings) and decoded (for signing).
type Account struct {
	Name    string
	Keys    []string
	RawKeys [][]byte
}

// Config is everything the command line and environment decide.
//
// The zero Config is a server for tests: devstoreaccount1, kept in memory.
// Nothing is written to disk unless Location names a directory; the
// command line sets Location to the current directory when --location is
// not given, as Azurite does.
type Config struct {
	Host                   string // --tableHost
	Port                   int    // --tablePort
	Location               string // --location; "" keeps everything in memory (see above)
	InMemory               bool   // --inMemoryPersistence: in memory even if Location is set
	Fsync                  bool   // --fsync: every commit fsynced before the answer (docs/durability.md)
	Loose                  bool   // --loose
	SkipAPIVersionCheck    bool   // --skipApiVersionCheck
	DisableProductStyleURL bool   // --disableProductStyleUrl
	Cert, Key, Pwd         string // --cert, --key, --pwd
	OAuth                  string // --oauth
	Debug                  string // --debug FILE
	Silent                 bool   // --silent
	// KeepAlive is how long an idle keep-alive connection stays open
	// (--tableKeepAliveTimeout, in seconds); 0 means the default,
	// DefaultKeepAlive, and NoKeepAliveTimeout (--tableKeepAliveTimeout 0)
	// means no limit.
	KeepAlive time.Duration
	Accounts  []Account

	// RequestTimeout is the time a request may take when it names none in
	// its timeout parameter (--requestTimeout, in seconds; at most
	// MaxRequestTimeout); 0 means DefaultRequestTimeout (deadline.go).
	RequestTimeout time.Duration
	// IsolationTimeout is the time a request to tableemu's reset,
	// snapshot, import and export endpoints may take (no flag; at most
	// MaxIsolationTimeout); 0 means DefaultIsolationTimeout
	// (isolation/http.go, transfer/http.go).
	IsolationTimeout time.Duration

	// NoAutoIndex turns off automatic property indexes (emulator/store/sqlite/autoindex.go):
	// every filter on a non-key property then scans, as on the service.
	NoAutoIndex bool // --noAutoIndex
	// CacheSize bounds, in MiB, the copy of the tables the SQLite store
	// keeps in memory for scans no index serves
	// (emulator/store/sqlite/filtercache); 0 means the default,
	// DefaultCacheSize, and a negative value (--cacheSize 0) turns it off.
	CacheSize int // --cacheSize
	// Insights classifies queries and collects design statistics
	// (emulator/insights); Throttle simulates the service's scalability
	// targets (emulator/faults/throttle.go); Faults injects transient
	// failures (emulator/faults/faults.go).
	Insights bool   // --insights
	Throttle bool   // --throttle
	Faults   string // --faults SPEC
	// Warnings are notes about accepted but unusual input, printed at start.
	Warnings []string
	// Database is an external database's URL (--database,
	// TABLEEMU_DATABASE or AZURITE_DB: postgres://…, database.go); ""
	// keeps the data in SQLite under Location. It may hold a password:
	// print it only through RedactDatabase.
	Database string
	// Profile is the service tableemu answers as (--profile,
	// TABLEEMU_PROFILE): ProfileStorage, Azure Table storage (what ""
	// means too), or ProfileCosmos, Azure Cosmos DB for Table, whose
	// answers differ in headers, error bodies and more (docs/cosmos.md).
	// Under ProfileCosmos the default port is CosmosPort.
	Profile string
}

// The profiles (Config.Profile).
const (
	ProfileStorage = "storage"
	ProfileCosmos  = "cosmos"
)

// CosmosPort is the default port under ProfileCosmos: the Azure Cosmos DB
// emulator's table endpoint, which the SDKs treat as Cosmos DB on
// localhost (the Go SDK's aztables checks for localhost:8902; Python's
// _is_cosmos_endpoint, JS's isCosmosEndpoint and .NET's IsPremiumEndpoint
// take localhost on any port but 10002; docs/cosmos.md).
const CosmosPort = 8902

// Cosmos reports whether c answers as Azure Cosmos DB for Table.
func (c Config) Cosmos() bool { return c.Profile == ProfileCosmos }

// NoKeepAliveTimeout as Config.KeepAlive keeps idle keep-alive connections
// open until the client closes them: what --tableKeepAliveTimeout 0 means,
// as in Azurite, which hands the value to Node's server.keepAliveTimeout,
// where 0 disables the timeout (nodejs.org/api/http.html,
// server.keepAliveTimeout). The header and read timeouts of a request still
// apply (HTTPServer).
const NoKeepAliveTimeout time.Duration = -1

// DefaultAccounts is the account list when AZURITE_ACCOUNTS is not set
// (without the cosmos profile; Config.DefaultAccounts gives the profile's).
func DefaultAccounts() []Account {
	a, _ := parseAccounts(DevAccount + ":" + DevKey)
	return a
}

// CosmosEmulatorAccount and CosmosEmulatorKey are the account name and the
// well-known key of the connection string Microsoft documents for the API
// for Table of its (Windows-only) Azure Cosmos DB emulator:
// "DefaultEndpointsProtocol=http;AccountName=localhost;AccountKey=C2y6…==;
// TableEndpoint=http://localhost:8902/;" (learn.microsoft.com/azure/cosmos-db/how-to-develop-emulator,
// API for Table, whose sample is Azure-Samples/cosmos-db-table-javascript-samples
// 601-emulator/app.js; the older learn.microsoft.com/azure/cosmos-db/local-emulator#table-api).
// Under the cosmos profile the account is configured beside
// devstoreaccount1, and requests to host "localhost" without an account
// segment reach it (resource.go, docs/cosmos.md).
const (
	CosmosEmulatorAccount = "localhost"
	CosmosEmulatorKey     = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
)

// DefaultAccounts is the account list when AZURITE_ACCOUNTS is not set:
// devstoreaccount1, and under the cosmos profile the Cosmos DB emulator's
// account "localhost" after it. AZURITE_ACCOUNTS replaces both, as it
// replaces devstoreaccount1 in Azurite: a list that should keep the
// emulator's connection string working names localhost:<its key> too.
func (c Config) DefaultAccounts() []Account {
	if !c.Cosmos() {
		return DefaultAccounts()
	}
	a, _ := parseAccounts(DevAccount + ":" + DevKey + ";" + CosmosEmulatorAccount + ":" + CosmosEmulatorKey)
	return a
}

// ErrVersion is LoadConfig's answer to --version: the caller prints the
// version and exits 0. (--help is flag.ErrHelp, after LoadConfig has
// written the help to its usage writer.)
var ErrVersion = errors.New("version requested")

// ignoredFlags are flags of Azurite's all-in-one command (`azurite`) that
// configure its blob and queue services. A command line written for it
// keeps working: they are read, and ignored with a warning.
var ignoredFlags = []string{"blobHost", "blobPort", "blobKeepAliveTimeout", "queueHost", "queuePort", "queueKeepAliveTimeout", "extentMemoryLimit"}

// LoadConfig reads the Azurite-compatible command line (without the program
// name) and environment. Anything it cannot honour is an error: a typo in a
// flag or in AZURITE_ACCOUNTS must stop the program, never fall back to a
// default silently. --help writes the help to usage (nil: nowhere) and
// returns flag.ErrHelp; --version returns ErrVersion.
func LoadConfig(args []string, getenv func(string) string, usage io.Writer) (Config, error) {
	c := Config{Host: "127.0.0.1", Port: 10002}
	fs, extra := newFlagSet(&c)
	// `azurite` or `azurite-table` as a word of the command line — an
	// Azurite container's command, appended to this image's entrypoint —
	// is skipped, and the flags after it are read too.
	for {
		if err := fs.Parse(args); err != nil {
			return c, flagError(fs, err)
		}
		if fs.NArg() == 0 || (fs.Arg(0) != "azurite" && fs.Arg(0) != "azurite-table") {
			break
		}
		c.Warnings = append(c.Warnings, fmt.Sprintf("%q ignored: tableemu is the table service", fs.Arg(0)))
		args = fs.Args()[1:]
	}
	fs.Visit(func(f *flag.Flag) { extra.portSet = extra.portSet || f.Name == "tablePort" })
	if extra.help {
		if usage != nil {
			writeHelp(usage, fs)
		}
		return c, flag.ErrHelp
	}
	if extra.version {
		return c, ErrVersion
	}
	if len(extra.ignored) > 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("--%s ignored: tableemu serves the table service only", strings.Join(extra.ignored, ", --")))
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q (flags start with --; tableemu --help lists them)", fs.Arg(0))
	}
	profileSource := "--profile"
	if c.Profile == "" {
		c.Profile, profileSource = strings.TrimSpace(getenv("TABLEEMU_PROFILE")), "TABLEEMU_PROFILE"
	}
	switch c.Profile {
	case "", ProfileStorage:
		c.Profile = ProfileStorage
	case ProfileCosmos:
		// The Cosmos DB emulator's table port, unless --tablePort says
		// otherwise (0 included: a free port).
		if !extra.portSet {
			c.Port = CosmosPort
		}
	default:
		return c, fmt.Errorf("%s %q: want storage (Azure Table storage, the default) or cosmos (Azure Cosmos DB for Table)", profileSource, c.Profile)
	}
	if net.ParseIP(c.Host) == nil && c.Host != "localhost" {
		return c, fmt.Errorf("--tableHost %q: not an IP address", c.Host)
	}
	if c.Port < 0 || c.Port > 65535 {
		return c, fmt.Errorf("--tablePort %d: not a port number", c.Port)
	}
	if extra.keepAlive != "" {
		// Seconds, as Azurite's --tableKeepAliveTimeout; it hands the value
		// to Node's server.keepAliveTimeout, which takes fractions too, and
		// where 0 turns the timeout off.
		sec, err := strconv.ParseFloat(extra.keepAlive, 64)
		if err != nil || !(sec >= 0) || sec > 24*3600 {
			return c, fmt.Errorf("--tableKeepAliveTimeout %q: want seconds, at most a day (0: no limit)", extra.keepAlive)
		}
		if sec == 0 {
			c.KeepAlive = NoKeepAliveTimeout
		} else {
			c.KeepAlive = max(time.Duration(sec*float64(time.Second)), 1)
		}
	}
	if extra.requestTimeout != "" {
		d, err := parseRequestTimeout(extra.requestTimeout)
		if err != nil {
			return c, err
		}
		c.RequestTimeout = d
	}
	if extra.cacheSize != "" {
		mib, err := strconv.Atoi(extra.cacheSize)
		if err != nil || mib < 0 || mib > 1<<20 {
			return c, fmt.Errorf("--cacheSize %q: want MiB, a whole number up to 1048576 (0: no cache)", extra.cacheSize)
		}
		c.CacheSize = mib
		if mib == 0 {
			c.CacheSize = -1
		}
	}
	if (c.Cert == "") != (c.Key == "") {
		if c.Pwd == "" {
			return c, errors.New("--cert and --key go together (PEM certificate and key)")
		}
	}
	if c.Pwd != "" {
		return c, errors.New("--pwd (PFX certificates) is not supported: convert to PEM and use --cert and --key")
	}
	switch c.OAuth {
	case "":
	case "basic":
		if c.Cert == "" {
			return c, errors.New("--oauth basic needs HTTPS: give --cert and --key")
		}
	default:
		return c, fmt.Errorf("--oauth %q: the only level is basic", c.OAuth)
	}
	if c.Faults != "" {
		if _, err := faults.Parse(c.Faults); err != nil {
			return c, fmt.Errorf("--faults: %w", err)
		}
	}
	db, source := databaseFromEnv(c.Database, getenv)
	if db != "" {
		if err := checkDatabase(db, source); err != nil {
			return c, err
		}
		if c.InMemory {
			return c, fmt.Errorf("%s and --inMemoryPersistence: choose one (the data lives in the database, or in memory)", source)
		}
		c.Database = db
		if c.Location != "" {
			c.Warnings = append(c.Warnings, fmt.Sprintf("--location is ignored: the data lives in the database %s names", source))
		}
		if c.Fsync {
			c.Warnings = append(c.Warnings, "--fsync has no effect with an external database: its own settings decide durability")
		}
	}
	switch {
	case c.Database != "":
	case c.InMemory && c.Location != "":
		// Azurite refuses this pair; tableemu's image passes --location
		// /data in its entrypoint, so `docker run IMAGE
		// --inMemoryPersistence` must work.
		c.Warnings = append(c.Warnings, "--inMemoryPersistence: --location is ignored, nothing is written there")
	case !c.InMemory && c.Location == "":
		c.Location = "." // Azurite's default: the current directory
	}
	if c.InMemory && c.Fsync {
		c.Warnings = append(c.Warnings, "--fsync has no effect with --inMemoryPersistence: nothing is written to disk")
	}
	if env := strings.TrimSpace(getenv("AZURITE_ACCOUNTS")); env != "" {
		accts, err := parseAccounts(env)
		if err != nil {
			return c, fmt.Errorf("AZURITE_ACCOUNTS: %w", err)
		}
		for _, a := range accts {
			if !validAccountName(a.Name) {
				c.Warnings = append(c.Warnings, fmt.Sprintf(
					"AZURITE_ACCOUNTS: %q is not a valid Azure account name (3-24 lower-case letters and digits); host-style URLs will not reach it", a.Name))
			}
			for i, k := range a.Keys {
				if _, err := base64.StdEncoding.DecodeString(k); err != nil {
					c.Warnings = append(c.Warnings, fmt.Sprintf(
						"AZURITE_ACCOUNTS: key%d of %s is not canonical base64; decoded leniently as Azurite does", i+1, a.Name))
				}
			}
		}
		c.Accounts = accts
	} else {
		c.Accounts = c.DefaultAccounts()
	}
	return c, nil
}

// DefaultCacheSize is Config.CacheSize, in MiB, when zero.
const DefaultCacheSize = 512

// flagExtras are what the flag set reads beyond Config's fields.
type flagExtras struct {
	help, version bool
	keepAlive     string
	cacheSize     string
	ignored       []string
	portSet       bool // --tablePort given

	requestTimeout string
}

// newFlagSet defines every flag on c. Usage strings name their value in
// backquotes (flag.UnquoteUsage), which --help prints.
func newFlagSet(c *Config) (*flag.FlagSet, *flagExtras) {
	x := &flagExtras{}
	fs := flag.NewFlagSet("tableemu", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // LoadConfig reports errors and help itself
	fs.Usage = func() {}
	fs.StringVar(&c.Host, "tableHost", c.Host, "listen on `ADDRESS` (0.0.0.0: every interface)")
	fs.IntVar(&c.Port, "tablePort", c.Port, "listen on `PORT` (0 picks a free one)")
	fs.StringVar(&x.keepAlive, "tableKeepAliveTimeout", "", "close keep-alive connections idle for `SECONDS`; 0: never close them (default 120)")
	fs.StringVar(&c.Location, "location", "", "keep the database, tableemu.sqlite, in `DIR` (default: the current directory)")
	fs.StringVar(&c.Location, "l", "", "short for --location")
	fs.BoolVar(&c.InMemory, "inMemoryPersistence", false, "keep all data in memory; nothing is written to disk")
	fs.StringVar(&c.Database, "database", "", "keep the data in the PostgreSQL database at `URL` (postgres://user@host:5432/db); several instances may share it")
	fs.StringVar(&x.requestTimeout, "requestTimeout", "", "answer 500 OperationTimedOut to a request not done in `SECONDS` (at most 30); a request's timeout parameter takes its place (default 30)")
	fs.BoolVar(&c.Fsync, "fsync", false, "fsync every commit before answering: acknowledged writes survive a power cut too (slower writes)")
	fs.BoolVar(&c.Loose, "loose", false, "accept an account SAS signed for https over plain HTTP")
	fs.BoolVar(&c.Loose, "L", false, "short for --loose")
	fs.BoolVar(&c.SkipAPIVersionCheck, "skipApiVersionCheck", false, "accept any x-ms-version")
	fs.BoolVar(&c.DisableProductStyleURL, "disableProductStyleUrl", false, "never take the account from the Host header")
	fs.StringVar(&c.Cert, "cert", "", "serve HTTPS with the PEM certificate in `FILE`")
	fs.StringVar(&c.Key, "key", "", "the PEM private key of --cert, in `FILE`")
	fs.StringVar(&c.Pwd, "pwd", "", "the `PASSWORD` of a PFX certificate: refused, tableemu takes PEM (--cert, --key)")
	fs.StringVar(&c.OAuth, "oauth", "", "accept bearer tokens; the only `LEVEL` is basic (needs --cert)")
	fs.StringVar(&c.Debug, "debug", "", "write a debug log (request headers, errors) to `FILE`")
	fs.StringVar(&c.Debug, "d", "", "short for --debug")
	fs.BoolVar(&c.Silent, "silent", false, "no access log")
	fs.BoolVar(&c.Silent, "s", false, "short for --silent")
	var telemetry bool
	fs.BoolVar(&telemetry, "disableTelemetry", false, "accepted: tableemu sends no telemetry")
	fs.BoolVar(&c.NoAutoIndex, "noAutoIndex", false, "never index properties that filters keep scanning")
	fs.StringVar(&x.cacheSize, "cacheSize", "", "keep up to `MiB` of tables in memory for scans no index serves; 0: none (default 512)")
	fs.BoolVar(&c.Insights, "insights", false, "classify queries (x-tableemu-* headers, log) and serve GET /_tableemu/insights")
	fs.BoolVar(&c.Throttle, "throttle", false, "answer 503 ServerBusy (under --profile cosmos: 429 TooManyRequests with x-ms-retry-after-ms) beyond ~2,000 entities/s per partition and ~20,000 per account")
	fs.StringVar(&c.Profile, "profile", "", "answer as `SERVICE` does: storage (Azure Table storage) or cosmos (Azure Cosmos DB for Table, default port 8902); also TABLEEMU_PROFILE (default storage)")
	fs.StringVar(&c.Faults, "faults", "", "inject transient failures as `SPEC` says, e.g. rate=0.1,kinds=timeout|busy|drop,ops=InsertEntity")
	for _, name := range ignoredFlags {
		fs.Func(name, "any `VALUE`; ignored, with a warning (tableemu serves tables only)", func(string) error {
			x.ignored = append(x.ignored, name)
			return nil
		})
	}
	fs.BoolVar(&x.help, "help", false, "print this help and exit")
	fs.BoolVar(&x.help, "h", false, "short for --help")
	fs.BoolVar(&x.version, "version", false, "print the version, commit and Go version, and exit")
	fs.BoolVar(&x.version, "v", false, "short for --version")
	return fs, x
}

// flagError rewords the flag package's errors for a command whose flags are
// written with two dashes, suggests the flag meant, and points to --help:
// one line, never the whole usage.
func flagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		msg = "unknown flag --" + name
		if s := closestFlag(fs, name); s != "" {
			msg += "; did you mean --" + s + "?"
		}
	} else {
		for _, r := range [][2]string{{"flag -", "flag --"}, {"for -", "for --"}, {"argument: -", "argument: --"}} {
			msg = strings.Replace(msg, r[0], r[1], 1)
		}
	}
	return errors.New(msg + " (tableemu --help lists the flags)")
}

// closestFlag is the defined flag a mistyped name most likely meant: the
// same name in another case or with a dash, one a couple of edits away, or
// the only flag it starts.
func closestFlag(fs *flag.FlagSet, name string) string {
	typed := strings.ToLower(strings.ReplaceAll(name, "-", ""))
	best, bestDist := "", -1
	var prefixed []string
	fs.VisitAll(func(f *flag.Flag) {
		if len(f.Name) == 1 {
			return
		}
		low := strings.ToLower(f.Name)
		if len(typed) >= 4 && strings.HasPrefix(low, typed) {
			prefixed = append(prefixed, f.Name)
		}
		if d := editDistance(typed, low); bestDist < 0 || d < bestDist {
			best, bestDist = f.Name, d
		}
	})
	if bestDist >= 0 && bestDist <= max(1, len(typed)/4) {
		return best
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// parseAccounts reads "name:key1[:key2];name2:key1". As in Azurite, these
// accounts replace devstoreaccount1 rather than add to it.
func parseAccounts(s string) ([]Account, error) {
	var out []Account
	seen := map[string]bool{}
	for _, item := range strings.Split(s, ";") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		parts := strings.Split(item, ":")
		// No key holds a comma (base64 has none): one after the first
		// colon is a list written with the wrong separator,
		// "a1:key1,a2:key2", which would otherwise fail as a bad key.
		if strings.Contains(strings.Join(parts[1:], ":"), ",") {
			return nil, fmt.Errorf("%q: accounts are separated by \";\", not \",\" (name1:key1;name2:key1)", redact(item))
		}
		if len(parts) < 2 || len(parts) > 3 {
			return nil, fmt.Errorf("%q: want name:key1 or name:key1:key2", redact(item))
		}
		name := parts[0]
		if name == "" || strings.ContainsAny(name, "/?#%\\ \t") {
			return nil, fmt.Errorf("account name %q cannot be part of a URL path", name)
		}
		if seen[name] {
			return nil, fmt.Errorf("account %q is listed twice", name)
		}
		seen[name] = true
		a := Account{Name: name}
		for i, k := range parts[1:] {
			raw, err := decodeKey(k)
			if err != nil {
				return nil, fmt.Errorf("key%d of %s: %w", i+1, name, err)
			}
			a.Keys = append(a.Keys, k)
			a.RawKeys = append(a.RawKeys, raw)
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, errors.New("no accounts")
	}
	return out, nil
}

// decodeKey decodes an account key. Canonical base64 is the norm, but
// Azurite decodes keys with Node's lenient Buffer.from(key, "base64"), and
// setups in the wild use keys like hex strings; the SDKs that accept such a
// key decode it the same lenient way, so tableemu does too.
func decodeKey(k string) ([]byte, error) {
	if k == "" {
		return nil, errors.New("empty key")
	}
	if raw, err := base64.StdEncoding.DecodeString(k); err == nil {
		return raw, nil
	}
	var clean []byte
	for i := 0; i < len(k); i++ {
		switch c := k[i]; {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/':
			clean = append(clean, c)
		case c == '-':
			clean = append(clean, '+')
		case c == '_':
			clean = append(clean, '/')
		case c == '=':
			i = len(k) // padding ends the data, as in Node
		default:
			return nil, fmt.Errorf("character %q is not base64", c)
		}
	}
	if len(clean)%4 == 1 { // a lone trailing character carries no whole byte
		clean = clean[:len(clean)-1]
	}
	raw, err := base64.RawStdEncoding.DecodeString(string(clean))
	if err != nil || len(raw) == 0 {
		return nil, errors.New("not base64")
	}
	return raw, nil
}

func validAccountName(n string) bool {
	if len(n) < 3 || len(n) > 24 {
		return false
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func redact(item string) string {
	if i := strings.IndexByte(item, ':'); i >= 0 {
		return item[:i] + ":…"
	}
	return item
}

// Addr is the listen address.
func (c Config) Addr() string { return net.JoinHostPort(c.Host, strconv.Itoa(c.Port)) }
