package emulator

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// LogTime is the layout of the time that starts every line tableemu logs:
// UTC to the millisecond, as RFC 3339. Start-up lines, the access log,
// warnings, errors and shutdown lines all read `<time> <message>`.
const LogTime = "2006-01-02T15:04:05.000Z"

// Log writes lines in that format. It is safe for concurrent use; each
// Printf or Write is one line (a message of several lines, such as a panic
// with its stack, stays together under one time).
type Log struct {
	mu  sync.Mutex
	w   io.Writer
	now func() time.Time
}

// NewLog writes to w.
func NewLog(w io.Writer) *Log { return &Log{w: w, now: time.Now} }

// Printf writes one line; a final newline is added if missing.
func (l *Log) Printf(format string, args ...any) {
	l.Write([]byte(fmt.Sprintf(format, args...)))
}

// Write writes p as one line. It makes a Log the output of a standard
// log.Logger without flags, as cmd/tableemu sets the standard logger, so
// that lines logged by other packages (net/http's, the store's) have the
// same format.
func (l *Log) Write(p []byte) (int, error) {
	b := make([]byte, 0, len(LogTime)+1+len(p)+1)
	b = l.now().UTC().AppendFormat(b, LogTime)
	b = append(b, ' ')
	b = append(b, p...)
	if len(p) == 0 || p[len(p)-1] != '\n' {
		b = append(b, '\n')
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.w.Write(b); err != nil {
		return 0, err
	}
	return len(p), nil
}
