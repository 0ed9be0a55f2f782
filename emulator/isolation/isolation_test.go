package isolation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/auth"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/store/sqlite"
	"github.com/tableemu/tableemu/odata/edm"
)

// The HTTP face, with the server's credentials and error writer, is
// tested through a running server in package emulator (isolation_test.go
// there); these tests hold the package alone to its rules.

func TestParsePath(t *testing.T) {
	for _, tc := range []struct {
		path string
		want string // op method account name, or "" for no endpoint
	}{
		{"/_tableemu/accounts/a/reset", "reset POST a "},
		{"/_tableemu/accounts/a/snapshots", "list GET a "},
		{"/_tableemu/accounts/a/snapshots/s1", "snapshot  a s1"},
		{"/_tableemu/accounts/a%2Db/snapshots/s%2E1/restore", "restore POST a-b s.1"},
		{"/_tableemu/accounts/a", ""},
		{"/_tableemu/accounts/a/", ""},
		{"/_tableemu/accounts//reset", ""},
		{"/_tableemu/accounts/a/snapshots/s1/restore/x", ""},
		{"/_tableemu/accounts/a/snapshots/%zz", ""},
		{"/_tableemu/insights", ""},
	} {
		rt, ok := parsePath(tc.path)
		got := ""
		if ok {
			got = strings.Join([]string{rt.op, rt.method, rt.account, rt.name}, " ")
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.path, got, tc.want)
		}
	}
	for p, want := range map[string]bool{"/_tableemu/accounts": true, "/_tableemu/accounts/x": true, "/_tableemu/accountsx": false, "/_tableemu/": false} {
		if IsPath(p) != want {
			t.Errorf("IsPath(%q) = %v", p, !want)
		}
	}
}

func TestSnapshotNameRule(t *testing.T) {
	for _, ok := range []string{"a", "0", "fixtures", "v1.2_x-y", strings.Repeat("a", 64)} {
		if err := checkSnapshotName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".a", "-a", "a/b", "a b", "é", strings.Repeat("a", 65)} {
		err := checkSnapshotName(bad)
		if !errors.Is(err, ErrInvalidSnapshotName) || tableemu.From(err).Code != tableemu.InvalidSnapshotName {
			t.Errorf("%q: %v, want ErrInvalidSnapshotName and InvalidSnapshotName", bad, err)
		}
	}
}

// TestOperations runs the Go operations on a real store (SQLite, in
// memory): save, reset, restore, list, delete, and the refusals with
// their sentinels and service codes. The properties lock is counted, to
// hold that every change of the service properties takes it.
func TestOperations(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var locked []string
	iso := New(Config{
		Store:       st,
		Accounts:    map[string]*auth.Account{"acct": {Name: "acct"}},
		LockProps:   func(context.Context) error { return nil },
		UnlockProps: func(account string) { locked = append(locked, account) },
		StoreError:  func(err error) error { return err },
	})
	count := func() int {
		n := 0
		err := st.View(ctx, func(tx *store.Tx) error {
			p, err := tx.QueryTables("acct", store.TableQuery{Top: 1000})
			n = len(p.Tables)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	err = st.Update(ctx, func(tx *store.Tx) error {
		for i := range 3 {
			tb, err := tx.CreateTable("acct", fmt.Sprintf("t%d", i))
			if err != nil {
				return err
			}
			if err := tx.InsertEntity(tb, &edm.Entity{PartitionKey: "p", RowKey: "r"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	if count() != 3 {
		t.Fatalf("%d tables loaded, want 3", count())
	}
	info, replaced, err := iso.Snapshot(ctx, "acct", "s")
	if err != nil || replaced || info.Tables != 3 || info.Entities != 3 || info.Account != "acct" {
		t.Fatalf("save: %+v replaced=%v %v", info, replaced, err)
	}
	if _, replaced, _ := iso.Snapshot(ctx, "acct", "s"); !replaced {
		t.Errorf("second save: not reported as replacing")
	}
	if n, err := iso.Reset(ctx, "acct"); err != nil || n != 3 || count() != 0 {
		t.Fatalf("reset: %d tables, %v; %d left", n, err, count())
	}
	if _, err := iso.Restore(ctx, "acct", "s"); err != nil || count() != 3 {
		t.Fatalf("restore: %v; %d tables", err, count())
	}
	if list, err := iso.Snapshots(ctx, "acct"); err != nil || len(list) != 1 || list[0].Name != "s" {
		t.Fatalf("list: %+v %v", list, err)
	}
	if err := iso.DeleteSnapshot(ctx, "acct", "s"); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(locked) != "[acct acct]" {
		t.Errorf("properties lock taken for %v, want reset and restore of acct", locked)
	}
	for _, tc := range []struct {
		err      error
		sentinel error
		code     tableemu.Code
	}{
		{func() error { _, err := iso.Reset(ctx, "nosuch"); return err }(), ErrUnknownAccount, tableemu.ResourceNotFound},
		{func() error { _, err := iso.Info(ctx, "acct", "s"); return err }(), ErrSnapshotNotFound, tableemu.SnapshotNotFound},
		{iso.DeleteSnapshot(ctx, "acct", "s"), ErrSnapshotNotFound, tableemu.SnapshotNotFound},
		{func() error { _, err := iso.Restore(ctx, "acct", "a/b"); return err }(), ErrInvalidSnapshotName, tableemu.InvalidSnapshotName},
	} {
		if !errors.Is(tc.err, tc.sentinel) || tableemu.From(tc.err).Code != tc.code {
			t.Errorf("%v: want %v and %s", tc.err, tc.sentinel, tc.code)
		}
	}
}
