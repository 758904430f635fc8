package main

import (
	"fmt"
	"math"
)

// The StatsD comparison (issue 46): zerostat with exporter/statsd against
// datadog-go v5.9.1's client on one workload (benchmarks/statsd: 2
// counters and 1 histogram with 2 tags, 100k recordings a second):
// BenchmarkStatsdRecord (StatsdRecord/impl=…, the cost of one recording)
// and BenchmarkStatsdInterval (StatsdInterval/impl=…, one 10 s interval
// paced in real time: bytes/interval, datagrams/interval,
// rx-bytes/interval, cpu-ms/interval; impl=baseline is the pacing loop
// alone).

// statsdImpls are the section's rows, in order.
var statsdImpls = []struct{ impl, what string }{
	{"zerostat", "zerostat + `exporter/statsd` (DogStatsD, native distribution as `|h`, every 10 s)"},
	{"datadog", "datadog-go `WithoutClientSideAggregation` (one line per call)"},
	{"datadog_agg", "datadog-go, default client-side aggregation (counts and gauges, every 2 s)"},
	{"datadog_extagg", "datadog-go `WithExtendedClientSideAggregation` (histograms too, multi-value lines)"},
}

// statsdInterval is BenchmarkStatsdInterval's interval, in seconds.
const statsdInterval = 10

func (r *results) hasStatsd() bool {
	_, ok1 := r.summary("StatsdRecord/impl=zerostat", "ns/op")
	_, ok2 := r.summary("StatsdInterval/impl=zerostat", "bytes/interval")
	return ok1 || ok2
}

// writeStatsd writes the StatsD section when the run has its results.
func writeStatsd(w func(string, ...any), r *results) {
	if !r.hasStatsd() {
		return
	}
	rec := func(im string) string { return "StatsdRecord/impl=" + im }
	iv := func(im string) string { return "StatsdInterval/impl=" + im }
	w("## StatsD and DogStatsD: zerostat's exporter against datadog-go\n\n")
	w("One workload (`benchmarks/statsd`): 2 counters and 1 histogram (15 bounds) with 2 tags (30 tag sets), 100,000 recordings a second, sent over UDP to a sink in another process. *record* is one recording of the workload's mix while the sender runs (`BenchmarkStatsdRecord`); the interval columns are one %d s interval in real time, paced at 100,000 recordings a second, then a flush (`BenchmarkStatsdInterval`, `-benchtime=1x`): the bytes and datagrams the sender counted, the bytes the sink received, and the CPU the sending process spent per second of the interval (recording, aggregating, encoding, sending), with and without the pacing loop's own (`baseline`, which records nothing; *within noise* when the difference from it is inside the two 95%% intervals). datadog-go v5.9.1 sends its telemetry elsewhere and runs `WithoutOriginDetection`.\n\n", statsdInterval)
	w("| impl | what | record ns/op | allocs/op | B/op | bytes / %d s | datagrams / %d s | received bytes | CPU ms/s | CPU ms/s, less the pacing loop |\n|---|---|---|---|---|---|---|---|---|---|\n", statsdInterval, statsdInterval)
	base, okBase := r.summary(iv("baseline"), "cpu-ms/interval")
	rows := append([]struct{ impl, what string }{{"baseline", "the pacing loop alone (records nothing)"}}, statsdImpls...)
	for _, im := range rows {
		ns, okRec := r.summary(rec(im.impl), "ns/op")
		by, okIv := r.summary(iv(im.impl), "bytes/interval")
		if !okRec && !okIv {
			continue
		}
		w("| %s | %s |", im.impl, im.what)
		if okRec {
			a, _ := r.summary(rec(im.impl), "allocs/op")
			b, _ := r.summary(rec(im.impl), "B/op")
			w(" %s%s | %g | %g |", fmtNs(ns.Center), pct(ns), a.Center, b.Center)
		} else {
			w(" | | |")
		}
		if okIv {
			dg, _ := r.summary(iv(im.impl), "datagrams/interval")
			rx, _ := r.summary(iv(im.impl), "rx-bytes/interval")
			cpu, _ := r.summary(iv(im.impl), "cpu-ms/interval")
			w(" %s | %s | %s | %.1f%s |", fmtCount(by.Center), fmtCount(dg.Center), fmtCount(rx.Center), cpu.Center/statsdInterval, pct(cpu))
			switch d := cpu.Center - base.Center; {
			case !okBase || im.impl == "baseline":
				w(" |\n")
			case math.Abs(d) <= (cpu.Hi-cpu.Lo)/2+(base.Hi-base.Lo)/2:
				w(" within noise |\n") // the difference is inside the two intervals
			default:
				w(" %.1f |\n", d/statsdInterval)
			}
		} else {
			w(" | | | | |\n")
		}
	}
	w("\nzerostat records into its views (0 allocations, no lock, nothing sent per call) and its exporter sends, once an interval, each series' change: a counter's increase, and for a histogram one value in each bucket that changed, weighed by the bucket's count through the sample rate (`|@1/n`), values of one rate sharing a multi-value line; so its bytes depend on the series and buckets that changed, not on the recordings. datadog-go formats each call's line into a worker's buffer under its lock (without aggregation, and its histograms under the default aggregation); aggregating, it builds the call's context key and updates its entry in a map under a lock, and sends the aggregates at each flush (every 2 s). The issue's targets are in [Targets and measurements](#targets-and-measurements); `TestStatsdBytes` (`make test`) holds the byte targets on a 1 s interval, `benchmarks/gate.rules` the record path's.\n\n")
}

// writeStatsdTargets writes issue 46's targets: zerostat's record cost
// (0 allocations, below datadog-go's in each mode) and bytes per interval
// (at least 10× fewer than datadog-go without aggregation, no more than
// with it).
func writeStatsdTargets(target func(string, float64, bool, string, float64, string), ratio func(a, b string) (float64, bool), r *results) {
	if !r.hasStatsd() {
		return
	}
	rec := func(im string) string { return "StatsdRecord/impl=" + im }
	iv := func(im string) string { return "StatsdInterval/impl=" + im }
	allocs := r.vals[rec("zerostat")]["allocs/op"]
	worst, ok := 0.0, len(allocs) > 0
	for _, v := range allocs {
		worst = math.Max(worst, v)
	}
	target("StatsD: zerostat's record path 0 allocations while the exporter runs (the most of any sample)", worst, ok, "<=", 0, "")
	for _, p := range []struct{ impl, what string }{
		{"datadog", "without client-side aggregation"},
		{"datadog_agg", "with client-side aggregation"},
		{"datadog_extagg", "with extended client-side aggregation"},
	} {
		v, ok := ratio(rec("zerostat"), rec(p.impl))
		target("StatsD: record cost below datadog-go's "+p.what+" (zerostat / datadog-go)", v, ok, "<=", 1, "×")
	}
	bytes := func(a, b string) (float64, bool) {
		sa, ok1 := r.summary(iv(a), "bytes/interval")
		sb, ok2 := r.summary(iv(b), "bytes/interval")
		if !ok1 || !ok2 || sb.Center == 0 {
			return 0, false
		}
		return sa.Center / sb.Center, true
	}
	v, ok := bytes("datadog", "zerostat")
	target(fmt.Sprintf("StatsD: bytes per %d s at least 10× fewer than datadog-go without client-side aggregation (datadog-go / zerostat)", statsdInterval), v, ok, ">=", 10, "×")
	v, ok = bytes("datadog_agg", "zerostat")
	target(fmt.Sprintf("StatsD: bytes per %d s no more than datadog-go with client-side aggregation (datadog-go / zerostat)", statsdInterval), v, ok, ">=", 1, "×")
	v, ok = bytes("datadog_extagg", "zerostat")
	target(fmt.Sprintf("StatsD: bytes per %d s no more than datadog-go with extended client-side aggregation (datadog-go / zerostat)", statsdInterval), v, ok, ">=", 1, "×")
}

// fmtCount writes a count with thousands separators.
func fmtCount(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	neg := ""
	if s[0] == '-' {
		neg, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return neg + s
}
