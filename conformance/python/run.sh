#!/usr/bin/env bash
# Conformance through the Python Azure Tables SDKs: azure-data-tables (sync
# and azure.data.tables.aio over aiohttp) and the legacy azure-cosmosdb-table.
# Makes a virtualenv (.venv here), installs requirements.txt into it with
# --require-hashes, builds tableemu once unless given one, and runs the
# pytest suite. The session starts one tableemu on a free loopback port with
# a fresh --location; tests that need their own server start another.
#
#   TABLEEMU_BIN=path                      use this binary instead of building
#   TABLEEMU_TEST_CONNECTION_STRING='...'  run against that endpoint instead
#                                          (Azurite, a storage account)
#   PYTHON=python3.12                      the interpreter for the virtualenv
#   run.sh --install-only                  only make (or keep) the virtualenv:
#                                          docker/test-compat.sh uses its SDK
#
# Exits non-zero when the install fails, any test fails, or none ran.
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)
python=${PYTHON:-python3}
install_only=false
if [ "${1:-}" = --install-only ]; then install_only=true; shift; fi

command -v "$python" >/dev/null || { echo "conformance/python: $python is not installed" >&2; exit 1; }
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 9))' ||
  { echo "conformance/python: needs Python 3.9 or later, $python is $("$python" -V 2>&1)" >&2; exit 1; }

# The virtualenv is rebuilt whenever requirements.txt or the interpreter
# changes; otherwise it is reused as is.
stamp="$("$python" -V 2>&1) $(sha256sum requirements.txt | cut -d' ' -f1)"
if [ ! -x .venv/bin/python ] || [ "$(cat .venv/.stamp 2>/dev/null)" != "$stamp" ]; then
  echo "== $python -m venv, pip install --require-hashes (conformance/python)"
  rm -rf .venv
  "$python" -m venv .venv
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-input \
    --require-hashes --no-deps -r requirements.txt
  echo "$stamp" > .venv/.stamp
fi
if $install_only; then exit 0; fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ -z "${TABLEEMU_TEST_CONNECTION_STRING:-}" ] && [ -z "${TABLEEMU_BIN:-}" ]; then
  echo "== go build ./cmd/tableemu"
  (cd "$root" && go build -o "$tmp/tableemu" ./cmd/tableemu)
  export TABLEEMU_BIN="$tmp/tableemu"
fi

versions=$(.venv/bin/python -c 'from importlib.metadata import version as v
print("azure-data-tables@%s (aiohttp %s), azure-cosmosdb-table@%s" % (v("azure-data-tables"), v("aiohttp"), v("azure-cosmosdb-table")))')
# pytest_run LABEL: one pytest run of the whole suite (or of the arguments
# given), then its counts per SDK from its JUnit report: test_aio.py is the
# async client, test_legacy.py the legacy SDK, every other file the sync
# client. Sets status to 1 on a failure.
status=0
pytest_run() {
  local label=$1 junit=$tmp/junit-$RANDOM.xml rc=0
  echo "== pytest ($versions$label)"
  PYTHONDONTWRITEBYTECODE=1 .venv/bin/python -m pytest -p no:cacheprovider -ra \
    --junitxml="$junit" "${args[@]}" || rc=$?
  if [ -f "$junit" ]; then
    .venv/bin/python - "$junit" "${#args[@]}" <<'EOF' || status=1
import sys
import xml.etree.ElementTree as ET

counts = {}
udev = None
todo = 0
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    f = case.get("classname", "")
    sdk = "aio" if f.endswith("test_aio") else "legacy" if f.endswith("test_legacy") else "sync"
    c = counts.setdefault(sdk, [0, 0, 0])
    skipped = case.find("skipped")
    if case.find("failure") is not None or case.find("error") is not None:
        c[1] += 1
    elif skipped is not None:
        c[2] += 1
        # helpers.not_yet: the cosmos run's cases the profile does not
        # answer as Cosmos DB yet (xfail), counted apart.
        todo += skipped.get("type") == "pytest.xfail"
    else:
        c[0] += 1
    if case.get("name") == "test_use_development_storage_on_10002":
        udev = "SKIPPED: " + skipped.get("message", "") if skipped is not None else "ran on 127.0.0.1:10002"
labels = {"sync": "azure-data-tables (sync)", "aio": "azure-data-tables (aio)", "legacy": "azure-cosmosdb-table (legacy)"}
total = [0, 0, 0]
for sdk in ("sync", "aio", "legacy"):
    p, f, s = counts.get(sdk, [0, 0, 0])
    total = [total[0] + p, total[1] + f, total[2] + s]
    print(f"{labels[sdk]}: {p} passed, {f} failed, {s} skipped")
print(f"UseDevelopmentStorage=true test: {udev}")
print(f"conformance-python: {total[0]} passed, {total[1]} failed, {total[2]} skipped"
      + (f" ({todo} of them expected to fail: not yet under the profile)" if todo else ""))
# A whole run (no pytest arguments) must have run tests of every SDK.
whole = sys.argv[2] == "0"
sys.exit(1 if total[1] or not total[0] or (whole and any(not counts.get(k, [0])[0] for k in labels)) else 0)
EOF
  else
    status=1
  fi
  # pytest exits 5 when it collected no test: that is a failure here too.
  if [ "$rc" -ne 0 ]; then status=1; fi
}

args=("$@")
pytest_run ""
# Once more against tableemu --profile cosmos (docs/cosmos.md), the SDKs
# in their Cosmos mode (conftest.py says how): the same virtualenv, one
# more pytest, its time printed. Not against TABLEEMU_TEST_CONNECTION_STRING,
# nor with TABLEEMU_COSMOS_RUN=0.
if [ -z "${TABLEEMU_TEST_CONNECTION_STRING:-}" ] && [ "${TABLEEMU_COSMOS_RUN:-1}" != 0 ]; then
  t0=$(date +%s)
  TABLEEMU_PROFILE=cosmos pytest_run ", tableemu --profile cosmos, Cosmos mode"
  echo "the cosmos run took $(($(date +%s) - t0)) s"
fi
exit $status
