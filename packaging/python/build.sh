#!/usr/bin/env bash
# packaging/python/build.sh DIST OUT — the PyPI wheels: one per release binary in DIST
# (packaging/release/build.sh's output), written into OUT, each holding those very
# bytes (checked against DIST/SHA256SUMS) and the tableemu Python package.
#
#   VERSION=v1.2.3 packaging/release/build.sh dist && VERSION=v1.2.3 packaging/python/build.sh dist wheels
#
# VERSION is the tag the binaries were built with (default v0.0.0-dev, as
# for packaging/release/build.sh); the wheels carry its PEP 440 form (v1.2.3-rc.1 ->
# 1.2.3rc1, v0.0.0-dev -> 0.0.0.dev0). Needs python3 (3.8 or later) and
# nothing else; the same inputs give the same bytes. Prints the wheel names.
set -euo pipefail
dist=${1:?usage: packaging/python/build.sh DIST OUT}
out=${2:?usage: packaging/python/build.sh DIST OUT}
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
command -v "$python" >/dev/null || { echo "packaging/python/build.sh: $python is not installed; set PYTHON to a Python 3.8+" >&2; exit 1; }
exec "$python" "$here/build_wheels.py" "$dist" "$out" "${VERSION:-v0.0.0-dev}"
