package sqlite

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/tableemu/tableemu/odata/edm"
)

// holdWriteLock takes the database's write lock on a connection of its
// own, as another program opening the file would, until the returned
// function is called.
func holdWriteLock(t *testing.T, s *Store) (release func()) {
	t.Helper()
	c, err := openConn(s.path, sqlite3.SQLITE_OPEN_READWRITE, []string{"busy_timeout = 5000"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.exec(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		c.close()
		t.Fatal(err)
	}
	done := false
	release = func() {
		if !done {
			done = true
			c.exec(context.Background(), "ROLLBACK")
			c.close()
		}
	}
	t.Cleanup(release)
	return release
}

// TestUpdateStopsWaitingAtTheDeadline: while another connection holds the
// write lock, writes whose deadline passes — the one the writer took into
// its group, stuck at BEGIN IMMEDIATE, and the one queued behind it — return
// at their deadline, and neither runs once the lock is free: not applied.
func TestUpdateStopsWaitingAtTheDeadline(t *testing.T) {
	s := open(t)
	bg := context.Background()
	var tb Table
	if err := s.Update(bg, func(tx *Tx) (err error) { tb, err = tx.CreateTable("a", "t"); return err }); err != nil {
		t.Fatal(err)
	}
	release := holdWriteLock(t, s)
	var ran atomic.Int32
	write := func(rk string, d time.Duration) (time.Duration, error) {
		ctx, cancel := context.WithTimeout(bg, d)
		defer cancel()
		start := time.Now()
		err := s.Update(ctx, func(tx *Tx) error {
			ran.Add(1)
			return tx.InsertEntity(tb, &edm.Entity{PartitionKey: "p", RowKey: rk})
		})
		return time.Since(start), err
	}
	type result struct {
		took time.Duration
		err  error
	}
	first := make(chan result)
	go func() { took, err := write("first", 300*time.Millisecond); first <- result{took, err} }()
	time.Sleep(50 * time.Millisecond) // the writer takes it and waits for the lock
	took2, err2 := write("second", 200*time.Millisecond)
	r1 := <-first
	for _, r := range []result{r1, {took2, err2}} {
		if !errors.Is(r.err, context.DeadlineExceeded) {
			t.Fatalf("a write waiting for the lock: %v, want context.DeadlineExceeded", r.err)
		}
		if r.took > 300*time.Millisecond+time.Second {
			t.Errorf("answered after %v, deadline 200-300 ms", r.took)
		}
	}
	release()
	if err := s.Update(bg, func(tx *Tx) error {
		return tx.InsertEntity(tb, &edm.Entity{PartitionKey: "p", RowKey: "after"})
	}); err != nil {
		t.Fatalf("a write once the lock is free: %v", err)
	}
	if n := ran.Load(); n != 0 {
		t.Fatalf("%d abandoned closures ran", n)
	}
	for rk, want := range map[string]bool{"first": false, "second": false, "after": true} {
		err := s.View(bg, func(tx *Tx) error { _, err := tx.GetEntity(tb, "p", rk); return err })
		if got := err == nil; got != want {
			t.Errorf("entity %s present %v, want %v (%v)", rk, got, want, err)
		}
	}
}

// TestUpdatePastItsDeadlineCommitsNothing: a closure the deadline
// overtakes while it runs fails at its next statement, and none of its
// writes stay, though its group commits the others'.
func TestUpdatePastItsDeadlineCommitsNothing(t *testing.T) {
	s := open(t)
	bg := context.Background()
	var tb Table
	if err := s.Update(bg, func(tx *Tx) (err error) { tb, err = tx.CreateTable("a", "t"); return err }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
	defer cancel()
	err := s.Update(ctx, func(tx *Tx) error {
		if err := tx.InsertEntity(tb, &edm.Entity{PartitionKey: "p", RowKey: "a"}); err != nil {
			return err
		}
		time.Sleep(200 * time.Millisecond)
		return tx.InsertEntity(tb, &edm.Entity{PartitionKey: "p", RowKey: "b"})
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want context.DeadlineExceeded", err)
	}
	for _, rk := range []string{"a", "b"} {
		err := s.View(bg, func(tx *Tx) error { _, err := tx.GetEntity(tb, "p", rk); return err })
		if !errors.Is(err, ErrEntityNotFound) {
			t.Errorf("entity %s of the timed-out write: %v, want not found", rk, err)
		}
	}
}

// TestViewStopsWaitingForAReader: with every reader lent, a View waits
// for one only until its deadline.
func TestViewStopsWaitingForAReader(t *testing.T) {
	s := open(t)
	var held []*conn
	for range mappedReaders {
		c, err := s.r.get()
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	defer func() {
		for _, c := range held {
			s.r.put(c)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := s.View(ctx, func(*Tx) error { return nil })
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
		t.Fatalf("after %v: %v, want context.DeadlineExceeded at 100 ms", time.Since(start), err)
	}
}
