//go:build race

package sqlite

// raceEnabled: the tests run under the race detector, which slows SQLite
// (compiled from C to Go, so instrumented too) tenfold or more. Tests that
// check volume on one goroutine run fewer rounds then: the detector finds
// nothing in them, and the ordinary run keeps their full count.
const raceEnabled = true
