// Command benchgate checks `go test -bench` output against committed
// rules: allocation budgets, ratio bounds between benchmarks of one run,
// and regressions against a baseline. It is built on golang.org/x/perf
// (benchfmt reads the results; benchmath gives the medians, their
// confidence intervals and the Mann-Whitney U test benchstat uses), so it
// works on any Go project's benchmark output.
//
//	benchgate -rules FILE [-baseline OLD] NEW...
//
// It prints a table of every check and exits 0 when every rule holds, 1
// when a rule is broken (naming it), 2 on bad input or usage. Paths are
// relative to the directory benchgate runs in.
//
// # Running it
//
// benchgate lives in the module github.com/zerostat/zerostat/benchmarks,
// a module of its own (its go.mod replaces the SDK with ../), so
// `go run ./benchmarks/cmd/benchgate` from the repository's root fails
// ("main module does not contain package"). From the root, run it in
// benchmarks/, where paths are benchmarks/'s:
//
//	cd benchmarks && go run ./cmd/benchgate -rules cmd/benchgate/testdata/sample/bench.rules cmd/benchgate/testdata/sample/new.txt
//
// make gate measures into benchmarks/out/gate.txt and then runs
//
//	cd benchmarks && go run ./cmd/benchgate -rules gate.rules -baseline testdata/baseline.txt out/gate.txt
//
// On another project, install it once from a clone of zerostat and run it
// where that project's benchmark output is (`go install …@latest` cannot
// work: a module with a replace directive cannot be installed by version):
//
//	go -C /path/to/zerostat/benchmarks install ./cmd/benchgate      # into $(go env GOPATH)/bin
//	go test -run '^$' -bench . -benchmem -count 6 ./... > new.txt   # in your project
//	benchgate -rules bench.rules new.txt
//
// For regress rules, keep the same run from before a change (old.txt)
// and add -baseline old.txt. Use -count 6 or more: with fewer runs
// benchmath has no 95% interval for a median (it needs 6 samples), so a
// broken ratio bound is only reported as "~", and the U test of a
// regress rule can hardly reach p < 0.05.
//
// # Rules
//
// One rule a line; # starts a comment. Names omit the "Benchmark" prefix
// and the "-GOMAXPROCS" suffix; in a GLOB, * matches any run of
// characters (slashes included). Units are as go test writes them: ns/op,
// B/op, allocs/op, or a custom b.ReportMetric unit.
//
//	alloc   GLOB UNIT <= N           every sample of UNIT of every matching benchmark <= N
//	ratio   NAME UNIT <= K x OTHER   median(NAME) <= K * median(OTHER) (or >=), both of one run
//	regress GLOB UNIT +P%            against -baseline: no slowdown over P% with p < 0.05
//
// The sample project (testdata/sample: a module with one benchmark,
// its rules and one run of it) shows one rule of each kind:
//
//	alloc   Sum/*       allocs/op <= 0              # every sample of every match
//	ratio   Sum/n=10000 ns/op >= 100 x Sum/n=10     # medians of one run, beyond the noise
//	regress Sum/*       ns/op +20%                  # with -baseline: no significant slowdown over 20%
//
// A rule that matches no benchmark fails, so that renaming a benchmark
// cannot silently disable its gate. A ratio whose medians break the bound
// fails only when the ratio's 95% confidence interval is beyond it too;
// otherwise it is reported as "~" (within the noise) and does not fail. A
// regress rule without -baseline, or for a benchmark not in it, is
// skipped with a note.
package main
