#!/usr/bin/env bash
# Installs Debian packages for the tests, the one way every install script
# here does it:
#   - waits for the dpkg/apt locks (another apt-get, an unattended
#     upgrade) for up to 10 minutes, instead of failing at once;
#   - retries a failed download once, after `apt-get update`;
#   - keeps the packages' services from starting (the tests run their own).
# It exits non-zero, saying why, when the packages could not be installed;
# the caller decides whether that fails the build (it does under CI=true).
#
#   scripts/apt-install.sh LOG PACKAGE...
# NO_RECOMMENDS=1 adds --no-install-recommends.
set -u
log=$1; shift
export DEBIAN_FRONTEND=noninteractive
sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo -n"; else
    echo "not root and no sudo"; exit 1
  fi
fi
command -v apt-get >/dev/null 2>&1 || { echo "no apt-get (not Debian?)"; exit 1; }

made_policy=""
if [ ! -e /usr/sbin/policy-rc.d ] && [ -z "$sudo" ]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && made_policy=1
fi
cleanup() { [ -n "$made_policy" ] && rm -f /usr/sbin/policy-rc.d; }
trap cleanup EXIT

# apt runs $@, waiting while another process holds an apt or dpkg lock.
apt() {
  local waited=0
  while :; do
    if $sudo apt-get -o DPkg::Lock::Timeout=60 "$@" >>"$log" 2>&1; then return 0; fi
    if tail -5 "$log" | grep -q 'Could not get lock\|is another process using it\|Unable to acquire the dpkg frontend lock'; then
      if [ $waited -ge 600 ]; then echo "apt/dpkg lock still held after ${waited} s"; return 1; fi
      sleep 10; waited=$((waited + 10)); continue
    fi
    return 1
  done
}

: >"$log"
for try in 1 2; do
  if apt update -qq && apt install -y -qq ${NO_RECOMMENDS:+--no-install-recommends} "$@"; then exit 0; fi
  [ $try = 1 ] && { echo "apt-get failed (see $log); trying once more"; sleep 5; }
done
echo "apt-get install $* failed twice (see $log):"
tail -5 "$log"
exit 1
