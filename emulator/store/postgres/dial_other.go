//go:build !linux

package postgres

import "time"

// setUserTimeout does nothing where TCP_USER_TIMEOUT is not available:
// keep-alive alone finds dead connections there.
func setUserTimeout(uintptr, time.Duration) error { return nil }
