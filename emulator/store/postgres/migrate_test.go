package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/store/postgres/pgtest"
	"github.com/tableemu/tableemu/odata/edm"
)

// atSchema brings a fresh database to schema version (the migrations up
// to it applied, as that release of tableemu left it) and returns a
// connection to it, for the test to write data the way that release did.
func atSchema(t *testing.T, url string, version int) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	if _, err := conn.Exec(ctx, `CREATE TABLE schema_migrations (version bigint NOT NULL PRIMARY KEY, name text NOT NULL, applied bigint NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	names, err := migrations.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range names[:version] {
		body, err := migrations.ReadFile("migrations/" + f.Name())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, string(body)); err != nil {
			t.Fatalf("%s: %v", f.Name(), err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied) VALUES ($1, $2, $3)`,
			i+1, f.Name(), edm.TicksFromTime(time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	return conn
}

// TestMigration0002: entities and snapshot entities written at schema 1
// get creation sequence 0 (first in their partition, by RowKey); in a
// store opened with CreationOrder an insert then goes after them, an
// upsert keeps its entity's place, and a snapshot and restore keep them
// all (0002_creation_order.sql). Without the option there is no
// entities_by_seq and writes leave seq 0.
func TestMigration0002(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	conn := atSchema(t, url, 1)
	mustExec := func(q string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	mustExec(`INSERT INTO tables (id, account, name, lname, created) VALUES (3, 'devstoreaccount1', 'Orders', 'orders', 638000000000000000)`)
	for _, k := range [][2]string{{"c2", "o1"}, {"c1", "o2"}, {"c1", "o1"}, {"c1", "o3"}} {
		mustExec(`INSERT INTO entities (tid, pk, rk, ts, props) VALUES (3, $1, $2, 638000000000000001, $3)`, key(k[0]), key(k[1]), store.EncodeProps(nil))
	}
	mustExec(`INSERT INTO snapshots (id, account, name, created, tables, entities) VALUES (1, 'devstoreaccount1', 'old', 638000000000000002, 1, 2)`)
	mustExec(`INSERT INTO snapshot_tables (id, sid, name, created, entities) VALUES (1, 1, 'Orders', 638000000000000000, 2)`)
	for _, rk := range []string{"o2", "o1"} {
		mustExec(`INSERT INTO snapshot_entities (stid, pk, rk, ts, props) VALUES (1, $1, $2, 638000000000000001, $3)`, key("c1"), key(rk), store.EncodeProps(nil))
	}

	hasSeqIndex := func() bool {
		t.Helper()
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT to_regclass('entities_by_seq') IS NOT NULL`).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	plain := openURL(t, url)
	if hasSeqIndex() {
		t.Fatal("entities_by_seq without CreationOrder")
	}
	update(t, plain, func(tx *store.Tx) error {
		tb, err := tx.GetTable("devstoreaccount1", "orders")
		if err != nil {
			return err
		}
		return tx.InsertEntity(tb, &edm.Entity{PartitionKey: "c9", RowKey: "o1"})
	})
	var seq int64
	if err := conn.QueryRow(ctx, `SELECT seq FROM entities WHERE pk = $1`, key("c9")).Scan(&seq); err != nil || seq != 0 {
		t.Fatalf("an insert without CreationOrder: seq %d, %v; want 0", seq, err)
	}
	mustExec(`DELETE FROM entities WHERE pk = $1`, key("c9"))
	plain.Close()

	s, err := Open(ctx, Options{URL: url, CreationOrder: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if !hasSeqIndex() {
		t.Fatal("no entities_by_seq under CreationOrder")
	}
	order := func(where string) string {
		t.Helper()
		rows, err := conn.Query(ctx, `SELECT pk, rk FROM `+where+` ORDER BY pk, seq, rk`)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var pk, rk []byte
			if err := rows.Scan(&pk, &rk); err != nil {
				t.Fatal(err)
			}
			got = append(got, fromKey(pk)+"/"+fromKey(rk))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return strings.Join(got, " ")
	}
	const live = `entities WHERE tid IN (SELECT id FROM tables WHERE account = 'devstoreaccount1')`
	if got, want := order(live), "c1/o1 c1/o2 c1/o3 c2/o1"; got != want {
		t.Fatalf("migrated entities: %s, want %s", got, want)
	}
	if got, want := order("snapshot_entities"), "c1/o1 c1/o2"; got != want {
		t.Fatalf("migrated snapshot entities: %s, want %s", got, want)
	}
	update(t, s, func(tx *store.Tx) error {
		tb, err := tx.GetTable("devstoreaccount1", "orders")
		if err != nil {
			return err
		}
		if err := tx.InsertEntity(tb, &edm.Entity{PartitionKey: "c1", RowKey: "o0"}); err != nil {
			return err
		}
		if err := tx.PutEntity(tb, &edm.Entity{PartitionKey: "c1", RowKey: "o2"}, 0); err != nil {
			return err
		}
		if err := tx.LoadEntity(tb, &edm.Entity{PartitionKey: "c1", RowKey: "o1", Timestamp: 638000000000000009}); err != nil {
			return err
		}
		if err := tx.PutEntity(tb, &edm.Entity{PartitionKey: "c1", RowKey: "o4"}, 0); err != nil {
			return err
		}
		// Inserts sent as one statement (pending.go) take their
		// sequence in the order made.
		for _, rk := range []string{"z3", "z1", "z2"} {
			if err := tx.InsertEntity(tb, &edm.Entity{PartitionKey: "c1", RowKey: rk}); err != nil {
				return err
			}
		}
		return nil
	})
	want := "c1/o1 c1/o2 c1/o3 c1/o0 c1/o4 c1/z3 c1/z1 c1/z2 c2/o1"
	if got := order(live); got != want {
		t.Fatalf("after writes: %s, want %s", got, want)
	}
	update(t, s, func(tx *store.Tx) error { _, _, err := tx.SaveSnapshot("devstoreaccount1", "new"); return err })
	update(t, s, func(tx *store.Tx) error { _, err := tx.ResetAccount("devstoreaccount1"); return err })
	update(t, s, func(tx *store.Tx) error { _, err := tx.RestoreSnapshot("devstoreaccount1", "new"); return err })
	if got := order(live); got != want {
		t.Fatalf("after a snapshot and restore: %s, want %s", got, want)
	}
	update(t, s, func(tx *store.Tx) error { _, err := tx.RestoreSnapshot("devstoreaccount1", "old"); return err })
	if got, want := order(live), "c1/o1 c1/o2"; got != want {
		t.Fatalf("after restoring the migrated snapshot: %s, want %s", got, want)
	}
}
