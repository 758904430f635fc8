#!/usr/bin/env bash
# Installs what `make test` needs beyond Go, from Debian's packages, when it
# is missing: python3-msgpack and ruby-msgpack for the cross-language decode
# test. It says what it installed and what it could not
# (scripts/apt-install.sh waits for the apt lock and retries once). When
# it cannot install them, CI=true fails the build; elsewhere the tests
# say SKIPPED (unless ZEROSTAT_REQUIRE_CROSSLANG=1).
#
#   scripts/test-deps.sh           install if missing, report
#   scripts/test-deps.sh --check   print 1 if everything is present, else 0
set -u

have_python() { /usr/bin/python3 -c 'import msgpack' >/dev/null 2>&1; }
have_ruby() { command -v ruby >/dev/null 2>&1 && ruby -e 'require "msgpack"' >/dev/null 2>&1; }

if [ "${1:-}" = "--check" ]; then
  if have_python && have_ruby; then echo 1; else echo 0; fi
  exit 0
fi

missing=()
have_python || missing+=(python3-msgpack)
have_ruby || missing+=(ruby-msgpack)
if [ ${#missing[@]} -eq 0 ]; then
  echo "test-deps: python3-msgpack and ruby-msgpack present"
  exit 0
fi

# Under CI=true a dependency that cannot be installed fails the build:
# a test that would skip there is a test CI did not run.
fail() {
  if [ "${CI:-}" = true ]; then
    echo "test-deps: FAILED: $1; CI=true, so this fails make test instead of skipping the cross-language test"
    exit 1
  fi
  echo "test-deps: SKIPPED: $1; the cross-language test will skip"
  exit 0
}
echo "test-deps: installing ${missing[*]} (apt-get)"
if ! why=$("$(dirname "$0")/apt-install.sh" /tmp/zerostat-test-deps.log "${missing[@]}"); then
  fail "$(echo "$why" | tail -3 | tr '\n' ' ')"
fi
have_python && echo "test-deps: python3-msgpack ready" || fail "python3-msgpack still missing after apt-get"
have_ruby && echo "test-deps: ruby-msgpack ready" || fail "ruby-msgpack still missing after apt-get"
exit 0
