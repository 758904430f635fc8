#!/usr/bin/env bash
# Installs Etsy statsd 0.9.0 (the npm package `statsd`) for
# exporter/statsd/agenttest's TestEtsyStatsd, once, under
#   ${ZEROSTAT_ETSY_STATSD_CACHE:-$HOME/.cache/zerostat-etsy-statsd}
# with Debian's node and npm (installed by scripts/apt-install.sh when
# missing). When the npm registry cannot be reached it says so and exits 0:
# the test then skips with that message (the one part of make test that
# may skip under CI=true, as the task that added it asked).
#
#   scripts/install-etsy-statsd.sh           install if missing, report
#   scripts/install-etsy-statsd.sh --check   print 1 if installed, else 0
#   scripts/install-etsy-statsd.sh --path    print the directory of stats.js
set -u
VERSION=0.9.0
cache=${ZEROSTAT_ETSY_STATSD_CACHE:-$HOME/.cache/zerostat-etsy-statsd}
dir="$cache/$VERSION"
stats="$dir/node_modules/statsd/stats.js"

installed() { [ -f "$stats" ] && command -v node >/dev/null 2>&1; }

case "${1:-}" in
--check) if installed; then echo 1; else echo 0; fi; exit 0 ;;
--path) installed && { dirname "$stats"; exit 0; }; exit 1 ;;
esac

if installed; then
  echo "install-etsy-statsd: statsd $VERSION present ($dir)"
  exit 0
fi
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  "$(dirname "$0")/apt-install.sh" "$(mktemp /tmp/zerostat-apt-node.XXXXXX)" nodejs npm >/dev/null 2>&1 || true
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "install-etsy-statsd: SKIPPED: npm is not installed and could not be; TestEtsyStatsd will skip"
  exit 0
fi
if ! timeout 60 npm view "statsd@$VERSION" version >/dev/null 2>&1; then
  echo "install-etsy-statsd: SKIPPED: the npm registry cannot be reached (npm view statsd@$VERSION failed); TestEtsyStatsd will skip"
  exit 0
fi
mkdir -p "$dir"
if timeout 300 npm install --no-audit --no-fund --ignore-scripts --prefix "$dir" "statsd@$VERSION" >"$dir/install.log" 2>&1 && installed; then
  echo "install-etsy-statsd: installed statsd $VERSION ($dir)"
else
  echo "install-etsy-statsd: SKIPPED: npm install statsd@$VERSION failed (see $dir/install.log); TestEtsyStatsd will skip"
fi
exit 0
