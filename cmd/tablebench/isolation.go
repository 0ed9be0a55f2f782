package main

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	_ "modernc.org/sqlite" // reads tableemu's database to wait for its collector
)

// tablebench -isolation: what a clean state between tests costs
// (docs/isolation.md), side by side with what users have without it. It
// starts tableemu and Azurite itself, each on a data directory of its
// own, and for each account size n (entities of tablebench's ~1 KiB shape,
// in 10 tables) measures:
//
//   - tableemu's reset, and its restore of a snapshot of the n entities:
//     after a test wrote 30 entities, after a reset, and from another
//     snapshot's state (every entity copied);
//   - deleting every table through the Go SDK (aztables: list the tables,
//     delete each), on tableemu and on Azurite;
//   - restarting each server on an empty directory: stop it (SIGTERM),
//     delete the directory, start it, until its readiness line, and until
//     the first request succeeds.
//
// Each figure is the median of -runs. Between runs the state is put back
// untimed, and tableemu's collector (store/sqlite/gc.go) is let finish.

const isoAccount = "devstoreaccount1"

var isoKey, _ = base64.StdEncoding.DecodeString("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==")

// server is a process tablebench started.
type server struct {
	name, bin, dir string
	args           []string
	port           int
	cmd            *exec.Cmd
	t              *target
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// start runs the server on its directory and returns how long it took to
// print Azurite's readiness line (both print it).
func (s *server) start() (time.Duration, error) {
	t0 := time.Now()
	args := []string{"--tablePort", strconv.Itoa(s.port), "--silent"}
	if s.dir != "" { // none for a server in memory: Azurite refuses both
		args = append(args, "--location", s.dir)
	}
	s.cmd = exec.Command(s.bin, append(args, s.args...)...)
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	s.cmd.Stderr = os.Stderr
	if err := s.cmd.Start(); err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if l := sc.Text(); strings.Contains(l, "successfully listening at") || strings.Contains(l, "service successfully started on") {
			ready := time.Since(t0)
			go io.Copy(io.Discard, out)
			return ready, nil
		}
	}
	s.cmd.Wait()
	return 0, fmt.Errorf("%s exited before its readiness line", s.name)
}

func (s *server) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

func (s *server) connectionString() string {
	return fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=http://127.0.0.1:%d/%s;",
		isoAccount, base64.StdEncoding.EncodeToString(isoKey), s.port, isoAccount)
}

// iso sends a signed request to one of tableemu's isolation endpoints.
func (s *server) iso(method, path string) error {
	req, _ := http.NewRequest(method, fmt.Sprintf("http://127.0.0.1:%d%s", s.port, path), nil)
	date := time.Now().UTC().Format(http.TimeFormat)
	m := hmac.New(sha256.New, isoKey)
	io.WriteString(m, date+"\n/"+isoAccount+path)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("Authorization", "SharedKeyLite "+isoAccount+":"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	resp, err := s.t.client.Do(req)
	if err != nil {
		return err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d %.300s", method, path, resp.StatusCode, b)
	}
	return nil
}

// load writes n entities into 10 tables, through batches.
func (s *server) load(n int) error {
	for tno := range 10 {
		table := "iso" + strconv.Itoa(tno)
		if err := s.t.createTable(table); err != nil {
			return err
		}
		var es []entity
		flush := func() error {
			if len(es) == 0 {
				return nil
			}
			err := s.t.batch(table, es)
			es = es[:0]
			return err
		}
		for i := tno; i < n; i += 10 {
			pk := fmt.Sprintf("p%03d", (i/10)/100)
			if len(es) > 0 && es[0].pk != pk || len(es) == 100 {
				if err := flush(); err != nil {
					return err
				}
			}
			es = append(es, makeEntity(pk, i))
		}
		if err := flush(); err != nil {
			return err
		}
	}
	return nil
}

// deleteAllTables is what a test suite does without a reset: list the
// tables through the SDK and delete each.
func (s *server) deleteAllTables() error {
	svc, err := aztables.NewServiceClientFromConnectionString(s.connectionString(), nil)
	if err != nil {
		return err
	}
	ctx := context.Background()
	pager := svc.NewListTablesPager(nil)
	var names []string
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, t := range page.Tables {
			names = append(names, *t.Name)
		}
	}
	for _, n := range names {
		if _, err := svc.DeleteTable(ctx, n, nil); err != nil {
			return err
		}
	}
	return nil
}

// testWrites is what a test does between restores: 10 inserts, 10
// replaces and 10 deletes in one table (fewer in an account too small for
// them: table iso0 holds n/10 entities).
func (s *server) testWrites(round, n int) error {
	for i := range max(1, min(10, n/40)) {
		e := makeEntity("new", round*10+i)
		if resp, body, err := s.t.do("POST", "/iso0", "", map[string]string{"Prefer": "return-no-content"}, e.body); expect(resp, body, err, http.StatusNoContent) != nil {
			return fmt.Errorf("insert: %v %.200s", err, body)
		}
		k := (i * 2) * 10 // entity numbers of table iso0 are multiples of 10
		e = makeEntity(fmt.Sprintf("p%03d", (k/10)/100), k)
		path := fmt.Sprintf("/iso0(PartitionKey='%s',RowKey='%s')", e.pk, e.rk)
		if resp, body, err := s.t.do("PUT", path, "", nil, e.body); expect(resp, body, err, http.StatusNoContent) != nil {
			return fmt.Errorf("replace: %v %.200s", err, body)
		}
		k += 10
		e = makeEntity(fmt.Sprintf("p%03d", (k/10)/100), k)
		path = fmt.Sprintf("/iso0(PartitionKey='%s',RowKey='%s')", e.pk, e.rk)
		if resp, body, err := s.t.do("DELETE", path, "", map[string]string{"If-Match": "*"}, nil); expect(resp, body, err, http.StatusNoContent) != nil {
			return fmt.Errorf("delete: %v %.200s", err, body)
		}
	}
	return nil
}

// collected waits until tableemu's collector has deleted every retired
// table, reading its database file.
func (s *server) collected() error {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(s.dir, "tableemu.sqlite")+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var n int
		if err := db.QueryRow(`SELECT (SELECT count(*) FROM tables WHERE account = '' AND base IS NULL) + (SELECT count(*) FROM snapshot_tables WHERE sid IS NULL)`).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
	}
	return fmt.Errorf("tableemu's collector has not finished in 5 minutes")
}

// timed runs setup (untimed) and op (timed) runs times; the median.
func timed(runs int, setup func(i int) error, op func() error) (time.Duration, error) {
	var ds []time.Duration
	for i := range runs {
		if setup != nil {
			if err := setup(i); err != nil {
				return 0, err
			}
		}
		t0 := time.Now()
		if err := op(); err != nil {
			return 0, err
		}
		ds = append(ds, time.Since(t0))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2], nil
}

// restart stops s, empties its directory and starts it again; it returns
// the time to the readiness line and to the first request answered.
func (s *server) restart() (ready, first time.Duration, err error) {
	t0 := time.Now()
	s.stop()
	if err := os.RemoveAll(s.dir); err != nil {
		return 0, 0, err
	}
	if ready, err = s.start(); err != nil {
		return 0, 0, err
	}
	for {
		if err := s.t.createTable("first"); err == nil {
			return ready, time.Since(t0), nil
		}
		if time.Since(t0) > time.Minute {
			return 0, 0, fmt.Errorf("%s answered no request a minute after its restart", s.name)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func runIsolation(args []string) error {
	fs := flag.NewFlagSet("tablebench -isolation", flag.ContinueOnError)
	fs.Bool("isolation", true, "")
	te := fs.String("tableemu", "", "the tableemu binary")
	az := fs.String("azurite", "", "Azurite's azurite-table (from npm i azurite@3.37.0)")
	sizes := fs.String("sizes", "1000,10000,100000", "account sizes, in entities")
	runs := fs.Int("runs", 3, "runs of each measurement (the median is printed)")
	padN := fs.Int("pad", len(pad), "length of each entity's Pad string (800: entities of ~1 KiB)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *te == "" || *az == "" {
		return fmt.Errorf("give -tableemu and -azurite")
	}
	pad = strings.Repeat("x", *padN)
	work, err := os.MkdirTemp("", "tablebench-isolation")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	servers := []*server{{name: "tableemu", bin: *te}, {name: "Azurite", bin: *az}}
	for _, s := range servers {
		s.port, s.dir = freePort(), filepath.Join(work, s.name)
		if _, err := s.start(); err != nil {
			return err
		}
		defer s.stop()
		if s.t, err = parseTarget(s.name + ",," + s.connectionString()); err != nil {
			return err
		}
	}
	tem, azu := servers[0], servers[1]
	ms := func(d time.Duration) string {
		if d < 10*time.Millisecond {
			return fmt.Sprintf("%.2f ms", float64(d)/1e6)
		}
		return fmt.Sprintf("%.0f ms", float64(d)/1e6)
	}
	fmt.Println("| entities | tableemu reset | restore after a test | restore after a reset | restore, every entity copied | SDK: delete every table, tableemu | SDK: delete every table, Azurite 3.37.0 |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			return fmt.Errorf("-sizes: %q", f)
		}
		fmt.Fprintf(os.Stderr, "tablebench: %d entities\n", n)
		row := []string{strconv.Itoa(n)}
		// Deleting every table: no snapshot yet, so tableemu deletes
		// the entities in the request, as any server must.
		var del [2]time.Duration
		for i, s := range servers {
			if err := s.deleteAllTables(); err != nil {
				return err
			}
			if del[i], err = timed(*runs, func(int) error { return s.load(n) }, s.deleteAllTables); err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
		}
		// tableemu: a snapshot of the loaded account, and an empty one.
		if err := firstErr(tem.iso("PUT", "/_tableemu/accounts/"+isoAccount+"/snapshots/empty"), tem.load(n),
			tem.iso("PUT", "/_tableemu/accounts/"+isoAccount+"/snapshots/fixtures"), tem.collected()); err != nil {
			return err
		}
		reset := func() error { return tem.iso("POST", "/_tableemu/accounts/"+isoAccount+"/reset") }
		restore := func() error { return restoreOK(tem, "fixtures") }
		for _, m := range []struct {
			setup func(i int) error
			op    func() error
		}{
			{func(int) error { return restore() }, reset},
			{func(i int) error { return firstErr(restore(), tem.testWrites(i, n)) }, restore},
			{func(i int) error { return firstErr(restore(), tem.testWrites(i, n), reset()) }, restore},
			{func(int) error { return restoreOK(tem, "empty") }, restore},
		} {
			d, err := timed(*runs, func(i int) error { return firstErr(m.setup(i), tem.collected()) }, m.op)
			if err != nil {
				return err
			}
			row = append(row, ms(d))
		}
		if err := firstErr(tem.iso("DELETE", "/_tableemu/accounts/"+isoAccount+"/snapshots/fixtures"),
			tem.iso("DELETE", "/_tableemu/accounts/"+isoAccount+"/snapshots/empty"),
			tem.iso("POST", "/_tableemu/accounts/"+isoAccount+"/reset"), tem.collected()); err != nil {
			return err
		}
		row = append(row, ms(del[0]), ms(del[1]))
		fmt.Println("| " + strings.Join(row, " | ") + " |")
	}
	fmt.Println()
	fmt.Println("| restart on an empty directory | start to the readiness line | stop, delete the directory, start, to the first request answered |")
	fmt.Println("|---|---|---|")
	for _, s := range []*server{azu, tem} {
		var readies, firsts []time.Duration
		for range *runs {
			r, f, err := s.restart()
			if err != nil {
				return err
			}
			readies, firsts = append(readies, r), append(firsts, f)
		}
		fmt.Printf("| %s | %s | %s |\n", s.name, ms(median(readies)), ms(median(firsts)))
	}
	fmt.Printf("\nmedians of %d runs; entities of %d bytes of JSON in 10 tables; %d CPUs, %s\n",
		*runs, len(makeEntity("p000", 0).body), runtime.NumCPU(), cpuModel())
	return nil
}

func restoreOK(s *server, name string) error {
	return s.iso("POST", "/_tableemu/accounts/"+isoAccount+"/snapshots/"+name+"/restore")
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func median(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}
