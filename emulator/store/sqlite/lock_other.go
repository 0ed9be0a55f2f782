//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || illumos || windows)

package sqlite

import "os"

// osLock on systems without flock: no lock. The note is still written, so
// that the directory looks the same everywhere.
type osLock struct{}

func lockOS(string) (osLock, error) { return osLock{}, nil }

func (osLock) unlock() {}

func (osLock) writeNote(path string, b []byte) error { return os.WriteFile(path, b, 0o644) }

func (osLock) removeNote(path string) { os.Remove(path) }
