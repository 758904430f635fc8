# zerostat — every check CI runs is `make test` (see .ci/run).
GO       ?= go
SHELL    := /bin/bash
# A go test piped into testsum fails when go test does.
.SHELLFLAGS := -o pipefail -c
# Each go test step's -json events, read into the log a plain run prints
# and the counts make test's summary shows (internal/tools/testsum).
TESTSUM  = cd $(CURDIR) && $(GO) run ./internal/tools/testsum

.PHONY: soak test deps check-fmt vet unit race test-386 fuzz bench-module e2e otlpgrpc bridge collector statsd-agents zgrpc otel gate gate-measure bench bench-scale bench-scale-run bench-collector bench-collector-run integration screenshot demo bench-smoke

# When the cross-language decoders are installed, their test must run (not
# skip).
CROSSLANG = ZEROSTAT_REQUIRE_CROSSLANG=$$(scripts/test-deps.sh --check)
# Likewise the tests against real Prometheus and VictoriaMetrics servers.
BACKENDS = ZEROSTAT_REQUIRE_BACKENDS=$$(scripts/install-backends.sh --check)

## test: everything CI runs: test dependencies, format, vet, unit tests,
## race tests, a 386 pass, short fuzzing, and the benchmarks module's tests.
## It ends with a summary: each step's wall time, and the tests passed,
## failed and skipped per module (scripts/make-test.sh).
test:
	@MAKE="$(MAKE)" scripts/make-test.sh

## deps: install the Debian packages the tests use: python3-msgpack and
## ruby-msgpack, prometheus and victoria-metrics.
deps:
	@scripts/test-deps.sh
	@scripts/install-backends.sh
	@scripts/install-chromium.sh

check-fmt:
	@out=$$(gofmt -l . ); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	cd benchmarks && $(GO) vet ./...
	cd e2e && $(GO) vet ./...
	cd exporter/otlp/otlpgrpc && $(GO) vet ./...
	cd bridge/opencensus && $(GO) vet ./...
	cd collector && $(GO) vet ./...
	cd exporter/statsd/agenttest && $(GO) vet ./...
	cd plugin/zgrpc && $(GO) vet ./...
	cd otel && $(GO) vet ./...

unit:
	$(CROSSLANG) $(BACKENDS) $(GO) test -json -count=1 ./... | ( $(TESTSUM) unit )

race:
	$(CROSSLANG) $(BACKENDS) $(GO) test -json -race -count=1 ./... | ( $(TESTSUM) race )

# 32-bit: atomics alignment and int sizes (as VictoriaMetrics's CI does).
# On a kernel that cannot execute 386 binaries (no IA32 emulation; Debian's
# qemu-user 7.2 cannot run Go's 386 runtime either) the tests are built
# and vetted for 386 instead, and the step says so.
PKGS386 = ./internal/... ./tag ./stats ./view ./exporter/...
test-386:
	@if GO=$(GO) scripts/can-run-386.sh; then \
	  GOARCH=386 $(GO) test -json -count=1 $(PKGS386) | ( $(TESTSUM) test-386 ); \
	else \
	  echo "test-386: this kernel cannot execute 386 binaries: building and vetting the 386 tests, not running them"; \
	  d=$$(mktemp -d) && GOARCH=386 $(GO) vet $(PKGS386) && GOARCH=386 $(GO) test -count=1 -c -o $$d/ $(PKGS386) && \
	  echo "test-386: built $$(ls $$d | wc -l) test binaries for 386" && rm -rf $$d; \
	fi

# Each fuzz target briefly; the seed corpora in testdata/fuzz also run as
# plain tests in `unit`.
#
# The budget is a count of executions (1.6 to 9.7 s each on the 2-core VM,
# 2026-12-04),
# not a duration: with a duration, Go 1.26's fuzz coordinator can fail a
# clean run with a bare "context deadline exceeded" at the deadline when a
# worker has not yet seen the cancellation (golang/go#75804, fixed in Go
# 1.27; it failed CI here once, on snappy's FuzzDecode, with no crasher).
# A count never arms that deadline. -timeout bounds a starved run instead.
# `make fuzz FUZZTIME=60s` fuzzes longer by time, with that caveat.
#
# Minimizing a new interesting input may take 60 s by default, which
# stalls a brief run and can end it with "fuzzing process hung or
# terminated unexpectedly while minimizing" (golang/go#52569, #48820;
# seen here once on FuzzHandler): 1 s is enough for a brief run.
FUZZMIN     ?= -fuzzminimizetime 1s
FUZZTIMEOUT ?= 3m
# $(call fuzz1,Target,package,executions)
fuzz1 = $(GO) test -run '^$$' -fuzz '^$(1)$$' -fuzztime $(or $(FUZZTIME),$(3)) $(FUZZMIN) -timeout $(FUZZTIMEOUT) $(2)
fuzz:
	$(call fuzz1,FuzzDecode,./tag,300000x)
	$(call fuzz1,FuzzReader,./internal/msgpack,200000x)
	$(call fuzz1,FuzzDecode,./exporter/wire,80000x)
	$(call fuzz1,FuzzHandler,./exporter/receiver,60000x)
	$(call fuzz1,FuzzSnapshotRoundTrip,./exporter,15000x)
	$(call fuzz1,FuzzDeltaEvictTotals,./exporter,12000x)
	$(call fuzz1,FuzzRoundTrip,./internal/snappy,250000x)
	$(call fuzz1,FuzzDecode,./internal/snappy,400000x)
	$(call fuzz1,FuzzNegotiate,./internal/accept,150000x)
	$(call fuzz1,FuzzSplitHostPort,./plugin/zhttp,200000x)
	$(call fuzz1,FuzzIndex,./internal/exphist,200000x)
	$(call fuzz1,FuzzLine,./exporter/statsd,50000x)

bench-module:
	cd benchmarks && ZEROSTAT_REQUIRE_BACKENDS=$$(../scripts/install-backends.sh --check) $(GO) test -json -count=1 ./... | ( $(TESTSUM) bench-module )

# The benchmarks the gate reads: the record scenarios of zerostat (its
# bound handles too), the floor, OpenCensus and Prometheus, and the
# per-request rows of 1 and 8 counters (-count=6 for the statistics), the
# exponential histogram's rows beside the classic one's (issue 45), one
# export for its allocation budget (and one of 10,000 histogram series,
# classic and exponential, on the msgpack and Prometheus outputs),
# records while an exporter faces each fault, and a StatsD recording of
# zerostat (exporter/statsd running) beside datadog-go's in its three modes
# (issue 46).
GATE_RECORD = BenchmarkRecord/scenario=(counter_notags|counter_2tags|histogram_2tags|8measures_8tags|recordwithtags_2mut|counter_2tags_parallel|request_1m|request_8m|exphist_2tags|exphist_2tags_parallel)/impl=(zerostat|floor|opencensus|zerostat_handle|prometheus|prometheus_handle|zerostat_new|zerostat_rwt|zerostat_ctx|opencensus_new|otel|otel_attrset|zerostat_otel|zerostat_otel_attrset)$$

## gate: run the gated benchmarks briefly and check benchmarks/gate.rules.
## A failed measurement or a broken rule is measured once more before the
## gate fails, and a failure prints what failed (scripts/gate.sh).
gate:
	@MAKE="$(MAKE)" scripts/gate.sh

gate-measure:
	@mkdir -p benchmarks/out
	cd benchmarks && $(GO) test -run '^$$' -bench '$(GATE_RECORD)' -benchmem -count=6 -benchtime=100ms . > out/gate.txt
	cd benchmarks && $(GO) test -run '^$$' -bench 'BenchmarkEncode/impl=zerostat$$' -benchmem -count=1 -benchtime=20x ./encode >> out/gate.txt
	cd benchmarks && $(GO) test -run '^$$' -bench 'BenchmarkCollect10kHistograms/kind=(histogram16|exphist)/impl=(zerostat_export|zerostat_prometheus)$$' -benchmem -count=1 -benchtime=20x . >> out/gate.txt
	$(GO) test -run '^$$' -bench 'BenchmarkRecordUnderFault' -benchmem -count=6 -benchtime=100ms ./exporter >> benchmarks/out/gate.txt
	$(GO) test -run '^$$' -bench 'Benchmark(FloorHistogram|Histogram2Tags_RecordWithOptions|Histogram2Tags_Attachments)$$' -benchmem -count=6 -benchtime=100ms ./stats >> benchmarks/out/gate.txt
	cd benchmarks && $(GO) test -run '^$$' -bench 'BenchmarkStatsdRecord/impl=(zerostat|datadog|datadog_agg|datadog_extagg)$$' -benchmem -count=6 -benchtime=100ms ./statsd >> out/gate.txt

## bench: the full side-by-side set, -count=6 (about 32 minutes on 2 cores, 18 of them BenchmarkScale,
## 5 the StatsD intervals: 10 s each in real time),
## then docs/performance.md and docs/performance.svg from the results.
bench:
	@mkdir -p benchmarks/out
	cd benchmarks && $(GO) test -run '^$$' -bench 'BenchmarkRecord/' -benchmem -count=6 -benchtime=300ms . > out/record.txt
	cd benchmarks && $(GO) test -run '^$$' -bench 'Encode|Gzip|RecordDuringExport' -benchmem -count=6 -benchtime=300ms ./encode > out/encode.txt
	cd benchmarks && $(GO) test -run '^$$' -bench 'HeapPerSeries' -benchmem -count=6 -benchtime=1x . > out/memory.txt
	cd benchmarks && $(GO) test -run '^$$' -bench 'Collect10k' -benchmem -count=6 -benchtime=300ms . > out/collect.txt
	cd benchmarks && $(GO) test -run '^$$' -bench 'HTTPServer|HTTPClient|RPC' -benchmem -count=6 -benchtime=300ms ./plugins > out/plugins.txt
	$(GO) test -run '^$$' -bench . -benchmem -count=6 -benchtime=500ms ./stats > benchmarks/out/stats.txt
	cd benchmarks && $(GO) test -run '^$$' -bench 'BenchmarkStatsdRecord' -benchmem -count=6 -benchtime=300ms ./statsd > out/statsd.txt
	cd benchmarks && $(GO) test -run '^$$' -bench 'BenchmarkStatsdInterval' -benchmem -count=6 -benchtime=1x -timeout 20m ./statsd >> out/statsd.txt
	$(MAKE) bench-scale-run
	$(MAKE) bench-collector-run
	cd benchmarks && $(GO) run golang.org/x/perf/cmd/benchstat -col /impl out/record.txt > out/benchstat.txt
	cd benchmarks && $(GO) run golang.org/x/perf/cmd/benchstat -col /impl out/memory.txt out/collect.txt >> out/benchstat.txt
	cd benchmarks && $(GO) run golang.org/x/perf/cmd/benchstat -col /impl out/statsd.txt >> out/benchstat.txt
	cd benchmarks && $(GO) run golang.org/x/perf/cmd/benchstat out/encode.txt out/stats.txt >> out/benchstat.txt
	cd benchmarks && $(GO) run ./cmd/perfdoc -out ../docs/performance.md -svg ../docs/performance.svg \
		-benchstat out/benchstat.txt out/record.txt out/memory.txt out/collect.txt out/encode.txt out/stats.txt out/plugins.txt out/statsd.txt out/scale.txt out/collector.txt

## bench-collector: the Collector comparison alone (the collector module's
## BenchmarkCollectorIngest, which builds and runs a real Collector, and
## BenchmarkDecode; about 2 minutes), then only that section of
## docs/performance.md.
bench-collector: bench-collector-run
	cd benchmarks && $(GO) run ./cmd/perfdoc -splice-collector -out ../docs/performance.md out/collector.txt

bench-collector-run:
	@mkdir -p benchmarks/out
	cd collector && $(GO) test -run '^$$' -bench 'CollectorIngest' -benchtime 50x -count 6 ./e2e > ../benchmarks/out/collector.txt
	cd collector && $(GO) test -run '^$$' -bench 'Decode' -benchtime 50x -count 6 ./zerostatreceiver >> ../benchmarks/out/collector.txt

## bench-scale: BenchmarkScale alone (1k to 1M live series, every SDK;
## about 18 minutes on 2 cores, most of it the 1M builds), then only the scale section of
## docs/performance.md and docs/performance-scale.svg.
bench-scale: bench-scale-run
	cd benchmarks && $(GO) run ./cmd/perfdoc -splice -out ../docs/performance.md -scale-svg ../docs/performance-scale.svg out/scale.txt

bench-scale-run:
	@mkdir -p benchmarks/out
	cd benchmarks && $(GO) test -run '^$$' -bench 'BenchmarkScale' -benchmem -count=6 -benchtime=100ms -timeout 0 . > out/scale.txt

## bridge: the OpenCensus metricproducer bridge module, tested with
## OpenCensus's own Prometheus exporter (-race: it is small).
bridge:
	cd bridge/opencensus && $(GO) test -json -race -count=1 ./... | ( $(TESTSUM) bridge )

## e2e: the /debug/stats page in a real headless Chromium (must run, not
## skip, once chromium is installed).
e2e:
	cd e2e && ZEROSTAT_REQUIRE_CHROMIUM=$$(../scripts/install-chromium.sh --check) $(GO) test -json -race -count=1 ./... | ( $(TESTSUM) e2e )

## otlpgrpc: the OTLP/gRPC module (its own go.mod: google.golang.org/grpc),
## against a gRPC server on 127.0.0.1, with -race.
otlpgrpc:
	cd exporter/otlp/otlpgrpc && $(GO) test -json -race -count=1 ./... | ( $(TESTSUM) otlpgrpc )

## collector: the OpenTelemetry Collector receiver (collector/, its own
## module) and a real Collector between zerostat's exporters and Prometheus
## (the Collector is built once by scripts/build-collector.sh, about 2
## minutes on 2 cores, and cached), under -race.
collector:
	cd collector && ZEROSTAT_REQUIRE_BACKENDS=$$(../scripts/install-backends.sh --check) $(GO) test -json -race -count=1 -timeout 20m ./... | ( $(TESTSUM) collector )

## statsd-agents: exporter/statsd against real agents (its own module,
## exporter/statsd/agenttest): prometheus/statsd_exporter v0.31.0, built
## once from its Go module and cached (scripts/build-statsd-exporter.sh),
## every view type in both dialects and distribution modes over UDP, TCP
## and a Unix datagram socket; Etsy statsd 0.9.0 from npm
## (scripts/install-etsy-statsd.sh; its test must run once installed, and
## skips, saying why, when the npm registry cannot be reached); the
## OpenCensus Datadog exporter's code on OpenCensus and datadog-go against
## the golden file of exporter/statsd's OpenCensusDatadog mode.
statsd-agents:
	@scripts/install-etsy-statsd.sh
	cd exporter/statsd/agenttest && ZEROSTAT_REQUIRE_ETSY=$$(../../../scripts/install-etsy-statsd.sh --check) $(GO) test -json -count=1 -timeout 10m ./... | ( $(TESTSUM) statsd-agents )

## zgrpc: the gRPC plug-in's module (its own go.mod keeps gRPC out of the
## root module): real gRPC traffic on 127.0.0.1, under -race.
zgrpc:
	cd plugin/zgrpc && $(GO) test -json -race -count=1 ./... | ( $(TESTSUM) zgrpc )

## otel: the OpenTelemetry MeterProvider module (its own go.mod: it
## requires go.opentelemetry.io/otel/metric), plain and under -race.
otel:
	cd otel && $(GO) test -json -count=1 ./... | ( $(TESTSUM) otel )
	cd otel && $(GO) test -json -race -count=1 ./... | ( $(TESTSUM) otel-race )

## screenshot: regenerate docs/debug-stats.png (used by the README).
screenshot:
	cd e2e && ZEROSTAT_REQUIRE_CHROMIUM=1 ZEROSTAT_UPDATE_SCREENSHOT=1 $(GO) test -count=1 -run TestDebugStatsInChromium ./...

## integration: only the tests against real Prometheus and VictoriaMetrics
## servers (started by the tests on 127.0.0.1, temporary data dirs).
integration:
	@scripts/install-backends.sh
	$(BACKENDS) $(GO) test -count=1 -run '^TestBackend' ./exporter/... ./internal/testbackend

## soak: the soak test (exporter.TestSoak) for SOAK (default 3m): four
## recorders on every record path, churning users under a 5,000-series
## limit, handles bound and dropped, a view registered again every 5
## phases, a delta exporter evicting and a cumulative one; exact totals
## per view and per registration, flat post-GC heap (docs/reliability.md).
## make test runs the same test for 100 phases.
SOAK ?= 3m
soak:
	ZEROSTAT_SOAK=$(SOAK) $(GO) test -count=1 -run '^TestSoak$$' -v -timeout 30m ./exporter

## demo: the main job (same as `go run ./cmd/zerostat demo`).
demo:
	$(GO) run ./cmd/zerostat demo

## bench-smoke: every benchmark once, briefly (does not gate).
bench-smoke:
	$(GO) test -run '^$$' -bench . -benchtime 1x ./...
