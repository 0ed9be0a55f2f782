#!/usr/bin/env bash
# Conformance through the Java Azure Tables SDK (com.azure:azure-data-tables,
# pinned in pom.xml): starts tableemu on a free loopback port with a fresh
# --location, passes its connection string to Maven in
# TABLEEMU_TEST_CONNECTION_STRING, and runs `mvn -B -q test` (JUnit 5).
# Maven keeps its downloads in the default ~/.m2 repository.
#
#   TABLEEMU_BIN=path                      use this binary instead of building
#   TABLEEMU_TEST_CONNECTION_STRING='...'  run against that endpoint instead
#                                          (Azurite, a storage account); tests
#                                          that change account-wide settings skip
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
pid=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

if [ -z "${TABLEEMU_TEST_CONNECTION_STRING:-}" ]; then
  bin=${TABLEEMU_BIN:-}
  if [ -z "$bin" ]; then
    echo "== go build ./cmd/tableemu"
    (cd "$root" && go build -o "$tmp/tableemu" ./cmd/tableemu)
    bin=$tmp/tableemu
  fi
  mkdir "$tmp/data"
  # Port 0: a free port (10002 belongs to the UseDevelopmentStorage tests).
  "$bin" --tableHost 127.0.0.1 --tablePort 0 --location "$tmp/data" --silent >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  cs=
  for _ in $(seq 300); do
    # Every line is "<time> <message>" (docs/command-line.md, "Start, log and exit status").
    cs=$(sed -n 's/^\S* connection string \(\S*\).*/\1/p' "$tmp/out" | head -n1)
    [ -n "$cs" ] && break
    kill -0 "$pid" 2>/dev/null || { echo "tableemu exited before serving:" >&2; cat "$tmp/err" >&2; exit 1; }
    sleep 0.1
  done
  [ -n "$cs" ] || { echo "tableemu did not start in 30s:" >&2; cat "$tmp/err" >&2; exit 1; }
  echo "== tableemu at $(sed -n 's/^\S* endpoint \(\S*\).*/\1/p' "$tmp/out" | head -n1)"
  export TABLEEMU_TEST_CONNECTION_STRING=$cs TABLEEMU_OWN_SERVER=1
fi

echo "== mvn -B -q test (conformance/java)"
rm -rf target/surefire-reports
rc=0
# shellcheck disable=SC2086
mvn -B -q ${MAVEN_ARGS:-} test || rc=$?
echo # Maven 3.8 ends its quiet output with colour resets and no newline.

# The summary line, from Surefire's reports.
pass=0 fail=0 skip=0
shopt -s nullglob
for f in target/surefire-reports/TEST-*.xml; do
  read -r t fl er sk < <(sed -n '0,/<testsuite /{s/.*<testsuite \(.*\)>.*/\1/p}' "$f" |
    awk '{
      for (i = 1; i <= NF; i++) { split($i, kv, "="); gsub(/"/, "", kv[2]); v[kv[1]] = kv[2] }
      print v["tests"]+0, v["failures"]+0, v["errors"]+0, v["skipped"]+0
    }')
  pass=$((pass + t - fl - er - sk)) fail=$((fail + fl + er)) skip=$((skip + sk))
done
# Say why each skipped test was skipped.
for f in target/surefire-reports/TEST-*.xml; do
  awk '
    /<testcase / { match($0, /name="[^"]*"/); n = substr($0, RSTART + 6, RLENGTH - 7)
                   match($0, /classname="[^"]*"/); c = substr($0, RSTART + 11, RLENGTH - 12); sub(/.*\./, "", c) }
    /<skipped/   { getline why; if (why !~ /Assumption failed/) why = $0
                   sub(/.*Assumption failed: /, "", why); print "skipped: " c "." n ": " why }
  ' "$f"
done
sdk=$(sed -n 's:.*<azure-data-tables.version>\(.*\)</azure-data-tables.version>.*:\1:p' pom.xml)
echo "== com.azure:azure-data-tables $sdk"
echo "conformance-java: $pass passed, $fail failed, $skip skipped"
if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
  echo "tableemu exited during the tests:" >&2; cat "$tmp/err" >&2; rc=1
fi
if [ "$rc" -ne 0 ] || [ "$fail" -ne 0 ] || [ "$pass" -eq 0 ]; then exit 1; fi
