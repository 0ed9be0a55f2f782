# tableemu as a container: the Azure Table storage emulator, a drop-in for
# Azurite's table service (same port, flags, AZURITE_ACCOUNTS, account and
# key). See docker/README.md.
#
#   docker build --build-arg TABLEEMU_COMMIT=$(git rev-parse --short HEAD) -t tableemu .
#       (podman: add --format docker, or the HEALTHCHECK is dropped;
#        without TABLEEMU_COMMIT, tableemu --version says "commit unknown":
#        the build context has no .git for Go to read the commit from)
#   docker run --rm -p 10002:10002 tableemu [extra flags, e.g. --loose]
#
# The final image is FROM scratch: one static binary, run as a numeric
# non-root user. docker/test-image.sh checks this file without a container
# engine.

# ---- build: the official Go image compiles a static binary. It runs on
# the build machine's platform and cross-compiles for the target (pure Go,
# no cgo), so multi-platform builds need no emulation.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS
ARG TARGETARCH
# The commit tableemu --version names (docker/build-binary.sh).
ARG TABLEEMU_COMMIT=
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# CGO_ENABLED=0 -trimpath -ldflags '-s -w', into /out (see the script).
RUN GOOS=$TARGETOS GOARCH=$TARGETARCH TABLEEMU_COMMIT=$TABLEEMU_COMMIT sh docker/build-binary.sh /out

# ---- the image: the binary, an empty /tmp, and /data owned by the user.
FROM scratch
COPY --from=build /out/rootfs/ /
COPY --from=build --chown=65532:65532 /out/data /data
# Numeric, so that runAsNonRoot policies can verify it without /etc/passwd
# (scratch has none, and tableemu needs none).
USER 65532:65532
VOLUME /data
EXPOSE 10002
# Azurite's table service in its image: every interface, port 10002, data
# under /data. Arguments given to `docker run IMAGE ...` (or compose's
# `command:`) are appended: later flags win, so `--tablePort 20002` moves
# the port and `--inMemoryPersistence` keeps nothing on disk.
ENTRYPOINT ["/tableemu", "--tableHost", "0.0.0.0", "--tablePort", "10002", "--location", "/data"]
# No shell in scratch: the binary probes itself (any HTTPS or HTTP answer on
# 127.0.0.1:10002 is healthy). To use another port, publish 10002 under it
# (-p 20002:10002) rather than moving the server; a server moved inside the
# container needs an exec-form check with the same flag, e.g. in compose
#   test: ["CMD", "/tableemu", "healthcheck", "--tablePort", "20002"]
# (`docker run --health-cmd` runs through a shell, which scratch lacks).
HEALTHCHECK --interval=5s --timeout=3s --start-period=10s --retries=3 \
	CMD ["/tableemu", "healthcheck"]
LABEL org.opencontainers.image.title="tableemu" \
	org.opencontainers.image.description="Azure Table storage emulator (Azurite-compatible table service) on SQLite" \
	org.opencontainers.image.source="https://github.com/tableemu/tableemu"
