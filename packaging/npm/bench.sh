#!/usr/bin/env bash
# packaging/npm/bench.sh — tableemu's npm package next to Azurite's, on this machine:
# what `npm i -D` downloads and installs, and how long the server takes to
# be ready and to answer a first createTable. docs/javascript.md quotes it.
#
#   bash packaging/npm/bench.sh [RUNS]      the full run, RUNS warm starts (default 5)
#   bash packaging/npm/bench.sh --quick     tableemu only, one warm start, no Azurite
#                                 (packaging/npm/test.sh runs this, so the script
#                                 keeps working)
#
#   TABLEEMU_NPM_OUT=DIR     take the packages packaging/npm/build.sh wrote to DIR
#                            instead of building them (VERSION=v0.0.0-dev)
#   TABLEEMU_BENCH_CLIENT=D  a directory whose node_modules has
#                            @azure/data-tables, instead of an npm ci of
#                            packaging/npm/test/project
#
# tableemu comes from its tarballs through packaging/npm/test/registry.js on
# 127.0.0.1 (it is not published yet), azurite@3.37.0 from the public
# registry. Each is installed twice into an empty project: first with an
# empty npm cache (the download: its time, and the cache's size after, in
# bytes), then offline from that cache (the install alone). Sizes are
# `du -sb node_modules` (apparent bytes); packages are what `npm ls --all
# --parseable` lists. Start times are from spawning `npx tableemu` or
# `npx azurite-table` (--inMemoryPersistence --silent --tablePort P) to
# its readiness line, and to the first createTable through
# @azure/data-tables 13.3.2 that succeeded, sent right after that line
# (packaging/npm/test/bench.js). "first" is the first start after the install;
# "warm" the median of RUNS more, through npx and through
# node_modules/.bin directly.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

quick=false runs=5
case ${1:-} in
--quick) quick=true runs=1 ;;
'') ;;
*) runs=$1 ;;
esac

tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

if [ -n "${TABLEEMU_NPM_OUT:-}" ]; then
  out=$(cd "$TABLEEMU_NPM_OUT" && pwd)
else
  echo "== building the packages (packaging/release/build.sh, packaging/npm/build.sh)" >&2
  packaging/release/build.sh "$tmp/dist" >/dev/null
  packaging/npm/build.sh "$tmp/dist" "$tmp/out" >/dev/null
  out=$tmp/out
fi
version=$(ls "$out" | sed -n 's/^tableemu-\([0-9].*\)\.tgz$/\1/p')
node packaging/npm/test/registry.js "$out" "$tmp/registry.log" >"$tmp/registry.url" &
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/registry.url" ] && break; sleep 0.1; done
reg=$(cat "$tmp/registry.url")

client=${TABLEEMU_BENCH_CLIENT:-}
if [ -z "$client" ]; then
  echo "== @azure/data-tables for the client (npm ci of packaging/npm/test/project)" >&2
  client=$tmp/client
  mkdir -p "$client"
  cp packaging/npm/test/project/package.json packaging/npm/test/project/package-lock.json "$client/"
  (cd "$client" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error >/dev/null)
fi
cp packaging/npm/test/bench.js "$client/bench.js"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f s", b - a }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }

# measure NAME SPEC BIN [REGISTRY-ARGS...]: installs SPEC twice, starts
# BIN; sets row_NAME_* for the table.
declare -A row
measure() {
  local name=$1 spec=$2 bin=$3; shift 3
  local cache=$tmp/cache-$name a b
  echo "== $name: npm i -D $spec, empty cache" >&2
  mkdir -p "$tmp/$name-dl"
  echo '{ "name": "bench", "private": true }' >"$tmp/$name-dl/package.json"
  a=$(now)
  (cd "$tmp/$name-dl" && npm i -D "$spec" "$@" --cache "$cache" --no-audit --no-fund --loglevel=error >/dev/null 2>&1)
  b=$(now)
  row[$name.download]="$(secs "$a" "$b"), $(mb "$(du -sb "$cache" | cut -f1)")"
  echo "== $name: npm i -D $spec, offline from that cache" >&2
  mkdir -p "$tmp/$name"
  echo '{ "name": "bench", "private": true }' >"$tmp/$name/package.json"
  a=$(now)
  (cd "$tmp/$name" && npm i -D "$spec" "$@" --cache "$cache" --offline --no-audit --no-fund --loglevel=error >/dev/null 2>&1)
  b=$(now)
  row[$name.install]=$(secs "$a" "$b")
  row[$name.bytes]=$(mb "$(du -sb "$tmp/$name/node_modules" | cut -f1)")
  row[$name.packages]=$(cd "$tmp/$name" && npm ls --all --parseable 2>/dev/null | tail -n +2 | sort -u | wc -l)

  local args=(--inMemoryPersistence --silent)
  echo "== $name: first start after the install, then $runs warm" >&2
  local first
  first=$(cd "$client" && node bench.js "$tmp/$name" npx "$bin" "${args[@]}")
  row[$name.first]="${first% *} ms / ${first#* } ms"
  local i r w=() d=()
  for i in $(seq "$runs"); do
    r=$(cd "$client" && node bench.js "$tmp/$name" npx "$bin" "${args[@]}")
    w+=("$r")
    r=$(cd "$client" && node bench.js "$tmp/$name" "$tmp/$name/node_modules/.bin/$bin" "${args[@]}")
    d+=("$r")
  done
  row[$name.npx]="$(printf '%s\n' "${w[@]}" | cut -d' ' -f1 | median) ms / $(printf '%s\n' "${w[@]}" | cut -d' ' -f2 | median) ms"
  row[$name.bin]="$(printf '%s\n' "${d[@]}" | cut -d' ' -f1 | median) ms / $(printf '%s\n' "${d[@]}" | cut -d' ' -f2 | median) ms"
}

measure tableemu tableemu tableemu --registry "$reg"
names=(tableemu)
heads=("tableemu $version (tarballs on 127.0.0.1)")
if ! $quick; then
  measure azurite azurite@3.37.0 azurite-table
  names+=(azurite)
  heads+=("Azurite 3.37.0 (public registry)")
fi

line() { # line LABEL KEY
  local s="| $1 |"
  for n in "${names[@]}"; do s="$s ${row[$n.$2]} |"; done
  echo "$s"
}
echo
echo "packaging/npm/bench.sh, $(date -u +%Y-%m-%d), node $(node --version), npm $(npm --version), $(nproc) CPUs, $runs warm runs"
echo
s="| |"; u="|---|"
for h in "${heads[@]}"; do s="$s $h |"; u="$u---|"; done
echo "$s"; echo "$u"
line "\`npm i -D\`, empty cache: time, bytes downloaded (cache size after)" download
line "\`npm i -D\` again, offline from that cache: time" install
line "node_modules: bytes" bytes
line "node_modules: packages" packages
line "first \`npx\` start after the install: ready / first createTable" first
line "warm \`npx\` start (median): ready / first createTable" npx
line "warm \`node_modules/.bin\` start (median): ready / first createTable" bin
