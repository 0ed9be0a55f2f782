#!/usr/bin/env bash
# Conformance through the Java Azure Tables SDK (com.azure:azure-data-tables,
# pinned in pom.xml): starts tableemu on a free loopback port with a fresh
# --location, passes its connection string to Maven in
# TABLEEMU_TEST_CONNECTION_STRING, and runs `mvn -B -q test` (JUnit 5).
# Beside it a second tableemu, --profile cosmos, in
# TABLEEMU_TEST_COSMOS_CONNECTION_STRING: the same build then runs the suite
# once more against it, the SDK in its Cosmos mode (pom.xml's cosmos profile,
# Target.java). Maven keeps its downloads in the default ~/.m2 repository.
#
#   TABLEEMU_BIN=path                      use this binary instead of building
#   TABLEEMU_TEST_CONNECTION_STRING='...'  run against that endpoint instead
#                                          (Azurite, a storage account); tests
#                                          that change account-wide settings
#                                          skip, and there is no cosmos run
#   TABLEEMU_JAVA_COSMOS=0                 no cosmos run
#   MAVEN_ARGS='...'                       more arguments for mvn, e.g.
#                                          -Dtest=BatchTest
#
# Exits non-zero when the build or any test fails, or when no test ran.
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)

command -v java >/dev/null || { echo "conformance/java: java is not installed" >&2; exit 1; }
command -v mvn >/dev/null || { echo "conformance/java: mvn is not installed" >&2; exit 1; }

tmp=$(mktemp -d -t tableemu-java-run.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

# start NAME [FLAG...]: starts tableemu with the flags and a fresh --location
# on a free loopback port (10002 belongs to the UseDevelopmentStorage tests),
# and sets cs to the connection string it prints.
start() {
  local name=$1 pid
  shift
  mkdir "$tmp/$name"
  "$bin" --tableHost 127.0.0.1 --tablePort 0 --location "$tmp/$name" --silent "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
  pid=$!
  pids+=("$pid")
  cs=
  for _ in $(seq 300); do
    # Every line is "<time> <message>" (docs/command-line.md, "Start, log and exit status").
    cs=$(sed -n 's/^\S* connection string \(\S*\).*/\1/p' "$tmp/$name.out" | head -n1)
    [ -n "$cs" ] && break
    kill -0 "$pid" 2>/dev/null || { echo "tableemu $* exited before serving:" >&2; cat "$tmp/$name.err" >&2; exit 1; }
    sleep 0.1
  done
  [ -n "$cs" ] || { echo "tableemu $* did not start in 30s:" >&2; cat "$tmp/$name.err" >&2; exit 1; }
  echo "== tableemu${*:+ $*} at $(sed -n 's/^\S* endpoint \(\S*\).*/\1/p' "$tmp/$name.out" | head -n1)"
}

if [ -z "${TABLEEMU_TEST_CONNECTION_STRING:-}" ]; then
  bin=${TABLEEMU_BIN:-}
  if [ -z "$bin" ]; then
    echo "== go build ./cmd/tableemu"
    (cd "$root" && go build -o "$tmp/tableemu" ./cmd/tableemu)
    bin=$tmp/tableemu
  fi
  start storage
  export TABLEEMU_TEST_CONNECTION_STRING=$cs TABLEEMU_OWN_SERVER=1
  if [ "${TABLEEMU_JAVA_COSMOS:-1}" != 0 ]; then
    start cosmos --profile cosmos
    export TABLEEMU_TEST_COSMOS_CONNECTION_STRING=$cs
  fi
fi

if [ "${TABLEEMU_JAVA_COSMOS:-1}" = 0 ]; then unset TABLEEMU_TEST_COSMOS_CONNECTION_STRING; fi

echo "== mvn -B -q test (conformance/java)"
rm -rf target/surefire-reports target/surefire-reports-cosmos
rc=0
# shellcheck disable=SC2086
mvn -B -q ${MAVEN_ARGS:-} test || rc=$?
echo # Maven 3.8 ends its quiet output with colour resets and no newline.

# summary DIR LABEL: the summary line of one Surefire execution, from its
# reports, with the time its tests took; and why each skipped test was
# skipped. Adds its failures to fail, and fails a run in which no test passed.
shopt -s nullglob
fail=0
summary() {
  local pass=0 failed=0 skip=0 secs=0 f t fl er sk tm
  for f in "$1"/TEST-*.xml; do
    read -r t fl er sk tm < <(sed -n '0,/<testsuite /{s/.*<testsuite \(.*\)>.*/\1/p}' "$f" |
      awk '{
        for (i = 1; i <= NF; i++) { split($i, kv, "="); gsub(/"/, "", kv[2]); v[kv[1]] = kv[2] }
        print v["tests"]+0, v["failures"]+0, v["errors"]+0, v["skipped"]+0, v["time"]+0
      }')
    pass=$((pass + t - fl - er - sk)) failed=$((failed + fl + er)) skip=$((skip + sk))
    secs=$(awk -v a="$secs" -v b="$tm" 'BEGIN { print a + b }')
  done
  for f in "$1"/TEST-*.xml; do
    awk -v label="$2" '
      /<testcase / { match($0, /name="[^"]*"/); n = substr($0, RSTART + 6, RLENGTH - 7)
                     match($0, /classname="[^"]*"/); c = substr($0, RSTART + 11, RLENGTH - 12); sub(/.*\./, "", c) }
      /<skipped/   { getline why; if (why !~ /Assumption failed/) why = $0
                     sub(/.*Assumption failed: /, "", why); print "skipped" label ": " c "." n ": " why }
    ' "$f"
  done
  echo "conformance-java$2: $pass passed, $failed failed, $skip skipped ($(printf '%.1f' "$secs") s of tests)"
  fail=$((fail + failed))
  if [ "$pass" -eq 0 ]; then fail=$((fail + 1)); fi
}
sdk=$(sed -n 's:.*<azure-data-tables.version>\(.*\)</azure-data-tables.version>.*:\1:p' pom.xml)
echo "== com.azure:azure-data-tables $sdk"
summary target/surefire-reports ""
if [ -n "${TABLEEMU_TEST_COSMOS_CONNECTION_STRING:-}" ]; then
  summary target/surefire-reports-cosmos " (--profile cosmos)"
fi
for pid in "${pids[@]}"; do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "a tableemu exited during the tests:" >&2; cat "$tmp"/*.err >&2; rc=1
  fi
done
if [ "$rc" -ne 0 ] || [ "$fail" -ne 0 ]; then exit 1; fi
