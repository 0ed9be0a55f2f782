//go:build windows

package sqlite

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// osLock is LockFileEx on LockFile, held open: Windows cannot lock a
// directory handle, so the note file doubles as the lock. The locked byte
// lies far past the note's content, which stays readable by the process
// that wants to name the holder (Windows locks are mandatory for the bytes
// they cover). The system releases the lock when the handle closes, which
// includes the process dying.
type osLock struct{ f *os.File }

// lockOffset is the byte locked: past any note.
const lockOffset = 1 << 30

func lockOS(dir string) (osLock, error) {
	path, err := windows.UTF16PtrFromString(filepath.Join(dir, LockFile))
	if err != nil {
		return osLock{}, err
	}
	h, err := windows.CreateFile(path, windows.GENERIC_READ|windows.GENERIC_WRITE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_ALWAYS, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return osLock{}, err
	}
	ol := new(windows.Overlapped)
	ol.Offset = lockOffset
	err = windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if err != nil {
		windows.CloseHandle(h)
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
			return osLock{}, errLocked
		}
		return osLock{}, err
	}
	return osLock{os.NewFile(uintptr(h), filepath.Join(dir, LockFile))}, nil
}

func (l osLock) unlock() { l.f.Close() }

// writeNote rewrites the note in place, through the handle that holds the
// lock.
func (l osLock) writeNote(_ string, b []byte) error {
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err := l.f.WriteAt(b, 0)
	return err
}

// removeNote deletes the file while the handle is open (it was opened with
// FILE_SHARE_DELETE); it goes when the handle closes.
func (l osLock) removeNote(path string) { os.Remove(path) }
