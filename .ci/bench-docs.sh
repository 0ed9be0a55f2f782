#!/usr/bin/env bash
# Runs docs/benchmarks.md's "Reproduce" block as a reader would, shortened: the
# same five servers (tableemu in its three modes, Azurite 3.37 in memory,
# the bare reference server) and the same tablebench command, with two
# small workloads of one 1-second round instead of the full 8-second run;
# then its "Test isolation" block, on 100 entities and one run; its
# "PostgreSQL" block, shortened the same way; and its "Memory" block, at
# 100,000 entities, and BenchmarkPrivateMemory at 100,000 too.
# Paths under /tmp move to a private directory. Fails if any command fails
# or a target is missing from tablebench's table.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
# Every server's command line holds $work: none outlives a failed run.
trap 'pkill -f "$work/" 2>/dev/null || true; rm -rf "$work"' EXIT

block=$(awk '/^## Reproduce/{r=1} r&&/^```sh$/{b=1; next} b&&/^```$/{exit} b{print}' docs/benchmarks.md)
grep -q 'tablebench' <<<"$block" || { echo "no Reproduce block with tablebench in docs/benchmarks.md"; exit 1; }
short=${block//\/tmp\//$work\/}
short=${short//-duration 8s -rounds 3/-workloads insert,point -duration 1s -rounds 1}
[ "$short" != "${block//\/tmp\//$work\/}" ] || { echo "docs/benchmarks.md: the tablebench line changed; update .ci/bench-docs.sh"; exit 1; }

# Into files, not $(...): the servers the block starts in the background
# would hold a pipe open until they exit.
if ! bash -euo pipefail -c "$short" >"$work/out" 2>"$work/stderr"; then
  cat "$work/stderr" "$work/out"; exit 1
fi
out=$(cat "$work/out")
echo "$out"
for t in tableemu tableemu-fsync tableemu-memory azurite-memory bare; do
  for w in insert point; do
    grep -q "^| $w | $t |" <<<"$out" || { echo "FAIL: no $w row for $t"; cat "$work/stderr"; exit 1; }
  done
done
echo "docs/benchmarks.md's Reproduce block ran (shortened)"

# Its "Test isolation" block, after the Reproduce block's builds, on 100
# entities, one run, and the Go benchmark once.
iso=$(awk '/^## Test isolation/{r=1} r&&/^```sh$/{b=1; next} b&&/^```$/{exit} b{print}' docs/benchmarks.md)
grep -q 'tablebench -isolation' <<<"$iso" || { echo "no Test isolation block with tablebench -isolation in docs/benchmarks.md"; exit 1; }
short=${iso//\/tmp\//$work\/}
short=${short//-sizes 1000,10000,100000 -runs 5/-sizes 100 -runs 1}
short=${short//-benchtime 20x/-benchtime 1x}
[ "$(grep -c -- '-sizes 100 -runs 1' <<<"$short")" = 2 ] && grep -q -- '-benchtime 1x' <<<"$short" ||
  { echo "docs/benchmarks.md: the Test isolation lines changed; update .ci/bench-docs.sh"; exit 1; }
if ! bash -euo pipefail -c "$short" >"$work/iso.out" 2>"$work/iso.err"; then
  cat "$work/iso.err" "$work/iso.out"; exit 1
fi
cat "$work/iso.out"
[ "$(grep -c '^| 100 | ' "$work/iso.out")" = 2 ] || { echo "FAIL: tablebench -isolation printed no row for 100 entities"; exit 1; }
grep -q '^BenchmarkIsolation/restore-whole/100000' "$work/iso.out" || { echo "FAIL: no BenchmarkIsolation lines"; exit 1; }
echo "docs/benchmarks.md's Test isolation block ran (shortened)"

# Its "PostgreSQL" block: the cluster, nine servers and the tablebench
# command, with two workloads of one 1-second round.
pgb=$(awk '/^## PostgreSQL/{r=1} r&&/^```sh$/{b=1; next} b&&/^```$/{exit} b{print}' docs/benchmarks.md)
grep -q 'postgres-4' <<<"$pgb" || { echo "no PostgreSQL block with tablebench in docs/benchmarks.md"; exit 1; }
short=${pgb//\/tmp\//$work\/}
short=${short//-duration 8s -rounds 3/-duration 1s -rounds 1}
short=${short//-workloads insert,point,batch,range,mixed/-workloads insert,mixed}
grep -q -- '-workloads insert,mixed -duration 1s -rounds 1' <<<"$short" ||
  { echo "docs/benchmarks.md: the PostgreSQL tablebench line changed; update .ci/bench-docs.sh"; exit 1; }
if ! bash -euo pipefail -c "$short" >"$work/pg.out" 2>"$work/pg.err"; then
  cat "$work/pg.err" "$work/pg.out"; exit 1
fi
cat "$work/pg.out"
for t in tableemu-sqlite azurite-memory postgres-1 postgres-2 postgres-4; do
  grep -q "^| mixed | $t |" "$work/pg.out" || { echo "FAIL: no mixed row for $t"; cat "$work/pg.err"; exit 1; }
done
echo "docs/benchmarks.md's PostgreSQL block ran (shortened)"

# Its "Memory" block: tablebench -memory, tableemu and Azurite, at 100,000
# entities with reads of one second; it fails if tableemu's private memory
# passes its bound.
memb=$(awk '/^## Memory/{r=1} r&&/^```sh$/{b=1; next} b&&/^```$/{exit} b{print}' docs/benchmarks.md)
grep -q 'tablebench -memory' <<<"$memb" || { echo "no Memory block with tablebench -memory in docs/benchmarks.md"; exit 1; }
short=${memb//\/tmp\//$work\/}
short=${short//-sizes 100000,1000000,10000000 -timeout 1h/-sizes 100000 -duration 1s -timeout 10m}
grep -q -- '-sizes 100000 -duration 1s -timeout 10m' <<<"$short" ||
  { echo "docs/benchmarks.md: the Memory line changed; update .ci/bench-docs.sh"; exit 1; }
if ! bash -euo pipefail -c "$short" >"$work/mem.out" 2>"$work/mem.err"; then
  cat "$work/mem.err" "$work/mem.out"; exit 1
fi
cat "$work/mem.out"
for s in tableemu Azurite; do
  grep -q "^| 100000 | $s | .* | ok |$" "$work/mem.out" || { echo "FAIL: no row for $s at 100000 entities"; cat "$work/mem.err"; exit 1; }
done
echo "docs/benchmarks.md's Memory block ran (shortened)"

# The benchmark the Memory section names, at 100,000 entities instead of
# ten million.
pmb=$(tr '\n' ' ' <docs/benchmarks.md | grep -o "go test ./cmd/tablebench -run '^\$' -bench PrivateMemory[^\`]*" | head -1)
[ -n "$pmb" ] || { echo "docs/benchmarks.md no longer names BenchmarkPrivateMemory's command; update .ci/bench-docs.sh"; exit 1; }
TABLEBENCH_MEMORY_SIZES=100000 bash -c "$pmb" | tee "$work/pmb.out"
grep -q 'peak-private-MiB' "$work/pmb.out" || { echo "FAIL: BenchmarkPrivateMemory reported no peak"; exit 1; }
echo "docs/benchmarks.md's BenchmarkPrivateMemory ran (at 100,000 entities)"

# Its "Data in and out" block: the JSON Lines and CSV benchmarks at 10,000
# entities, once (their setup still writes 100,000), and the load of
# 100,000 through the SDK and tableemu import, once. The other two
# benchmarks it names fill a real Azurite for minutes and are not run.
xfer=$(awk '/^## Data in and out/{r=1} r&&/^```sh$/{b=1; next} b&&/^```$/{exit} b{print}' docs/benchmarks.md)
short=${xfer//-count 3/-count 1}
short=${short//\'BenchmarkTransfer\$|BenchmarkCSVTransfer\'/\'Benchmark(CSV)?Transfer\$/.*/n=10000\$\'}
grep -q -- "-bench 'Benchmark(CSV)?Transfer\$/.\*/n=10000\$' -benchtime 1x -count 1" <<<"$short" && grep -q -- "-bench 'BenchmarkLoad' -benchtime 1x -count 1" <<<"$short" ||
  { echo "docs/benchmarks.md: the Data in and out lines changed; update .ci/bench-docs.sh"; exit 1; }
if ! bash -euo pipefail -c "$short" >"$work/xfer.out" 2>&1; then
  cat "$work/xfer.out"; exit 1
fi
cat "$work/xfer.out"
for b in 'BenchmarkTransfer/import/n=10000-' 'BenchmarkCSVTransfer/export/n=10000-' 'BenchmarkLoad/sdk-batch' 'BenchmarkLoad/import-offline'; do
  grep -q "^$b" "$work/xfer.out" || { echo "FAIL: no $b line"; exit 1; }
done
echo "docs/benchmarks.md's Data in and out block ran (shortened)"
