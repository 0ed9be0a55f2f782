# docker/test-compat.sh — part of docker/test-image.sh, which sources it
# once the image is built, exported and known to work (it uses that
# script's variables and functions: launch, start, stop, in_ns, inspect,
# env, rootfs, uid, gid, work; it cannot run alone):
#
#   bash docker/test-image.sh        (as root)
#
# 1. For every configuration of docker/compat/azurite-compat.json — Azurite
#    command lines, and the Testcontainers modules for Go, Java, .NET,
#    Python and Node.js with their options — computes the process the
#    container runs as the Docker Engine would (the image's ENTRYPOINT and
#    CMD merged with the configuration's entrypoint and command; the facts
#    say what each module sets), starts it from the image's filesystem with
#    the configuration's environment, and runs `compat check`: it waits as
#    the module waits (its log line or regular expression, or its port),
#    checks the log (no line may claim a blob or queue service), and makes
#    the call a user would with the connection the module builds, through
#    the Go SDK; for the Node.js and Python configurations also through the
#    JavaScript and Python SDKs the conformance suites pin, and for the
#    Python recipe the Python code of docs/containers.md itself
#    (docker/compat/snippet.py). A configuration
#    the facts say does not work must not: tableemu is ready and the
#    module's wait is still not met.
#    The Node.js code of docs/containers.md must parse (node --check).
# 2. For docker/compose.yaml and docker/compose.azurite.yaml: starts the
#    image as the tableemu service of the file would run, runs the file's
#    healthcheck test against it, and the example app with the file's
#    connection string (the service names resolve to loopback).
#
# Figures are counts; nothing is timed.
# shellcheck shell=bash
# shellcheck disable=SC2154 # work, env, uid, gid, rootfs...: test-image.sh's

step "Azurite command lines and Testcontainers modules (docker/compat/azurite-compat.json)"
compat=$work/compat
go build -o "$compat" ./docker/compat
ep_json=$(inspect '{{json .Config.Entrypoint}}')
cmd_json=$(inspect '{{json .Config.Cmd}}')

# The SDKs of the conformance suites, as they pin them.
# (.ci/run installs them once for the legs that use them, some of which
# run side by side: TABLEEMU_NPM_CI_DONE=1 says node_modules is already
# npm ci's, and .ci/run starts this script after that install.)
if [ "${TABLEEMU_NPM_CI_DONE:-}" != 1 ]; then
	(cd conformance/js && npm ci --no-audit --no-fund --loglevel=error) >/dev/null ||
		die "npm ci in conformance/js failed"
fi
bash conformance/python/run.sh --install-only || die "the virtualenv of conformance/python could not be made"
js_modules=$PWD/conformance/js/node_modules
python=$PWD/conformance/python/.venv/bin/python

# read_words FILE: NUL-separated words into the array words.
read_words() { mapfile -d '' -t words <"$1"; }

works=0 fails=0 js_calls=0 py_calls=0 doc_runs=0
compat_run() {
	local id=$1 log=$work/compat-$1.log out cs
	"$compat" argv "$id" -entrypoint "$ep_json" -cmd "$cmd_json" >"$work/argv" || die "$id: no argv"
	read_words "$work/argv"
	local vars=()
	mapfile -t vars < <("$compat" env "$id")
	printf '\n%s: the container runs %s\n' "$id" "${words[*]}"
	[ ${#vars[@]} -eq 0 ] || printf '%s: with %s\n' "$id" "${vars[*]}"
	launch "$log" "${vars[@]}" -- "${words[@]}"
	out=$(in_ns "$compat" check "$id" -log "$log") || { cat "$log"; die "$id: the facts do not hold (above)"; }
	echo "$out"
	cs=$(sed -n "s/^$id: connection string //p" <<<"$out")
	for sdk in $("$compat" sdks "$id"); do
		[ -n "$cs" ] || die "$id: an SDK call needs a connection string"
		case $sdk in
		js)
			in_ns env NODE_PATH="$js_modules" node docker/compat/sdk.cjs "$cs" "$id" || die "$id: the JavaScript SDK's call failed"
			js_calls=$((js_calls + 1))
			;;
		python)
			in_ns "$python" docker/compat/sdk.py "$cs" "$id" || die "$id: the Python SDK's call failed"
			py_calls=$((py_calls + 1))
			;;
		python-doc)
			in_ns "$python" docker/compat/snippet.py docs/containers.md "$log" || die "$id: the Python code of docs/containers.md failed"
			doc_runs=$((doc_runs + 1))
			;;
		*) die "$id: no SDK $sdk" ;;
		esac
	done
	if grep -q "as the facts say the module's wait is never met" <<<"$out"; then
		fails=$((fails + 1))
	else
		works=$((works + 1))
	fi
	stop "$log"
}
mapfile -t ids < <("$compat" list)
[ ${#ids[@]} -gt 0 ] || die "no configurations in docker/compat/azurite-compat.json"
for id in "${ids[@]}"; do compat_run "$id"; done
printf '\ncompat: %d configurations: %d work (Go SDK call each; %d JavaScript, %d Python SDK calls; %d run of the Python code of docs/containers.md), %d do not, as the facts say\n' \
	"${#ids[@]}" "$works" "$js_calls" "$py_calls" "$doc_runs" "$fails"

# The Node.js code of docs/containers.md parses (it needs Docker to run;
# the configuration it is, node-recommended, ran above; the Python code
# ran, and go test parses the Go code).
awk '/^### Node\.js$/ { s = 1 } s && /^```js$/ { c = 1; next } c && /^```$/ { exit } c { print }' \
	docs/containers.md >"$work/containers-md.mjs"
[ -s "$work/containers-md.mjs" ] || die "docs/containers.md: no js block under ### Node.js"
node --check "$work/containers-md.mjs" || die "the Node.js code of docs/containers.md does not parse"
echo "the Node.js code of docs/containers.md parses (node --check)"

step "compose files: the tableemu service's command, its healthcheck test, the app"
compose_run() {
	local file=$1 log=$work/compose-${1##*/}.log app_cs
	"$compat" compose "$file" -entrypoint "$ep_json" -cmd "$cmd_json" >"$work/argv" || die "$file: cannot read it"
	read_words "$work/argv"
	local run=("${words[@]}")
	"$compat" compose "$file" -health >"$work/argv" || die "$file: no healthcheck test"
	read_words "$work/argv"
	local check=("${words[@]}")
	app_cs=$("$compat" compose "$file" -app)
	printf '\n%s: the container runs %s\n' "$file" "${run[*]}"
	launch "$log" -- "${run[@]}"
	# The healthcheck may run before the server listens, as the engine's
	# first probes may; start_period covers those. Here: until it passes.
	local deadline=$((SECONDS + 20))
	until in_ns timeout 10 env -i "${env[@]}" "$chroot_bin" --userspec="$uid:$gid" "$rootfs" "${check[@]}" >/dev/null 2>&1; do
		kill -0 "$server_pid" 2>/dev/null || { cat "$log"; die "$file: the server exited"; }
		[ $SECONDS -lt $deadline ] || { cat "$log"; die "$file: its healthcheck test (${check[*]}) never passes"; }
		sleep 0.1
	done
	echo "$file: healthcheck test passes: ${check[*]}"
	in_ns env AZURE_TABLES_CONNECTION_STRING="$app_cs" "$work/example-app" || die "$file: the example app fails with $app_cs"
	stop "$log"
	# After a clean stop, the same check must fail: it checks something.
	if in_ns timeout 10 env -i "${env[@]}" "$chroot_bin" --userspec="$uid:$gid" "$rootfs" "${check[@]}" >/dev/null 2>&1; then
		die "$file: its healthcheck test passes with the server stopped"
	fi
}
compose_run docker/compose.yaml
compose_run docker/compose.azurite.yaml
