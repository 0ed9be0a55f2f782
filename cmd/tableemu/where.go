package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tableemu/tableemu/emulator"
	"github.com/tableemu/tableemu/emulator/store/sqlite"
)

// Where the commands that act on a server's data — reset and snapshot
// (isolation.go), export and import (transfer.go) — act, decided one way
// for all of them.
//
// Against a running server they send HTTP requests, signed with the
// account's key (Shared Key), to the address the server flags give
// (127.0.0.1:10002 by default). With --location DIR they act on that data
// directory: if a server holds it (its lock, store/sqlite/lock.go), on that
// server, at the port its lock note names; if none does, on the database
// file directly, opened like a server would open it. With --database URL
// (or TABLEEMU_DATABASE) they act on that PostgreSQL database directly,
// for every instance serving it. The server's own flags are accepted, so
// its command line can be reused.

// where is a parsed "where" of a command line.
type where struct {
	cfg        emulator.Config
	location   bool   // --location given: act on that directory
	account    string // --account, else the first configured
	accountKey string // --accountKey
	// create lets --location name a directory with no database yet, which
	// is then created (an import of fixtures before a server starts).
	create bool
}

var locationFlag = regexp.MustCompile(`^--?(location|l)(=|$)`)

// splitArgs reads a command's arguments: the command's own flags (own:
// each name, and whether it takes a value) with their values, --account
// and --accountKey among them, into vals; the arguments that are neither
// flags nor a flag's value into pos; and the rest, the server's flags, into
// the where, read as the server reads them. A flag's value may follow it
// or be joined with '='.
func splitArgs(args []string, own map[string]bool) (w where, vals map[string]string, pos []string, err error) {
	vals = map[string]string{}
	var rest []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			pos = append(pos, arg)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		takes, ok := own[name]
		if name == "account" || name == "accountKey" {
			takes, ok = true, true
		}
		if ok {
			switch {
			case takes && !hasValue:
				if i+1 >= len(args) {
					return w, vals, pos, fmt.Errorf("--%s needs a value", name)
				}
				i++
				value = args[i]
			case !takes && !hasValue:
				value = "true"
			}
			vals[name] = value
			continue
		}
		if isHelp(arg) {
			return w, vals, pos, flag.ErrHelp
		}
		w.location = w.location || locationFlag.MatchString(arg)
		rest = append(rest, arg)
		if !hasValue && serverFlagTakesValue(name) && i+1 < len(args) {
			i++
			rest = append(rest, args[i])
		}
	}
	cfg, err := emulator.LoadConfig(rest, os.Getenv, nil)
	if err != nil {
		return w, vals, pos, err
	}
	w.cfg = cfg
	w.account, w.accountKey = vals["account"], vals["accountKey"]
	if w.account == "" {
		w.account = cfg.Accounts[0].Name
	}
	return w, vals, pos, nil
}

// serverFlagTakesValue reports whether the server's flag name takes a
// value (--tablePort 10002) rather than standing alone (--silent): the
// server's own flag set says so, when asked to read the flag with nothing
// after it (flag's "flag needs an argument").
func serverFlagTakesValue(name string) bool {
	_, err := emulator.LoadConfig([]string{"--" + name}, func(string) string { return "" }, nil)
	return err != nil && strings.Contains(err.Error(), "flag needs an argument")
}

func isHelp(arg string) bool {
	switch arg {
	case "-h", "--h", "-help", "--help":
		return true
	}
	return false
}

// act runs a command where w says: offline, on a Server opened on the
// database (--database; --location with no server on it), or online, on
// the server at base. It returns the lines to print, each followed by
// where it acted.
func (w where) act(offline func(*emulator.Server) ([]string, error), online func(base string, c *http.Client) ([]string, error)) ([]string, error) {
	if w.cfg.Database != "" {
		// A shared database: every instance on it sees the change at once
		// (docs/postgres.md), so act on it directly, servers running or not.
		srv, err := emulator.New(emulator.Config{Database: w.cfg.Database, Accounts: w.cfg.Accounts, Silent: true})
		if err != nil {
			return nil, errors.New(w.cfg.Redact(err.Error()))
		}
		defer srv.Close()
		lines, err := offline(srv)
		return suffixed(lines, " (PostgreSQL database "+srv.DatabasePath()+")"), err
	}
	if !w.location {
		return w.online(w.cfg.Port, online)
	}
	dir := w.cfg.Location
	if _, err := os.Stat(filepath.Join(dir, sqlite.FileName)); err != nil && !w.create {
		return nil, fmt.Errorf("no tableemu database in %s (%s): check --location, or leave it out to reach a running server", dir, sqlite.FileName)
	}
	srv, err := emulator.New(emulator.Config{Location: dir, Accounts: w.cfg.Accounts, Silent: true})
	var le *sqlite.LockedError
	switch {
	case errors.As(err, &le) && le.Port != 0:
		return w.online(le.Port, online)
	case errors.As(err, &le):
		return nil, fmt.Errorf("%s, which has not said which port it serves yet: give its --tablePort instead of --location", le.Error())
	case err != nil:
		return nil, err
	}
	defer srv.Close()
	lines, err := offline(srv)
	return suffixed(lines, fmt.Sprintf(" (%s, no server running on it)", srv.DatabasePath())), err
}

func suffixed(lines []string, s string) []string {
	for i := range lines {
		lines[i] += s
	}
	return lines
}

// online runs fn on the server at w's host and port.
func (w where) online(port int, fn func(base string, c *http.Client) ([]string, error)) ([]string, error) {
	if port == 0 {
		return nil, errors.New("--tablePort 0 picks a free port; give the port the server printed")
	}
	c, err := w.client()
	if err != nil {
		return nil, err
	}
	base := w.cfg.Scheme() + "://" + net.JoinHostPort(probeHost(w.cfg.Host), strconv.Itoa(port))
	lines, err := fn(base, c)
	if err != nil {
		return lines, err
	}
	return suffixed(lines, " ("+base+")"), nil
}

// key is the key that signs for account.
func (w where) key(account string) ([]byte, error) {
	text := w.accountKey
	if text == "" {
		for _, acct := range w.cfg.Accounts {
			if acct.Name == account {
				return acct.RawKeys[0], nil
			}
		}
		return nil, fmt.Errorf("no key for account %s: give --accountKey, or AZURITE_ACCOUNTS as the server has it", account)
	}
	k, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return nil, errors.New("--accountKey is not base64: give the key as the connection string has it")
	}
	return k, nil
}

// client is the HTTP client of the server's requests: HTTPS trusting
// --cert's certificate when given.
func (w where) client() (*http.Client, error) {
	tr := &http.Transport{Proxy: nil} // never through HTTP_PROXY: the server is ours
	if w.cfg.Cert != "" {
		pem, err := os.ReadFile(w.cfg.Cert)
		if err != nil {
			return nil, fmt.Errorf("--cert: %v", err)
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--cert %s holds no PEM certificate", w.cfg.Cert)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: roots}
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Minute}, nil
}
