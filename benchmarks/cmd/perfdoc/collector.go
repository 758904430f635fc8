package main

// collectorSection is the Collector comparison (issue 17): the msgpack
// receiver against the otlp receiver. Its benchmarks live in the collector
// module and need the built Collector (scripts/build-collector.sh), which
// `make bench` does not run, so the section is written here from a
// targeted run; rerun the commands it names and update the numbers with
// it (docs/collector.md and README quote them).
const collectorSection = `## OpenTelemetry Collector: msgpack receiver versus otlp receiver (10,000 series)

Measured on 2026-12-01 in a targeted run on the same VM (load average 2 to 3), not by ` + "`make bench`" + `: ` + "`collector/e2e`" + `'s ` + "`BenchmarkCollectorIngest`" + ` sends one cumulative snapshot of 10,000 series (` + "`collector/internal/ingesttest`" + `: 2,500 each of a Count and a 10-bound Distribution over a Float64 measure, a Sum and a LastValue over an Int64 one, two tags) to the built Collector, as msgpack to the zerostat receiver and as zerostat's OTLP to the ` + "`otlp`" + ` receiver, both into the ` + "`debug`" + ` exporter, and reads the Collector process's CPU time from /proc around each run; gzip at BestSpeed, both exporters' default. The same workload gives the same pdata by both paths (docs/collector.md, "Same pdata"). benchstat medians of ` + "`-count 6 -benchtime 50x`" + `:

| per 10,000 series | msgpack → zerostat receiver | OTLP → otlp receiver | msgpack / OTLP | target |
|---|---|---|---|---|
| bytes on the wire, plain | 138.4 KiB | 1,204 KiB | 0.11 | ≤ 0.5 |
| bytes on the wire, gzip | 68.8 KiB | 76.6 KiB | 0.90 | ≤ 0.5 (missed) |
| Collector CPU, plain body | 7.59 ms ±7% | 11.16 ms ±4% | 0.68 | ≤ 1 |
| Collector CPU, gzip body | 9.16 ms ±10% | 12.93 ms ±8% | 0.71 | ≤ 1 |

In process (` + "`zerostatreceiver`" + `'s ` + "`BenchmarkDecode`" + `, the same snapshot): msgpack decoded and converted to pdata 5.23 ms ±6% (4.18 MiB, 65,300 allocs) against 7.04 ms ±15% (3.73 MiB, 102,600 allocs) for unmarshalling the OTLP body to pdata.

Against main before issue 17's changes (the same bodies, sizes only): msgpack plain 148.2 KiB → 138.4 KiB (an Int64 measure's values are MessagePack integers, 3 bytes where a float32 took 5), gzip 65.0 KiB → 68.8 KiB (the integers compress less well than the float32s); OTLP plain unchanged, gzip 146.8 KiB → 111.7 KiB (a cumulative point now starts at its view's registration, one repeated start per view instead of one per series, which gzip folds). Then OTLP gzip 111.7 KiB → 76.6 KiB once snapshots walk series in creation order (issue 18): each point's attribute strings now follow the previous point's, which gzip folds; msgpack writes each string once in its table, so its 68.8 KiB, mostly the values themselves, did not move. Both bodies now compress to about what their values carry, and the gzip ratio, 0.45 before these changes, misses its target: what OTLP lost was its own redundancy.

` + "```sh" + `
cd collector && go test -run '^$' -bench CollectorIngest -benchtime 50x -count 6 ./e2e
cd collector && go test -run '^$' -bench Decode -benchtime 50x -count 6 ./zerostatreceiver
` + "```" + `

`
