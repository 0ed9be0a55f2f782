package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/odata/edm"
)

// Migrations are forward-only: each file migrations/NNNN_name.sql moves a
// database from schema NNNN-1 to NNNN, in order, once. There are no down
// migrations: a database is never taken back to an older schema, and a
// tableemu refuses a database from a newer one. Each migration is tested
// here from the schema before it, with data written as the code of that
// schema wrote it.

// migrationFiles lists the embedded migrations in order.
func migrationFiles(t *testing.T) []string {
	t.Helper()
	entries, err := migrations.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func latestMigration(t *testing.T) int {
	t.Helper()
	names := migrationFiles(t)
	n, _ := strconv.Atoi(strings.SplitN(names[len(names)-1], "_", 2)[0])
	return n
}

// TestMigrationsNumbered: 0001, 0002, … with no gap and no repeat, so
// that user_version names the schema; and each has its test from the
// schema before it, TestMigrationNNNN, in this package's tests.
func TestMigrationsNumbered(t *testing.T) {
	tests, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	for _, f := range tests {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	for i, name := range migrationFiles(t) {
		n, err := strconv.Atoi(strings.SplitN(name, "_", 2)[0])
		if err != nil || n != i+1 || !strings.HasSuffix(name, ".sql") {
			t.Fatalf("migration %d is %s, want %04d_<name>.sql", i+1, name, i+1)
		}
		if test := fmt.Sprintf("func TestMigration%04d(t *testing.T)", n); !strings.Contains(src.String(), test) {
			t.Errorf("%s has no test from schema %d: want %s", name, n-1, test)
		}
	}
}

// atSchema creates a database in dir at schema version (the migrations up
// to it applied, as that release of tableemu left it) and returns a
// connection to it, for the test to write data the way that release did.
func atSchema(t *testing.T, dir string, version int) *conn {
	t.Helper()
	c, err := openConn(filepath.Join(dir, FileName), sqlite3.SQLITE_OPEN_READWRITE|sqlite3.SQLITE_OPEN_CREATE,
		[]string{"journal_mode = WAL", "foreign_keys = 1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range migrationFiles(t)[:version] {
		body, err := migrations.ReadFile("migrations/" + name)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(strings.SplitN(name, "_", 2)[0])
		if err := c.execScript(context.Background(), fmt.Sprintf("BEGIN;\n%s;\nPRAGMA user_version = %d;\nCOMMIT;", body, n)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return c
}

func mustExec(t *testing.T, c *conn, q string, args ...any) {
	t.Helper()
	if _, err := c.exec(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// TestMigration0001: an empty file becomes a schema 1 database (and then
// the latest).
func TestMigration0001(t *testing.T) {
	dir := t.TempDir()
	atSchema(t, dir, 0).close()
	s, err := openStore(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v := schemaVersion(t, s); v != latestMigration(t) {
		t.Fatalf("schema %d after Open, want %d", v, latestMigration(t))
	}
	err = s.Update(context.Background(), func(tx *Tx) error {
		_, err := tx.CreateTable("devstoreaccount1", "t")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMigration0002: a schema 1 database (tables and entities, no ACLs or
// service properties yet) keeps its tables and entities, and takes stored
// access policies and service properties; a policy goes with its table.
func TestMigration0002(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := atSchema(t, dir, 1)
	mustExec(t, c, `INSERT INTO tables (id, account, name, lname, created) VALUES (7, 'devstoreaccount1', 'Orders', 'orders', 638000000000000000)`)
	props := store.EncodeProps([]edm.Property{{Name: "Total", Value: edm.NewDouble(12.5)}, {Name: "Note", Value: edm.NewString("kept")}})
	mustExec(t, c, `INSERT INTO entities (tid, pk, rk, ts, props) VALUES (7, ?, ?, 638000000000000001, ?)`, sortKey("customer42"), sortKey("😀"), props)
	c.close()

	s, err := openStore(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatalf("Open on schema 1: %v", err)
	}
	defer s.Close()
	if v := schemaVersion(t, s); v < 2 {
		t.Fatalf("schema %d after Open", v)
	}
	err = s.Update(ctx, func(tx *Tx) error {
		tb, err := tx.GetTable("devstoreaccount1", "ORDERS")
		if err != nil {
			return err
		}
		e, err := tx.GetEntity(tb, "customer42", "😀")
		if err != nil {
			return err
		}
		if e.Timestamp != 638000000000000001 || len(e.Properties) != 2 || e.Properties[0].Value.F != 12.5 || e.Properties[1].Value.S != "kept" {
			return fmt.Errorf("entity after migration: %+v", e)
		}
		if err := tx.SetTableACL(tb, []SignedIdentifier{{ID: "p1", Permission: "r"}}); err != nil {
			return err
		}
		return tx.SetServiceProperties("devstoreaccount1", "<StorageServiceProperties/>")
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(ctx, func(tx *Tx) error {
		if err := tx.DeleteTable("devstoreaccount1", "orders"); err != nil {
			return err
		}
		tb, err := tx.CreateTable("devstoreaccount1", "orders")
		if err != nil {
			return err
		}
		acl, err := tx.TableACL(tb)
		if err == nil && len(acl) != 0 {
			err = fmt.Errorf("a new table inherited policies: %+v", acl)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMigration0003: a schema 2 database (no snapshots) keeps its tables,
// entities, policies and service properties, with no table based on a
// snapshot (so no write is recorded); then it takes snapshots, restores and
// resets, and the collector deletes what they retire.
func TestMigration0003(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := atSchema(t, dir, 2)
	mustExec(t, c, `INSERT INTO tables (id, account, name, lname, created) VALUES (3, 'devstoreaccount1', 'Orders', 'orders', 638000000000000000)`)
	mustExec(t, c, `INSERT INTO entities (tid, pk, rk, ts, props) VALUES (3, 'c1', 'o1', 638000000000000001, ?)`,
		store.EncodeProps([]edm.Property{{Name: "Total", Value: edm.NewDouble(12.5)}}))
	mustExec(t, c, `INSERT INTO table_acl (tid, pos, id, permission) VALUES (3, 0, 'p1', 'r')`)
	mustExec(t, c, `INSERT INTO service_properties (account, xml) VALUES ('devstoreaccount1', '<StorageServiceProperties/>')`)
	c.close()

	s, err := openStore(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatalf("Open on schema 2: %v", err)
	}
	defer s.Close()
	if v := schemaVersion(t, s); v < 3 {
		t.Fatalf("schema %d after Open", v)
	}
	before := dump(t, s, "devstoreaccount1")
	if !strings.Contains(before, `"c1" "o1" 638000000000000001 Total=12.5`) || !strings.Contains(before, "acl p1 r") || !strings.Contains(before, "properties true <StorageServiceProperties/>") {
		t.Fatalf("after migration the account shows\n%s", before)
	}
	err = s.Update(ctx, func(tx *Tx) error {
		tb, err := tx.GetTable("devstoreaccount1", "orders")
		if err != nil {
			return err
		}
		if tb.Base != 0 {
			return fmt.Errorf("a migrated table has base %d", tb.Base)
		}
		if err := tx.InsertEntity(tb, &edm.Entity{PartitionKey: "c1", RowKey: "o2"}); err != nil {
			return err
		}
		var n int
		if err := tx.queryRow(`SELECT count(*) FROM entity_changes`).Scan(&n); err != nil || n != 0 {
			return fmt.Errorf("a write to a migrated table was recorded: %d, %v", n, err)
		}
		return tx.DeleteEntity(tb, "c1", "o2")
	})
	if err != nil {
		t.Fatal(err)
	}
	update(t, s, func(tx *Tx) error { _, _, err := tx.SaveSnapshot("devstoreaccount1", "migrated"); return err })
	update(t, s, func(tx *Tx) error { _, err := tx.ResetAccount("devstoreaccount1"); return err })
	update(t, s, func(tx *Tx) error { _, err := tx.RestoreSnapshot("devstoreaccount1", "migrated"); return err })
	if got := dump(t, s, "devstoreaccount1"); got != before {
		t.Fatalf("reset and restore of the migrated account give\n%s\nwant\n%s", got, before)
	}
	if err := s.CollectGarbage(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestMigration0004: entities and snapshot entities written at schema 3
// get creation sequence 0 (first in their partition, by RowKey); in a
// store opened with CreationOrder an insert then goes after them, an
// upsert keeps its entity's, and a snapshot and restore keep them all
// (0004_creation_order.sql). Without the option there is no
// entities_by_seq and writes leave seq 0.
func TestMigration0004(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := atSchema(t, dir, 3)
	mustExec(t, c, `INSERT INTO tables (id, account, name, lname, created) VALUES (3, 'devstoreaccount1', 'Orders', 'orders', 638000000000000000)`)
	for _, k := range [][2]string{{"c2", "o1"}, {"c1", "o2"}, {"c1", "o1"}, {"c1", "o3"}} {
		mustExec(t, c, `INSERT INTO entities (tid, pk, rk, ts, props) VALUES (3, ?, ?, 638000000000000001, ?)`, k[0], k[1], store.EncodeProps(nil))
	}
	mustExec(t, c, `INSERT INTO snapshots (id, account, name, created, tables, entities) VALUES (1, 'devstoreaccount1', 'old', 638000000000000002, 1, 2)`)
	mustExec(t, c, `INSERT INTO snapshot_tables (id, sid, name, created, entities) VALUES (1, 1, 'Orders', 638000000000000000, 2)`)
	for _, rk := range []string{"o2", "o1"} {
		mustExec(t, c, `INSERT INTO snapshot_entities (stid, pk, rk, ts, props) VALUES (1, 'c1', ?, 638000000000000001, ?)`, rk, store.EncodeProps(nil))
	}
	c.close()

	plain, err := openStore(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatalf("Open on schema 3: %v", err)
	}
	if v := schemaVersion(t, plain); v < 4 {
		t.Fatalf("schema %d after Open", v)
	}
	var s *Store
	seqs := func(table string) string {
		t.Helper()
		var got []string
		err := s.View(ctx, func(tx *Tx) error {
			rows, err := tx.query(`SELECT pk, rk, seq FROM ` + table + ` ORDER BY pk, seq, rk`)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				got = append(got, fmt.Sprintf("%s/%s=%d", rows.Text(0), rows.Text(1), rows.Int64(2)))
			}
			return rows.Close()
		})
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(got, " ")
	}
	s = plain
	if got, want := seqs("entities"), "c1/o1=0 c1/o2=0 c1/o3=0 c2/o1=0"; got != want {
		t.Fatalf("migrated entities: %s, want %s", got, want)
	}
	if got, want := seqs("snapshot_entities"), "c1/o1=0 c1/o2=0"; got != want {
		t.Fatalf("migrated snapshot entities: %s, want %s", got, want)
	}
	hasSeqIndex := func() bool {
		t.Helper()
		var n int
		if err := s.View(ctx, func(tx *Tx) error {
			return tx.queryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'entities_by_seq'`).Scan(&n)
		}); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	if hasSeqIndex() {
		t.Fatal("entities_by_seq without CreationOrder")
	}
	update(t, s, func(tx *Tx) error {
		tb, err := tx.GetTable("devstoreaccount1", "orders")
		if err != nil {
			return err
		}
		return tx.InsertEntity(tb, &edm.Entity{PartitionKey: "c9", RowKey: "o1"})
	})
	if got, want := seqs("entities WHERE pk = 'c9'"), "c9/o1=0"; got != want {
		t.Fatalf("an insert without CreationOrder: %s, want %s", got, want)
	}
	update(t, s, func(tx *Tx) error {
		tb, err := tx.GetTable("devstoreaccount1", "orders")
		if err != nil {
			return err
		}
		return tx.DeleteEntity(tb, "c9", "o1")
	})
	plain.Close()

	s, err = openStore(ctx, Options{Dir: dir, CreationOrder: true})
	if err != nil {
		t.Fatalf("Open with CreationOrder: %v", err)
	}
	defer s.Close()
	if !hasSeqIndex() {
		t.Fatal("no entities_by_seq under CreationOrder")
	}
	update(t, s, func(tx *Tx) error {
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
		return tx.PutEntity(tb, &edm.Entity{PartitionKey: "c3", RowKey: "o1"}, 0)
	})
	want := "c1/o1=0 c1/o2=0 c1/o3=0 c1/o0=1 c2/o1=0 c3/o1=1"
	if got := seqs("entities"); got != want {
		t.Fatalf("after writes: %s, want %s", got, want)
	}
	update(t, s, func(tx *Tx) error { _, _, err := tx.SaveSnapshot("devstoreaccount1", "new"); return err })
	update(t, s, func(tx *Tx) error { _, err := tx.ResetAccount("devstoreaccount1"); return err })
	update(t, s, func(tx *Tx) error { _, err := tx.RestoreSnapshot("devstoreaccount1", "new"); return err })
	if got := seqs("entities WHERE tid IN (SELECT id FROM tables WHERE account <> '')"); got != want {
		t.Fatalf("after a snapshot and restore: %s, want %s", got, want)
	}
	// A restore over the restored table rewrites only the keys written
	// since (entity_changes): a deleted entity comes back in its place.
	update(t, s, func(tx *Tx) error {
		tb, err := tx.GetTable("devstoreaccount1", "orders")
		if err != nil {
			return err
		}
		if err := tx.DeleteEntity(tb, "c1", "o1"); err != nil {
			return err
		}
		return tx.InsertEntity(tb, &edm.Entity{PartitionKey: "c1", RowKey: "o1"})
	})
	if got, moved := seqs("entities WHERE tid IN (SELECT id FROM tables WHERE account <> '')"), "c1/o2=0 c1/o3=0 c1/o0=1 c1/o1=2 c2/o1=0 c3/o1=1"; got != moved {
		t.Fatalf("a deleted entity inserted again: %s, want %s", got, moved)
	}
	update(t, s, func(tx *Tx) error { _, err := tx.RestoreSnapshot("devstoreaccount1", "new"); return err })
	if got := seqs("entities WHERE tid IN (SELECT id FROM tables WHERE account <> '')"); got != want {
		t.Fatalf("after a second restore: %s, want %s", got, want)
	}
	update(t, s, func(tx *Tx) error { _, err := tx.RestoreSnapshot("devstoreaccount1", "old"); return err })
	if got, want := seqs("entities WHERE tid IN (SELECT id FROM tables WHERE account <> '')"), "c1/o1=0 c1/o2=0"; got != want {
		t.Fatalf("after restoring the migrated snapshot: %s, want %s", got, want)
	}
}

// TestNewerSchemaRefused: a database from a later tableemu (user_version
// past the last migration here) is not opened, and not changed.
func TestNewerSchemaRefused(t *testing.T) {
	dir := t.TempDir()
	c := atSchema(t, dir, latestMigration(t))
	mustExec(t, c, fmt.Sprintf("PRAGMA user_version = %d", latestMigration(t)+1))
	c.close()
	before, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	s, err := openStore(context.Background(), Options{Dir: dir})
	if err == nil {
		s.Close()
		t.Fatal("opened a database of a newer schema")
	}
	if !strings.Contains(err.Error(), "newer tableemu") {
		t.Fatalf("error %q does not say the database is from a newer tableemu", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, FileName))
	if string(before) != string(after) {
		t.Fatal("the refused database was changed")
	}
}
