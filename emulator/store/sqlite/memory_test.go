package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tableemu/tableemu/odata/edm"
)

// TestDurabilityPragmas: each mode sets on every connection what docs/durability.md
// says it does — WAL always; synchronous=NORMAL by default (no fsync per
// commit), FULL with Fsync, OFF in memory.
func TestDurabilityPragmas(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		sync int // PRAGMA synchronous: 0 OFF, 1 NORMAL, 2 FULL
	}{
		{"default", Options{Dir: t.TempDir()}, 1},
		{"fsync", Options{Dir: t.TempDir(), Fsync: true}, 2},
		{"memory", Options{InMemory: true}, 0},
		{"memory, fsync ignored", Options{InMemory: true, Fsync: true}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.opts.InMemory && memoryBase() == "" {
				t.Skip("no memory file system here")
			}
			s, err := openStore(context.Background(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for name, p := range map[string]*pool{"writer": s.w, "mapped reader": s.r, "point reader": s.rp} {
				c, err := p.get()
				if err != nil {
					t.Fatal(err)
				}
				var sync int
				var mode string
				err = c.queryRow(context.Background(), "PRAGMA synchronous", nil, &sync)
				if err == nil {
					err = c.queryRow(context.Background(), "PRAGMA journal_mode", nil, &mode)
				}
				p.put(c)
				if err != nil {
					t.Fatal(err)
				}
				if sync != tc.sync || mode != "wal" {
					t.Errorf("%s: synchronous %d, journal_mode %s; want %d, wal", name, sync, mode, tc.sync)
				}
				// In memory every page cache stays at SQLite's default
				// (-2000: 2 MiB); on disk the writer keeps 16 MiB.
				if name == "writer" {
					c, _ := p.get()
					var cache int
					err := c.queryRow(context.Background(), "PRAGMA cache_size", nil, &cache)
					p.put(c)
					if want := map[bool]int{true: -2000, false: -16000}[tc.opts.InMemory]; err != nil || cache != want {
						t.Errorf("writer cache_size %d (%v), want %d", cache, err, want)
					}
				}
			}
		})
	}
}

// TestInMemoryConcurrentReaders: in memory, a read transaction held open
// does not stop another reader or the writer, and it keeps its snapshot
// while the writer commits; later readers see the commit. (A single
// connection, as the in-memory store once was, would hang here.)
func TestInMemoryConcurrentReaders(t *testing.T) {
	needMemoryFS(t)
	s, err := openStore(context.Background(), Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	var tb Table
	put := func(v string) error {
		return s.Update(ctx, func(tx *Tx) error {
			return tx.PutEntity(tb, &edm.Entity{PartitionKey: "p", RowKey: "r", Properties: []edm.Property{{Name: "V", Value: edm.NewString(v)}}}, 0)
		})
	}
	read := func(tx *Tx) string {
		e, err := tx.GetEntity(tb, "p", "r")
		if err != nil {
			t.Error(err)
			return ""
		}
		v, _ := e.Get("V")
		return v.S
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Update(ctx, func(tx *Tx) error { var err error; tb, err = tx.CreateTable("a", "t"); return err }))
	must(put("one"))

	opened, updated, finished := make(chan struct{}), make(chan struct{}), make(chan string, 1)
	var once sync.Once
	release := func() { once.Do(func() { close(updated) }) }
	defer release() // before Close, which waits for the reader
	go func() {
		var before, after string
		s.View(ctx, func(tx *Tx) error {
			before = read(tx)
			close(opened)
			<-updated
			after = read(tx)
			return nil
		})
		finished <- before + "," + after
	}()
	<-opened

	within := func(what string, fn func() error) {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- fn() }()
		select {
		case err := <-done:
			must(err)
		case <-time.After(20 * time.Second):
			t.Fatalf("%s did not finish while a read transaction was open", what)
		}
	}
	var seen string
	within("a second reader", func() error {
		return s.View(ctx, func(tx *Tx) error { seen = read(tx); return nil })
	})
	if seen != "one" {
		t.Fatalf("second reader saw %q", seen)
	}
	within("a write", func() error { return put("two") })
	within("a point reader", func() error {
		return s.ViewPoint(ctx, func(tx *Tx) error { seen = read(tx); return nil })
	})
	if seen != "two" {
		t.Fatalf("a reader after the commit saw %q, want two", seen)
	}
	release()
	if got := <-finished; got != "one,one" {
		t.Fatalf("the open read transaction saw %q, want its snapshot one,one", got)
	}
}

// TestInMemoryLeavesNothing: the in-memory database lives in its own
// directory on the memory file system while open, and Close removes it.
func TestInMemoryLeavesNothing(t *testing.T) {
	needMemoryFS(t)
	s, err := openStore(context.Background(), Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := s.mem.dir
	if s.Path() != ":memory:" || filepath.Dir(dir) != memoryBase() || !strings.HasPrefix(filepath.Base(dir), memoryPrefix) {
		t.Fatalf("Path %q, directory %q", s.Path(), dir)
	}
	if err := s.Update(context.Background(), func(tx *Tx) error { _, err := tx.CreateTable("a", "t"); return err }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("after Close: %v", err)
	}
}

// TestSweepMemoryDirs: directories of dead in-memory stores (older than a
// minute, lock not held) go; a live store's, a new one's and anything else
// stay.
func TestSweepMemoryDirs(t *testing.T) {
	base := t.TempDir()
	old := time.Now().Add(-time.Hour)
	mk := func(name string, age bool) string {
		dir := filepath.Join(base, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if age {
			os.Chtimes(dir, old, old)
		}
		return dir
	}
	dead := mk(memoryPrefix+"dead", true)
	live := mk(memoryPrefix+"live", true)
	held, err := lockOS(live)
	if err != nil {
		t.Fatal(err)
	}
	defer held.unlock()
	fresh := mk(memoryPrefix+"fresh", false)
	other := mk("someone-else", true)

	sweepMemoryDirs(base)
	for dir, keep := range map[string]bool{dead: false, live: true, fresh: true, other: true} {
		_, err := os.Stat(dir)
		if kept := err == nil; kept != keep {
			t.Errorf("%s: kept %v, want %v", filepath.Base(dir), kept, keep)
		}
	}
}

func needMemoryFS(t *testing.T) {
	if memoryBase() == "" {
		t.Skip("no memory file system of 1 GiB here (/dev/shm)")
	}
}

// TestInMemoryFallback: without a memory file system large enough, the
// in-memory store is one private connection, and works.
func TestInMemoryFallback(t *testing.T) {
	defer func(f func() string) { memoryBase = f }(memoryBase)
	memoryBase = func() string { return "" }
	s, err := openStore(context.Background(), Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.mem != nil || s.Path() != ":memory:" || s.r != s.w || s.rp != s.w {
		t.Fatalf("fallback: directory %v, path %q, pools shared %v", s.mem, s.Path(), s.r == s.w && s.rp == s.w)
	}
	ctx := context.Background()
	var tb Table
	err = s.Update(ctx, func(tx *Tx) error {
		var err error
		if tb, err = tx.CreateTable("a", "t"); err != nil {
			return err
		}
		return tx.InsertEntity(tb, &edm.Entity{PartitionKey: "p", RowKey: "r"})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.View(ctx, func(tx *Tx) error { _, err := tx.GetEntity(tb, "p", "r"); return err }); err != nil {
		t.Fatal(err)
	}
}
