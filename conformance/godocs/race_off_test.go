//go:build !race

package godocs

// raceEnabled: see race_on_test.go.
const raceEnabled = false
