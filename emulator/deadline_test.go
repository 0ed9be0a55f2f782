package emulator

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite" // database/sql's "sqlite": the other program holding the lock

	"github.com/tableemu/tableemu"
)

// TestRequestTimeoutParameter: the timeout parameter in whole seconds,
// cut to the service's 30; 0 or empty is the server's default; anything
// else is 400 InvalidQueryParameterValue.
func TestRequestTimeoutParameter(t *testing.T) {
	s := &Server{cfg: Config{RequestTimeout: 5 * time.Second}}
	for _, tc := range []struct {
		query string
		want  time.Duration
		bad   bool
	}{
		{"", 5 * time.Second, false},
		{"$filter=x", 5 * time.Second, false},
		{"timeout=10", 10 * time.Second, false},
		{"timeout=30", 30 * time.Second, false},
		{"timeout=31", 30 * time.Second, false},
		{"timeout=99999999999999999999999999", 30 * time.Second, false},
		{"timeout=0", 5 * time.Second, false},
		{"timeout=", 5 * time.Second, false},
		{"timeout=007", 7 * time.Second, false},
		{"timeout=abc", 0, true},
		{"timeout=-1", 0, true},
		{"timeout=1.5", 0, true},
		{"timeout=+3", 0, true},
		{"timeout=%203", 0, true},
	} {
		r := httptest.NewRequest("GET", "/devstoreaccount1/t()?"+tc.query, nil)
		got, err := s.requestTimeout(&call{r: r})
		if tc.bad {
			if e := tableemu.From(err); err == nil || e.Code != tableemu.InvalidQueryParameterValue || !strings.Contains(e.Message, "\ntableemu: ") {
				t.Errorf("%q: %v, want InvalidQueryParameterValue with a hint", tc.query, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %v, %v; want %v", tc.query, got, err, tc.want)
		}
	}
	if got, _ := (&Server{}).requestTimeout(&call{r: httptest.NewRequest("GET", "/a/t()", nil)}); got != DefaultRequestTimeout {
		t.Errorf("zero Config: %v, want %v", got, DefaultRequestTimeout)
	}
	long := &Server{cfg: Config{RequestTimeout: time.Minute}}
	if got, _ := long.requestTimeout(&call{r: httptest.NewRequest("GET", "/a/t()", nil)}); got != MaxRequestTimeout {
		t.Errorf("Config.RequestTimeout of a minute: %v, want the service's %v", got, MaxRequestTimeout)
	}
}

// TestRequestTimeoutFlag: --requestTimeout takes seconds up to the
// service's 30.
func TestRequestTimeoutFlag(t *testing.T) {
	env := func(string) string { return "" }
	for arg, want := range map[string]time.Duration{"2": 2 * time.Second, "0.25": 250 * time.Millisecond, "30": 30 * time.Second} {
		c, err := LoadConfig([]string{"--requestTimeout", arg}, env, nil)
		if err != nil || c.RequestTimeout != want {
			t.Errorf("--requestTimeout %s: %v, %v; want %v", arg, c.RequestTimeout, err, want)
		}
	}
	for _, arg := range []string{"0", "-1", "31", "2s", "NaN", "Inf"} {
		if _, err := LoadConfig([]string{"--requestTimeout", arg}, env, nil); err == nil || !strings.Contains(err.Error(), "at most 30") {
			t.Errorf("--requestTimeout %s: %v, want a refusal", arg, err)
		}
	}
	if c, err := LoadConfig(nil, env, nil); err != nil || c.RequestTimeout != 0 {
		t.Errorf("default: %v, %v", c.RequestTimeout, err)
	}
}

// TestTimeoutParameterRefusedInTheOperationsFormat: an unreadable timeout
// is 400 InvalidQueryParameterValue, in JSON for an entity operation and
// in XML for Get Table ACL.
func TestTimeoutParameterRefusedInTheOperationsFormat(t *testing.T) {
	_, hs := newTestServer(t)
	for target, ctype := range map[string]string{
		"/devstoreaccount1/t(PartitionKey='a',RowKey='b')?timeout=soon": "application/json",
		"/devstoreaccount1/t?comp=acl&timeout=-5":                       "application/xml",
	} {
		resp, err := http.DefaultClient.Do(signed(t, "GET", hs.URL, target, ""))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != "InvalidQueryParameterValue" ||
			!strings.HasPrefix(resp.Header.Get("Content-Type"), ctype) || !strings.Contains(string(body), "InvalidQueryParameterValue") {
			t.Errorf("%s: %d %s %s\n%s", target, resp.StatusCode, resp.Header.Get("x-ms-error-code"), resp.Header.Get("Content-Type"), body)
		}
	}
}

// TestSQLiteWriteBlockedOnTheLockTimesOut: while another program holds
// the database's write lock, inserts answer 500 OperationTimedOut at their
// deadline — the timeout parameter's, else --requestTimeout's — and, never
// having run, are not applied; once the lock is free writes succeed.
func TestSQLiteWriteBlockedOnTheLockTimesOut(t *testing.T) {
	s, err := New(Config{Location: t.TempDir(), Silent: true, RequestTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.Close(); s.Close() })
	send := func(method, target, body string) (*http.Response, string) {
		t.Helper()
		req := signed(t, method, hs.URL, target, body)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	if resp, body := send("POST", "/devstoreaccount1/Tables", `{"TableName":"locked"}`); resp.StatusCode != 201 {
		t.Fatalf("create table: %d %s", resp.StatusCode, body)
	}

	release := holdWriteLock(t, s.DatabasePath())

	var wg sync.WaitGroup
	for _, tc := range []struct {
		rk, query string
		deadline  time.Duration
	}{
		{"param", "?timeout=1", time.Second},
		{"default", "", 2 * time.Second},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			resp, body := send("POST", "/devstoreaccount1/locked"+tc.query, `{"PartitionKey":"p","RowKey":"`+tc.rk+`"}`)
			took := time.Since(start)
			if resp.StatusCode != 500 || resp.Header.Get("x-ms-error-code") != "OperationTimedOut" ||
				!strings.Contains(body, "Operation could not be completed within the specified time.") {
				t.Errorf("%s: %d %s %s", tc.rk, resp.StatusCode, resp.Header.Get("x-ms-error-code"), body)
			}
			if took < tc.deadline-50*time.Millisecond || took > tc.deadline+time.Second {
				t.Errorf("%s: answered after %v, deadline %v", tc.rk, took, tc.deadline)
			}
		}()
	}
	wg.Wait()

	release()
	if resp, body := send("POST", "/devstoreaccount1/locked", `{"PartitionKey":"p","RowKey":"after"}`); resp.StatusCode != 201 {
		t.Fatalf("insert once the lock is free: %d %s", resp.StatusCode, body)
	}
	for rk, want := range map[string]int{"param": 404, "default": 404, "after": 200} {
		if resp, body := send("GET", "/devstoreaccount1/locked(PartitionKey='p',RowKey='"+rk+"')", ""); resp.StatusCode != want {
			t.Errorf("entity %s: %d, want %d: %s", rk, resp.StatusCode, want, body)
		}
	}
}

// TestDeadlineContext: Err follows the clock before Done is asked for and
// Done's context after; stop releases it.
func TestDeadlineContext(t *testing.T) {
	parent, cancelParent := context.WithCancel(context.Background())
	defer cancelParent()
	d := newDeadline(parent, time.Now().Add(50*time.Millisecond))
	if err := d.Err(); err != nil {
		t.Fatalf("before the deadline: %v", err)
	}
	if at, ok := d.Deadline(); !ok || time.Until(at) > 50*time.Millisecond {
		t.Fatalf("Deadline %v %v", at, ok)
	}
	time.Sleep(60 * time.Millisecond)
	if err := d.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("past the deadline, unarmed: %v", err)
	}
	select {
	case <-d.Done():
	case <-time.After(time.Second):
		t.Fatal("Done not closed past the deadline")
	}
	if err := d.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("past the deadline, armed: %v", err)
	}

	d = newDeadline(parent, time.Now().Add(time.Hour))
	done := d.Done()
	cancelParent()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("Done not closed when the connection's context ended")
	}
	if !errors.Is(d.Err(), context.Canceled) || context.Cause(d) == nil || d.Value("k") != nil {
		t.Fatalf("Err %v, Cause %v", d.Err(), context.Cause(d))
	}
	d.stop()
	d.stop()
	(*deadlineCtx)(nil).stop()
	if det := newDeadline(parent, time.Now().Add(time.Hour)).detached(); det.Err() != nil {
		t.Fatalf("detached from an ended connection: %v", det.Err())
	}
}

// TestPropertiesWaitEndsAtTheDeadline: a request that needs the service
// properties (CORS reads them on every request) while another holds the
// cache's turn — a reset, or a read the database does not answer — stops
// waiting at its deadline.
func TestPropertiesWaitEndsAtTheDeadline(t *testing.T) {
	s, _ := newTestServer(t)
	if err := s.props.lock(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.props.unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := s.props.get(ctx, s.store, DevAccount); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
		t.Fatalf("after %v: %v, want context.DeadlineExceeded at 100 ms", time.Since(start), err)
	}
}

// holdWriteLock takes SQLite's write lock on the database at path from a
// connection of the test's own, as another process would, until release
// (or the test's end).
func holdWriteLock(t *testing.T, path string) (release func()) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	other, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	locked := true
	t.Cleanup(func() {
		if locked {
			other.ExecContext(ctx, "ROLLBACK")
		}
		other.Close()
		db.Close()
	})
	return func() {
		t.Helper()
		if _, err := other.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Fatal(err)
		}
		locked = false
	}
}
