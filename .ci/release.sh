#!/usr/bin/env bash
# .ci/release.sh — checks the release binaries (packaging/release/build.sh) as the
# release workflow (.github/workflows/release.yml) will build them:
#
# 1. builds all five platforms with a release-like VERSION and prints their
#    sizes; SHA256SUMS verifies; each file is an executable for its
#    platform (ELF, Mach-O or PE by its first bytes); the docs' figures
#    for the binary's size hold within .ci/doc-figures.sh's margin;
# 2. runs the linux-amd64 binary: --version names VERSION and the commit;
# 3. reproducibility: builds linux-amd64 and windows-amd64 again from a copy
#    of the sources in another directory, with an empty build cache, and
#    requires the same bytes (-trimpath keeps paths out, the empty build id
#    and fixed stamps keep the rest the same);
# 4. runs docs/releases.md's download block against a loopback copy of
#    the release;
# 5. checks that the scripts the release workflow runs exist, and lints
#    .github/workflows with actionlint (pinned, through the module
#    proxy), since the workflow cannot run here.
#
#   bash .ci/release.sh       (from anywhere; .ci/run runs it)
set -euo pipefail
cd "$(dirname "$0")/.."

version=v0.0.0-ci.1
commit=$(git rev-parse HEAD)
work=$(mktemp -d)
http= # the loopback file server of step 4
# errexit holds inside the trap too: nothing here may fail.
cleanup() {
	[ -z "$http" ] || kill "$http" 2>/dev/null || true
	chmod -R u+w "$work" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
fail() {
	echo "release: FAIL: $*" >&2
	exit 1
}

echo "== packaging/release/build.sh: five platforms"
VERSION=$version COMMIT=$commit packaging/release/build.sh "$work/a" >/dev/null
(cd "$work/a" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS does not verify"
magic() { od -An -tx1 -N4 "$1" | tr -d ' \n'; }
for f in "$work"/a/tableemu-*; do
	case $f in
	*-linux-*) want=7f454c46 ;;  # \x7fELF
	*-darwin-*) want=cffaedfe ;; # Mach-O 64-bit, little-endian
	*-windows-*) want=4d5a ;;    # MZ
	esac
	[[ $(magic "$f") == "$want"* ]] || fail "$(basename "$f") is not a $want executable"
	printf '%-28s %10d bytes\n' "$(basename "$f")" "$(stat -c %s "$f")"
done
[ "$(wc -l <"$work/a/SHA256SUMS")" = 5 ] || fail "SHA256SUMS should list five binaries"

echo "== the docs' figures for the binary, against linux-amd64's size"
bash .ci/doc-figures.sh binary "$(stat -c %s "$work/a/tableemu-linux-amd64")" || fail "a doc's size figure drifted from the build"

echo "== --version of the linux-amd64 binary"
"$work/a/tableemu-linux-amd64" --version | tee "$work/version"
grep -qx "tableemu $version" "$work/version" || fail "--version does not name $version"
grep -qx "commit $commit" "$work/version" || fail "--version does not name commit $commit"

echo "== reproducible: the same bytes from another directory and an empty build cache"
mkdir "$work/src"
git ls-files -z --cached --others --exclude-standard | tar -c --null -T - | tar -x -C "$work/src"
t0=$(date +%s)
(cd "$work/src" && GOCACHE="$work/gocache" GOFLAGS=-modcacherw VERSION=$version COMMIT=$commit \
	PLATFORMS="linux/amd64 windows/amd64" packaging/release/build.sh "$work/b" >/dev/null)
for f in tableemu-linux-amd64 tableemu-windows-amd64.exe; do
	cmp -s "$work/a/$f" "$work/b/$f" || fail "$f differs between two builds of the same sources"
	echo "$f: identical ($(sha256sum <"$work/b/$f" | cut -c1-16)…)"
done
echo "(second build with an empty cache: $(($(date +%s) - t0)) s)"

echo "== docs/releases.md's download block, against a local copy of the release"
# The block downloads from GitHub; here the same files are served from
# loopback under the same path, and the block runs with only its base URL
# and version replaced.
block=$(awk '/^```sh$/{b=1; s=""; next} b&&/^```$/{b=0; if (s ~ /curl /) {printf "%s", s; exit}; next} b{s=s $0 "\n"}' docs/releases.md)
grep -q 'sha256sum --ignore-missing -c SHA256SUMS' <<<"$block" || fail "docs/releases.md has no download block"
mkdir -p "$work/site/$version" "$work/dl"
cp "$work/a"/* "$work/site/$version/"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$work/site" "$port" >/dev/null 2>&1 &
http=$!
until curl -fso /dev/null "http://127.0.0.1:$port/"; do sleep 0.1; done
local_block=${block//https:\/\/github.com\/tableemu\/tableemu\/releases\/download/http://127.0.0.1:$port}
local_block=${local_block/version=v1.2.3/version=$version}
[ "$local_block" != "$block" ] || fail "docs/releases.md: the download URL changed; update .ci/release.sh"
(cd "$work/dl" && bash -euo pipefail -c "$local_block") | tee "$work/dl.out"
grep -qx "tableemu-linux-amd64: OK" "$work/dl.out" || fail "the download block did not verify the checksum"
grep -qx "tableemu $version" "$work/dl.out" || fail "the downloaded binary's --version does not name $version"
kill "$http"
http=

echo "== the scripts the release workflow runs exist"
for s in $(grep -oE 'packaging/(release|npm|python)/[a-z]+\.sh' .github/workflows/release.yml | sort -u); do
	[ -f "$s" ] || fail ".github/workflows/release.yml runs $s, which does not exist"
done

echo "== actionlint .github/workflows"
# actionlint runs shellcheck on run: scripts when it finds it; Debian's
# package is small, so install it for the deeper check.
if ! command -v shellcheck >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq shellcheck >/dev/null 2>&1 ||
		{ apt-get -o DPkg::Lock::Timeout=600 update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq shellcheck >/dev/null; }
fi
command -v shellcheck >/dev/null && shellcheck --version | sed -n 2p
GOFLAGS= go run github.com/rhysd/actionlint/cmd/actionlint@v1.7.12 -color=false
echo "actionlint: no problems"
echo "release: OK"
