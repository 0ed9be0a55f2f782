#!/bin/sh
# docker/build-binary.sh OUT — the build stage of ../Dockerfile, in one place.
#
# The Dockerfile's build stage runs this in the official Go image, and
# docker/test-image.sh runs it on the host in place of that stage (podman
# build --build-context build=DIR), so the image under test holds the
# binary built exactly as a real `docker build` builds it. It writes
#
#   OUT/rootfs/tableemu  the static binary: CGO_ENABLED=0, -trimpath, no
#                        symbol table or DWARF (-ldflags '-s -w'), no VCS
#                        stamp (the Docker context has no .git, so neither
#                        does the test build); the commit tableemu
#                        --version names is TABLEEMU_COMMIT instead
#                        (-X main.commit), "unknown" if that is unset
#   OUT/rootfs/tmp/      an empty /tmp, mode 1777: SQLite puts the spill
#                        files of large sorts and index builds there, and
#                        scratch has no /tmp
#   OUT/data/            the empty /data volume; the Dockerfile's COPY gives
#                        it to the image's user
#
# GOOS and GOARCH, if set, pick the target (the Dockerfile passes Docker's
# TARGETOS and TARGETARCH, so `docker buildx build --platform` cross-builds).
# TABLEEMU_COMMIT, if set, is the commit (the Dockerfile's build argument of
# that name; docker/test-image.sh passes `git rev-parse --short HEAD`).
set -eu
out=${1:?usage: docker/build-binary.sh OUT}
cd "$(dirname "$0")/.."
commit=${TABLEEMU_COMMIT:-}
case $commit in
*[!0-9A-Za-z._-]*)
	echo "docker/build-binary.sh: TABLEEMU_COMMIT=$commit: want a commit hash or name (letters, digits, . _ -)" >&2
	exit 2
	;;
esac
umask 022
mkdir -p "$out"
mkdir "$out/rootfs" "$out/data"
mkdir -m 1777 "$out/rootfs/tmp"
CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags="-s -w${commit:+ -X main.commit=$commit}" \
	-o "$out/rootfs/tableemu" ./cmd/tableemu
