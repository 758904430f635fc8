#!/usr/bin/env bash
# Installs Debian's chromium, which the browser end-to-end test (the e2e/
# module) drives headless, when /usr/bin/chromium is missing. It says what
# it installed and what it could not; it never fails the build by itself
# (the test then says SKIPPED, unless ZEROSTAT_REQUIRE_CHROMIUM=1).
#
#   scripts/install-chromium.sh           install if missing, report
#   scripts/install-chromium.sh --check   print 1 if chromium is present, else 0
set -u

chromium=/usr/bin/chromium
have_chromium() { [ -x "$chromium" ] && "$chromium" --version >/dev/null 2>&1; }

if [ "${1:-}" = "--check" ]; then
  if have_chromium; then echo 1; else echo 0; fi
  exit 0
fi

if have_chromium; then
  echo "install-chromium: $("$chromium" --version 2>/dev/null | head -1) present"
  exit 0
fi

sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo -n"; else
    echo "install-chromium: SKIPPED installing chromium: not root and no sudo; the browser test will skip"
    exit 0
  fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-chromium: SKIPPED installing chromium: no apt-get (not Debian?); the browser test will skip"
  exit 0
fi
# fonts-dejavu-core: the page's fallback fonts, so screenshots look the
# same on every machine.
echo "install-chromium: installing chromium (apt-get)"
export DEBIAN_FRONTEND=noninteractive
if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq chromium fonts-dejavu-core; } >/tmp/zerostat-install-chromium.log 2>&1; then
  echo "install-chromium: SKIPPED: apt-get failed (see /tmp/zerostat-install-chromium.log); the browser test will skip"
  tail -5 /tmp/zerostat-install-chromium.log
  exit 0
fi
if have_chromium; then
  echo "install-chromium: $("$chromium" --version 2>/dev/null | head -1) ready"
else
  echo "install-chromium: chromium still missing after apt-get (see /tmp/zerostat-install-chromium.log); the browser test will skip"
fi
exit 0
