package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/store/postgres/pgtest"
	"github.com/tableemu/tableemu/odata/edm"
)

// withPassword puts a password into a URL (the test server trusts
// 127.0.0.1, so it is not checked) and, if host is set, another address.
func withPassword(t *testing.T, raw, pw, host string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), pw)
	if host != "" {
		u.Host = host
	}
	return u.String()
}

// TestDescribeHidesPassword: the start line and every Open error name the
// server, never the password.
func TestDescribeHidesPassword(t *testing.T) {
	const pw = "s3cret-Pw"
	raw := pgtest.URL(t)
	u, _ := url.Parse(raw)
	s := openURL(t, withPassword(t, raw, pw, ""))
	loc := s.Describe()
	want := fmt.Sprintf("%s@%s%s", u.User.Username(), u.Host, u.Path)
	if loc.Engine != "postgres" || !loc.Shared || loc.Where != want {
		t.Errorf("Describe %+v, want postgres at %s, shared", loc, want)
	}
	// Nothing listens on a port just closed.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := l.Addr().String()
	l.Close()
	noDB := *u
	noDB.Path = "/no_such_database"
	for _, tc := range []struct{ url, says string }{
		{withPassword(t, raw, pw, closed), "cannot reach PostgreSQL at " + u.User.Username() + "@" + closed},
		{withPassword(t, noDB.String(), pw, ""), "createdb"},
		{"postgres://user:" + pw + "@host:notaport/db", "not valid"},
		{"postgres://user@host/db?sslmode=nonsense&password=" + pw, "not valid"},
	} {
		_, err := Open(context.Background(), Options{URL: tc.url})
		if err == nil || !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), pw) {
			t.Errorf("Open(%s): %v; want an error saying %q without the password", tc.url, err, tc.says)
		}
	}
}

// TestConcurrentOpen: several processes starting at once on an empty
// database all end up on one schema, applied once.
func TestConcurrentOpen(t *testing.T) {
	raw := pgtest.URL(t)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	stores := make([]*store.Store, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = Open(context.Background(), Options{URL: raw})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	conn, err := pgx.Connect(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var rows, newest int
	if err := conn.QueryRow(context.Background(), `SELECT count(*), max(version) FROM schema_migrations`).Scan(&rows, &newest); err != nil {
		t.Fatal(err)
	}
	names, _ := migrations.ReadDir("migrations")
	if rows != len(names) || newest != len(names) {
		t.Errorf("schema_migrations: %d rows up to %d, want %d", rows, newest, len(names))
	}
	// And each store works.
	update(t, stores[0], func(tx *store.Tx) error { _, err := tx.CreateTable("a", "t"); return err })
	view(t, stores[n-1], func(tx *store.Tx) error { _, err := tx.GetTable("a", "T"); return err })
}

// TestNoLostUpdates: processes sharing a database (a Store each) increment
// one entity with read-modify-write closures; serialization failures are
// retried, and no increment is lost.
func TestNoLostUpdates(t *testing.T) {
	raw := pgtest.URL(t)
	const procs, each = 6, 15
	stores := make([]*store.Store, procs)
	for i := range stores {
		stores[i] = openURL(t, raw)
	}
	var tb store.Table
	update(t, stores[0], func(tx *store.Tx) error {
		var err error
		if tb, err = tx.CreateTable("a", "counter"); err != nil {
			return err
		}
		return tx.InsertEntity(tb, entity("p", "r", 0))
	})
	var wg sync.WaitGroup
	errs := make(chan error, procs*each)
	for _, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				errs <- s.Update(context.Background(), func(tx *store.Tx) error {
					e, err := tx.GetEntity(tb, "p", "r")
					if err != nil {
						return err
					}
					n, _ := e.Get("N")
					return tx.PutEntity(tb, entity("p", "r", int(n.N)+1), e.Timestamp)
				})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	view(t, stores[procs-1], func(tx *store.Tx) error {
		e, err := tx.GetEntity(tb, "p", "r")
		if err != nil {
			return err
		}
		if n, _ := e.Get("N"); n.N != procs*each {
			t.Errorf("counter %d, want %d", n.N, procs*each)
		}
		return nil
	})
}

var errPrecondition = errors.New("412: the ETag does not match")

// TestConditionalUpdateAcrossInstances: two processes read the same
// version and both update it If-Match: exactly one succeeds, the other's
// closure runs again, sees the new version and fails the precondition.
func TestConditionalUpdateAcrossInstances(t *testing.T) {
	raw := pgtest.URL(t)
	a, b := openURL(t, raw), openURL(t, raw)
	var tb store.Table
	var etag int64
	update(t, a, func(tx *store.Tx) error {
		var err error
		if tb, err = tx.CreateTable("a", "t"); err != nil {
			return err
		}
		e := entity("p", "r", 0)
		err = tx.InsertEntity(tb, e)
		etag = e.Timestamp
		return err
	})
	var read sync.WaitGroup // both have read before either writes
	read.Add(2)
	var wg sync.WaitGroup
	results := make([]error, 2)
	runs := make([]int, 2)
	for i, s := range []*store.Store{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = s.Update(context.Background(), func(tx *store.Tx) error {
				runs[i]++
				e, err := tx.GetEntity(tb, "p", "r")
				if runs[i] == 1 {
					read.Done()
					read.Wait()
				}
				if err != nil {
					return err
				}
				if e.Timestamp != etag {
					return errPrecondition
				}
				return tx.PutEntity(tb, entity("p", "r", i+1), e.Timestamp)
			})
		}()
	}
	wg.Wait()
	ok, failed := 0, 0
	for _, err := range results {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, errPrecondition):
			failed++
		default:
			t.Fatal(err)
		}
	}
	if ok != 1 || failed != 1 || runs[0]+runs[1] < 3 {
		t.Errorf("%d succeeded, %d failed the precondition, runs %v; want one each, one closure run twice", ok, failed, runs)
	}
}

func TestFaultOf(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want store.Fault
	}{
		{&pgconn.PgError{Code: "57P01"}, store.FaultUnavailable},
		{&pgconn.PgError{Code: "57P03"}, store.FaultUnavailable},
		{&pgconn.PgError{Code: "53300"}, store.FaultUnavailable},
		{&pgconn.PgError{Code: "08006"}, store.FaultUnavailable},
		{&pgconn.PgError{Code: "53100"}, store.FaultFull},
		{&pgconn.PgError{Code: "40001"}, store.FaultBusy},
		{&pgconn.PgError{Code: "23505"}, store.NoFault},
		{&pgconn.PgError{Code: "42P01"}, store.NoFault},
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), store.FaultUnavailable},
		{io.EOF, store.FaultUnavailable},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, store.FaultUnavailable},
		{syscall.ECONNRESET, store.FaultUnavailable},
		{context.Canceled, store.NoFault},
		{errors.New("anything else"), store.NoFault},
	} {
		if got := store.FaultOf(wrap(tc.err)); got != tc.want {
			t.Errorf("%v: fault %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestClosed(t *testing.T) {
	s := open(t)
	s.Close()
	if err := s.View(context.Background(), func(*store.Tx) error { return nil }); !errors.Is(err, store.ErrClosed) {
		t.Errorf("View after Close: %v", err)
	}
	if err := s.Update(context.Background(), func(*store.Tx) error { return nil }); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Update after Close: %v", err)
	}
}

// put inserts one entity, for the recovery tests.
func put(s *store.Store, tb store.Table, rk string) error {
	return s.Update(context.Background(), func(tx *store.Tx) error {
		return tx.PutEntity(tb, &edm.Entity{PartitionKey: "p", RowKey: rk}, 0)
	})
}
