#!/usr/bin/env bash
# .ci/lane.sh LOGS ID NAME COMMAND [ID NAME COMMAND]... — legs of .ci/run
# that run side by side with its others: one after another, each COMMAND
# (a bash command line) with its output in LOGS/ID.out; when it ends,
# LOGS/ID.time holds "WALL CPU STATUS" (seconds; CPU is user+sys of its
# processes, from /usr/bin/time when installed, else "?"). Stops at the
# first leg that fails: .ci/run prints each leg's output whole once its
# .time file is there, and fails the run with the leg's name.
set -uo pipefail
logs=$1
shift
while [ $# -ge 3 ]; do
	id=$1 cmd=$3 # $2, the leg's name, is in LOGS/ID.name (.ci/run wrote it)
	shift 3
	s=$(date +%s) rc=0
	tm=()
	[ -x /usr/bin/time ] && tm=(/usr/bin/time -f '%U %S' -o "$logs/$id.cpu")
	"${tm[@]}" bash -euo pipefail -c "$cmd" >"$logs/$id.out" 2>&1 </dev/null || rc=$?
	cpu=$(tail -n1 "$logs/$id.cpu" 2>/dev/null | awk 'NF == 2 { printf "%d", $1 + $2 }')
	echo "$(($(date +%s) - s)) ${cpu:-?} $rc" >"$logs/$id.time.tmp"
	mv "$logs/$id.time.tmp" "$logs/$id.time"
	[ "$rc" -eq 0 ] || exit "$rc"
done
