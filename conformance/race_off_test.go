//go:build !race

package conformance

// raceEnabled: see race_on_test.go.
const raceEnabled = false
