#!/usr/bin/env bash
# Builds the test Collector (collector/cmd/otelcol-zerostat) once and
# prints the binary's path. The binary is kept, keyed by a hash of every
# input it is built from (collector/go.mod and go.sum, the non-test Go
# files of the collector module and of the root module), under
#   ${ZEROSTAT_COLLECTOR_CACHE:-$(go env GOCACHE)/../zerostat-otelcol}
# so a second run, or a test run after an unrelated change, costs a hash:
# the build itself takes about 2 minutes on 2 cores. A lock keeps two
# concurrent callers from building the same binary twice. Old binaries
# beyond the newest 3 are removed.
#
#   scripts/build-collector.sh           build if needed; print the path
#   scripts/build-collector.sh --check   print the path if built; exit 1 if not
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
GO=${GO:-go}
cache=${ZEROSTAT_COLLECTOR_CACHE:-$($GO env GOCACHE)/../zerostat-otelcol}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

key=$( {
	$GO version
	sha256sum collector/go.mod collector/go.sum go.mod
	find . \( -path ./benchmarks -o -path ./e2e -o -path ./examples -o -path ./.git \) -prune -o \
		-name '*.go' ! -name '*_test.go' -print | LC_ALL=C sort | xargs sha256sum
} | sha256sum | cut -c1-16)
bin="$cache/otelcol-zerostat-$key"

if [ "${1:-}" = "--check" ]; then
	[ -x "$bin" ] && { echo "$bin"; exit 0; }
	exit 1
fi

exec 9>"$cache/.lock"
flock 9
if [ ! -x "$bin" ]; then
	echo "build-collector: building $bin (about 2 minutes on 2 cores)" >&2
	(cd collector && $GO build -trimpath -o "$bin.tmp" ./cmd/otelcol-zerostat)
	mv "$bin.tmp" "$bin"
	# Keep the newest 3.
	ls -t "$cache"/otelcol-zerostat-* 2>/dev/null | grep -v '\.tmp$' | tail -n +4 | xargs -r rm -f
fi
echo "$bin"
