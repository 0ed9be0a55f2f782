package sqlite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tableemu/tableemu/odata/edm"
)

// TestGroupCommit: many concurrent Updates, every third failing after its
// write. Grouped into shared transactions, each failure still undoes only
// its own write, and every success is visible.
func TestGroupCommit(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	var tb Table
	if err := s.Update(ctx, func(tx *Tx) error { var err error; tb, err = tx.CreateTable("a", "g"); return err }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	const n = 300
	// Hold the writer in a closure until every Update below is waiting to
	// be handed over, so that grouping does not depend on how fast this
	// machine commits (on a loaded machine each write could otherwise be
	// committed alone before the next one arrives).
	release := make(chan struct{})
	held := make(chan error)
	go func() { held <- s.Update(ctx, func(tx *Tx) error { <-release; return nil }) }()
	var wg, started sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		started.Add(1)
		go func(i int) {
			defer wg.Done()
			started.Done()
			errs[i] = s.Update(ctx, func(tx *Tx) error {
				if err := tx.InsertEntity(tb, &edm.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}); err != nil {
					return err
				}
				if i%3 == 0 {
					return boom
				}
				return nil
			})
		}(i)
	}
	started.Wait()
	time.Sleep(50 * time.Millisecond) // from Done to blocking in Update's send
	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if s.largestGroup.Load() < 2 {
		t.Fatalf("no commit carried more than one closure (largest %d)", s.largestGroup.Load())
	}
	err := s.View(ctx, func(tx *Tx) error {
		for i := 0; i < n; i++ {
			_, err := tx.GetEntity(tb, "p", fmt.Sprint(i))
			switch {
			case i%3 == 0 && !errors.Is(errs[i], boom):
				t.Errorf("%d: %v, want boom", i, errs[i])
			case i%3 == 0 && !errors.Is(err, ErrEntityNotFound):
				t.Errorf("%d: a failed closure's write is visible (%v)", i, err)
			case i%3 != 0 && (errs[i] != nil || err != nil):
				t.Errorf("%d: update %v, read %v", i, errs[i], err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestUpdatePanicsInCaller(t *testing.T) {
	s := open(t)
	defer func() {
		if p := recover(); p != "kaboom" {
			t.Fatalf("recovered %v", p)
		}
		// The writer survives a panicking closure.
		if err := s.Update(context.Background(), func(tx *Tx) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}()
	s.Update(context.Background(), func(tx *Tx) error { panic("kaboom") })
}

func TestUpdateAfterClose(t *testing.T) {
	s, err := openStore(context.Background(), Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := s.Update(context.Background(), func(tx *Tx) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Update after Close: %v", err)
	}
}
