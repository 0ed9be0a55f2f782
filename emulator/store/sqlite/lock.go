package sqlite

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// One process per data directory.
//
// Two processes on one database file would each keep state in memory that
// the other's writes make stale (the table cache, automatic indexes, the
// emulator's cache of service properties and CORS rules), and two at once
// race each other through the migrations. So Open takes an exclusive lock
// on the data directory before it touches the database, and holds it until
// Close: a second Open of the same directory, in this process or another,
// fails at once with a LockedError. With the lock held, every write to the
// database goes through this Store, which is what lets those caches be
// updated by the writes themselves and never re-read.
//
// The lock is the operating system's (flock on the directory on Unix,
// LockFileEx on Windows), so it dies with its process, kill -9 included:
// there is never a stale lock to clean up by hand. Locking the directory
// itself creates nothing on disk, so a start that fails leaves the
// directory as it was. Once the lock is held, the holder writes LockFile,
// a note of its process id and (after Announce) its port, which only
// serves to name the holder in a second process's error; Close removes it.

// LockFile names, inside the data directory, the note of the process that
// holds the directory: {"pid":1234,"port":10002}. It is not the lock: a
// file left behind by a killed process means nothing.
const LockFile = "tableemu.lock"

// LockedError is Open's error when another Store (usually another tableemu
// process) holds the data directory.
type LockedError struct {
	Dir  string // the data directory, absolute where it could be made so
	PID  int    // the holder's process id; 0 if unknown
	Port int    // the port it serves; 0 if unknown
}

func (e *LockedError) Error() string {
	who := "another tableemu"
	switch {
	case e.PID != 0 && e.Port != 0:
		who += fmt.Sprintf(" (PID %d, port %d)", e.PID, e.Port)
	case e.PID != 0:
		who += fmt.Sprintf(" (PID %d)", e.PID)
	}
	return fmt.Sprintf("data directory %s is in use by %s, and one tableemu serves a directory at a time", e.Dir, who)
}

// DirError is Open's error when the data directory cannot be created or
// written, or the database file in it cannot be written: a start that
// fails with it can succeed with another directory, or in memory, and the
// command line says so (cmd/tableemu).
type DirError struct {
	Dir  string // the data directory
	File string // the database file, when it (or its -wal or -shm) is what cannot be written
	Err  error  // what failed; its text names the directory or the file
}

func (e *DirError) Error() string { return e.Err.Error() }
func (e *DirError) Unwrap() error { return e.Err }

// holder is the content of LockFile.
type holder struct {
	PID  int `json:"pid"`
	Port int `json:"port,omitempty"`
}

// dirLock is a held lock on a data directory.
type dirLock struct {
	dir  string
	os   osLock // lock_*.go
	note holder
}

// lockDir takes the lock on dir, which exists, or returns a *LockedError
// naming the holder.
func lockDir(dir string) (*dirLock, error) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	ol, err := lockOS(dir)
	if errors.Is(err, errLocked) {
		le := &LockedError{Dir: dir}
		if b, err := os.ReadFile(filepath.Join(dir, LockFile)); err == nil {
			var h holder
			if json.Unmarshal(b, &h) == nil {
				le.PID, le.Port = h.PID, h.Port
			}
		}
		return nil, le
	}
	if err != nil {
		return nil, &DirError{Dir: dir, Err: fmt.Errorf("lock data directory %s: %w", dir, err)}
	}
	l := &dirLock{dir: dir, os: ol, note: holder{PID: os.Getpid()}}
	if err := l.write(); err != nil {
		ol.unlock()
		return nil, &DirError{Dir: dir, Err: fmt.Errorf("data directory %s is not writable: tableemu keeps %s and its -wal and -shm files there (%w)", dir, FileName, err)}
	}
	return l, nil
}

// write records the holder in LockFile.
func (l *dirLock) write() error {
	b, err := json.Marshal(l.note)
	if err != nil {
		return err
	}
	return l.os.writeNote(filepath.Join(l.dir, LockFile), append(b, '\n'))
}

// release removes the note and lets the directory go. The note goes first:
// once the lock is free, it may be another process's.
func (l *dirLock) release() {
	if l == nil {
		return
	}
	l.os.removeNote(filepath.Join(l.dir, LockFile))
	l.os.unlock()
}

// errLocked is lockOS's error when another holds the lock.
var errLocked = errors.New("locked")

// Announce records the port this store's server listens on, so that a
// second process started on the same directory can name it. It does
// nothing for an in-memory store.
func (s *Store) Announce(port int) error {
	if s.lock == nil {
		return nil
	}
	s.lock.note.Port = port
	return s.lock.write()
}
