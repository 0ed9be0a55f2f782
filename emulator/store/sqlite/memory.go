package sqlite

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

// In-memory mode (--inMemoryPersistence). SQLite's own memory databases
// do not fit a store that reads on every CPU: a ":memory:" database
// belongs to the one connection that opened it, and the shared "memdb"
// VFS (file:/name?vfs=memdb) has no WAL, so its writer and readers lock
// each other out — a reader is refused while any write transaction is
// open, and a commit is refused while any reader is (docs/benchmarks.md,
// "In memory"). Instead the in-memory store is the on-disk store — one
// writer, pools of snapshot readers in WAL mode — on a file in a private
// directory of a memory file system (tmpfs), removed on Close. The data
// then costs memory once: readers map the file's pages instead of
// copying them.
//
// That needs a memory file system with room for the data: /dev/shm on
// Linux, where it is usually half the RAM. A container's /dev/shm is 64 MiB
// unless the engine is told otherwise, too small to hold a database; there,
// and on systems without /dev/shm, the store falls back to a private
// ":memory:" database, which is one connection, so requests are served one
// at a time (openPrivateMemory).
//
// A process killed with SIGKILL cannot remove its directory, so each one
// holds the operating system's lock on it for as long as it lives (lockOS,
// as for a data directory), and the next in-memory store opened on the
// machine removes every directory whose lock it can take.

// memoryPrefix starts the name of every in-memory store's directory.
const memoryPrefix = "tableemu-mem-"

// memoryDir is an in-memory store's private directory.
type memoryDir struct {
	dir  string
	lock osLock // held until remove
}

// minMemoryFS is the smallest memory file system newMemoryDir uses.
const minMemoryFS = 1 << 30

// memoryBase is where in-memory stores live: /dev/shm where it is a memory
// file system of at least minMemoryFS bytes, else "" (none). A variable for
// tests.
var memoryBase = func() string {
	if memoryFSSize("/dev/shm") >= minMemoryFS {
		return "/dev/shm"
	}
	return ""
}

// newMemoryDir creates a private directory on the memory file system,
// first removing those that dead processes left behind; nil if there is
// no memory file system to use.
func newMemoryDir() (*memoryDir, error) {
	base := memoryBase()
	if base == "" {
		return nil, nil
	}
	sweepMemoryDirs(base)
	dir, err := os.MkdirTemp(base, memoryPrefix)
	if err != nil {
		return nil, err
	}
	lock, err := lockOS(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &memoryDir{dir: dir, lock: lock}, nil
}

// remove deletes the directory and everything in it.
func (m *memoryDir) remove() error {
	err := os.RemoveAll(m.dir)
	m.lock.unlock()
	return err
}

// openPrivateMemory opens a ":memory:" database: it lives as long as its
// connection, so one connection serves reads and writes.
func (s *Store) openPrivateMemory() {
	s.path = ":memory:"
	s.w = newPool(1, func() (*conn, error) {
		return openConn(":memory:", sqlite3.SQLITE_OPEN_READWRITE|sqlite3.SQLITE_OPEN_CREATE, []string{"foreign_keys = 1"})
	})
	s.r, s.rp = s.w, s.w
}

// sweepMemoryDirs removes the directories under base that in-memory stores
// of dead processes left behind: those whose lock nobody holds, and those
// A directory younger than a minute is left alone even when unlocked: its
// process may not have locked it yet.
func sweepMemoryDirs(base string) {
	names, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range names {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), memoryPrefix) {
			continue
		}
		fi, err := e.Info()
		if err != nil || time.Since(fi.ModTime()) < time.Minute {
			continue
		}
		dir := filepath.Join(base, e.Name())
		if lock, err := lockOS(dir); err == nil {
			os.RemoveAll(dir)
			lock.unlock()
		}
	}
}
