//go:build !race

package sqlite

// raceEnabled: see race_on_test.go.
const raceEnabled = false
