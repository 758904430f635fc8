#!/usr/bin/env bash
# Builds prometheus/statsd_exporter (the Go module version that
# exporter/statsd/agenttest/go.mod names as a tool) once and prints the
# binary's path, as scripts/build-collector.sh does for the Collector. The
# binary is kept, keyed by a hash of what it is built from (the Go version
# and that module's go.mod and go.sum), under
#   ${ZEROSTAT_STATSD_EXPORTER_CACHE:-$(go env GOCACHE)/../zerostat-statsd-exporter}
# so later runs cost a hash; the build takes about 30 s on 2 cores. A lock
# keeps two concurrent callers from building it twice. Old binaries beyond
# the newest 3 are removed.
#
#   scripts/build-statsd-exporter.sh           build if needed; print the path
#   scripts/build-statsd-exporter.sh --check   print the path if built; exit 1 if not
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mod="$root/exporter/statsd/agenttest"
GO=${GO:-go}
cache=${ZEROSTAT_STATSD_EXPORTER_CACHE:-$($GO env GOCACHE)/../zerostat-statsd-exporter}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

key=$( {
	$GO version
	sha256sum "$mod/go.mod" "$mod/go.sum"
} | sha256sum | cut -c1-16)
bin="$cache/statsd_exporter-$key"

if [ "${1:-}" = "--check" ]; then
	[ -x "$bin" ] && { echo "$bin"; exit 0; }
	exit 1
fi

exec 9>"$cache/.lock"
flock 9
if [ ! -x "$bin" ]; then
	echo "build-statsd-exporter: building $bin (about 30 s on 2 cores)" >&2
	(cd "$mod" && $GO build -trimpath -o "$bin.tmp" github.com/prometheus/statsd_exporter)
	mv "$bin.tmp" "$bin"
	ls -t "$cache"/statsd_exporter-* 2>/dev/null | grep -v '\.tmp$' | tail -n +4 | xargs -r rm -f
fi
echo "$bin"
