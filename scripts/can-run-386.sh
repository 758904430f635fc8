#!/usr/bin/env bash
# Exits 0 when this machine executes a 386 (32-bit x86) Go binary: a
# kernel built without IA32 emulation cannot, and make test-386 then
# builds the 386 tests instead of running them.
set -u
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
printf 'package main\n\nfunc main() {}\n' >"$d/main.go"
(cd "$d" && GOARCH=386 GOFLAGS= ${GO:-go} build -o p386 main.go) >/dev/null 2>&1 || exit 1
"$d/p386" >/dev/null 2>&1
