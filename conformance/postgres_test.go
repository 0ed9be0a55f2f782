package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tableemu/tableemu/emulator/store/postgres/pgtest"
)

// Several tableemu processes on one PostgreSQL database serve one Table
// service (docs/postgres.md): what one acknowledges, every other reads at
// once; conditional updates and batches race correctly across them;
// settings made through one are in force on the others within a second;
// and kill -9 of one loses nothing while the others keep serving. Each test
// gets its own database (emulator/store/postgres/pgtest), and skips when no PostgreSQL is
// available (CI installs one: .ci/pg-cluster.sh).

// instances starts n tableemu processes on one new database.
func instances(t *testing.T, n int) (procs []*proc, url string) {
	t.Helper()
	bin := buildBinary(t)
	url = pgtest.URL(t)
	for i := 0; i < n; i++ {
		p, err := startBinary(t, bin, t.TempDir(), "--database", url)
		if err != nil {
			t.Fatalf("instance %d: %v", i, err)
		}
		procs = append(procs, p)
	}
	return procs, url
}

func pgEntity(t *testing.T, m map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	must(t, err)
	return b
}

// TestPostgresReadYourWritesAcrossInstances: every write acknowledged by
// one instance is read back at once from another, tables included.
func TestPostgresReadYourWritesAcrossInstances(t *testing.T) {
	ps, _ := instances(t, 3)
	if _, err := ps[0].table(t, "shared").CreateTable(ctx(), nil); err != nil {
		t.Fatal(err)
	}
	svc, err := aztables.NewServiceClientFromConnectionString(ps[2].cs, clientOptions())
	must(t, err)
	found := false
	tp := svc.NewListTablesPager(nil)
	for tp.More() {
		page, err := tp.NextPage(ctx())
		must(t, err)
		for _, tb := range page.Tables {
			found = found || *tb.Name == "shared"
		}
	}
	if !found {
		t.Fatal("a table created through instance 0 is not listed by instance 2")
	}
	for i := 0; i < 60; i++ {
		w, r := ps[i%3].table(t, "shared"), ps[(i+1)%3].table(t, "shared")
		rk := fmt.Sprint(i)
		if _, err := w.AddEntity(ctx(), pgEntity(t, map[string]any{"PartitionKey": "p", "RowKey": rk, "V": i}), nil); err != nil {
			t.Fatal(err)
		}
		got, err := r.GetEntity(ctx(), "p", rk, nil)
		if err != nil {
			t.Fatalf("write %d through instance %d, read through %d: %v", i, i%3, (i+1)%3, err)
		}
		// Update through the reader, read through the writer.
		upd := pgEntity(t, map[string]any{"PartitionKey": "p", "RowKey": rk, "V": i + 1000})
		if _, err := r.UpdateEntity(ctx(), upd, &aztables.UpdateEntityOptions{IfMatch: &got.ETag, UpdateMode: aztables.UpdateModeReplace}); err != nil {
			t.Fatal(err)
		}
		back, err := w.GetEntity(ctx(), "p", rk, nil)
		must(t, err)
		if !strings.Contains(string(back.Value), fmt.Sprintf(`"V":%d`, i+1000)) {
			t.Fatalf("instance %d reads %s after instance %d's update", i%3, back.Value, (i+1)%3)
		}
	}
	if _, err := ps[1].table(t, "shared").Delete(ctx(), nil); err != nil {
		t.Fatal(err)
	}
	_, err = ps[0].table(t, "shared").GetEntity(ctx(), "p", "0", nil)
	wantCode(t, err, 404, "TableNotFound")
}

// TestPostgresNoLostUpdates: K clients on K instances increment one
// entity with If-Match, retrying on 412: no increment is lost.
func TestPostgresNoLostUpdates(t *testing.T) {
	const k, each = 4, 25
	ps, _ := instances(t, k)
	c0 := ps[0].table(t, "counter")
	if _, err := c0.CreateTable(ctx(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c0.AddEntity(ctx(), pgEntity(t, map[string]any{"PartitionKey": "p", "RowKey": "n", "N": 0}), nil); err != nil {
		t.Fatal(err)
	}
	var conflicts atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, k)
	for i := 0; i < k; i++ {
		c := ps[i].table(t, "counter")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < each; {
				got, err := c.GetEntity(ctx(), "p", "n", nil)
				if err != nil {
					errs <- err
					return
				}
				var e struct{ N int }
				if err := json.Unmarshal(got.Value, &e); err != nil {
					errs <- err
					return
				}
				upd := pgEntity(t, map[string]any{"PartitionKey": "p", "RowKey": "n", "N": e.N + 1})
				_, err = c.UpdateEntity(ctx(), upd, &aztables.UpdateEntityOptions{IfMatch: &got.ETag, UpdateMode: aztables.UpdateModeReplace})
				var re *azcore.ResponseError
				switch {
				case err == nil:
					done++
				case errors.As(err, &re) && re.StatusCode == 412 && re.ErrorCode == "UpdateConditionNotSatisfied":
					conflicts.Add(1)
				default:
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := ps[k-1].table(t, "counter").GetEntity(ctx(), "p", "n", nil)
	must(t, err)
	var e struct{ N int }
	must(t, json.Unmarshal(got.Value, &e))
	if e.N != k*each {
		t.Fatalf("counter %d after %d acknowledged increments on %d instances: updates lost", e.N, k*each, k)
	}
	t.Logf("%d increments through %d instances, %d If-Match conflicts retried, none lost", k*each, k, conflicts.Load())
}

// TestPostgresBatchAllOrNothing: batches submitted through one instance,
// half of them failing on their last operation, are seen whole or not at
// all by readers on the other instances.
func TestPostgresBatchAllOrNothing(t *testing.T) {
	ps, _ := instances(t, 3)
	w := ps[0].table(t, "batches")
	if _, err := w.CreateTable(ctx(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddEntity(ctx(), pgEntity(t, map[string]any{"PartitionKey": "p", "RowKey": "taken"}), nil); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var partial atomic.Value
	var reads atomic.Int64
	var wg sync.WaitGroup
	for _, p := range ps[1:] {
		r := p.table(t, "batches")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := 0
				pager := r.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'p'")})
				for pager.More() {
					page, err := pager.NextPage(ctx())
					if err != nil {
						partial.Store(err.Error())
						return
					}
					n += len(page.Entities)
				}
				reads.Add(1)
				if (n-1)%10 != 0 {
					partial.Store(fmt.Sprintf("a reader saw %d entities: part of a batch", n))
				}
			}
		}()
	}
	for round := 0; round < 20; round++ {
		var ops []aztables.TransactionAction
		for i := 0; i < 10; i++ {
			ops = append(ops, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
				Entity: pgEntity(t, map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprintf("%02d-%d", round, i)})})
		}
		fail := round%2 == 1
		if fail {
			ops[9].Entity = pgEntity(t, map[string]any{"PartitionKey": "p", "RowKey": "taken"})
		}
		_, err := w.SubmitTransaction(ctx(), ops, nil)
		if fail {
			wantCode(t, err, 202, "EntityAlreadyExists") // the Go SDK reports the batch's 202 with the failed operation's code
		} else if err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if v := partial.Load(); v != nil {
		t.Fatal(v)
	}
	t.Logf("%d full reads on two other instances during 20 batches: none saw part of one", reads.Load())
}

// TestPostgresSettingsPropagate: a stored access policy and CORS rules set
// through one instance are in force on another within a second (the
// instances cache service properties for 0.5 s on a shared database, and
// read access policies from the database on every request).
func TestPostgresSettingsPropagate(t *testing.T) {
	ps, _ := instances(t, 2)
	a, b := ps[0], ps[1]
	ca := a.table(t, "acl")
	if _, err := ca.CreateTable(ctx(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.AddEntity(ctx(), pgEntity(t, map[string]any{"PartitionKey": "p", "RowKey": "r"}), nil); err != nil {
		t.Fatal(err)
	}
	tb := &target{endpoint: b.endpoint, account: shared.account, key: shared.key}
	reader := sasClient(t, tb, "acl", policySAS(t, "acl", "reader", aztables.SASSignatureValues{}))
	_, err := reader.GetEntity(ctx(), "p", "r", nil)
	wantCode(t, err, 403, "AuthenticationFailed") // no such policy yet
	hour := time.Now().Add(time.Hour).UTC()
	_, err = ca.SetAccessPolicy(ctx(), &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{
		{ID: to.Ptr("reader"), AccessPolicy: &aztables.AccessPolicy{Expiry: &hour, Permission: to.Ptr("r")}}}})
	must(t, err)
	if _, err := reader.GetEntity(ctx(), "p", "r", nil); err != nil {
		t.Fatalf("the policy set through instance 0, used on instance 1 right after: %v", err)
	}

	ta := &target{endpoint: a.endpoint, account: shared.account, key: shared.key}
	ask := map[string]string{"Origin": "http://a.example", "Access-Control-Request-Method": "PUT"}
	wantRawCode(t, tb.preflight(t, "/", ask), 403, "CorsPreflightFailure")
	if r := ta.raw(t, "PUT", "/?restype=service&comp=properties", xmlHeaders, []byte(corsRules)); r.StatusCode != 202 {
		t.Fatalf("set CORS rules through instance 0: %d %s", r.StatusCode, r.body)
	}
	set := time.Now()
	for {
		r := tb.preflight(t, "/", ask)
		if r.StatusCode == http.StatusOK {
			t.Logf("CORS rules set through instance 0 in force on instance 1 after %s", time.Since(set).Round(time.Millisecond))
			break
		}
		if time.Since(set) > 10*time.Second {
			t.Fatalf("instance 1 still refuses the preflight 10 s after instance 0 set the rules: %d %s", r.StatusCode, r.body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPostgresUnreachableAtStart: no ready line, a non-zero exit, and a
// message that names the host and what to check, without the password.
func TestPostgresUnreachableAtStart(t *testing.T) {
	bin := buildBinary(t)
	p, err := startBinary(t, bin, t.TempDir(), "--database", "postgres://tableemu:hunter2@127.0.0.1:1/tableemu?connect_timeout=5")
	if err == nil {
		t.Fatal("tableemu started on a database nobody serves")
	}
	<-p.done
	msg := p.stderr.String()
	if p.cmd.ProcessState.ExitCode() == 0 || !strings.Contains(msg, "127.0.0.1:1") || strings.Contains(msg, "hunter2") {
		t.Fatalf("exit %d, stderr %q: want a non-zero exit and a message naming 127.0.0.1:1, never the password", p.cmd.ProcessState.ExitCode(), msg)
	}
	t.Logf("%s", strings.TrimSpace(msg))
}

// TestPostgresCrash: kill -9 of one instance in the middle of writes and
// batches (TestCrashRecovery's workers and checks) loses no acknowledged
// write and leaves no part of a batch, while another instance on the same
// database keeps serving without an error.
func TestPostgresCrash(t *testing.T) {
	skipUnderRace(t, "it kills a binary built without -race")
	bin := buildBinary(t)
	url := pgtest.URL(t)
	other, err := startBinary(t, bin, t.TempDir(), "--database", url)
	must(t, err)
	c := other.table(t, "survivor")
	if _, err := c.CreateTable(ctx(), nil); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var served atomic.Int64
	var failure atomic.Value
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			rk := fmt.Sprint(i)
			if _, err := c.AddEntity(ctx(), pgEntity(t, map[string]any{"PartitionKey": "p", "RowKey": rk}), nil); err != nil {
				failure.Store(err.Error())
				return
			}
			if _, err := c.GetEntity(ctx(), "p", rk, nil); err != nil {
				failure.Store(err.Error())
				return
			}
			served.Add(2)
		}
	}()
	crashRecovery(t, bin, "postgres", "--database", url)
	close(stop)
	<-done
	if v := failure.Load(); v != nil {
		t.Fatalf("the other instance failed while one was killed: %v", v)
	}
	t.Logf("the other instance served %d requests without an error meanwhile", served.Load())
}

// TestPostgresResetAndRestoreAcrossInstances: a snapshot saved through one
// instance is restored through another, and a reset through a third, each
// in force for every instance at once (docs/isolation.md).
func TestPostgresResetAndRestoreAcrossInstances(t *testing.T) {
	ps, _ := instances(t, 3)
	post := func(p *proc, method, path string) {
		t.Helper()
		base := strings.TrimSuffix(p.endpoint, "/devstoreaccount1")
		req, err := http.NewRequest(method, base+"/_tableemu/accounts/devstoreaccount1"+path, nil)
		must(t, err)
		// Unsigned over loopback, with the header that shows no web page
		// sent it (docs/security.md).
		req.Header.Set("Tableemu-Request", "1")
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("%s %s through %s: %d", method, path, p.endpoint, resp.StatusCode)
		}
	}
	c := ps[0].table(t, "fixtures")
	if _, err := c.CreateTable(ctx(), nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if _, err := c.AddEntity(ctx(), pgEntity(t, map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprint(i)}), nil); err != nil {
			t.Fatal(err)
		}
	}
	post(ps[0], "PUT", "/snapshots/loaded")
	// A test's writes, through instance 2.
	w := ps[2].table(t, "fixtures")
	must(t, deleteEntity(w, "0"))
	if _, err := w.AddEntity(ctx(), pgEntity(t, map[string]any{"PartitionKey": "p", "RowKey": "new"}), nil); err != nil {
		t.Fatal(err)
	}
	post(ps[1], "POST", "/snapshots/loaded/restore")
	for i, p := range ps {
		r := p.table(t, "fixtures")
		if _, err := r.GetEntity(ctx(), "p", "0", nil); err != nil {
			t.Errorf("instance %d after the restore through instance 1: %v", i, err)
		}
		_, err := r.GetEntity(ctx(), "p", "new", nil)
		wantCode(t, err, 404, "ResourceNotFound")
	}
	post(ps[2], "POST", "/reset")
	for i, p := range ps {
		_, err := p.table(t, "fixtures").GetEntity(ctx(), "p", "1", nil)
		if err == nil {
			t.Errorf("instance %d still serves the table after a reset through instance 2", i)
		}
	}
}

func deleteEntity(c *aztables.Client, rk string) error {
	_, err := c.DeleteEntity(ctx(), "p", rk, nil)
	return err
}

// TestPostgresRestartUnderLoad: PostgreSQL restarted (fast shutdown, then
// started again) while two instances serve writes and reads. Requests
// meanwhile fail only with 503 ServerBusy, which the SDKs retry; the
// instances recover by themselves, without a restart; every acknowledged
// write is there afterwards.
func TestPostgresRestartUnderLoad(t *testing.T) {
	bin := buildBinary(t)
	cl := pgtest.Own(t)
	url := cl.Database(t)
	var ps []*proc
	for i := 0; i < 2; i++ {
		p, err := startBinary(t, bin, t.TempDir(), "--database", url)
		must(t, err)
		ps = append(ps, p)
	}
	if _, err := ps[0].table(t, "load").CreateTable(ctx(), nil); err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		acked    []string
		busy     int
		other    []string
		served   atomic.Int64
		stopLoad = make(chan struct{})
		wg       sync.WaitGroup
	)
	for w := 0; w < 4; w++ {
		c := ps[w%2].table(t, "load") // clientOptions: no SDK retries, so every 503 is seen
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stopLoad:
					return
				default:
				}
				rk := fmt.Sprintf("%d-%d", w, i)
				_, err := c.AddEntity(ctx(), pgEntity(t, map[string]any{"PartitionKey": "p", "RowKey": rk}), nil)
				if err == nil {
					_, err = c.GetEntity(ctx(), "p", rk, nil)
				}
				var re *azcore.ResponseError
				mu.Lock()
				switch {
				case err == nil:
					acked = append(acked, rk)
					served.Add(2)
				case errors.As(err, &re) && re.StatusCode == 503 && re.ErrorCode == "ServerBusy":
					busy++
				default:
					other = append(other, err.Error())
				}
				mu.Unlock()
				if err != nil {
					time.Sleep(20 * time.Millisecond)
				}
			}
		}()
	}
	time.Sleep(time.Second)
	before := served.Load()
	cl.Stop(t)
	time.Sleep(1500 * time.Millisecond)
	mu.Lock()
	busyDown := busy
	mu.Unlock()
	cl.Start(t)
	restarted := time.Now()
	// Until both instances have served a write since the restart.
	for _, p := range ps {
		c := p.table(t, "load")
		for i := 0; ; i++ {
			_, err := c.AddEntity(ctx(), pgEntity(t, map[string]any{"PartitionKey": "after", "RowKey": fmt.Sprint(i)}), nil)
			if err == nil {
				break
			}
			if time.Since(restarted) > time.Minute {
				t.Fatalf("an instance still fails a minute after PostgreSQL is back: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	recovered := time.Since(restarted)
	time.Sleep(500 * time.Millisecond)
	close(stopLoad)
	wg.Wait()
	if len(other) > 0 {
		t.Fatalf("%d requests failed otherwise than 503 ServerBusy, e.g. %s", len(other), other[0])
	}
	if busyDown == 0 {
		t.Fatal("no request was answered 503 ServerBusy while PostgreSQL was down: the test did not load the instances")
	}
	for _, p := range ps {
		c := p.table(t, "load")
		for _, rk := range acked {
			if _, err := c.GetEntity(ctx(), "p", rk, nil); err != nil {
				t.Fatalf("acknowledged write %s, read through %s after the restart: %v", rk, p.endpoint, err)
			}
		}
	}
	t.Logf("%d requests served before the restart; %d answered 503 ServerBusy while PostgreSQL was down (%d in all); both instances served again %s after it was back; %d acknowledged writes all present",
		before, busyDown, busy, recovered.Round(time.Millisecond), len(acked))
}
