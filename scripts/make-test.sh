#!/usr/bin/env bash
# make test: every step CI runs, in order, each timed; then a summary of
# each step's wall time and of the tests run, failed and skipped per
# module, so that a reader sees at a glance what ran. It stops at the
# first failing step (the summary says which).
set -u
cd "$(dirname "$0")/.."
make=${MAKE:-make}
export ZEROSTAT_SUMMARY=$(mktemp /tmp/zerostat-summary.XXXXXX)
steps=(deps check-fmt vet unit race test-386 fuzz bench-module e2e otlpgrpc bridge collector statsd-agents zgrpc otel gate)
failed=""
began=$(date +%s)
for s in "${steps[@]}"; do
  t0=$(date +%s%N)
  echo "== make $s"
  if $make --no-print-directory "$s"; then rc=0; else rc=$?; fi
  t1=$(date +%s%N)
  printf 'step\t%s\t%d\t%s\n' "$s" $(( (t1 - t0) / 1000000000 )) "$rc" >>"$ZEROSTAT_SUMMARY"
  if [ "$rc" != 0 ]; then failed=$s; break; fi
done
total=$(( $(date +%s) - began ))

echo
echo "== make test summary ($(nproc) cores, ${total} s in all)"
awk -F'\t' '
  $1 == "step" { printf "  %-13s %5d s  %s\n", $2, $3, ($4 == 0 ? "ok" : "FAILED") }
' "$ZEROSTAT_SUMMARY"
echo "  tests per module and step (passed / failed / skipped):"
awk -F'\t' '
  $1 == "tests" {
    mod = $3; sub(/^github.com\/zerostat\/zerostat\/?/, "", mod)
    # unit, race and test-386 test the root module; every other step, a module of its own.
    if ($2 == "unit" || $2 == "race" || $2 == "test-386") m = "root"; else m = $2
    k = (m == "root" ? "root module, " $2 : $2 " module"); p[k] += $4; f[k] += $5; s[k] += $6; order[k] = 1
    P += $4; F += $5; S += $6
    if ($7 != "") skipped[k] = skipped[k] " " mod ":" $7
  }
  END {
    for (k in order) printf "    %-22s %5d / %d / %d\n", k, p[k], f[k], s[k]
    for (k in skipped) printf "    skipped in %s:%s\n", k, skipped[k]
    printf "%d passed, %d failed, %d skipped\n", P, F, S
  }
' "$ZEROSTAT_SUMMARY"
rm -f "$ZEROSTAT_SUMMARY"
if [ -n "$failed" ]; then
  echo "make test: FAILED at step '$failed'"
  exit 1
fi
echo "make test: all checks passed"
