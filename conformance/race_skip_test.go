package conformance

import "testing"

// skipUnderRace skips t in the race detector's run (.ci/reliability.sh,
// go test -race ./...). The detector sees only the code of this test
// process, and only when goroutines in it share memory; the tests that
// call this give it nothing to find: they drive a tableemu binary built
// without -race (buildBinary calls it for every such test; the crash
// tests kill the binary, over and over), or they replay
// recorded exchanges one request after another into a server of their
// own. Under -race they only cost time (TestReplayPython alone took 48 s
// there, the crash tests 150 s). The ordinary run, go test ./..., runs
// them in full, and .ci/reliability.sh runs the crash tests again at 50
// cycles.
func skipUnderRace(t *testing.T, why string) {
	t.Helper()
	if raceEnabled {
		t.Skip("not under the race detector, which finds nothing here: " + why)
	}
}
