#!/bin/sh
# packaging/release/build.sh OUT — the release binaries: one static tableemu for each
# platform below, and OUT/SHA256SUMS. The npm and Python packages and the
# release workflow (.github/workflows/release.yml) all take their binaries
# from here, so every channel ships the same bytes.
#
#   VERSION=v1.2.3 packaging/release/build.sh dist     (VERSION: the tag; default v0.0.0-dev)
#   PLATFORMS="linux/amd64" packaging/release/build.sh dist    (a subset, for tests)
#
# Each binary is built with CGO_ENABLED=0 (the SQLite driver is pure Go, so
# nothing links to a C library), -trimpath (no path of this machine inside),
# -buildvcs=false and an empty build id, and stamped with -X main.version
# and -X main.commit, which `tableemu --version` prints. With the same Go
# release, sources, VERSION and COMMIT, two builds give the same bytes,
# whatever the directory or build cache (.ci/release.sh checks it).
#
# Names: OUT/tableemu-<os>-<arch>, with .exe for Windows. COMMIT defaults
# to `git rev-parse HEAD` (unknown outside a Git checkout).
set -eu
out=${1:?usage: packaging/release/build.sh OUT}
cd "$(dirname "$0")/../.."

version=${VERSION:-v0.0.0-dev}
# A Go module version: v, three numbers, an optional pre-release.
if ! printf '%s\n' "$version" | grep -Eq '^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$'; then
	echo "packaging/release/build.sh: VERSION=$version: want a tag like v1.2.3 or v1.2.3-rc.1" >&2
	exit 2
fi
commit=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
case $commit in
'' | *[!0-9A-Za-z._-]*)
	echo "packaging/release/build.sh: COMMIT=$commit: want a commit hash" >&2
	exit 2
	;;
esac
platforms=${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64}

mkdir -p "$out"
names=
for p in $platforms; do
	os=${p%/*} arch=${p#*/}
	name=tableemu-$os-$arch
	[ "$os" = windows ] && name=$name.exe
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -buildvcs=false \
		-ldflags "-s -w -buildid= -X main.version=$version -X main.commit=$commit" \
		-o "$out/$name" ./cmd/tableemu
	names="$names $name"
done
# shellcheck disable=SC2086 # the names, one word each
(cd "$out" && sha256sum $names >SHA256SUMS)
cat "$out/SHA256SUMS"
