#!/usr/bin/env bash
# Conformance through the JavaScript Azure Tables SDKs: installs the pinned
# SDKs from package-lock.json (npm ci), builds tableemu once, and runs each
# SDK's suite with node --test. Every test file starts its own tableemu on a
# free loopback port with a fresh --location.
#
#   TABLEEMU_BIN=path                      use this binary instead of building
#   TABLEEMU_TEST_CONNECTION_STRING='...'  run against that endpoint instead
#                                          (Azurite, a storage account)
#   TABLEEMU_NPM_CI_DONE=1                 node_modules is already npm ci's
#                                          (.ci/run installs once for every leg
#                                          that uses it, some side by side)
#
# Then the @azure/data-tables suite runs once more against tableemu
# --profile cosmos (TABLEEMU_PROFILE=cosmos; docs/cosmos.md), the SDK in its
# Cosmos mode (lib/harness.js says how): the same installs, one more node
# --test, its time printed. Not against TABLEEMU_TEST_CONNECTION_STRING,
# nor with TABLEEMU_COSMOS_RUN=0.
#
# Exits non-zero when npm ci fails or any test fails.
set -euo pipefail
cd "$(dirname "$0")"
here=$(pwd)
root=$(cd ../.. && pwd)

command -v node >/dev/null || { echo "conformance/js: node is not installed" >&2; exit 1; }
command -v npm >/dev/null || { echo "conformance/js: npm is not installed" >&2; exit 1; }

if [ "${TABLEEMU_NPM_CI_DONE:-}" = 1 ]; then
  echo "== npm ci (conformance/js): done before this leg (TABLEEMU_NPM_CI_DONE=1)"
else
  echo "== npm ci (conformance/js)"
  npm ci --no-audit --no-fund --loglevel=error
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ -z "${TABLEEMU_TEST_CONNECTION_STRING:-}" ] && [ -z "${TABLEEMU_BIN:-}" ]; then
  echo "== go build ./cmd/tableemu"
  (cd "$root" && go build -o "$tmp/tableemu" ./cmd/tableemu)
  export TABLEEMU_BIN="$tmp/tableemu"
fi

total_pass=0 total_fail=0 total_skip=0 status=0
# suite DIR LABEL [TAP]: runs one SDK's suite; spec output to the log, TAP
# to a file whose closing counts give the summary line. The todo count is
# the cosmos run's cases that tableemu's profile does not answer as Cosmos
# DB yet (lib/dt.js, notYet): they run, and do not fail the suite.
suite() {
  local dir=$1 label=$2 tap=$tmp/${3:-$1}.tap
  echo "== node --test $dir ($label)"
  local rc=0
  node --test --test-concurrency=2 --test-timeout=300000 \
    --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$tap" \
    "test/$dir/" || rc=$?
  local pass fail skip todo
  pass=$(awk '/^# pass /{n=$3} END{print n+0}' "$tap")
  fail=$(awk '/^# fail /{n=$3} END{print n+0}' "$tap")
  skip=$(awk '/^# skipped /{n=$3} END{print n+0}' "$tap")
  todo=$(awk '/^# todo /{n=$3} END{print n+0}' "$tap")
  echo "$label: $pass passed, $fail failed, $skip skipped$([ "$todo" -eq 0 ] || echo ", $todo todo (not yet under the profile)")"
  total_pass=$((total_pass + pass)) total_fail=$((total_fail + fail)) total_skip=$((total_skip + skip))
  if [ "$rc" -ne 0 ] || [ "$fail" -ne 0 ] || [ "$pass" -eq 0 ]; then status=1; fi
}

dtv=$(node -p 'require("@azure/data-tables/package.json").version')
asv=$(node -p 'require("azure-storage/package.json").version')
suite data-tables "@azure/data-tables@$dtv"
suite legacy "azure-storage@$asv"
if [ -z "${TABLEEMU_TEST_CONNECTION_STRING:-}" ] && [ "${TABLEEMU_COSMOS_RUN:-1}" != 0 ]; then
  t0=$(date +%s)
  TABLEEMU_PROFILE=cosmos suite data-tables "@azure/data-tables@$dtv, tableemu --profile cosmos, Cosmos mode" data-tables-cosmos
  echo "the cosmos run took $(($(date +%s) - t0)) s"
fi

echo "conformance-js: $total_pass passed, $total_fail failed, $total_skip skipped"
exit $status
