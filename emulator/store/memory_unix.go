//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// lockFile creates path if needed and takes an exclusive lock on it that
// lasts until the file is closed or the process ends.
func lockFile(path string) (*os.File, error) {
	return flockFile(path, os.O_RDWR|os.O_CREATE)
}

// lockFileNoCreate locks an existing file; an error if it does not exist
// or another process holds its lock.
func lockFileNoCreate(path string) (*os.File, error) {
	return flockFile(path, os.O_RDWR)
}

func flockFile(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, errors.Join(errLocked, err)
	}
	return f, nil
}

var errLocked = errors.New("locked by another process")
