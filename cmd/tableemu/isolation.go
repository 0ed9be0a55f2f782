package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/tableemu/tableemu/emulator"
)

// `tableemu reset` and `tableemu snapshot`: the isolation operations
// (docs/isolation.md) from the command line, on a running server, a data
// directory or a PostgreSQL database as where.go decides.

const isolationHelp = `Usage: tableemu reset [--account NAME | --allAccounts] [server flags]
       tableemu snapshot save|restore|delete NAME [--account NAME] [server flags]
       tableemu snapshot list [--account NAME] [server flags]

reset returns an account to the state of a freshly started server (no tables,
entities or stored access policies; default service properties and CORS); its
snapshots stay. snapshot save keeps the account's state under NAME (replacing
a snapshot of that name), restore puts it back, delete forgets it, list names
them. Each is one transaction: a request running meanwhile sees the account
before or after, never in between. See docs/isolation.md.

Where: a running server at --tableHost and --tablePort (default
127.0.0.1:10002; https with --cert, whose certificate is trusted); or, with
--location DIR, that data directory: through the server that holds it, at
the port it announced, or directly in DIR/tableemu.sqlite when no server runs
on it; or, with --database URL (or TABLEEMU_DATABASE), that PostgreSQL
database directly, for every instance serving it.

  --account NAME      the account (default: the first of AZURITE_ACCOUNTS,
                      devstoreaccount1 when it is unset)
  --accountKey KEY    its key, to sign the request (default: from
                      AZURITE_ACCOUNTS, or devstoreaccount1's public key)
  --allAccounts       reset every account: in one transaction with --database,
                      or --location and no server on it; otherwise one
                      request per account of AZURITE_ACCOUNTS
  Other server flags (--silent, --loose, ...) are accepted and ignored.

Snapshot names are 1 to 64 letters, digits, '-', '_' and '.', starting with a
letter or a digit. Exit status: 0 done, 1 failed (one line on stderr says
why), 2 bad command line.
`

// isoArgs is a parsed isolation command line.
type isoArgs struct {
	where
	cmd    string // "reset" or "snapshot"
	action string // reset, save, restore, delete, list
	name   string
	all    bool
}

// parseIsolation reads `tableemu reset|snapshot ...`: the action and name
// first, then flags; the flags this command adds are taken out and the
// rest read as the server reads them (splitArgs).
func parseIsolation(cmd string, args []string, stdout io.Writer) (isoArgs, error) {
	a := isoArgs{cmd: cmd, action: "reset"}
	if cmd == "snapshot" {
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			if len(args) > 0 && isHelp(args[0]) {
				io.WriteString(stdout, isolationHelp)
				return a, flag.ErrHelp
			}
			return a, errors.New("say what to do: tableemu snapshot save|restore|delete NAME, or tableemu snapshot list")
		}
		a.action, args = args[0], args[1:]
		switch a.action {
		case "save", "restore", "delete":
			if len(args) == 0 || strings.HasPrefix(args[0], "-") {
				return a, fmt.Errorf("tableemu snapshot %s needs the snapshot's name: tableemu snapshot %s NAME", a.action, a.action)
			}
			a.name, args = args[0], args[1:]
		case "list":
		default:
			return a, fmt.Errorf("unknown action %q: tableemu snapshot save|restore|delete NAME, or tableemu snapshot list", a.action)
		}
	}
	w, vals, pos, err := splitArgs(args, map[string]bool{"allAccounts": false})
	if errors.Is(err, flag.ErrHelp) {
		io.WriteString(stdout, isolationHelp)
		return a, err
	}
	if v, ok := vals["allAccounts"]; ok {
		if a.all = v == "true"; a.cmd != "reset" {
			return a, errors.New("--allAccounts is for tableemu reset")
		}
	}
	if err != nil {
		return a, err
	}
	if len(pos) > 0 {
		return a, fmt.Errorf("unexpected argument %q (flags start with --; tableemu %s --help lists them)", pos[0], cmd)
	}
	a.where = w
	if a.all && vals["account"] != "" {
		return a, errors.New("--account and --allAccounts: give one")
	}
	return a, nil
}

// isolation runs `tableemu reset|snapshot ARGS` and returns the exit code.
func isolation(cmd string, args []string, stdout, stderr io.Writer) int {
	prefix := "tableemu " + cmd + ": "
	a, err := parseIsolation(cmd, args, stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		fmt.Fprintln(stderr, prefix+err.Error())
		return exitUsage
	}
	lines, err := a.run()
	if err != nil {
		fmt.Fprintln(stderr, prefix+err.Error())
		return exitFailed
	}
	for _, l := range lines {
		fmt.Fprintln(stdout, prefix+l)
	}
	return 0
}

// run acts where the arguments say and returns the lines to print.
func (a isoArgs) run() ([]string, error) {
	return a.act(a.offline, a.online)
}

// offline runs the operation on an open server of the data directory.
func (a isoArgs) offline(srv *emulator.Server) ([]string, error) {
	ctx := context.Background()
	switch a.action {
	case "reset":
		if a.all {
			return []string{"every account reset"}, srv.ResetAll(ctx)
		}
		return []string{a.account + " reset"}, srv.Reset(ctx, a.account)
	case "save":
		info, err := srv.Snapshot(ctx, a.account, a.name)
		return []string{a.account + " saved " + info.String()}, err
	case "restore":
		info, err := srv.Restore(ctx, a.account, a.name)
		return []string{a.account + " restored " + info.String()}, err
	case "delete":
		return []string{a.account + " deleted " + a.name}, srv.DeleteSnapshot(ctx, a.account, a.name)
	}
	list, err := srv.Snapshots(ctx, a.account)
	return listLines(a.account, list), err
}

func listLines(account string, list []emulator.SnapshotInfo) []string {
	if len(list) == 0 {
		return []string{account + " has no snapshots"}
	}
	var out []string
	for _, s := range list {
		out = append(out, account+" "+s.String())
	}
	return out
}

// online sends the operation to the server at base.
func (a isoArgs) online(base string, c *http.Client) ([]string, error) {
	accounts := []string{a.account}
	if a.all {
		accounts = nil
		for _, acct := range a.cfg.Accounts {
			accounts = append(accounts, acct.Name)
		}
	}
	var lines []string
	for _, account := range accounts {
		key, err := a.key(account)
		if err != nil {
			return lines, err
		}
		l, err := a.request(c, base, account, key)
		lines = append(lines, l...)
		if err != nil {
			return lines, err
		}
	}
	return lines, nil
}

// request sends one signed request for account and describes the answer.
func (a isoArgs) request(c *http.Client, base, account string, key []byte) ([]string, error) {
	path := "/_tableemu/accounts/" + account
	name := url.PathEscape(a.name) // the server says what is wrong with a bad name
	method := http.MethodPost
	switch a.action {
	case "reset":
		path += "/reset"
	case "save":
		method, path = http.MethodPut, path+"/snapshots/"+name
	case "restore":
		path += "/snapshots/" + name + "/restore"
	case "delete":
		method, path = http.MethodDelete, path+"/snapshots/"+name
	case "list":
		method, path = http.MethodGet, path+"/snapshots"
	}
	req, err := http.NewRequest(method, base+path, nil)
	if err != nil {
		return nil, err
	}
	// Shared Key (docs/protocol.md 9.3): the resource is /<account><path>.
	date := time.Now().UTC().Format(http.TimeFormat)
	m := hmac.New(sha256.New, key)
	io.WriteString(m, method+"\n\n\n"+date+"\n/"+account+req.URL.EscapedPath())
	req.Header.Set("x-ms-date", date)
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("User-Agent", "tableemu-"+a.cmd)
	req.Header.Set("Authorization", "SharedKey "+account+":"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	resp, err := c.Do(req)
	if err != nil {
		return nil, connectError(base, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return nil, answerError(resp, body)
	}
	switch a.action {
	case "reset":
		var r struct {
			Deleted int `json:"tablesDeleted"`
		}
		json.Unmarshal(body, &r)
		return []string{fmt.Sprintf("%s reset: %d tables deleted", account, r.Deleted)}, nil
	case "delete":
		return []string{account + " deleted " + a.name}, nil
	case "list":
		var r struct {
			Snapshots []emulator.SnapshotInfo `json:"snapshots"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, fmt.Errorf("the server's answer is not a snapshot list: %v", err)
		}
		return listLines(account, r.Snapshots), nil
	}
	var info emulator.SnapshotInfo
	if err := json.Unmarshal(body, &info); err != nil {
		return nil, fmt.Errorf("the server's answer is not a snapshot: %v", err)
	}
	verb := map[string]string{"save": " saved ", "restore": " restored "}[a.action]
	return []string{account + verb + info.String()}, nil
}

// answerError is the server's refusal in one line: status, code, message.
func answerError(resp *http.Response, body []byte) error {
	var e struct {
		E struct {
			Code    string `json:"code"`
			Message struct {
				Value string `json:"value"`
			} `json:"message"`
		} `json:"odata.error"`
	}
	if json.Unmarshal(body, &e) != nil || e.E.Code == "" {
		return fmt.Errorf("%s from the server, which may not be tableemu: %.200s", resp.Status, body)
	}
	// The service's text and tableemu's hint line, joined into one.
	msg, _, _ := strings.Cut(e.E.Message.Value, "\nRequestId:")
	return fmt.Errorf("%d %s: %s", resp.StatusCode, e.E.Code, strings.ReplaceAll(msg, "\n", " "))
}

func connectError(base string, err error) error {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("nothing listens at %s (connection refused): start tableemu, give the --tableHost and --tablePort it listens on, "+
			"or --location DIR to act on a data directory no server is using", base)
	}
	return fmt.Errorf("%s: %v", base, err)
}
