//go:build race

package main

// raceEnabled: the tests run under the race detector (.ci/reliability.sh);
// the tests of the binary as a process skip then (binary, proc_test.go).
const raceEnabled = true
