package storetest

// Concurrent transactions: no lost updates, batches all or nothing.

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata/edm"
)

// testNoLostUpdates: workers increment one counter by read, then write with
// the Timestamp read as the ETag (what If-Match does), concurrently. Every
// increment must count: the engine serializes or retries conflicting
// transactions.
func testNoLostUpdates(t *testing.T, s *store.Store) {
	createTable(t, s, "acct", "t")
	insert(t, s, "acct", "t", entity("p", "counter", prop("N", edm.NewInt64(0))))
	const workers, each = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				err := s.Update(ctx, func(tx *store.Tx) error {
					tb, err := tx.GetTable("acct", "t")
					if err != nil {
						return err
					}
					e, err := tx.GetEntity(tb, "p", "counter")
					if err != nil {
						return err
					}
					n := e.Properties[0].Value.N
					return tx.PutEntity(tb, entity("p", "counter", prop("N", edm.NewInt64(n+1))), e.Timestamp)
				})
				if err != nil {
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
	view(t, s, func(tx *store.Tx) error {
		e, err := tx.GetEntity(table(t, tx, "acct", "t"), "p", "counter")
		if err != nil || e.Properties[0].Value.N != workers*each {
			t.Errorf("counter %+v %v, want %d", e, err, workers*each)
		}
		return nil
	})
}

// testBatchAtomic: a transaction of many writes whose last fails leaves
// none, while readers running at the same time see all or nothing.
func testBatchAtomic(t *testing.T, s *store.Store) {
	createTable(t, s, "acct", "t")
	insert(t, s, "acct", "t", entity("p", "taken"))
	stop := make(chan struct{})
	var seen sync.Map
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			var n int
			err := s.View(ctx, func(tx *store.Tx) error {
				page, err := tx.QueryEntities(table(t, tx, "acct", "t"), store.EntityQuery{Top: 1000})
				n = len(page.Entities)
				return err
			})
			if err == nil {
				seen.Store(n, true)
			}
		}
	}()
	for round := 0; round < 20; round++ {
		// 50 inserts, then one that collides: all roll back.
		err := s.Update(ctx, func(tx *store.Tx) error {
			tb := table(t, tx, "acct", "t")
			for i := 0; i < 50; i++ {
				if err := tx.InsertEntity(tb, entity("p", fmt.Sprintf("%d-%02d", round, i))); err != nil {
					return err
				}
			}
			return tx.InsertEntity(tb, entity("p", "taken"))
		})
		if !errors.Is(err, store.ErrEntityExists) {
			t.Fatalf("round %d: %v, want ErrEntityExists", round, err)
		}
	}
	// And 5 that succeed, 10 writes each.
	for round := 0; round < 5; round++ {
		update(t, s, func(tx *store.Tx) error {
			tb := table(t, tx, "acct", "t")
			for i := 0; i < 10; i++ {
				if err := tx.InsertEntity(tb, entity("q", fmt.Sprintf("%d-%d", round, i))); err != nil {
					return err
				}
			}
			return nil
		})
	}
	close(stop)
	wg.Wait()
	seen.Range(func(k, _ any) bool {
		if n := k.(int); (n-1)%10 != 0 {
			t.Errorf("a reader saw %d entities: part of a batch", n)
		}
		return true
	})
	if got := scanAll(t, s, "acct", "t", store.EntityQuery{Top: 1000}); len(got) != 51 {
		t.Errorf("%d entities, want 51", len(got))
	}
}
