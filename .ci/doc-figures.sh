#!/usr/bin/env bash
# .ci/doc-figures.sh — the size figures the docs quote, checked against the
# build that CI has just made, so that a figure cannot go stale silently.
#
#   bash .ci/doc-figures.sh binary BYTES   (.ci/release.sh: linux-amd64's size)
#   bash .ci/doc-figures.sh image BYTES    (docker/test-image.sh: the image's size)
#
# Each line below names a doc, the sentence that quotes the figure (an
# extended regular expression whose first group is the number, in MB of
# 10^6 bytes), and what it is the size of. A figure passes when it is within
# MARGIN percent of the measured size: the docs say "about N MB", and a
# rounded figure with a margin survives the few kilobytes each commit adds,
# where exact byte counts in the docs went stale at the next commit. It
# fails, naming the doc, the figure and the measured size, when it drifts
# further — or when the sentence is gone, so that rewording a doc cannot
# drop its figure from the check unnoticed.
#
# Dated measurements (the tables of docs/benchmarks.md, docs/javascript.md
# and docs/python.md, each with its date and command) are records of a run
# and are not checked here; they say which binary size they were taken with.
set -euo pipefail
cd "$(dirname "$0")/.."

MARGIN=${MARGIN:-10} # percent

kind=${1:?usage: .ci/doc-figures.sh binary|image BYTES}
bytes=${2:?usage: .ci/doc-figures.sh binary|image BYTES}

# kind | doc | regex (group 1: the figure in MB)
# shellcheck disable=SC2016 # backquotes of Markdown, literally
figures='
binary|README.md|^binary, about ([0-9.]+) MB, and needs nothing else
binary|README.md|puts about ([0-9.]+) MB in `node_modules`
binary|docs/releases.md|Each is about ([0-9.]+) MB
binary|docs/releases.md|2026-11-25\) and are about ([0-9.]+) MB
binary|docs/javascript.md|it is about ([0-9.]+) MB now
binary|docs/python.md|it is about ([0-9.]+) MB now
binary|docs/benchmarks.md|it is about ([0-9.]+) MB now
image|docker/README.md|No shell, no `/etc`. About ([0-9.]+) MB
image|docker/MIGRATING.md|the image, FROM scratch, about ([0-9.]+) MB
'

measured=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')
bad=0 n=0
while IFS='|' read -r k doc re; do
	[ "$k" = "$kind" ] || continue
	n=$((n + 1))
	line=$(grep -m1 -E "$re" "$doc" || true)
	if [ -z "$line" ]; then
		echo "doc-figures: FAIL: $doc no longer has the sentence /$re/; put the figure back or update .ci/doc-figures.sh" >&2
		bad=1
		continue
	fi
	fig=$(sed -E "s/.*${re//\//\\/}.*/\1/" <<<"$line")
	if awk -v f="$fig" -v b="$bytes" -v m="$MARGIN" 'BEGIN { d = f * 1e6 - b; if (d < 0) d = -d; exit !(d <= b * m / 100) }'; then
		echo "doc-figures: $doc says about $fig MB for the $kind; measured $measured MB ($bytes bytes): within ${MARGIN}%"
	else
		echo "doc-figures: FAIL: $doc says about $fig MB for the $kind; measured $measured MB ($bytes bytes), more than ${MARGIN}% apart: update the doc" >&2
		bad=1
	fi
done <<<"$figures"
[ "$n" -gt 0 ] || { echo "doc-figures: no figures listed for $kind" >&2; exit 1; }
exit "$bad"
