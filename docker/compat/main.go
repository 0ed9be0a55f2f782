// Command compat runs the facts of azurite-compat.json — how Azurite's
// command lines and the Testcontainers modules start tableemu's image, what
// they wait for, the connection they build — for docker/test-compat.sh,
// which starts each container's process from the image's filesystem, and
// quotes them in the documents:
//
//	compat list                                every configuration's id
//	compat argv ID -entrypoint JSON -cmd JSON  the process Docker starts for ID
//	                                           in an image with that config,
//	                                           NUL-separated; checks that the
//	                                           Dockerfile says the same
//	compat env ID                              the environment ID adds
//	compat check ID -log FILE                  waits as the module does, checks
//	                                           the log, makes the SDK call with
//	                                           the connection it builds; prints
//	                                           that connection string
//	compat sdks ID                             other SDKs to make the call with
//	compat markdown [-check] FILE...           rewrites (checks) the quotes
//	compat compose FILE -entrypoint JSON -cmd JSON
//	                                           the process Docker starts for the
//	                                           tableemu service of a compose file
//	compat compose FILE -health                its healthcheck's command
//	compat compose FILE -app                   the connection string of its app
//
// check runs where the server's ports are on 127.0.0.1 unmapped (the test's
// network namespace), so {host} is 127.0.0.1 and {port:N} is N.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "compat:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("compat", flag.ContinueOnError)
	factsPath := fs.String("facts", "docker/compat/azurite-compat.json", "the facts `FILE`")
	dockerfile := fs.String("dockerfile", "Dockerfile", "the image's `Dockerfile`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("usage: compat [-facts FILE] [-dockerfile FILE] list|argv|env|check|sdks|markdown ...")
	}
	f, err := loadFacts(*factsPath)
	if err != nil {
		return err
	}
	verb, rest := fs.Arg(0), fs.Args()[1:]
	sub := flag.NewFlagSet("compat "+verb, flag.ContinueOnError)
	epJSON := sub.String("entrypoint", "", "the image's entrypoint, as JSON")
	cmdJSON := sub.String("cmd", "null", "the image's command, as JSON")
	logPath := sub.String("log", "", "the server's log `FILE` (stdout and stderr)")
	timeout := sub.Duration("timeout", 30*time.Second, "how long to wait before giving up (a guard, not a measure)")
	checkOnly := sub.Bool("check", false, "markdown: check the quotes instead of rewriting them")
	health := sub.Bool("health", false, "compose: the healthcheck's command")
	app := sub.Bool("app", false, "compose: the app's connection string")
	var id string
	if verb != "list" && verb != "markdown" {
		if len(rest) == 0 {
			return fmt.Errorf("%s: which configuration?", verb)
		}
		id, rest = rest[0], rest[1:]
	}
	if err := sub.Parse(rest); err != nil {
		return err
	}

	switch verb {
	case "list":
		for _, c := range f.Commands {
			fmt.Println(c.ID)
		}
		for _, m := range f.Modules {
			for _, c := range m.Configs {
				fmt.Println(c.ID)
			}
		}
		return nil
	case "markdown":
		ep, cmd, err := dockerfileCommand(*dockerfile)
		if err != nil {
			return err
		}
		for _, path := range sub.Args() {
			if *checkOnly {
				if err := quoted(path, f, ep, cmd); err != nil {
					return err
				}
				continue
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out, _, err := rewrite(string(b), f, ep, cmd)
			if err != nil {
				return err
			}
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				return err
			}
		}
		return nil
	}

	// imageCommand is the image's entrypoint and command as the image test
	// read them; the documents show those of the Dockerfile, so they must
	// be the same.
	imageCommand := func() (ep, cmd []string, err error) {
		if err := json.Unmarshal([]byte(*epJSON), &ep); err != nil {
			return nil, nil, fmt.Errorf("-entrypoint %q: %v", *epJSON, err)
		}
		if err := json.Unmarshal([]byte(*cmdJSON), &cmd); err != nil {
			return nil, nil, fmt.Errorf("-cmd %q: %v", *cmdJSON, err)
		}
		dep, dcmd, err := dockerfileCommand(*dockerfile)
		if err != nil {
			return nil, nil, err
		}
		if !slices.Equal(ep, dep) || !slices.Equal(cmd, dcmd) {
			return nil, nil, fmt.Errorf("the image runs %q %q, %s says %q %q", ep, cmd, *dockerfile, dep, dcmd)
		}
		return ep, cmd, nil
	}
	printArgv := func(words []string) {
		for _, w := range words {
			fmt.Print(w, "\x00")
		}
	}
	if verb == "compose" {
		s, err := readCompose(id)
		switch {
		case err != nil:
			return err
		case *health:
			printArgv(s.Health)
		case *app:
			fmt.Println(s.AppConnectionString)
		default:
			ep, cmd, err := imageCommand()
			if err != nil {
				return err
			}
			printArgv(Config{Entrypoint: s.Entrypoint, Cmd: s.Command}.argv(ep, cmd))
		}
		return nil
	}

	c, _, err := f.find(id)
	if err != nil {
		return err
	}
	switch verb {
	case "argv":
		ep, cmd, err := imageCommand()
		if err != nil {
			return err
		}
		printArgv(c.argv(ep, cmd))
		return nil
	case "env":
		for _, e := range c.environ(f.Key) {
			fmt.Println(e)
		}
		return nil
	case "sdks":
		fmt.Println(strings.Join(c.SDK, " "))
		return nil
	case "check":
		if *logPath == "" {
			return errors.New("check: -log FILE is the server's log")
		}
		return check(f, c, *logPath, *timeout)
	}
	return fmt.Errorf("unknown verb %q", verb)
}

const host = "127.0.0.1"

// ready is tableemu's own readiness line, printed once it accepts
// connections.
const ready = "Azurite Table service is successfully listening at "

// claims matches a line saying a blob or queue service runs: tableemu must
// never print one, whatever it is started as.
var claims = regexp.MustCompile(`(?i)(blob|queue) service (is|started|listening)`)

// check waits as the configuration does, then checks the log and makes the
// SDK call with the connection the configuration builds. For a
// configuration that does not work, it checks instead that its wait is
// never met once tableemu is ready.
func check(f *Facts, c Config, logPath string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	if c.Works {
		for _, w := range c.Wait {
			for !met(w, logPath) {
				if time.Now().After(deadline) {
					return fmt.Errorf("%s: the wait for %s is not met after %s:\n%s", c.ID, waits([]Wait{w}), timeout, readLog(logPath))
				}
				time.Sleep(50 * time.Millisecond)
			}
			fmt.Printf("%s: met: %s\n", c.ID, waits([]Wait{w}))
		}
	}
	// The start lines end with the readiness line: the log is complete.
	for !strings.Contains(readLog(logPath), ready) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: tableemu printed no readiness line in %s:\n%s", c.ID, timeout, readLog(logPath))
		}
		time.Sleep(50 * time.Millisecond)
	}
	log := readLog(logPath)
	for _, l := range strings.Split(log, "\n") {
		if claims.MatchString(l) {
			return fmt.Errorf("%s: a line claims a service tableemu does not have: %q", c.ID, l)
		}
	}
	if !c.Works {
		var unmet []string
		for _, w := range c.Wait {
			if !met(w, logPath) {
				unmet = append(unmet, waits([]Wait{w}))
			}
		}
		if len(unmet) == 0 {
			return fmt.Errorf("%s: every wait is met, yet the facts say this configuration does not work", c.ID)
		}
		fmt.Printf("%s: tableemu is ready, and as the facts say the module's wait is never met: %s\n", c.ID, strings.Join(unmet, "; "))
		return nil
	}
	for _, e := range c.Expect {
		if !strings.Contains(log, e) {
			return fmt.Errorf("%s: no %q in the log:\n%s", c.ID, e, log)
		}
	}
	identity := func(p int) int { return p }
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	var client *aztables.ServiceClient
	var err error
	if c.ConnectionString != "" {
		cs := fill(c.ConnectionString, f.Key, host, identity)
		client, err = aztables.NewServiceClientFromConnectionString(cs, nil)
		fmt.Printf("%s: connection string %s\n", c.ID, cs)
	} else {
		var cred *aztables.SharedKeyCredential
		if cred, err = aztables.NewSharedKeyCredential("devstoreaccount1", f.Key); err == nil {
			url := fill(c.ServiceURL, f.Key, host, identity)
			client, err = aztables.NewServiceClientWithSharedKey(url, cred, nil)
			fmt.Printf("%s: table service URL %s\n", c.ID, url)
		}
	}
	if err != nil {
		return fmt.Errorf("%s: client: %v", c.ID, err)
	}
	if err := roundTrip(ctx, client, c.ID); err != nil {
		return fmt.Errorf("%s: the Go SDK's call failed: %v", c.ID, err)
	}
	fmt.Printf("%s: Go SDK (aztables): created a table, wrote and read an entity, deleted the table\n", c.ID)
	return nil
}

// met says whether a readiness check passes now.
func met(w Wait, logPath string) bool {
	if w.Match == "" {
		conn, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(w.Port)), time.Second)
		if err != nil {
			return false
		}
		conn.Close()
		return true
	}
	log := readLog(logPath)
	switch w.Match {
	case "contains":
		return strings.Contains(log, w.Log)
	case "search":
		return regexp.MustCompile(w.Log).MatchString(log)
	}
	re := regexp.MustCompile(w.Log)
	if w.Match == "java-line" {
		// Pattern.matches: the whole frame, a line with its newline, where
		// '.' does not match the newline (as in Go).
		re = regexp.MustCompile(`\A(?:` + w.Log + `)\z`)
	}
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		l := sc.Text()
		if w.Match == "java-line" {
			l += "\n"
		}
		if re.MatchString(l) {
			return true
		}
	}
	return false
}

func readLog(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// roundTrip is what a test does first with the connection: a table, an
// entity written and read back, the table deleted.
func roundTrip(ctx context.Context, client *aztables.ServiceClient, id string) error {
	var r [4]byte
	rand.Read(r[:])
	name := "compat" + hex.EncodeToString(r[:])
	if _, err := client.CreateTable(ctx, name, nil); err != nil {
		return err
	}
	t := client.NewClient(name)
	ent, _ := json.Marshal(aztables.EDMEntity{
		Entity:     aztables.Entity{PartitionKey: "p", RowKey: "r"},
		Properties: map[string]any{"Configuration": id},
	})
	if _, err := t.UpsertEntity(ctx, ent, nil); err != nil {
		return err
	}
	got, err := t.GetEntity(ctx, "p", "r", nil)
	if err != nil {
		return err
	}
	var back aztables.EDMEntity
	if err := json.Unmarshal(got.Value, &back); err != nil {
		return err
	}
	if back.Properties["Configuration"] != id {
		return fmt.Errorf("read back %v, wrote %q", back.Properties, id)
	}
	_, err = client.DeleteTable(ctx, name, nil)
	return err
}
