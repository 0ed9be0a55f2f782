#!/bin/sh
# docker/build-binary.sh OUT — the build stage of ../Dockerfile, in one place.
#
# The Dockerfile's build stage runs this in the official Go image, and
# docker/test-image.sh runs it on the host in place of that stage (podman
# build --build-context build=DIR), so the image under test holds the
# binary built exactly as a real `docker build` builds it. It writes
#
#   OUT/rootfs/tableemu  the static binary, built by packaging/release/build.sh (so
#                        the image holds the same bytes as the release
#                        binary of that platform, version and commit:
#                        CGO_ENABLED=0, -trimpath, no symbol table, no VCS
#                        stamp), stamped with -X main.version and -X
#                        main.commit from TABLEEMU_VERSION and
#                        TABLEEMU_COMMIT (the Docker context has no .git)
#   OUT/rootfs/usr/local/bin/{tableemu,azurite,azurite-table}
#                        links to /tableemu: the image's PATH finds them, so
#                        a command or entrypoint written for Azurite's image
#                        (`azurite …`, `azurite-table …`) starts tableemu,
#                        which reads the same command line under those names
#   OUT/rootfs/tmp/      an empty /tmp, mode 1777: SQLite puts the spill
#                        files of large sorts and index builds there, and
#                        scratch has no /tmp
#   OUT/data/            the empty /data volume; the Dockerfile's COPY gives
#                        it to the image's user
#
# GOOS and GOARCH, if set, pick the target (the Dockerfile passes Docker's
# TARGETOS and TARGETARCH, so `docker buildx build --platform` cross-builds).
# TABLEEMU_VERSION is the version --version prints, a tag like v1.2.3
# (default v0.0.0-dev, as packaging/release/build.sh's); TABLEEMU_COMMIT the commit
# ("unknown" if unset). The Dockerfile passes its build arguments of those
# names; docker/test-image.sh passes `git rev-parse --short HEAD`.
set -eu
out=${1:?usage: docker/build-binary.sh OUT}
cd "$(dirname "$0")/.."
commit=${TABLEEMU_COMMIT:-unknown}
case $commit in
*[!0-9A-Za-z._-]*)
	echo "docker/build-binary.sh: TABLEEMU_COMMIT=$commit: want a commit hash or name (letters, digits, . _ -)" >&2
	exit 2
	;;
esac
os=${GOOS:-$(go env GOOS)} arch=${GOARCH:-$(go env GOARCH)}
umask 022
mkdir -p "$out"
mkdir "$out/rootfs" "$out/data" "$out/release"
mkdir -m 1777 "$out/rootfs/tmp"
# packaging/release/build.sh checks the version's form and prints the checksum.
PLATFORMS="$os/$arch" VERSION=${TABLEEMU_VERSION:-v0.0.0-dev} COMMIT=$commit \
	sh packaging/release/build.sh "$out/release"
mv "$out/release/tableemu-$os-$arch" "$out/rootfs/tableemu"
rm -r "$out/release"
mkdir -p "$out/rootfs/usr/local/bin"
for name in tableemu azurite azurite-table; do
	ln -s /tableemu "$out/rootfs/usr/local/bin/$name"
done
