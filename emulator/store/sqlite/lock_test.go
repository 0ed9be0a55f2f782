package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// TestLockOneStorePerDirectory: a second Open of a held directory fails at
// once with a LockedError naming the holder, touches nothing there, and
// succeeds as soon as the first Store is closed. (The process-level tests
// in cmd/tableemu kill the holder with SIGKILL.)
func TestLockOneStorePerDirectory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	first, err := openStore(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Announce(12345); err != nil {
		t.Fatal(err)
	}
	before := dirNames(t, dir)

	second, err := openStore(ctx, Options{Dir: dir})
	var le *LockedError
	if !errors.As(err, &le) {
		if second != nil {
			second.Close()
		}
		t.Fatalf("second Open: %v, want a LockedError", err)
	}
	if le.PID != os.Getpid() || le.Port != 12345 || le.Dir != dir {
		t.Fatalf("LockedError %+v, want PID %d, port 12345, dir %s", le, os.Getpid(), dir)
	}
	if after := dirNames(t, dir); !equalStrings(before, after) {
		t.Fatalf("the refused Open changed the directory: %v -> %v", before, after)
	}

	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	for _, n := range dirNames(t, dir) {
		if n == LockFile {
			t.Fatalf("%s left after Close", LockFile)
		}
	}
	third, err := openStore(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	third.Close()
}

// TestLockFailedOpenLeavesNothing: an Open that fails after taking the lock
// (the file is not a database) removes its note and releases the lock.
func TestLockFailedOpenLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("not a database, not at all; just text that is long enough to have a header of sorts"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := dirNames(t, dir)
	if s, err := openStore(context.Background(), Options{Dir: dir}); err == nil {
		s.Close()
		t.Fatal("opened a file that is not a database")
	}
	if after := dirNames(t, dir); !equalStrings(before, after) {
		t.Fatalf("failed Open changed the directory: %v -> %v", before, after)
	}
	// The lock went with it: a real database opens there once the file is
	// gone.
	os.Remove(filepath.Join(dir, FileName))
	s, err := openStore(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestDirErrorOnlyForTheDirectory: a data directory that cannot be created
// (here a path under a regular file, which fails for root too) is a
// DirError naming it, so that the command line can say how to get past it;
// a file that is not a database is not one (another --location would not
// be the way out). cmd/tableemu's TestUnwritableDataDirectory covers the
// read-only directory and database file as a user without privileges.
func TestDirErrorOnlyForTheDirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := openStore(context.Background(), Options{Dir: filepath.Join(file, "data")})
	var de *DirError
	if !errors.As(err, &de) || de.Dir != filepath.Join(file, "data") || de.File != "" {
		t.Fatalf("under a file: %v, want a DirError for the directory", err)
	}

	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, FileName), []byte("not a database, not at all; just text that is long enough to have a header of sorts"), 0o644)
	if s, err := openStore(context.Background(), Options{Dir: dir}); err == nil {
		s.Close()
		t.Fatal("opened a file that is not a database")
	} else if errors.As(err, &de) {
		t.Fatalf("not a database: %v is a DirError", err)
	}
}
