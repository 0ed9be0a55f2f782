package emulator

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// helpGroups orders --help: Azurite's table flags first, under the names
// Azurite's documentation uses, then tableemu's own, then what is only
// accepted. A flag defined in newFlagSet but listed in no group is printed
// with tableemu's own, so --help never leaves a flag out.
var helpGroups = []struct {
	title string
	names []string
}{
	{"Azurite's flags (azurite-table), honoured:", []string{
		"tableHost", "tablePort", "tableKeepAliveTimeout", "location", "inMemoryPersistence", "loose",
		"skipApiVersionCheck", "disableProductStyleUrl", "cert", "key", "oauth", "debug", "silent", "disableTelemetry"}},
	{"Azurite's flags refused with a message:", []string{"pwd"}},
	{"Azurite's blob and queue flags (azurite), accepted and ignored with a warning:", ignoredFlags},
	{"tableemu's own flags:", nil}, // the rest
	{"Other:", []string{"help", "version"}},
}

// shortFlags are the one-letter aliases, printed beside their long names.
var shortFlags = map[string]string{"location": "l", "loose": "L", "debug": "d", "silent": "s", "help": "h", "version": "v"}

// writeHelp writes tableemu --help.
func writeHelp(w io.Writer, fs *flag.FlagSet) {
	var b strings.Builder
	b.WriteString(`Usage: tableemu [flags]
       tableemu healthcheck [flags]    (tableemu healthcheck --help)
       tableemu reset [flags]          (tableemu reset --help)
       tableemu snapshot save|restore|delete NAME, tableemu snapshot list
       tableemu export [flags] DIR     (tableemu export --help)
       tableemu import [flags] DIR|FILE.jsonl

tableemu serves the Azure Table storage API from a SQLite file, with Azurite's
command line, port, account and key. With no flags it serves
http://127.0.0.1:10002/devstoreaccount1 from ./tableemu.sqlite and prints a
connection string. Flags take one or two dashes; a value follows a space or =.
The words azurite and azurite-table in a command line are skipped with a warning.
`)
	listed := map[string]bool{}
	for _, n := range shortFlags {
		listed[n] = true
	}
	for _, g := range helpGroups {
		for _, n := range g.names {
			listed[n] = true
		}
	}
	for _, g := range helpGroups {
		names := g.names
		if names == nil {
			fs.VisitAll(func(f *flag.Flag) {
				if !listed[f.Name] {
					names = append(names, f.Name)
				}
			})
		}
		fmt.Fprintf(&b, "\n%s\n", g.title)
		for _, n := range names {
			f := fs.Lookup(n)
			if f == nil {
				continue
			}
			arg, usage := flag.UnquoteUsage(f)
			if isBool(f) {
				arg = ""
			} else {
				arg = " " + arg
			}
			left := "--" + n + arg
			if s, ok := shortFlags[n]; ok {
				left += ", -" + s + arg
			}
			if f.DefValue != "" && !isBool(f) {
				usage += " (default " + f.DefValue + ")"
			}
			if len(left) > 30 {
				fmt.Fprintf(&b, "  %s\n  %30s  %s\n", left, "", usage)
			} else {
				fmt.Fprintf(&b, "  %-30s  %s\n", left, usage)
			}
		}
	}
	b.WriteString(`
Environment:
  AZURITE_ACCOUNTS=name1:key1[:key2];name2:key1
        the accounts and their base64 keys; as in Azurite, they replace
        devstoreaccount1
  TABLEEMU_PROFILE=storage|cosmos
        as --profile (the flag wins): cosmos answers as Azure Cosmos DB for
        Table, on port 8902 unless --tablePort is given (docs/cosmos.md)

Commands:
  healthcheck [--tableHost H] [--tablePort P] [--cert F --key F]
        exit 0 if a server answers at the address these flags give (the
        container image's HEALTHCHECK); other server flags are ignored
  reset [--account NAME | --allAccounts] [--location DIR] [server flags]
        return an account to the state of a new server, on the running
        server or in DIR (docs/isolation.md)
  snapshot save|restore|delete NAME, snapshot list [same flags]
        save an account's state under NAME, put it back, delete it, list

Exit status: 0 after a clean stop (SIGINT or SIGTERM), --help or --version;
1 when the server cannot start or fails; 2 for a bad command line or
AZURITE_ACCOUNTS.
`)
	io.WriteString(w, b.String())
}

func isBool(f *flag.Flag) bool {
	bf, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && bf.IsBoolFlag()
}
