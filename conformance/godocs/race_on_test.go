//go:build race

package godocs

// raceEnabled: the tests run under the race detector (.ci/reliability.sh).
// TestGoDocsEmbedding skips then: everything it runs (go mod, go test, go
// install in a module of its own) runs in processes built without -race,
// so the detector has nothing to look at, and it took 71 s of the race run.
const raceEnabled = true
