#!/usr/bin/env bash
# Installs the metrics backends the integration tests start (on 127.0.0.1,
# with temporary data directories, stopped by PID when each test ends):
# Debian's prometheus (2.42) and victoria-metrics (1.79) packages, when
# missing. It says what it installed and what it could not
# (scripts/apt-install.sh waits for the apt lock and retries once). When
# it cannot install them, CI=true fails the build; elsewhere the tests
# say SKIPPED (unless ZEROSTAT_REQUIRE_BACKENDS=1). The packages' services are not started:
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

# Under CI=true a dependency that cannot be installed fails the build:
# a test that would skip there is a test CI did not run.
fail() {
  if [ "${CI:-}" = true ]; then
    echo "install-backends: FAILED: $1; CI=true, so this fails make test instead of skipping the integration tests"
    exit 1
  fi
  echo "install-backends: SKIPPED: $1; the integration tests will skip"
  exit 0
}
echo "install-backends: installing ${missing[*]} (apt-get)"
if ! why=$(NO_RECOMMENDS=1 "$(dirname "$0")/apt-install.sh" /tmp/zerostat-install-backends.log "${missing[@]}"); then
  fail "$(echo "$why" | tail -3 | tr '\n' ' ')"
fi
have_prometheus && echo "install-backends: prometheus ready ($(prometheus --version 2>&1 | head -1))" || fail "prometheus still missing after apt-get"
have_vm && echo "install-backends: victoria-metrics ready" || fail "victoria-metrics still missing after apt-get"
exit 0
