package sqlite

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	sqlite3 "modernc.org/sqlite/lib"
)

func openTestConn(t *testing.T) *conn {
	t.Helper()
	c, err := openConn(filepath.Join(t.TempDir(), "c.sqlite"), sqlite3.SQLITE_OPEN_READWRITE|sqlite3.SQLITE_OPEN_CREATE, []string{"journal_mode = WAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	return c
}

// TestConnBindsEveryType round-trips each argument type through SQLite,
// with the empty string and the empty blob, which must not become NULL.
func TestConnBindsEveryType(t *testing.T) {
	c := openTestConn(t)
	ctx := context.Background()
	for _, tc := range []struct {
		arg      any
		typeName string
		want     any
	}{
		{nil, "null", nil},
		{int64(math.MinInt64), "integer", int64(math.MinInt64)},
		{7, "integer", int64(7)},
		{true, "integer", int64(1)},
		{false, "integer", int64(0)},
		{2.5, "real", 2.5},
		{"", "text", ""},
		{"héllo\x00after", "text", "héllo\x00after"},
		{[]byte{}, "blob", []byte{}},
		{[]byte{0, 1, 2}, "blob", []byte{0, 1, 2}},
	} {
		var typ string
		var got any
		if err := c.queryRow(ctx, "SELECT typeof(?1), ?1", []any{tc.arg}, &typ, &got); err != nil {
			t.Fatalf("%#v: %v", tc.arg, err)
		}
		if typ != tc.typeName || fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", tc.want) {
			t.Errorf("bind %#v: typeof %s value %#v, want %s %#v", tc.arg, typ, got, tc.typeName, tc.want)
		}
	}
	if _, err := c.query(ctx, "SELECT ?", struct{}{}); err == nil {
		t.Error("binding a struct succeeded")
	}
	if _, err := c.query(ctx, "SELECT ?, ?", 1); err == nil {
		t.Error("one argument for two parameters succeeded")
	}
}

// TestConnNestedStatement runs a statement again while it is still being
// stepped: the inner run gets a statement of its own, and both see the
// right rows; afterwards the cached statement is reused.
func TestConnNestedStatement(t *testing.T) {
	c := openTestConn(t)
	ctx := context.Background()
	if _, err := c.exec(ctx, "CREATE TABLE n (v INTEGER)"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if _, err := c.exec(ctx, "INSERT INTO n VALUES (?)", i); err != nil {
			t.Fatal(err)
		}
	}
	const sel = "SELECT v FROM n WHERE v <= ? ORDER BY v"
	outer, err := c.query(ctx, sel, 3)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for outer.Next() {
		v := int(outer.Int64(0))
		inner, err := c.query(ctx, sel, v)
		if err != nil {
			t.Fatal(err)
		}
		if !inner.own {
			t.Error("the nested run shares the busy statement")
		}
		for inner.Next() {
			sum += int(inner.Int64(0))
		}
		if err := inner.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := outer.Close(); err != nil {
		t.Fatal(err)
	}
	if sum != 1+(1+2)+(1+2+3) {
		t.Errorf("nested sums %d", sum)
	}
	r, err := c.query(ctx, sel, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.own {
		t.Error("the cached statement was not reused once free")
	}
	r.Close()
}

// TestConnStatementCacheBound prepares more distinct statements than the
// cache holds: it stays bounded and every statement still answers.
func TestConnStatementCacheBound(t *testing.T) {
	c := openTestConn(t)
	ctx := context.Background()
	for i := range maxCachedStmts * 2 {
		var got int
		if err := c.queryRow(ctx, fmt.Sprintf("SELECT %d + ?", i), []any{1}, &got); err != nil {
			t.Fatal(err)
		}
		if got != i+1 {
			t.Fatalf("statement %d answered %d", i, got)
		}
		if len(c.stmts) > maxCachedStmts {
			t.Fatalf("%d cached statements, bound %d", len(c.stmts), maxCachedStmts)
		}
	}
}

// TestConnErrors checks that failures carry SQLite's extended result code
// and that queryRow reports no row as errNoRows.
func TestConnErrors(t *testing.T) {
	c := openTestConn(t)
	ctx := context.Background()
	if _, err := c.exec(ctx, "CREATE TABLE u (k TEXT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.exec(ctx, "INSERT INTO u VALUES ('a')"); err != nil {
		t.Fatal(err)
	}
	_, err := c.exec(ctx, "INSERT INTO u VALUES ('a')")
	var se *Error
	if !errors.As(err, &se) || se.Code != sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || !isConstraint(err) {
		t.Errorf("duplicate key: %v", err)
	}
	if _, err := c.exec(ctx, "SELEKT 1"); !errors.As(err, &se) || se.Code&0xff != sqlite3.SQLITE_ERROR {
		t.Errorf("syntax error: %v", err)
	}
	var k string
	if err := c.queryRow(ctx, "SELECT k FROM u WHERE k = ?", []any{"zz"}, &k); !errors.Is(err, errNoRows) {
		t.Errorf("no row: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.exec(cancelled, "SELECT 1"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
	// The connection is still usable after every failure above.
	if err := c.queryRow(ctx, "SELECT k FROM u", nil, &k); err != nil || k != "a" {
		t.Errorf("after failures: %q %v", k, err)
	}
}
