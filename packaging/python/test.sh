#!/usr/bin/env bash
# Tests the PyPI channel end to end, as .ci/run does (bash packaging/python/test.sh):
#  1. runs docs/python.md's "Build" block (packaging/release/build.sh, then
#     packaging/python/build.sh) into a temporary directory: five wheels;
#  2. makes a fresh virtualenv, installs packaging/python/requirements.txt there
#     (azure-data-tables and pytest, pinned with hashes, through pip's
#     cache) and then tableemu with `pip install --no-index --find-links
#     WHEELS tableemu`, so that pip itself picks this platform's wheel;
#  3. checks `tableemu --version` and `python -m tableemu --version` print
#     the stamped version, and that pip refuses the other platforms' wheels;
#  4. runs packaging/python/tests with pytest in that virtualenv: the fixtures through
#     azure-data-tables, start/stop and their errors, the wheels' contents
#     against the specs, and packaging/python/README.md's snippets;
#  5. runs packaging/python/bench.sh once, quickly (BENCH_RUNS=1; npm installs Azurite).
# Prints one summary line with the counts; exits non-zero on any failure.
#
#   bash packaging/python/test.sh            (needs go, python3 3.8+; no network but PyPI)
#   PYTHON=python3.12 bash packaging/python/test.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
python=${PYTHON:-python3}
command -v "$python" >/dev/null || { echo "packaging/python/test.sh: $python is not installed; set PYTHON" >&2; exit 1; }
command -v go >/dev/null || { echo "packaging/python/test.sh: go is not installed (packaging/release/build.sh needs it)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

passed=0 failed=0
# check NAME COMMAND...: one shell-level check, counted in the summary.
check() {
  local name=$1; shift
  if "$@"; then passed=$((passed + 1)); echo "ok: $name"
  else failed=$((failed + 1)); echo "FAIL: $name"; fi
}

# 1. The build, exactly as docs/python.md gives it, with its relative
# directory dist/ moved into $tmp.
block=$(awk '/^## Build/{r=1} r&&/^```sh$/{b=1; next} b&&/^```$/{exit} b{print}' docs/python.md)
grep -q 'packaging/python/build.sh' <<<"$block" || { echo "packaging/python/test.sh: no sh block with packaging/python/build.sh under docs/python.md's ## Build" >&2; exit 1; }
tag=$(grep -o 'VERSION=v[^ ]*' <<<"$block" | head -1 | cut -d= -f2)
echo "== docs/python.md's Build block (VERSION=$tag), into a temporary dist/"
bash -euo pipefail -c "$(sed -E "s#(^| )dist/#\\1$tmp/dist/#g; s#(^| )dist( |\$)#\\1$tmp/dist\\2#g" <<<"$block")"
wheels=$tmp/dist/wheels
listed=$(awk '/^## Build/{r=1} r&&/^```text$/{b=1; next} b&&/^```$/{exit} b{print}' docs/python.md)

# 2. A fresh virtualenv: the pinned SDK and pytest, then tableemu from the
# wheels alone (no index), pip choosing the platform.
echo "== fresh virtualenv, pip install -r packaging/python/requirements.txt, pip install --no-index --find-links WHEELS tableemu"
"$python" -m venv "$tmp/venv"
venv=$tmp/venv
"$venv/bin/python" -m pip install --quiet --no-input --disable-pip-version-check \
  --require-hashes --no-deps -r packaging/python/requirements.txt
"$venv/bin/python" -m pip install --no-input --disable-pip-version-check \
  --no-index --find-links "$wheels" tableemu
installed_tags=$("$venv/bin/python" -c 'from importlib.metadata import distribution as d; print(d("tableemu").read_text("WHEEL"))')

# 3. The command, python -m, and pip's refusal of the other platforms.
arch=$(uname -m)
want="tableemu $tag"
echo "== checks"
check "the wheels are the five docs/python.md lists" test "$(cd "$wheels" && LC_ALL=C ls)" = "$listed"
check "pip picked this platform's wheel (py3-none-manylinux_2_17_$arch)" grep -q "^Tag: py3-none-manylinux_2_17_$arch\$" <<<"$installed_tags"
check "tableemu is $venv/bin/tableemu, executable" test -x "$venv/bin/tableemu" -a "$(PATH=$venv/bin:$PATH command -v tableemu)" = "$venv/bin/tableemu"
check "tableemu --version prints '$want'" test "$("$venv/bin/tableemu" --version | head -1)" = "$want"
check "python -m tableemu --version prints '$want'" test "$("$venv/bin/python" -m tableemu --version | head -1)" = "$want"
refused() {
  local out
  if out=$("$venv/bin/python" -m pip install --no-input --disable-pip-version-check --no-index "$1" 2>&1); then
    echo "$out"; return 1
  fi
  echo "  $(grep ERROR <<<"$out")"
  grep -q "ERROR: $(basename "$1") is not a supported wheel on this platform." <<<"$out"
}
for w in "$wheels"/*.whl; do
  case $w in *"-manylinux_2_17_$arch."*) continue ;; esac # this machine's
  check "pip refuses $(basename "$w")" refused "$w"
done

# 5. (started first, in the background, to save time) The figures' script,
# one run of each measurement: docs/python.md quotes a five-run output; this
# only checks that it still runs. Its timings do not matter here.
BENCH_RUNS=1 bash packaging/python/bench.sh >"$tmp/bench.out" 2>&1 &
bench_pid=$!

# 4. The pytest suite, in the virtualenv, from outside the source tree so
# that `import tableemu` is the installed wheel's.
echo "== pytest packaging/python/tests ($("$venv/bin/python" -c 'from importlib.metadata import version as v
print("tableemu %s, azure-data-tables %s, pytest %s" % (v("tableemu"), v("azure-data-tables"), v("pytest")))'))"
rc=0
(cd "$tmp" && PYTHONDONTWRITEBYTECODE=1 TABLEEMU_TEST_DIST="$tmp/dist" TABLEEMU_TEST_WHEELHOUSE="$wheels" \
  TABLEEMU_TEST_TAG="$tag" TABLEEMU_TEST_VERSION="$("$venv/bin/python" -c 'from importlib.metadata import version; print(version("tableemu"))')" \
  "$venv/bin/python" -m pytest -p pytester -p no:cacheprovider -ra --junitxml="$tmp/junit.xml" "$root/packaging/python/tests") || rc=$?

echo "== BENCH_RUNS=1 bash packaging/python/bench.sh"
bench_ok() {
  local rc=0
  wait "$bench_pid" || rc=$?
  cat "$tmp/bench.out"
  [ "$rc" -eq 0 ] && [ "$(grep -c '^| [a-z]' "$tmp/bench.out")" -eq 6 ]
}
check "packaging/python/bench.sh prints its six rows" bench_ok

counts=$("$venv/bin/python" - "$tmp/junit.xml" <<'EOF'
import sys
import xml.etree.ElementTree as ET

p = f = s = 0
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    if case.find("failure") is not None or case.find("error") is not None:
        f += 1
    elif case.find("skipped") is not None:
        s += 1
    else:
        p += 1
print(p, f, s)
EOF
) || counts="0 1 0"
read -r tp tf ts <<<"$counts"
passed=$((passed + tp)) failed=$((failed + tf))
echo "python: $passed passed, $failed failed, $ts skipped"
# pytest exits 5 when it collected nothing: a failure here too.
if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$tp" -eq 0 ]; then exit 1; fi
