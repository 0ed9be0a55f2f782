#!/usr/bin/env bash
# Reliability checks (issue 7), run by CI after the ordinary suite:
#   fuzz   every fuzz target for FUZZTIME (default 20s; FuzzBatch 60s)
#          each, one at a time, with one worker (FUZZ_ONLY=Name or
#          FUZZ_EXCEPT=Name: that target alone, or all but it);
#   crash  the crash test against the real binary, TABLEEMU_CRASH_CYCLES
#          (default 50) kill -9 cycles in each durability mode (default and
#          --fsync), and as many kills during resets and restores
#          (TestRestoreCrash), with the concurrency, hostile-input, shutdown
#          and storage-fault tests, printing their numbers;
#   race   the race detector over the whole suite, but for the tests that
#          give it nothing to find (the crash tests, whose binary is not
#          built with -race, and the replays of recordings:
#          conformance/race_skip_test.go).
#
#   bash .ci/reliability.sh              all three, in that order
#   bash .ci/reliability.sh crash race   the parts named (.ci/run runs the
#                                        fuzzing in a lane of its own)
#   bash .ci/reliability.sh --tests      the crash part's test pattern
# Fails on any failure. A fuzzer that finds a crash writes the input under
# <package>/testdata/fuzz/<Target>/; fix the bug and commit the file, which
# `go test` then replays as a regression case.
set -euo pipefail
cd "$(dirname "$0")/.."

# The tests of the crash part, which runs them in full (the crash tests at
# 50 cycles). `.ci/reliability.sh --tests` prints the pattern: .ci/run's
# go test ./... skips them, since this script runs them again anyway.
tests='^(TestCrashRecovery|TestRestoreCrash|TestGracefulShutdown|TestConcurrentCounter|TestHostileSizes|TestHostileMalformedBodies|TestSlowClients|TestManyConnections|TestReadOnlyDataDirectory|TestDiskFull|TestDamagedDatabase)$'
if [ "${1:-}" = --tests ]; then echo "$tests"; exit 0; fi
parts=${*:-fuzz crash race}
for p in $parts; do
  case $p in fuzz | crash | race) ;; *) echo ".ci/reliability.sh: unknown part $p (fuzz, crash, race or --tests)" >&2; exit 2 ;; esac
done
want() { [[ " $parts " == *" $1 "* ]]; }

FUZZTIME=${FUZZTIME:-20s}
# FuzzBatch runs the store on every input, and coverage-guided fuzzing
# instruments SQLite too: it finds new coverage (and minimises it) so often
# that it executes ~200 inputs/s against thousands for the others; it gets
# longer.
BATCH_FUZZTIME=${BATCH_FUZZTIME:-60s}
CYCLES=${TABLEEMU_CRASH_CYCLES:-50}
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
t0=$(date +%s)
summary=()

if want fuzz; then
  echo "== fuzz: each target for $FUZZTIME, FuzzBatch for $BATCH_FUZZTIME"
  fuzzed=0
  for spec in \
    "./odata FuzzParse" \
    "./emulator/wire FuzzDecodeEntity" \
    "./emulator FuzzBatch" \
    "./emulator FuzzBatchCosmos" \
    "./emulator FuzzXMLBodies" \
    "./emulator FuzzResourcePath" \
    "./auth FuzzSAS" \
    "./emulator/transfer FuzzCSVSource"; do
    set -- $spec
    if [ -n "${FUZZ_ONLY:-}" ] && [ "$2" != "$FUZZ_ONLY" ]; then continue; fi
    if [ -n "${FUZZ_EXCEPT:-}" ] && [ "$2" = "$FUZZ_EXCEPT" ]; then continue; fi
    fuzzed=$((fuzzed + 1))
    ft=$FUZZTIME
    if [ "$2" = FuzzBatch ]; then ft=$BATCH_FUZZTIME; fi
    s=$(date +%s)
    # -fuzzminimizetime bounds the minimisation of each new input, which
    # otherwise may take up to a minute of a short run.
    corpus="$1/testdata/fuzz/$2"
    before=$(ls "$corpus" 2>/dev/null | sort || true)
    # -parallel=1: one fuzzing worker. The run is timed, not counted, and CI
    # runs it beside the lanes (.ci/run), which keep the other CPU busy: a
    # second worker would take a CPU from them for the same 20 s.
    if ! go test "$1" -run='^$' -fuzz="^$2\$" -fuzztime="$ft" -fuzzminimizetime=5s -parallel=1 >"$log/$2" 2>&1; then
      # Go 1.26's fuzz coordinator can report "context deadline exceeded" at
      # the -fuzztime boundary when a starved worker has not yet stopped
      # (golang/go#75804, fixed in Go 1.27): no input failed and none is
      # written. Only a new reproducer under testdata/fuzz is a failure.
      after=$(ls "$corpus" 2>/dev/null | sort || true)
      if [ "$before" = "$after" ] && grep -q 'context deadline exceeded' "$log/$2" &&
        ! grep -q -E 'panic|Failing input written' "$log/$2"; then
        echo "warning: $2 stopped with Go's fuzztime deadline race (golang/go#75804); no failing input"
      else
        cat "$log/$2"
        echo "FAIL: $2 (the failing input is under $corpus/)"
        exit 1
      fi
    fi
    # No "execs:" line when gathering the baseline coverage (every input
    # ever saved, in testdata/fuzz and the build cache) took the whole
    # -fuzztime; grep fails then, which must not end the script (pipefail).
    execs=$(grep -o 'execs: [0-9]*' "$log/$2" | tail -n 1 | cut -d' ' -f2 || true)
    line="$2: ${execs:-?} executions in $(($(date +%s) - s))s"
    echo "$line"
    summary+=("fuzz $line")
  done
  [ "$fuzzed" -gt 0 ] || { echo "FAIL: no fuzz target is ${FUZZ_ONLY:-}"; exit 1; }
fi

if want crash; then
  echo "== crash test ($CYCLES cycles in each durability mode) and the other reliability tests"
  s=$(date +%s)
  if ! TABLEEMU_CRASH_CYCLES=$CYCLES go test ./conformance -count=1 -v -timeout=20m \
    -run="$tests" \
    >"$log/conformance" 2>&1; then
    cat "$log/conformance"
    echo "FAIL: reliability tests"
    exit 1
  fi
  grep -E '^\s+\S+_test\.go:[0-9]+: ' "$log/conformance" | grep -vE 'cycle [0-9]+: [0-9]+ writes' | sed -E 's/^\s+//' || true
  grep -E '^(--- |ok|PASS)' "$log/conformance" | grep -v '^    ' || true
  summary+=("reliability tests: $(($(date +%s) - s))s")
  while IFS= read -r line; do summary+=("$line"); done < <(grep -o 'crash summary .*' "$log/conformance")
  if [ "$(grep -c 'crash summary (\(default\|fsync\) mode)' "$log/conformance")" != 2 ]; then
    echo "FAIL: the crash test did not run in both durability modes"
    exit 1
  fi
  summary+=("$(grep -o '[0-9]* connections held .*' "$log/conformance")")
fi

if want race; then
  echo "== race detector over the whole suite"
  s=$(date +%s)
  go test -race -count=1 -timeout=30m ./...
  summary+=("race: $(($(date +%s) - s))s")
fi

echo "== reliability summary"
printf '  %s\n' "${summary[@]}"
echo "== reliability ($parts) passed in $(($(date +%s) - t0))s"
