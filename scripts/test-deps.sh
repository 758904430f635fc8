#!/usr/bin/env bash
# Installs what `make test` needs beyond Go, from Debian's packages, when it
# is missing: python3-msgpack and ruby-msgpack for the cross-language decode
# test. It says what it installed and what it could not; it never fails the
# build by itself (the tests then say SKIPPED, unless
# ZEROSTAT_REQUIRE_CROSSLANG=1).
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

sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo -n"; else
    echo "test-deps: SKIPPED installing ${missing[*]}: not root and no sudo; the cross-language test will skip"
    exit 0
  fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "test-deps: SKIPPED installing ${missing[*]}: no apt-get; the cross-language test will skip"
  exit 0
fi
echo "test-deps: installing ${missing[*]} (apt-get)"
export DEBIAN_FRONTEND=noninteractive
if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq "${missing[@]}"; } >/tmp/zerostat-test-deps.log 2>&1; then
  echo "test-deps: SKIPPED: apt-get failed (see /tmp/zerostat-test-deps.log); the cross-language test will skip"
  tail -5 /tmp/zerostat-test-deps.log
  exit 0
fi
have_python && echo "test-deps: python3-msgpack ready" || echo "test-deps: python3-msgpack still missing"
have_ruby && echo "test-deps: ruby-msgpack ready" || echo "test-deps: ruby-msgpack still missing"
exit 0
