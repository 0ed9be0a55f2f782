package emulator

import (
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// TestIsolationTimesOutOnALockedDatabase: while another program holds the
// SQLite database's write lock, a reset, a snapshot save, a restore and a
// snapshot delete answer 500 OperationTimedOut at the isolation endpoints'
// deadline (Config.IsolationTimeout), with a hint saying what that means,
// instead of waiting for the lock; reads still answer; and once the lock
// is free the account and its snapshots are as they were — none of the
// four ran — and a reset goes through.
func TestIsolationTimesOutOnALockedDatabase(t *testing.T) {
	const limit = time.Second
	s, err := New(Config{Location: t.TempDir(), Silent: true, IsolationTimeout: limit})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.Close(); s.Close() })
	dev := "/_tableemu/accounts/" + DevAccount
	load(t, hs, DevAccount, "Orders", "a", 3)
	as(t, hs, DevAccount, "PUT", dev+"/snapshots/fixtures", "", 201)
	load(t, hs, DevAccount, "Orders", "b", 2) // a restore would rewrite two
	before := state(t, hs, DevAccount)
	snapshots := as(t, hs, DevAccount, "GET", dev+"/snapshots", "", 200).body

	release := holdWriteLock(t, s.DatabasePath())

	ops := []struct{ what, method, path string }{
		{"reset", "POST", dev + "/reset"},
		{"snapshot save", "PUT", dev + "/snapshots/new"},
		{"restore", "POST", dev + "/snapshots/fixtures/restore"},
		{"snapshot delete", "DELETE", dev + "/snapshots/fixtures"},
	}
	answers := make([]*sent, len(ops))
	took := make([]time.Duration, len(ops))
	var wg sync.WaitGroup
	for i, op := range ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			answers[i] = as(t, hs, DevAccount, op.method, op.path, "", 0)
			took[i] = time.Since(start)
		}()
	}
	wg.Wait()
	for i, op := range ops {
		wantHint(t, readError(t, answers[i]), 500, "OperationTimedOut", "Operation could not be completed within the specified time.",
			"the "+op.what+" did not finish within 1s", "applied whole or not at all")
		if took[i] < limit-50*time.Millisecond || took[i] > limit+time.Second {
			t.Errorf("%s: answered after %v, limit %v", op.what, took[i], limit)
		}
	}
	// A read needs no write lock (WAL).
	if got := as(t, hs, DevAccount, "GET", dev+"/snapshots", "", 200).body; got != snapshots {
		t.Errorf("snapshots while locked: %s, want %s", got, snapshots)
	}

	release()
	if got := state(t, hs, DevAccount); got != before {
		t.Errorf("after the timed-out requests the account is\n%s\nwant it as it was\n%s", got, before)
	}
	if got := as(t, hs, DevAccount, "GET", dev+"/snapshots", "", 200).body; got != snapshots {
		t.Errorf("after the timed-out requests the snapshots are %s, want %s", got, snapshots)
	}
	as(t, hs, DevAccount, "POST", dev+"/reset", "", 200)
	if got := state(t, hs, DevAccount); got != "" {
		t.Errorf("after a reset once the lock is free:\n%s", got)
	}
}
