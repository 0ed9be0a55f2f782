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
type Config struct {
	Host                   string // --tableHost
	Port                   int    // --tablePort
	Location               string // --location; "" means the current directory
	InMemory               bool   // --inMemoryPersistence
	Fsync                  bool   // --fsync: every commit fsynced before the answer (README, "Durability")
	Loose                  bool   // --loose
	SkipAPIVersionCheck    bool   // --skipApiVersionCheck
	DisableProductStyleURL bool   // --disableProductStyleUrl
	Cert, Key, Pwd         string // --cert, --key, --pwd
	OAuth                  string // --oauth
	Debug                  string // --debug FILE
	Silent                 bool   // --silent
	Accounts               []Account
	// NoAutoIndex turns off automatic property indexes (emulator/store/autoindex.go):
	// every filter on a non-key property then scans, as on the service.
	NoAutoIndex bool // --noAutoIndex
	// Insights classifies queries and collects design statistics
	// (insights.go); Throttle simulates the service's scalability targets
	// (throttle.go); Faults injects transient failures (faults.go).
	Insights bool   // --insights
	Throttle bool   // --throttle
	Faults   string // --faults SPEC
	// Warnings are notes about accepted but unusual input, printed at start.
	Warnings []string
}

// DefaultAccounts is the account list when AZURITE_ACCOUNTS is not set.
func DefaultAccounts() []Account {
	a, _ := parseAccounts(DevAccount + ":" + DevKey)
	return a
}

// LoadConfig reads the Azurite-compatible command line (without the program
// name) and environment. Anything it cannot honour is an error: a typo in a
// flag or in AZURITE_ACCOUNTS must stop the program, never fall back to a
// default silently.
func LoadConfig(args []string, getenv func(string) string, usage io.Writer) (Config, error) {
	c := Config{Host: "127.0.0.1", Port: 10002}
	fs := flag.NewFlagSet("tableemu", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.StringVar(&c.Host, "tableHost", c.Host, "address to listen on (0.0.0.0 for all interfaces)")
	fs.IntVar(&c.Port, "tablePort", c.Port, "port to listen on (0 picks a free port)")
	fs.StringVar(&c.Location, "location", "", "directory for the database file (default: the current directory)")
	fs.StringVar(&c.Location, "l", "", "short for --location")
	fs.BoolVar(&c.InMemory, "inMemoryPersistence", false, "keep all data in memory; nothing is written to disk")
	fs.BoolVar(&c.Fsync, "fsync", false, "fsync every commit before answering: acknowledged writes survive a power cut too (slower writes)")
	fs.BoolVar(&c.Loose, "loose", false, "relax strict checks that the emulator cannot honour over plain HTTP (account SAS signed for https)")
	fs.BoolVar(&c.Loose, "L", false, "short for --loose")
	fs.BoolVar(&c.SkipAPIVersionCheck, "skipApiVersionCheck", false, "accept any x-ms-version")
	fs.BoolVar(&c.DisableProductStyleURL, "disableProductStyleUrl", false, "never take the account from the Host header")
	fs.StringVar(&c.Cert, "cert", "", "PEM certificate file: serve HTTPS")
	fs.StringVar(&c.Key, "key", "", "PEM private key file for --cert")
	fs.StringVar(&c.Pwd, "pwd", "", "password for a PFX --cert (not supported: use PEM)")
	fs.StringVar(&c.OAuth, "oauth", "", "OAuth level: basic")
	fs.StringVar(&c.Debug, "debug", "", "write a debug log to this file")
	fs.StringVar(&c.Debug, "d", "", "short for --debug")
	fs.BoolVar(&c.Silent, "silent", false, "no access log")
	fs.BoolVar(&c.Silent, "s", false, "short for --silent")
	fs.BoolVar(&c.NoAutoIndex, "noAutoIndex", false, "never index properties that filters keep scanning")
	fs.BoolVar(&c.Insights, "insights", false, "classify queries (x-tableemu-* headers, log) and serve GET /_tableemu/insights")
	fs.BoolVar(&c.Throttle, "throttle", false, "answer 503 ServerBusy beyond ~2,000 entities/s per partition and ~20,000 per account")
	fs.StringVar(&c.Faults, "faults", "", "inject transient failures, e.g. rate=0.1,kinds=timeout|busy|drop,ops=InsertEntity (see README)")
	// Azurite flags that change nothing here are accepted so that
	// existing command lines keep working.
	var ignored bool
	fs.BoolVar(&ignored, "disableTelemetry", false, "accepted for Azurite compatibility; tableemu sends no telemetry")
	// Azurite's all-in-one command takes blob and queue flags too; a
	// compose file written for it keeps working, with a warning.
	var otherServices []string
	for _, name := range []string{"blobHost", "blobPort", "queueHost", "queuePort"} {
		fs.Func(name, "accepted for Azurite compatibility and ignored: tableemu serves tables only", func(v string) error {
			otherServices = append(otherServices, name)
			return nil
		})
	}
	// `azurite` or `azurite-table` as a word of the command line — an
	// Azurite container's command, appended to this image's entrypoint —
	// is skipped, and the flags after it are read too.
	for {
		if err := fs.Parse(args); err != nil {
			return c, err
		}
		if fs.NArg() == 0 || (fs.Arg(0) != "azurite" && fs.Arg(0) != "azurite-table") {
			break
		}
		c.Warnings = append(c.Warnings, fmt.Sprintf("%q ignored: tableemu is the table service", fs.Arg(0)))
		args = fs.Args()[1:]
	}
	if len(otherServices) > 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("--%s ignored: tableemu serves the table service only", strings.Join(otherServices, ", --")))
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q (flags start with --)", fs.Arg(0))
	}
	if net.ParseIP(c.Host) == nil && c.Host != "localhost" {
		return c, fmt.Errorf("--tableHost %q: not an IP address", c.Host)
	}
	if c.Port < 0 || c.Port > 65535 {
		return c, fmt.Errorf("--tablePort %d: not a port number", c.Port)
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
		if _, err := parseFaults(c.Faults); err != nil {
			return c, fmt.Errorf("--faults: %w", err)
		}
	}
	if c.InMemory && c.Location != "" {
		c.Warnings = append(c.Warnings, "--inMemoryPersistence: --location is ignored, nothing is written there")
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
		c.Accounts = DefaultAccounts()
	}
	return c, nil
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
