#!/usr/bin/env bash
# Measures docs/python.md's figures: tableemu installed from its wheel beside
# Azurite 3.37.0 installed from npm, in one run on this machine. Builds the
# linux/amd64 (or arm64) binary and its wheel, makes a virtualenv with
# packaging/python/requirements.txt (azure-data-tables, for the first request), then:
#  - bytes: the virtualenv's growth for `pip install WHEEL` (site-packages and
#    bin/) vs node_modules after `npm i -D azurite@3.37.0` in an empty dir;
#  - the install times of both (from the local pip and npm caches when warm);
#  - packaging/python/bench.py: spawn to ready line (first start after install, then
#    warm) and spawn to the first create_table answered.
# Prints a Markdown table (docs/python.md quotes it).
#
#   bash packaging/python/bench.sh              (5 runs each)
#   BENCH_RUNS=1 bash packaging/python/bench.sh (what packaging/python/test.sh does, quickly)
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${BENCH_RUNS:-5}
python=${PYTHON:-python3}
command -v npm >/dev/null || { echo "packaging/python/bench.sh: npm is not installed (Azurite comes from npm)" >&2; exit 1; }

tmp=$(mktemp -d)
# Every server's command line holds $tmp or runs from it: none outlives the run.
trap 'rm -rf "$tmp"' EXIT

case $(uname -m) in x86_64) goarch=amd64 ;; aarch64) goarch=arm64 ;; *) echo "packaging/python/bench.sh: $(uname -m) is not a wheel platform" >&2; exit 1 ;; esac
echo "== packaging/release/build.sh (linux/$goarch), packaging/python/build.sh" >&2
PLATFORMS="linux/$goarch" packaging/release/build.sh "$tmp/dist" >/dev/null
packaging/python/build.sh "$tmp/dist" "$tmp/wheels" >/dev/null
wheel=$(ls "$tmp"/wheels/*.whl)

echo "== virtualenv with packaging/python/requirements.txt" >&2
"$python" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install --quiet --no-input --disable-pip-version-check \
  --require-hashes --no-deps -r packaging/python/requirements.txt
site=$("$tmp/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')

# now: seconds since the epoch, with nanoseconds.
now() { date +%s.%N; }

echo "== pip install $(basename "$wheel")" >&2
before=$(du -sb "$tmp/venv" | cut -f1)
site_before=$(du -sb "$site" | cut -f1)
t0=$(now)
"$tmp/venv/bin/python" -m pip install --quiet --no-input --disable-pip-version-check --no-index "$wheel"
pip_s=$(awk "BEGIN { print $(now) - $t0 }")
after=$(du -sb "$tmp/venv" | cut -f1)
site_growth=$(($(du -sb "$site" | cut -f1) - site_before))

echo "== npm i -D azurite@3.37.0" >&2
mkdir "$tmp/azurite"
t0=$(now)
(cd "$tmp/azurite" && npm i -D --no-audit --no-fund --loglevel=error azurite@3.37.0 >/dev/null)
npm_s=$(awk "BEGIN { print $(now) - $t0 }")
nm=$(du -sb "$tmp/azurite/node_modules" | cut -f1)

echo "== starts ($runs runs each)" >&2
PATH="$tmp/venv/bin:$PATH" "$tmp/venv/bin/python" packaging/python/bench.py \
  "$before" "$after" "$site_growth" "$pip_s" "$nm" "$npm_s" "$tmp/azurite" "$runs"
echo "measured $(date -u +%Y-%m-%d) on $(nproc) cores, $(uname -sm), Python $("$python" -c 'import platform; print(platform.python_version())'), pip $("$tmp/venv/bin/python" -m pip --version | cut -d' ' -f2), Node $(node --version), npm $(npm --version)"
