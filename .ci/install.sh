#!/usr/bin/env bash
# .ci/install.sh — what .ci/run's legs need from outside Go, installed once,
# before legs that run side by side would each install it (and race each
# other for dpkg's lock, or for one node_modules):
#
#   bash .ci/install.sh system   Debian's packages the legs use, those
#                                missing, in one apt-get: postgresql
#                                (.ci/pg-cluster.sh), chromium
#                                (conformance/browser), podman and iproute2
#                                (docker/test-image.sh), nginx-light
#                                (.ci/compose-postgres.sh), shellcheck
#                                (.ci/release.sh's actionlint)
#   bash .ci/install.sh sdks     npm ci in conformance/js and
#                                conformance/browser, and conformance/python's
#                                virtualenv; the legs then run with
#                                TABLEEMU_NPM_CI_DONE=1 and do not install
#                                again (the virtualenv is reused as it is)
#
# Each leg still installs what it finds missing when run alone.
set -euo pipefail
cd "$(dirname "$0")/.."

case ${1:-} in
system)
  need=()
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
  [ -x /usr/bin/chromium ] || need+=(chromium)
  command -v podman >/dev/null || need+=(podman)
  command -v ip >/dev/null || need+=(iproute2)
  command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx-light)
  command -v shellcheck >/dev/null || need+=(shellcheck)
  if [ ${#need[@]} -eq 0 ]; then
    echo "Debian packages: all installed"
    exit 0
  fi
  echo "== apt-get install ${need[*]}"
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${need[@]}" >/dev/null
  ;;
sdks)
  for d in conformance/js conformance/browser; do
    echo "== npm ci ($d)"
    (cd "$d" && npm ci --no-audit --no-fund --loglevel=error)
  done
  bash conformance/python/run.sh --install-only
  echo "SDKs installed: conformance/js, conformance/browser, conformance/python/.venv"
  ;;
*)
  echo "usage: .ci/install.sh system|sdks" >&2
  exit 2
  ;;
esac
