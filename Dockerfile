# tableemu as a container: the Azure Table storage emulator, a drop-in for
# Azurite's table service (same port, flags, AZURITE_ACCOUNTS, account and
# key) and for Azurite's image command lines. See docs/containers.md.
#
#   docker build --build-arg TABLEEMU_COMMIT=$(git rev-parse --short HEAD) -t tableemu .
#       (podman: add --format docker, or the HEALTHCHECK is dropped;
#        without TABLEEMU_COMMIT, tableemu --version says "commit unknown":
#        the build context has no .git for Go to read the commit from;
#        a release passes its tag too: --build-arg TABLEEMU_VERSION=v1.2.3)
#   docker run --rm -p 10002:10002 tableemu [extra flags, e.g. --loose]
#   docker run --rm -p 8902:8902 -e TABLEEMU_PROFILE=cosmos tableemu
#       (answers as Azure Cosmos DB for Table, on 8902: docs/cosmos.md)
#
# The final image is FROM scratch: one static binary, run as a numeric
# non-root user. docker/test-image.sh checks this file without a container
# engine.

# The version tableemu --version prints and the image's version label.
ARG TABLEEMU_VERSION=v0.0.0-dev

# ---- build: the official Go image compiles a static binary. It runs on
# the build machine's platform and cross-compiles for the target (pure Go,
# no cgo), so multi-platform builds need no emulation.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS
ARG TARGETARCH
# The commit tableemu --version names (docker/build-binary.sh).
ARG TABLEEMU_COMMIT=
ARG TABLEEMU_VERSION
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# packaging/release/build.sh's static, stamped binary and the links, into /out (see
# the script).
RUN GOOS=$TARGETOS GOARCH=$TARGETARCH TABLEEMU_VERSION=$TABLEEMU_VERSION TABLEEMU_COMMIT=$TABLEEMU_COMMIT \
	sh docker/build-binary.sh /out

# ---- the image: the binary, its links in /usr/local/bin, an empty /tmp,
# and /data owned by the user.
FROM scratch
ARG TABLEEMU_VERSION
COPY --from=build /out/rootfs/ /
COPY --from=build --chown=65532:65532 /out/data /data
# Scratch has no PATH; this one finds the links azurite, azurite-table and
# tableemu, so that a command written for Azurite's image (`azurite …`,
# `azurite-table …`) starts tableemu as an entrypoint or a command.
ENV PATH=/usr/local/bin
# A start without --location (an entrypoint replaced by `azurite-table
# --tableHost 0.0.0.0`, as Testcontainers' modules do) keeps its data in
# the current directory, as Azurite does: here, the volume.
WORKDIR /data
# Numeric, so that runAsNonRoot policies can verify it without /etc/passwd
# (scratch has none, and tableemu needs none).
USER 65532:65532
VOLUME /data
# 10002: Azure Table storage's port (Azurite's); 8902: the port under
# TABLEEMU_PROFILE=cosmos, Azure Cosmos DB for Table's in Microsoft's
# emulator (docs/cosmos.md).
EXPOSE 10002 8902
# Azurite's table service in its image: every interface, port 10002, data
# under /data. The port is tableemu's default, not a flag here, so that
# TABLEEMU_PROFILE=cosmos moves it to 8902 (a --tablePort here would win
# over the profile). Arguments given to `docker run IMAGE ...` (or compose's
# `command:`) are appended: later flags win, so `--tablePort 20002` moves
# the port and `--inMemoryPersistence` keeps nothing on disk. A command
# written for Azurite's image (`azurite-table --tableHost 0.0.0.0 ...`) is
# appended too: the word azurite or azurite-table is skipped with a warning
# and its flags apply. A replaced entrypoint (`--entrypoint azurite-table`,
# compose `entrypoint:`) drops these flags, as with any image: then give
# --tableHost 0.0.0.0, as for Azurite's image.
ENTRYPOINT ["/tableemu", "--tableHost", "0.0.0.0", "--location", "/data"]
# No shell in scratch: the binary probes itself (any HTTPS or HTTP answer on
# 127.0.0.1:10002 is healthy; on 8902 with TABLEEMU_PROFILE=cosmos in the
# container's environment, which the check inherits: give the profile as
# that variable, not as the argument --profile cosmos, which the check does
# not see). To use another port, publish 10002 under it
# (-p 20002:10002) rather than moving the server; a server moved inside the
# container needs an exec-form check with the same flag, e.g. in compose
#   test: ["CMD", "/tableemu", "healthcheck", "--tablePort", "20002"]
# (`docker run --health-cmd` runs through a shell, which scratch lacks).
HEALTHCHECK --interval=5s --timeout=3s --start-period=10s --retries=3 \
	CMD ["/tableemu", "healthcheck"]
LABEL org.opencontainers.image.title="tableemu" \
	org.opencontainers.image.version="$TABLEEMU_VERSION" \
	org.opencontainers.image.description="Azure Table storage emulator (Azurite-compatible table service) on SQLite" \
	org.opencontainers.image.source="https://github.com/tableemu/tableemu"
