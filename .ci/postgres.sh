#!/usr/bin/env bash
# tableemu on PostgreSQL (docs/postgres.md), against a real cluster:
# installs Debian's postgresql if missing, starts a throwaway cluster on a
# free loopback port (.ci/pg-cluster.sh), and runs
#   - the multi-instance tests (several tableemu processes, one database:
#     reads across instances, If-Match races, batches, settings, kill -9,
#     PostgreSQL restarted under load) and the network partition under
#     load (TestPostgresPartition: every request within its deadline;
#     TestPostgresIsolationPartition: resets and snapshots too), and the
#     replay of the SDKs' recorded live exchanges (every corpus) with
#     every file's tableemu on PostgreSQL (TestPostgresReplay,
#     docs/replay.md),
#   - the Go conformance suite with every in-process server on PostgreSQL
#     (the shared one on one database, each test's own on a new one),
#   - the JavaScript, Python and Java SDK suites and the explorer's browser
#     test, with every tableemu they start on PostgreSQL (.ci/tableemu-pg
#     maps --location to a database),
#   - docker/compose.postgres.yaml's services as processes, behind nginx.
# Usage: bash .ci/postgres.sh   (from anywhere; builds its own binary)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# shellcheck source=.ci/pg-cluster.sh
source .ci/pg-cluster.sh
pg_cluster_start
export TABLEEMU_TEST_POSTGRES=$PG_ADMIN_URL # emulator/store/postgres/pgtest makes its databases there

# The binary: TABLEEMU_CI_BIN, the one .ci/run built, or built here.
work=$(mktemp -d)
bin=${TABLEEMU_CI_BIN:-}
if [ -z "$bin" ]; then
  bin=$work/tableemu
  CGO_ENABLED=0 go build -o "$bin" ./cmd/tableemu
fi

# The store contract suite and the engine's tests ran in `go test ./...`
# (on a cluster of their own), and so did the multi-instance tests, where
# PostgreSQL is installed. Run alone, this script runs them again for the
# figures they log; after .ci/run's `go test ./...`
# (TABLEEMU_CI_GO_TEST_RAN=1) that would repeat the same suite.
if [ -n "${TABLEEMU_CI_GO_TEST_RAN:-}" ]; then
  echo "== several instances on one database (conformance TestPostgres*): ran in go test ./..."
else
  echo "== several instances on one database (conformance TestPostgres*)"
  log=$work/multi.log
  if ! TABLEEMU_CRASH_CYCLES=${TABLEEMU_CRASH_CYCLES:-10} go test -count=1 -run 'TestPostgres' -v ./conformance/ >"$log" 2>&1; then
    cat "$log"; exit 1
  fi
  # The figures the tests log (conflicts retried, reads, recovery, the
  # partition's answers, the replay's counts), and the verdicts.
  grep -E '^(--- |ok)|(postgres|partition|replay)_test.go:[0-9]+: |crash summary' "$log"
fi

echo "== Go conformance suite on PostgreSQL"
psql -q -X "$PG_ADMIN_URL" -c "CREATE DATABASE conformance_go" >/dev/null
# Every test whose servers the harness makes, on PostgreSQL. Skipped: the
# tests that do not use it — each replay file has a tableemu of its own
# (TestPostgresReplay replays them on PostgreSQL), the crash and docs tests
# run a binary or the docs on SQLite, TestPostgres* make their own — so
# that the same suite does not run twice on the same engine.
TABLEEMU_TEST_DATABASE=${PG_ADMIN_URL/\/postgres\?/\/conformance_go?} go test -count=1 \
  -skip '^(TestReplay|TestPostgres|TestDocs|TestGoDocs|TestReadme|TestRecordingSources|TestCrashRecovery|TestRestoreCrash)' ./conformance/

export TABLEEMU_REAL_BIN=$bin TABLEEMU_BIN=$root/.ci/tableemu-pg
echo "== JavaScript SDK conformance on PostgreSQL"
bash conformance/js/run.sh
echo "== Python SDK conformance on PostgreSQL"
bash conformance/python/run.sh
echo "== Java SDK conformance on PostgreSQL"
bash conformance/java/run.sh
echo "== the explorer in a browser on PostgreSQL"
bash conformance/browser/run.sh
echo "== docker/compose.postgres.yaml as processes (.ci/compose-postgres.sh)"
bash .ci/compose-postgres.sh
echo "== PostgreSQL legs passed"
