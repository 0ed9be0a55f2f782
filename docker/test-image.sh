#!/usr/bin/env bash
# docker/test-image.sh — build the tableemu image from ./Dockerfile and test
# it on a machine where no container engine can run containers.
#
#   docker/test-image.sh [--keep]      (as root; CI runs it from .ci/run)
#
# 1. Builds the binary with docker/build-binary.sh into a directory DIR:
#    the very script the Dockerfile's build stage runs, given the commit
#    (git rev-parse --short HEAD) and a version as the Dockerfile's
#    TABLEEMU_COMMIT and TABLEEMU_VERSION build arguments would give them;
#    checks that --version names both.
# 2. Builds the image from the real Dockerfile with podman, DIR standing in
#    for the `build` stage (--build-context build=DIR). The final stage has
#    no RUN, so nothing needs to run a container. Storage is a private vfs
#    store under a temporary directory, removed at the end (--keep keeps it).
# 3. Checks the image's config (numeric non-root user, /data volume and
#    working directory, ports 10002 and 8902, PATH, the version label, an exec-form
#    HEALTHCHECK, nothing but the binary, its links azurite, azurite-table
#    and tableemu in /usr/local/bin, /tmp and /data) and exports a
#    container's filesystem.
# 4. In a network namespace of its own (loopback only, so the image's
#    0.0.0.0:10002 reaches nothing else), starts the image's Entrypoint and
#    Cmd from that filesystem (unshare --root, the program looked up in the
#    image's PATH, in its WORKDIR), as the image's user, with the image's
#    Env only, as PID 1 of a PID namespace — as a container would.
# 5. Runs the image's HEALTHCHECK command and the Go conformance suite
#    against the connection string the server printed, and
#    docs/isolation.md's `docker exec` lines (tableemu reset and snapshot
#    in the container); then stops the server with SIGTERM (what `docker
#    stop` sends) and expects a clean exit, after which the healthcheck
#    must fail.
# 6. Starts it again with extra arguments and AZURITE_ACCOUNTS, which must
#    pass through, and runs part of the suite against the custom account.
# 7. docker/test-compat.sh: starts the image as each Azurite command line
#    and Testcontainers module of docker/compat/azurite-compat.json would,
#    waits as that module waits, and makes the SDK call with the
#    connection it builds; starts it as docker/compose.yaml and
#    compose.azurite.yaml do, and runs their healthcheck and app.
# 7b. Starts it with TABLEEMU_PROFILE=cosmos as docs/containers.md's line
#    does: the port moves to 8902 (exposed), the healthcheck, given the
#    variable, finds it there, and the Python SDK on localhost is in its
#    Cosmos mode against it.
# 8. Prints the image size and fails if it is 22 MB or more, or if a doc's
#    figure for it is more than .ci/doc-figures.sh's margin away.
#
# Installs podman and iproute2 with apt-get when they are missing, and the
# JavaScript and Python SDKs of conformance/js and conformance/python
# (npm ci; the virtualenv, reused when up to date).
set -euo pipefail
cd "$(dirname "$0")/.."

max_size=$((22 * 1000 * 1000)) # bytes, uncompressed (docs/releases.md says why not 20)
keep=false
[ "${1:-}" = --keep ] && keep=true

t0=$(date +%s)
step() { printf '\n== test-image: %s\n' "$*"; }
die() {
	printf 'test-image: FAIL: %s\n' "$*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "needs root (chroot, namespaces, rootful podman); CI runs as root"
command -v go >/dev/null || die "needs the Go toolchain"

missing=()
command -v podman >/dev/null || missing+=(podman)
command -v ip >/dev/null || missing+=(iproute2)
if [ ${#missing[@]} -gt 0 ]; then
	step "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get -o DPkg::Lock::Timeout=600 update -qq
	apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${missing[@]}" >/dev/null
fi
podman --version

work=$(mktemp -d /tmp/tableemu-image.XXXXXX)
ns=tableemu-image-$$
server_pid=   # the unshare process, in this shell's jobs
server_child= # its child: the server, PID 1 of its PID namespace
cleanup() {
	set +e
	# Killing PID 1 of a PID namespace kills all of it. (unshare's
	# --kill-child cannot do this: the server's change of user, --setuid,
	# clears the parent-death signal.)
	[ -n "$server_child" ] && kill -KILL "$server_child" 2>/dev/null
	[ -n "$server_pid" ] && wait "$server_pid" 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -rf "/etc/netns/$ns"
	rmdir /etc/netns 2>/dev/null # if we made it and nothing else uses it
	if $keep; then
		echo "test-image: kept $work (podman --root $work/storage --runroot $work/run --storage-driver vfs)"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

pm=(podman --root "$work/storage" --runroot "$work/run" --storage-driver=vfs
	--cgroup-manager=cgroupfs --events-backend=file)
image=localhost/tableemu:test

# ---- 1. the build stage, on the host
step "building the binary as the build stage does (docker/build-binary.sh)"
grep -q '^FROM .* AS build$' Dockerfile || die "Dockerfile has no stage named build"
grep -q 'sh docker/build-binary.sh /out' Dockerfile || die "the Dockerfile's build stage no longer runs docker/build-binary.sh"
grep -q '^ARG TABLEEMU_COMMIT' Dockerfile || die "the Dockerfile takes no TABLEEMU_COMMIT build argument"
grep -q '^ARG TABLEEMU_VERSION' Dockerfile || die "the Dockerfile takes no TABLEEMU_VERSION build argument"
# shellcheck disable=SC2016 # the Dockerfile's $TABLEEMU_..., literally
grep -qF 'TABLEEMU_VERSION=$TABLEEMU_VERSION TABLEEMU_COMMIT=$TABLEEMU_COMMIT' Dockerfile ||
	die "the Dockerfile's build stage does not pass TABLEEMU_VERSION and TABLEEMU_COMMIT to docker/build-binary.sh"
# The commit --version names: the context has no .git (.dockerignore), so
# the build passes it in. Outside a Git checkout, none ("unknown"). The
# version is one no default gives, so that it shows it was passed on.
commit=$(git rev-parse --short HEAD 2>/dev/null || true)
image_version=v0.0.0-imagetest
TABLEEMU_VERSION=$image_version TABLEEMU_COMMIT=$commit sh docker/build-binary.sh "$work/build/out"
ls -l "$work/build/out/rootfs/tableemu"
version=$("$work/build/out/rootfs/tableemu" --version)
echo "$version"
grep -qx "tableemu $image_version" <<<"$version" || die "tableemu --version does not say $image_version"
grep -qx "commit ${commit:-unknown}" <<<"$version" || die "tableemu --version does not name commit ${commit:-unknown}"

# ---- 2. the image, from the real Dockerfile
step "podman build, with the build stage replaced by that directory"
# --format docker: the OCI image format has no HEALTHCHECK. --pull=never:
# nothing is fetched; the build stage's base image is never needed. The
# TARGET* arguments are the ones BuildKit sets by itself.
"${pm[@]}" build --quiet --format docker --pull=never --layers=false \
	--build-arg TARGETOS="$(go env GOOS)" --build-arg TARGETARCH="$(go env GOARCH)" \
	--build-arg TABLEEMU_COMMIT="$commit" --build-arg TABLEEMU_VERSION="$image_version" \
	--build-context build="$work/build" -f Dockerfile -t "$image" . >/dev/null

inspect() { "${pm[@]}" image inspect --format "$1" "$image"; }
lines() { inspect "{{range $1}}{{.}}{{\"\\n\"}}{{end}}"; }
mapfile -t entrypoint < <(lines .Config.Entrypoint)
mapfile -t cmd < <(lines .Config.Cmd)
mapfile -t env < <(lines .Config.Env)
mapfile -t health < <(lines .HealthCheck.Test)
user=$(inspect '{{.Config.User}}')
workdir=$(inspect '{{.Config.WorkingDir}}')
# shellcheck disable=SC2016 # $k is a Go template variable
volumes=$(inspect '{{range $k, $v := .Config.Volumes}}{{$k}} {{end}}')
# shellcheck disable=SC2016
ports=$(inspect '{{range $k, $v := .Config.ExposedPorts}}{{$k}} {{end}}')
size=$(inspect '{{.Size}}')
label_version=$(inspect '{{index .Config.Labels "org.opencontainers.image.version"}}')

# ---- 3. what the image says and holds
step "checking the image config"
echo "entrypoint: ${entrypoint[*]}"
echo "cmd:        ${cmd[*]:-}"
echo "user:       $user"
echo "env:        ${env[*]:-}"
echo "volumes:    $volumes"
echo "ports:      $ports"
echo "healthcheck: ${health[*]:-}"
echo "workdir:    $workdir"
echo "version:    $label_version"
[[ $user =~ ^([0-9]+):([0-9]+)$ ]] || die "USER $user is not numeric uid:gid"
uid=${BASH_REMATCH[1]} gid=${BASH_REMATCH[2]}
[ "$uid" != 0 ] || die "the image runs as root"
[[ " $volumes " == *" /data "* ]] || die "no VOLUME /data"
[[ " $ports " == *" 10002/tcp "* ]] || die "no EXPOSE 10002"
[ "${health[0]:-}" = CMD ] || die "HEALTHCHECK must be exec form (CMD [...]): scratch has no shell"
[ "$workdir" = /data ] || die "WORKDIR $workdir: want /data, so that a start without --location (a replaced entrypoint) keeps its data in the volume"
[[ " ${env[*]} " == *" PATH=/usr/local/bin "* ]] || die "the image's Env has no PATH=/usr/local/bin: azurite and azurite-table would not be found"
[ "$label_version" = "$image_version" ] || die "the image's version label is $label_version, not $image_version"
argv=("${entrypoint[@]}" "${cmd[@]}")
[ ${#argv[@]} -gt 0 ] || die "no ENTRYPOINT or CMD"

rootfs=$work/rootfs
mkdir "$rootfs"
ctr=$("${pm[@]}" create --no-healthcheck "$image")
"${pm[@]}" export "$ctr" | tar -x --numeric-owner -C "$rootfs"
"${pm[@]}" rm "$ctr" >/dev/null
contents=$(cd "$rootfs" && find . -mindepth 1 -printf '%p %m %U:%G %l\n' | sed 's/ $//' | sort)
echo "$contents"
want=$(printf '%s\n' "./data 755 $uid:$gid" "./tableemu 755 0:0" "./tmp 1777 0:0" \
	"./usr 755 0:0" "./usr/local 755 0:0" "./usr/local/bin 755 0:0" \
	"./usr/local/bin/azurite 777 0:0 /tableemu" "./usr/local/bin/azurite-table 777 0:0 /tableemu" \
	"./usr/local/bin/tableemu 777 0:0 /tableemu")
[ "$contents" = "$want" ] || die "the image should hold exactly /tableemu (root's), its links in /usr/local/bin, /tmp (1777) and /data (the user's); it holds the above"

# ---- 4. start the image's command from its filesystem
step "starting the image's entrypoint in a network namespace of its own"
ip netns add "$ns"
ip -n "$ns" link set lo up
# ip netns exec mounts /etc/netns/NAME/hosts over /etc/hosts: compose's
# service name resolves to loopback, as on the compose network.
mkdir -p "/etc/netns/$ns"
printf '127.0.0.1 localhost tableemu azurite\n' >"/etc/netns/$ns/hosts"
in_ns() { ip netns exec "$ns" "$@"; }

# ts matches the time that starts every line of the server's log
# (emulator.Log: 2006-01-02T15:04:05.000Z, then a space), in grep and sed.
ts='^[-0-9T:.]*Z '

# By path: env -i gives them the image's PATH, which is not the host's.
unshare_bin=$(command -v unshare) chroot_bin=$(command -v chroot)

# launch LOG [VAR=value...] -- COMMAND...: COMMAND, the container's
# process, from the image's filesystem, with the image's Env plus VARs, in
# its WORKDIR, as uid:gid; COMMAND's first word is looked up in the
# image's PATH, as the engine does. Returns once it runs.
launch() {
	local log=$1 vars=()
	shift
	while [ "$1" != -- ]; do vars+=("$1"); shift; done
	shift
	# Not through in_ns: a function run with & is a subshell, and $! must
	# be unshare itself (ip netns exec and env exec their commands).
	# unshare chroots, changes directory, drops to the user, then execs
	# COMMAND with execvp, which searches the PATH of this environment.
	ip netns exec "$ns" env -i "${env[@]}" "${vars[@]}" \
		"$unshare_bin" --pid --fork --root="$rootfs" --wd="$workdir" --setgid="$gid" --setuid="$uid" \
		-- "$@" >"$log" 2>&1 &
	server_pid=$!
	local deadline=$((SECONDS + 20))
	until server_child=$(cat "/proc/$server_pid/task/$server_pid/children" 2>/dev/null) && [ -n "$server_child" ]; do
		kill -0 "$server_pid" 2>/dev/null || { cat "$log"; die "the server exited at start"; }
		[ $SECONDS -lt $deadline ] || die "unshare started no server"
		sleep 0.05
	done
	server_child=${server_child%% *}
}

# start LOG [VAR=value...] -- [extra arguments]: the image's command line
# plus extra arguments, as launch runs it; returns once it is ready.
start() {
	local log=$1 vars=()
	shift
	while [ "$1" != -- ]; do vars+=("$1"); shift; done
	shift
	launch "$log" "${vars[@]}" -- "${argv[@]}" "$@"
	local deadline=$((SECONDS + 20))
	until grep -q "${ts}Azurite Table service is successfully listening at " "$log"; do
		kill -0 "$server_pid" 2>/dev/null || { cat "$log"; die "the server exited at start"; }
		[ $SECONDS -lt $deadline ] || { cat "$log"; die "no readiness line within 20 s"; }
		sleep 0.1
	done
	cat "$log"
}

# stop LOG: SIGTERM to the server (PID 1 of its namespace), as docker stop.
stop() {
	local log=$1 rc=0
	# The name it was started under: the binary, or one of its links.
	[[ $(cat "/proc/$server_child/comm") =~ ^(tableemu|azurite|azurite-table)$ ]] || die "process $server_child is not the server"
	kill -TERM "$server_child"
	local deadline=$((SECONDS + 10))
	while kill -0 "$server_pid" 2>/dev/null; do
		[ $SECONDS -lt $deadline ] || die "still running 10 s after SIGTERM (docker stop would kill it)"
		sleep 0.1
	done
	wait "$server_pid" || rc=$?
	server_pid='' server_child=''
	[ "$rc" = 0 ] || { tail -5 "$log"; die "exit status $rc after SIGTERM"; }
	grep -q "${ts}stopped\$" "$log" || die "no clean stop in the log"
}

# healthcheck [extra arguments]: the image's HEALTHCHECK command, as the
# engine runs it: in the container, as its user, with its Env.
# health_env: more variables of the container's environment, which the
# check inherits (TABLEEMU_PROFILE).
health_env=()
healthcheck() {
	in_ns timeout 10 env -i "${env[@]}" "${health_env[@]}" "$chroot_bin" --userspec="$uid:$gid" "$rootfs" "${health[@]:1}" "$@"
}

# connection_string LOG: the first one printed, used as it is.
connection_string() {
	local cs
	cs=$(sed -n "s/${ts}connection string //p" "$1" | head -1)
	[ -n "$cs" ] || die "no connection string printed"
	echo "$cs"
}

(cd conformance && go test -c -o "$work/conformance.test" .)
go build -o "$work/example-app" ./docker/example-app
conformance() { # conformance CONNECTION_STRING [test flags]
	local cs=$1
	shift
	(cd conformance && in_ns env TABLEEMU_TEST_CONNECTION_STRING="$cs" \
		"$work/conformance.test" -test.count=1 -test.v "$@") >"$work/conformance.log" 2>&1 || {
		grep -E '^(--- FAIL|FAIL|panic)' -A5 "$work/conformance.log" | head -60
		die "conformance tests failed against the image's server (log: $work/conformance.log, --keep keeps it)"
	}
	# Skipped: the tests that need an in-process server.
	printf 'conformance: %d passed, 0 failed, %d skipped\n' \
		"$(grep -c -- '^--- PASS' "$work/conformance.log")" "$(grep -c -- '^--- SKIP' "$work/conformance.log")"
}

log1=$work/server1.log
start "$log1" --
grep -q "${ts}Azurite Table service is successfully listening at http://0.0.0.0:10002 " "$log1" ||
	die "not listening on 0.0.0.0:10002"
grep -q "${ts}tableemu serves Azure Table storage from /data/tableemu.sqlite (with its -wal and -shm files)\$" "$log1" ||
	die "the database is not under /data"
cs=$(connection_string "$log1")

# ---- 5. healthcheck, conformance, docker stop
step "healthcheck: ${health[*]:1}"
healthcheck || die "the healthcheck fails against a running server"

step "conformance tests against $cs"
conformance "$cs"

# docs/isolation.md's `docker exec tables tableemu ...` lines: the image's
# tableemu run in the container as docker exec runs it (the image's user
# and Env) resets and snapshots the server there, over its loopback.
step "docs/isolation.md's docker exec lines"
mapfile -t execs < <(sed -n 's/^docker exec tables //p' docs/isolation.md)
[ ${#execs[@]} -ge 2 ] || die "docs/isolation.md has no docker exec lines"
for line in "${execs[@]}"; do
	# shellcheck disable=SC2086 # the doc's words, split as the shell would
	out=$(in_ns timeout 10 env -i "${env[@]}" "$chroot_bin" --userspec="$uid:$gid" "$rootfs" $line) ||
		die "docker exec tables $line: failed"
	echo "$out"
	grep -q '(http://127.0.0.1:10002)$' <<<"$out" || die "docker exec tables $line: it did not reach the server in the container"
done

step "stopping with SIGTERM"
stop "$log1"
tail -2 "$log1"
db=$(find "$rootfs/data" -name tableemu.sqlite -printf '%U:%G')
[ "$db" = "$uid:$gid" ] || die "no database in /data owned by $uid:$gid"
if healthcheck 2>/dev/null; then die "the healthcheck passes with no server"; fi
echo "healthcheck fails with the server stopped, as it should"

# ---- 6. extra arguments and AZURITE_ACCOUNTS pass through
step "extra arguments (--tablePort 10012 --silent) and AZURITE_ACCOUNTS"
key=$(head -c 32 /dev/urandom | base64 -w0)
log2=$work/server2.log
start "$log2" "AZURITE_ACCOUNTS=imagetest:$key" -- --tablePort 10012 --silent
grep -q "${ts}endpoint http://127.0.0.1:10012/imagetest\$" "$log2" || die "AZURITE_ACCOUNTS or --tablePort did not pass through"
if grep -q devstoreaccount1 "$log2"; then die "AZURITE_ACCOUNTS should replace devstoreaccount1"; fi
healthcheck --tablePort 10012 || die "healthcheck --tablePort 10012 fails"
cs2=$(connection_string "$log2")
conformance "$cs2" -test.run 'TestCreateTable|TestInsertEntity|TestQueryPaging|TestBatchEveryAction|TestFiltersOnEveryType'
if grep -Eq ' (GET|POST|PUT|PATCH|MERGE|DELETE) /' "$log2"; then die "--silent did not pass through: access log written"; fi
stop "$log2"

# ---- 7. Azurite's command lines, Testcontainers' modules, compose files
# shellcheck source=docker/test-compat.sh
. docker/test-compat.sh

# ---- 7b. the cosmos profile, as docs/containers.md runs it
# `docker run ... -e TABLEEMU_PROFILE=cosmos tableemu   # ENDPOINT`: the
# variable moves the server to the port the line publishes (exposed), the
# health check inherits it and probes there, and the Python SDK, given
# localhost (docs/cosmos.md), is in its Cosmos mode against it.
step "TABLEEMU_PROFILE=cosmos, as docs/containers.md runs the image"
cosmos_run=$(grep -m1 '^docker run .*-e TABLEEMU_PROFILE=cosmos tableemu ' docs/containers.md) ||
	die "docs/containers.md has no docker run line with -e TABLEEMU_PROFILE=cosmos"
echo "$cosmos_run"
re='-p ([0-9]+):([0-9]+) -e (TABLEEMU_PROFILE=cosmos) tableemu +# (http://[^ ]+)$'
[[ $cosmos_run =~ $re ]] || die "docs/containers.md's line is not -p N:N -e TABLEEMU_PROFILE=cosmos tableemu # ENDPOINT"
cosmos_port=${BASH_REMATCH[2]} cosmos_var=${BASH_REMATCH[3]} cosmos_endpoint=${BASH_REMATCH[4]}
[[ " $ports " == *" $cosmos_port/tcp "* ]] || die "no EXPOSE $cosmos_port (the port under the cosmos profile)"
log3=$work/server3.log
start "$log3" "$cosmos_var" --
grep -q "${ts}tableemu serves Azure Cosmos DB for Table (--profile cosmos) from /data/tableemu.sqlite " "$log3" ||
	die "$cosmos_var: not serving under the cosmos profile from /data"
grep -q "${ts}Azurite Table service is successfully listening at http://0.0.0.0:$cosmos_port " "$log3" ||
	die "$cosmos_var: not listening on 0.0.0.0:$cosmos_port"
grep -q "${ts}endpoint $cosmos_endpoint\$" "$log3" || die "$cosmos_var: the endpoint is not docs/containers.md's $cosmos_endpoint"
health_env=("$cosmos_var")
healthcheck || die "the healthcheck fails with $cosmos_var in the container's environment"
echo "healthcheck passes with $cosmos_var in the container's environment"
health_env=()
if healthcheck 2>/dev/null; then die "without $cosmos_var the healthcheck should probe 10002, where nothing listens"; fi
cs3=$(connection_string "$log3")
in_ns "$python" - "${cs3/:\/\/127.0.0.1:/:\/\/localhost:}" <<'EOF' || die "the Python SDK in its Cosmos mode failed against the image's server"
import sys

from azure.data.tables import TableServiceClient, UpdateMode

with TableServiceClient.from_connection_string(sys.argv[1]) as svc:
    assert svc._cosmos_endpoint, "the SDK is not in its Cosmos mode"
    t = svc.create_table("imagecosmos")
    seen = []
    t.upsert_entity({"PartitionKey": "p", "RowKey": "r", "n": 1}, mode=UpdateMode.MERGE,
                    raw_request_hook=lambda r: seen.append((r.http_request.method, r.http_request.headers.get("X-HTTP-Method"))),
                    raw_response_hook=lambda r: seen.append(r.http_response.headers.get("x-ms-version")))
    assert seen == [("POST", "MERGE"), None], seen
    assert t.get_entity("p", "r")["n"] == 1
    svc.delete_table("imagecosmos")
print("the Python SDK on localhost: a merge as POST + X-HTTP-Method: MERGE, answered without x-ms-version, as Cosmos DB answers")
EOF
stop "$log3"

# ---- 8. size
step "image size"
compressed=$("${pm[@]}" save --format docker-archive "$image" | gzip -c | wc -c)
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }
echo "image size: $(mb "$size") ($size bytes; $(mb "$compressed") gzip-compressed)"
[ "$size" -lt "$max_size" ] || die "the image is $(mb "$size"), the target is under $(mb "$max_size")"
bash .ci/doc-figures.sh image "$size" || die "a doc's figure for the image's size drifted from this image's"

step "passed in $(($(date +%s) - t0)) s"
