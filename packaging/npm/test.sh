#!/usr/bin/env bash
# packaging/npm/test.sh — the npm channel, end to end, as a user gets it:
#
#   bash packaging/npm/test.sh            (.ci/run runs it; needs go, node, npm)
#
# 1. Builds the five release binaries (packaging/release/build.sh, VERSION=v0.0.0-ci)
#    and the six npm packages from them (packaging/npm/build.sh) twice, the second
#    time with umask 077: the tarballs must be the same bytes.
# 2. Serves the tarballs from a registry on 127.0.0.1 (packaging/npm/test/registry.js)
#    and, in a fresh project that has the SDK and the test runners from
#    packaging/npm/test/project (npm ci, exact versions), runs the README's
#    `npm i -D tableemu` against it. The public registry is not asked for
#    any tableemu package: with the tarball files alone (npm i ./a.tgz
#    ./b.tgz) npm looks the four other platform packages up in the public
#    registry, takes the 404s as "optional, skip", and leaves them out of
#    package-lock.json. Here npm gets every platform's metadata, installs
#    the one whose os/cpu fit and records the others as optional, which is
#    what it does with the published packages.
# 3. Runs every snippet of packaging/npm/tableemu/README.md (the blocks marked
#    `<!-- packaging/npm/test.sh: GROUP -->`, written out by packaging/npm/test/snippets.js):
#    the shell lines, the example scripts (one loads fixtures/people.jsonl, one runs the cosmos
#    profile), and the vitest, jest and mocha
#    setups with their test files (create a table, upsert, get, query
#    through @azure/data-tables); and docs/isolation.md's vitest set-up
#    (load its fixtures/people.jsonl and snapshot in globalSetup, restore
#    before each test).
# 4. Checks the launcher (version, SIGTERM and SIGINT through npx and
#    directly, a killed server, an unsupported platform, a missing platform
#    package, TABLEEMU_BINARY), the helper (packaging/npm/test/helper.test.js with
#    node --test), load()'s memory script (packaging/npm/test/load-memory.js, 20,000
#    entities) and the TypeScript types (tsc on packaging/npm/test/types), and
#    runs packaging/npm/bench.sh --quick.
#
# Prints one line per check and "npm-package: N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

for t in go node npm; do
  command -v $t >/dev/null || { echo "packaging/npm/test.sh: $t is not installed" >&2; exit 1; }
done

tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

passed=0 failed=0
step() { echo "== [${SECONDS}s] $*"; }
ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }
check() { # check "what" command...: ok when the command succeeds
  local what=$1; shift
  if "$@"; then ok "$what"; else bad "$what"; fi
}

version=v0.0.0-ci
npmver=${version#v}
host=$(node -p 'process.platform + "-" + process.arch')                              # npm's name: linux-x64
gohost=$(node -p '({ win32: "windows" }[process.platform] ?? process.platform) + "-" + ({ x64: "amd64" }[process.arch] ?? process.arch)')

step "packaging/release/build.sh and packaging/npm/build.sh (VERSION=$version)"
# docs/javascript.md's build command, with this version and these paths.
build=$(grep -m1 '^VERSION=v1.2.3 packaging/release/build.sh dist && VERSION=v1.2.3 packaging/npm/build.sh dist out$' docs/javascript.md) ||
  { bad "docs/javascript.md has the build command"; exit 1; }
build=${build//v1.2.3/$version}
build=${build//build.sh dist/build.sh $tmp/dist}
build=${build/% out/ $tmp/out}
echo "$build"
eval "$build" | grep -v '^[0-9a-f]\{64\} '
(umask 077 && VERSION=$version packaging/npm/build.sh "$tmp/dist" "$tmp/out2" >/dev/null)
same=true
for f in "$tmp"/out/*.tgz; do cmp -s "$f" "$tmp/out2/$(basename "$f")" || same=false; done
check "two builds of the packages (umask 022 and 077) give the same bytes" $same
check "six tarballs" test "$(ls "$tmp"/out/*.tgz | wc -l)" -eq 6

step "a registry on 127.0.0.1 serving only those tarballs"
node packaging/npm/test/registry.js "$tmp/out" "$tmp/registry.log" >"$tmp/registry.url" &
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/registry.url" ] && break; sleep 0.1; done
reg=$(cat "$tmp/registry.url")
echo "$reg"

step "a fresh project: npm ci (packaging/npm/test/project)"
proj=$tmp/project
mkdir -p "$proj"
cp packaging/npm/test/project/package.json packaging/npm/test/project/package-lock.json "$proj/"
(cd "$proj" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error)
node packaging/npm/test/snippets.js packaging/npm/tableemu/README.md "$tmp/snippets" >"$tmp/snippets.list"
echo "README snippets: $(wc -l <"$tmp/snippets.list")"
[ -s "$tmp/snippets/shell.txt" ] || { bad "README has the shell block"; exit 1; }
# The README's shell lines, comments off, in order.
mapfile -t shell < <(sed 's/ *#.*$//' "$tmp/snippets/shell.txt" | grep -v '^$')
bin=$proj/node_modules/@tableemu/$host/bin/tableemu

# serve ID DIR CMD...: starts CMD in DIR, output in $tmp/ID.out, and waits
# for the readiness line; sets $spid and $sport.
serve() {
  local id=$1 dir=$2; shift 2
  mkdir -p "$dir"
  (cd "$dir" && exec "$@") >"$tmp/$id.out" 2>&1 &
  spid=$!
  pids+=($spid)
  for _ in $(seq 300); do
    grep -q 'successfully listening' "$tmp/$id.out" && break
    kill -0 $spid 2>/dev/null || break
    sleep 0.1
  done
  sport=$(sed -n 's/.*successfully listening at http:\/\/127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$tmp/$id.out")
  [ -n "$sport" ] || { echo "--- $id printed:"; cat "$tmp/$id.out"; }
}
# clean ID: the server printed "stopped" (its exit-0 path) after one
# "shutting down", and nothing answers on $sport (waits up to 10 s: under
# npx the launcher may outlive npx by half a second).
clean() {
  local id=$1
  for _ in $(seq 100); do
    if grep -q ' stopped$' "$tmp/$id.out" && ! "$bin" healthcheck --tablePort "$sport" 2>/dev/null; then
      test "$(grep -c 'shutting down' "$tmp/$id.out")" -eq 1
      return
    fi
    sleep 0.1
  done
  { echo "--- $id printed:"; cat "$tmp/$id.out"; } >&2
  return 1
}
# signal ID SIGNAL [TARGET]: sends SIGNAL to TARGET ($spid by default),
# waits for $spid; its exit status in $rc.
signal() {
  rc=0
  kill -s "$2" -- "${3:-$spid}"
  wait $spid || rc=$?
}
readme_cs=$(grep -m1 '^DefaultEndpointsProtocol=' packaging/npm/tableemu/README.md)

n=0
for line in "${shell[@]}"; do
  n=$((n + 1))
  case $line in
  "npm i -D tableemu")
    step "$line (from $reg)"
    (cd "$proj" && $line --registry "$reg" --no-audit --no-fund 2>&1 | tee "$tmp/install.out")
    check "installed @tableemu/$host only" test "$(ls "$proj/node_modules/@tableemu")" = "$host"
    check "its bin/tableemu is the release binary, byte for byte" cmp -s "$bin" "$tmp/dist/tableemu-$gohost"
    check "npm asked for all five platform packages' metadata" \
      test "$(grep -c '^GET /@tableemu/[a-z0-9-]* 200$' "$tmp/registry.log")" -eq 5
    check "and downloaded no other platform's tarball" \
      test "$(grep '^GET /@tableemu/.*\.tgz' "$tmp/registry.log" | grep -vc "tableemu-$host-")" -eq 0
    check "package-lock.json records all five, optional, with os and cpu" node -e '
      const lock = require(process.argv[1]).packages;
      const p = Object.keys(lock).filter((k) => k.startsWith("node_modules/@tableemu/"));
      process.exit(p.length === 5 && p.every((k) => lock[k].optional && lock[k].os && lock[k].cpu) ? 0 : 1);
    ' "$proj/package-lock.json"
    check "no tableemu package has an install script (lock file's hasInstallScript)" node -e '
      const lock = require(process.argv[1]).packages;
      const p = Object.keys(lock).filter((k) => /^node_modules\/(tableemu|@tableemu\/)/.test(k));
      process.exit(p.length === 6 && !p.some((k) => lock[k].hasInstallScript) ? 0 : 1);
    ' "$proj/package-lock.json"
    ;;
  "npx tableemu --version")
    step "$line"
    out=$(cd "$proj" && $line)
    echo "$out"
    check "it prints the stamped version" test "$(echo "$out" | head -1)" = "tableemu $version"
    # The README's prose points at --help for the flags.
    check "npx tableemu --help lists the flags" bash -c "cd '$proj' && npx tableemu --help 2>&1 | grep -q -- --tablePort"
    ;;
  "npx tableemu"*)
    # npx runs the bin through `sh -c`. SIGTERM to npx reaches that shell
    # only, which dies, and npm exits 143 (it re-raises the signal that
    # killed its child); the launcher, orphaned, stops the server. A
    # terminal's Ctrl-C goes to the whole process group (setsid makes
    # one here): npm, sh and the launcher, which forwards it once.
    if [[ $line == *--inMemoryPersistence* ]]; then how="Ctrl-C (SIGINT to npx's process group)"; else how="SIGTERM to npx"; fi
    step "$line --tablePort 0, then $how"
    if [[ $how == Ctrl-C* ]]; then
      serve "npx$n" "$proj/run$n" setsid $line --tablePort 0
    else
      serve "npx$n" "$proj/run$n" $line --tablePort 0
    fi
    if [ -n "$sport" ]; then
      ok "'$line' reaches the readiness line"
      if [[ $line == *--inMemoryPersistence* ]]; then
        check "it serves from memory" grep -q 'serves Azure Table storage from memory' "$tmp/npx$n.out"
      else
        check "it serves from ./tableemu.sqlite" grep -q "serves Azure Table storage from $proj/run$n/tableemu.sqlite" "$tmp/npx$n.out"
      fi
      check "its connection string is the README's, but for the port" \
        grep -qF "connection string ${readme_cs//:10002\//:$sport/}" "$tmp/npx$n.out"
      if [[ $how == Ctrl-C* ]]; then
        signal "npx$n" INT "-$spid"
        check "Ctrl-C: npx exits 130 and the server stops gracefully (one signal, exit 0)" test $rc -eq 130 -a "$(clean "npx$n" && echo y)" = y
      else
        signal "npx$n" TERM
        check "SIGTERM to npx: npx exits 143 and the server stops gracefully (exit 0)" test $rc -eq 143 -a "$(clean "npx$n" && echo y)" = y
      fi
    else
      bad "'$line' reaches the readiness line"
    fi
    ;;
  *) bad "packaging/npm/test.sh does not know how to run the README's line: $line" ;;
  esac
done
check "the README's shell block has the four lines this script runs" test $n -eq 4

step "the launcher, run directly"
serve direct "$tmp/direct" "$proj/node_modules/.bin/tableemu" --tablePort 0 --inMemoryPersistence
signal direct TERM
check "SIGTERM: the server stops gracefully, the launcher exits 0" test $rc -eq 0 -a "$(clean direct && echo y)" = y
# Two SIGINTs in a row, as a terminal and npm together send them where sh
# execs the bin: one graceful stop, exit 0. (The in-memory server stops in
# milliseconds, so this does not show the 0.3 s window at work; it shows
# that a repeat does no harm.)
serve twice "$tmp/twice" "$proj/node_modules/.bin/tableemu" --tablePort 0 --inMemoryPersistence
kill -INT $spid
signal twice INT
check "SIGINT twice in a row: one graceful stop, exit 0" test $rc -eq 0 -a "$(clean twice && echo y)" = y
serve killed "$tmp/killed" "$proj/node_modules/.bin/tableemu" --tablePort 0 --inMemoryPersistence
signal killed KILL "$(pgrep -P $spid)"
check "a server killed by SIGKILL: the launcher dies of SIGKILL too (exit 137)" test $rc -eq 137

# The launcher on platforms this machine is not (process.platform and
# process.arch overridden by a preloaded script).
fake() { NODE_OPTIONS="--require $root/packaging/npm/test/fake-platform.cjs" FAKE_PLATFORM=$1 FAKE_ARCH=$2 "$proj/node_modules/.bin/tableemu" --version; }
rc=0
fake aix ppc64 >"$tmp/fake.out" 2>"$tmp/fake.err" || rc=$?
cat "$tmp/fake.err"
check "unsupported platform: exit 1, one line on stderr, nothing on stdout" \
  test $rc -eq 1 -a "$(wc -l <"$tmp/fake.err")" -eq 1 -a ! -s "$tmp/fake.out"
check "  naming the platform and the alternatives" grep -q 'no binary for aix/ppc64 .*releases.*go install github.com/tableemu/tableemu/cmd/tableemu@latest.*container image' "$tmp/fake.err"
other=linux-arm64
[ "$host" = linux-arm64 ] && other=linux-x64
rc=0
fake "${other%-*}" "${other#*-}" >"$tmp/fake.out" 2>"$tmp/fake.err" || rc=$?
cat "$tmp/fake.err"
check "platform package not installed: exit 1, one line naming it and the alternatives" \
  test $rc -eq 1 -a "$(wc -l <"$tmp/fake.err")" -eq 1 -a "$(grep -c "@tableemu/$other, the binary for ${other/-//}, is not installed.*go install" "$tmp/fake.err")" -eq 1
check "TABLEEMU_BINARY runs that binary, even on an unsupported platform" \
  test "$(TABLEEMU_BINARY=$tmp/dist/tableemu-$gohost fake aix ppc64 | head -1)" = "tableemu $version"

step "README: the example scripts"
cp -R "$tmp/snippets/script/." "$proj/"
check "node example.mjs prints Ada" test "$(cd "$proj" && node example.mjs)" = Ada
check "node isolation.mjs (snapshot, restore, reset) prints Ada" test "$(cd "$proj" && node isolation.mjs)" = Ada
check "node cosmos.mjs (profile cosmos) prints the localhost endpoint, and Ada" test "$(cd "$proj" && node cosmos.mjs)" = "$(printf '%s\n' http://localhost:PORT/devcosmosaccount1 Ada)"
check "node load.mjs (fixtures/people.jsonl) prints what it loaded, and Grace" test "$(cd "$proj" && node load.mjs)" = "$(printf '%s\n' "{ tables: [ { table: 'people', entities: 2 } ], entities: 2 }" Grace)"

# runner NAME DIR CMD...: runs a test runner in DIR; its JSON report
# ($tmp/NAME.json) must count at least one passed test and none failed,
# and no tableemu may be left running.
runner() {
  local name=$1 dir=$2; shift 2
  step "README: $name ($*)"
  local rc=0
  (cd "$dir" && "$@") || rc=$?
  local counts
  counts=$(node -e '
    const r = require(process.argv[1]);
    const s = r.stats ?? r; // mocha: stats.passes; vitest and jest: numPassedTests
    console.log((s.passes ?? s.numPassedTests ?? 0) + " " + (s.failures ?? s.numFailedTests ?? 0));
  ' "$tmp/$name.json" 2>/dev/null || echo "0 0")
  echo "$name: ${counts% *} passed, ${counts#* } failed"
  check "$name: exit 0, ${counts% *} tests passed through the global setup" test $rc -eq 0 -a "${counts% *}" -gt 0 -a "${counts#* }" -eq 0
  check "$name: the server stopped with the run" bash -c "! pgrep -f '^$bin' >/dev/null"
}
for r in vitest jest mocha; do
  [ -d "$tmp/snippets/$r" ] || { bad "README has the $r snippets"; continue; }
  cp -R "$tmp/snippets/$r" "$proj/$r"
done
runner vitest "$proj/vitest" npx vitest run --reporter=default --reporter=json --outputFile="$tmp/vitest.json"
# Two test files and two workers: jest runs them in child processes, which
# must see the connection string globalSetup put in the environment.
cp "$proj/jest/tables.test.js" "$proj/jest/tables.again.test.js"
runner jest "$proj/jest" npx jest --maxWorkers=2 --json --outputFile="$tmp/jest.json"
runner mocha "$proj/mocha" npx mocha --reporter json --reporter-option "output=$tmp/mocha.json"
# docs/isolation.md's vitest set-up: setup(), load() of the doc's fixture
# file and snapshot() in globalSetup, and the test file restoring the
# snapshot before each test through the module-level functions, in the
# worker.
node packaging/npm/test/snippets.js docs/isolation.md "$tmp/isolation" >"$tmp/isolation.list"
if [ -d "$tmp/isolation/isolation" ]; then
  cp -R "$tmp/isolation/isolation" "$proj/isolation"
  runner isolation "$proj/isolation" npx vitest run --reporter=default --reporter=json --outputFile="$tmp/isolation.json"
else
  bad "docs/isolation.md has the isolation snippets"
fi

step "the helper (packaging/npm/test/helper.test.js, node --test)"
cp packaging/npm/test/helper.test.js "$proj/"
rc=0
(cd "$proj" && node --test --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$tmp/helper.tap" helper.test.js) || rc=$?
hp=$(awk '/^# pass /{n=$3} END{print n+0}' "$tmp/helper.tap")
hf=$(awk '/^# fail /{n=$3} END{print n+0}' "$tmp/helper.tap")
passed=$((passed + hp)) failed=$((failed + hf))
[ $rc -eq 0 ] || [ "$hf" -gt 0 ] || bad "node --test exited $rc"

step "packaging/npm/test/load-memory.js 20000 (docs/javascript.md's load() figures come from its run with 300000)"
cp packaging/npm/test/load-memory.js "$proj/"
out=$(cd "$proj" && node load-memory.js 20000) || true
echo "$out"
check "load-memory.js loads its file and prints the figures" grep -q '^load of 20000 entities (.*): .* s; peak RSS [0-9]* MiB' <<<"$out"

step "the TypeScript types (tsc on packaging/npm/test/types)"
cp -R packaging/npm/test/types "$proj/types"
check "tsc --noEmit: index.d.ts and index.d.mts, as CommonJS and ESM users see them" bash -c "cd '$proj/types' && npx tsc -p ."

step "packaging/npm/bench.sh --quick (docs/javascript.md's figures come from its full run)"
TABLEEMU_NPM_OUT=$tmp/out TABLEEMU_BENCH_CLIENT=$proj bash packaging/npm/bench.sh --quick >"$tmp/bench.out" 2>&1 || true
cat "$tmp/bench.out"
check "the bench runs and prints its table" grep -q '^| warm `node_modules/.bin` start (median): ready / first createTable | [0-9]* ms / [0-9]* ms |$' "$tmp/bench.out"

echo "npm-package: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
