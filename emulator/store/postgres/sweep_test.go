package postgres

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/store/postgres/pgtest"
	"github.com/tableemu/tableemu/odata/edm"
)

// TestSweepOrphans: rows of a table id that no longer exists (a write that
// committed while its table was deleted, tx.go) are removed after the next
// start; rows of live tables stay.
func TestSweepOrphans(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	s, err := Open(ctx, Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(ctx, func(tx *store.Tx) error {
		tb, err := tx.CreateTable("acct", "live")
		if err != nil {
			return err
		}
		return tx.InsertEntity(tb, &edm.Entity{PartitionKey: "p", RowKey: "r"})
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO entities (tid, pk, rk, ts, props) VALUES (987654, 'p', 'orphan', 1, ''::bytea)`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO table_acl (tid, pos, id) VALUES (987654, 0, 'orphan')`); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	e := s.Engine().(*engine)
	<-e.sweepDone
	s.Close()
	var orphans, live int
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(conn.QueryRow(ctx, `SELECT count(*) FROM entities WHERE tid = 987654`).Scan(&orphans))
	must(conn.QueryRow(ctx, `SELECT count(*) FROM entities WHERE tid <> 987654`).Scan(&live))
	if orphans != 0 || live != 1 {
		t.Errorf("after the sweep: %d orphan rows, %d live ones; want 0 and 1", orphans, live)
	}
	must(conn.QueryRow(ctx, `SELECT count(*) FROM table_acl WHERE tid = 987654`).Scan(&orphans))
	if orphans != 0 {
		t.Errorf("%d orphan policies after the sweep", orphans)
	}
}
