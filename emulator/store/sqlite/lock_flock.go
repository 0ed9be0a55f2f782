//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly || illumos

package sqlite

import (
	"errors"
	"os"
	"syscall"
)

// osLock is flock(2) on the data directory itself: opening a directory
// read-only and locking it creates nothing, works for any user who may
// read the directory, and the kernel drops the lock when the descriptor
// closes, which includes the process dying. flock locks belong to the open
// file, not the process, so two Stores in one process exclude each other
// too (fcntl locks would not).
type osLock struct{ f *os.File }

func lockOS(dir string) (osLock, error) {
	f, err := os.Open(dir)
	if err != nil {
		return osLock{}, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return osLock{}, errLocked
		}
		return osLock{}, err
	}
	return osLock{f}, nil
}

func (l osLock) unlock() { l.f.Close() }

// writeNote replaces the note whole (write, then rename), so that a second
// process reading it never sees half of it.
func (l osLock) writeNote(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func (l osLock) removeNote(path string) { os.Remove(path) }
