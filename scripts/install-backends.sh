#!/usr/bin/env bash
# Installs the metrics backends the integration tests start (on 127.0.0.1,
# with temporary data directories, stopped by PID when each test ends):
# Debian's prometheus (2.42) and victoria-metrics (1.79) packages, when
# missing. It says what it installed and what it could not; it never fails
# the build by itself (the tests then say SKIPPED, unless
# ZEROSTAT_REQUIRE_BACKENDS=1). The packages' services are not started:
# the tests run their own servers.
#
#   scripts/install-backends.sh           install if missing, report
#   scripts/install-backends.sh --check   print 1 if both are present, else 0
set -u

have_prometheus() { command -v prometheus >/dev/null 2>&1; }
have_vm() { command -v victoria-metrics >/dev/null 2>&1; }

if [ "${1:-}" = "--check" ]; then
  if have_prometheus && have_vm; then echo 1; else echo 0; fi
  exit 0
fi

missing=()
have_prometheus || missing+=(prometheus)
have_vm || missing+=(victoria-metrics)
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-backends: prometheus and victoria-metrics present"
  exit 0
fi

sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo -n"; else
    echo "install-backends: SKIPPED installing ${missing[*]}: not root and no sudo; the integration tests will skip"
    exit 0
  fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-backends: SKIPPED installing ${missing[*]}: no apt-get; the integration tests will skip"
  exit 0
fi
echo "install-backends: installing ${missing[*]} (apt-get)"
export DEBIAN_FRONTEND=noninteractive
# policy-rc.d: keep the packages' services from starting (the tests start
# their own servers on free ports); removed again afterwards if we made it.
made_policy=""
if [ ! -e /usr/sbin/policy-rc.d ] && [ -z "$sudo" ]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && made_policy=1
fi
log=/tmp/zerostat-install-backends.log
if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  [ -n "$made_policy" ] && rm -f /usr/sbin/policy-rc.d
  echo "install-backends: SKIPPED: apt-get failed (see $log); the integration tests will skip"
  tail -5 "$log"
  exit 0
fi
[ -n "$made_policy" ] && rm -f /usr/sbin/policy-rc.d
have_prometheus && echo "install-backends: prometheus ready ($(prometheus --version 2>&1 | head -1))" || echo "install-backends: prometheus still missing"
have_vm && echo "install-backends: victoria-metrics ready" || echo "install-backends: victoria-metrics still missing"
exit 0
