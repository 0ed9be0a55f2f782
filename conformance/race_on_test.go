//go:build race

package conformance

// raceEnabled: the tests run under the race detector (.ci/reliability.sh),
// which slows the server, SQLite included, tenfold or more. Tests that
// repeat one interleaving many times run fewer rounds then; the ordinary
// run keeps their full count.
const raceEnabled = true
