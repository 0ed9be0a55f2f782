#!/usr/bin/env bash
# The data explorer (/_tableemu/) in a real browser: Debian's chromium,
# driven by playwright-core (pinned in package-lock.json), against the
# tableemu binary $TABLEEMU_BIN (built here when unset). Installs what it
# needs: chromium with apt-get when /usr/bin/chromium is missing (a
# browser download through playwright is not possible here), the npm
# packages with npm ci. The Go SDK checker (gocheck) is built from this
# repository. Every test file starts its own tableemu on a free port;
# crossorigin.test.js also serves an attacker's page of its own on
# 127.0.0.2 and on 127.0.0.1 (Linux routes all of 127.0.0.0/8 to lo).
#
#   TABLEEMU_BIN=path     the tableemu binary to test
#   TABLEEMU_NPM_CI_DONE=1  node_modules is already npm ci's (.ci/run
#                         installs once for every leg that uses it)
#   TABLEEMU_SHOTS=dir    where the screenshots go (printed at the end)
#   TABLEEMU_UPDATE_DOCS=1  copy docs/explorer.md's two screenshots into docs/
#                         after a passing run (04-query.png → explorer.png,
#                         09-insights.png → explorer-insights.png)
#
# Exits non-zero when an install fails or any test fails.
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)

command -v node >/dev/null || { echo "conformance/browser: node is not installed" >&2; exit 1; }
if [ ! -x /usr/bin/chromium ]; then
  echo "== apt-get install chromium"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq chromium >/dev/null
fi
echo "== $(/usr/bin/chromium --version 2>/dev/null | head -1)"

if [ "${TABLEEMU_NPM_CI_DONE:-}" = 1 ]; then
  echo "== npm ci (conformance/browser): done before this leg (TABLEEMU_NPM_CI_DONE=1)"
else
  echo "== npm ci (conformance/browser)"
  npm ci --no-audit --no-fund --loglevel=error
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "${TABLEEMU_BIN:-}" ]; then
  echo "== go build ./cmd/tableemu"
  (cd "$root" && CGO_ENABLED=0 go build -o "$tmp/tableemu" ./cmd/tableemu)
  export TABLEEMU_BIN="$tmp/tableemu"
fi
echo "== go build ./conformance/browser/gocheck"
(cd "$root" && go build -o "$tmp/gocheck" ./conformance/browser/gocheck)
export GOCHECK_BIN="$tmp/gocheck"
export TABLEEMU_SHOTS="${TABLEEMU_SHOTS:-${TMPDIR:-/tmp}/tableemu-explorer-shots}"
rm -rf "$TABLEEMU_SHOTS" && mkdir -p "$TABLEEMU_SHOTS"

echo "== node --test test/ (explorer in chromium)"
rc=0
node --test --test-concurrency=1 --test-timeout=600000 \
  --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$tmp/browser.tap" \
  test/ || rc=$?
pass=$(awk '/^# pass /{n=$3} END{print n+0}' "$tmp/browser.tap")
fail=$(awk '/^# fail /{n=$3} END{print n+0}' "$tmp/browser.tap")
skip=$(awk '/^# skipped /{n=$3} END{print n+0}' "$tmp/browser.tap")
echo "screenshots: $TABLEEMU_SHOTS ($(ls "$TABLEEMU_SHOTS" | wc -l) files)"
echo "explorer-browser: $pass passed, $fail failed, $skip skipped"
if [ "$rc" -ne 0 ] || [ "$fail" -ne 0 ] || [ "$pass" -eq 0 ]; then exit 1; fi
if [ "${TABLEEMU_UPDATE_DOCS:-}" = 1 ]; then
  cp "$TABLEEMU_SHOTS/04-query.png" "$root/docs/explorer.png"
  cp "$TABLEEMU_SHOTS/09-insights.png" "$root/docs/explorer-insights.png"
  echo "docs/explorer.png and docs/explorer-insights.png updated"
fi
