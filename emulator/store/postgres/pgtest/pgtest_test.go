package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

// TestFreshDatabases: each URL names its own empty database, writable.
func TestFreshDatabases(t *testing.T) {
	ctx := context.Background()
	var names []string
	for range 2 {
		conn, err := pgx.Connect(ctx, URL(t))
		if err != nil {
			t.Fatal(err)
		}
		var name string
		var n int
		if err := conn.QueryRow(ctx, `SELECT current_database(), (SELECT count(*) FROM pg_tables WHERE schemaname = 'public')`).Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("database %s has %d tables", name, n)
		}
		if _, err := conn.Exec(ctx, `CREATE TABLE x (a int)`); err != nil {
			t.Fatal(err)
		}
		conn.Close(ctx)
		names = append(names, name)
	}
	if names[0] == names[1] {
		t.Fatalf("both URLs name %s", names[0])
	}
}
