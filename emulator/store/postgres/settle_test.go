package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/store/postgres/pgtest"
)

// TestDeadlineAtCommitSettles: a deadline that passes while the server is
// still committing answers DeadlineExceeded (the commit may have gone
// through, its answer lost: store.Store.Update), but only once the commit
// has gone through or not: what a read made right after Update returned
// sees is what every later read sees. Without it, a COMMIT the server
// finished after Update had returned showed a client its delete undone,
// and then done (storetest's IsolationInterrupted: "snapshot not found",
// the account read between the two as it was before). A deferred trigger
// that sleeps through cancel requests keeps the server in the COMMIT for
// 300 ms, past the request's deadline of 100 ms and within settleWait.
func TestDeadlineAtCommitSettles(t *testing.T) {
	raw := pgtest.URL(t)
	s := openURL(t, raw)
	var tb store.Table
	update(t, s, func(tx *store.Tx) error {
		var err error
		if tb, err = tx.CreateTable("a", "t"); err != nil {
			return err
		}
		return tx.InsertEntity(tb, entity("p", "1", 1))
	})
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `
		CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
		DECLARE t0 timestamptz := clock_timestamp();
		BEGIN
			WHILE clock_timestamp() < t0 + interval '300 milliseconds' LOOP
				BEGIN
					PERFORM pg_sleep(0.02);
				EXCEPTION WHEN query_canceled THEN
					NULL; -- pgx's cancel request, once the deadline passed
				END;
			END LOOP;
			RETURN NULL;
		END $$;
		CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT OR DELETE ON entities
			DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()`); err != nil {
		t.Fatal(err)
	}
	exists := func(rk string) bool {
		t.Helper()
		var ok bool
		err := s.View(ctx, func(tx *store.Tx) error {
			_, err := tx.GetEntity(tb, "p", rk)
			ok = err == nil
			if errors.Is(err, store.ErrEntityNotFound) {
				err = nil
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for _, tc := range []struct {
		name, rk string
		fn       func(tx *store.Tx) error
	}{
		// BEGIN, DELETE, then COMMIT alone.
		{"delete", "1", func(tx *store.Tx) error { return tx.DeleteEntity(tb, "p", "1") }},
		// Nothing read: the deferred insert goes alone, an implicit
		// transaction (pending.go).
		{"insert", "2", func(tx *store.Tx) error { return tx.InsertEntity(tb, entity("p", "2", 2)) }},
	} {
		dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		start := time.Now()
		err := s.Update(dctx, tc.fn)
		took := time.Since(start)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: Update: %v after %v, want context.DeadlineExceeded (the trigger holds COMMIT for 300 ms)", tc.name, err, took)
		}
		first := exists(tc.rk)
		// By now the server has long finished with the session.
		time.Sleep(time.Second)
		if later := exists(tc.rk); later != first {
			t.Errorf("%s: right after Update returned (after %v) the entity exists: %v; a second later: %v", tc.name, took, first, later)
		}
	}
}
