package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStatsdSection: the StatsD rows (issue 46) render from
// benchmarks/statsd's output: the section's table (record cost,
// allocations, bytes, datagrams and CPU per interval, less the pacing
// loop's) and the targets in the targets table, met and missed
// by the numbers given.
func TestStatsdSection(t *testing.T) {
	var out strings.Builder
	out.WriteString("goos: linux\ngoarch: amd64\ncpu: test\npkg: github.com/zerostat/zerostat/benchmarks/statsd\n")
	rec := func(im string, ns, b, allocs float64) {
		for range 6 {
			out.WriteString("BenchmarkStatsdRecord/impl=" + im + "-2 1000000 " + ftoa(ns) + " ns/op " + ftoa(b) + " B/op " + ftoa(allocs) + " allocs/op\n")
		}
	}
	iv := func(im string, bytes, dgrams, rx float64, cpus ...float64) {
		for i := range 6 {
			cpu := cpus[i%len(cpus)]
			out.WriteString("BenchmarkStatsdInterval/impl=" + im + "-2 1 " + ftoa(bytes) + " bytes/interval " + ftoa(cpu) + " cpu-ms/interval " +
				ftoa(dgrams) + " datagrams/interval " + ftoa(rx) + " rx-bytes/interval 20000 B/op 70 allocs/op\n")
		}
	}
	rec("zerostat", 25, 0, 0)
	rec("datadog", 350, 0, 0)
	rec("datadog_agg", 250, 0, 0)
	rec("datadog_extagg", 20, 9, 0)                       // faster than zerostat: missed
	iv("baseline", 0, 0, 0, 300, 340, 360, 380, 320, 350) // median 345
	iv("zerostat", 39000, 29, 39000, 360)                 // inside the baseline's noise: no difference claimed
	iv("datadog", 49470908, 35466, 49470908, 1790)
	iv("datadog_agg", 30000, 40, 30000, 900) // fewer bytes than zerostat: missed
	iv("datadog_extagg", 60000, 50, 60000, 700)
	path := filepath.Join(t.TempDir(), "statsd.txt")
	if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := read([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	doc := string(writeDoc(r, nil, "performance.svg", "performance-scale.svg"))
	for _, want := range []string{
		"## StatsD and DogStatsD: zerostat's exporter against datadog-go",
		"| baseline | the pacing loop alone (records nothing) | | | | 0 | 0 | 0 | 34.5 ±",
		"| zerostat | zerostat + `exporter/statsd` (DogStatsD, native distribution as `|h`, every 10 s) | 25 ns ±0% | 0 | 0 | 39,000 | 29 | 39,000 | 36.0 ±0% | within noise |",
		"| datadog | datadog-go `WithoutClientSideAggregation` (one line per call) | 350 ns ±0% | 0 | 0 | 49,470,908 | 35,466 | 49,470,908 | 179.0 ±0% | 144.5 |",
		"| datadog_extagg | datadog-go `WithExtendedClientSideAggregation` (histograms too, multi-value lines) | 20 ns ±0% | 0 | 9 | 60,000 | 50 | 60,000 | 70.0 ±0% | 35.5 |",
		"| StatsD: zerostat's record path 0 allocations while the exporter runs (the most of any sample) | 0.00 | yes |",
		"| StatsD: record cost below datadog-go's without client-side aggregation (zerostat / datadog-go) | 0.07× | yes |",
		"| StatsD: record cost below datadog-go's with client-side aggregation (zerostat / datadog-go) | 0.10× | yes |",
		"| StatsD: record cost below datadog-go's with extended client-side aggregation (zerostat / datadog-go) | 1.25× | **no** |",
		"| StatsD: bytes per 10 s at least 10× fewer than datadog-go without client-side aggregation (datadog-go / zerostat) | 1268.48× | yes |",
		"| StatsD: bytes per 10 s no more than datadog-go with client-side aggregation (datadog-go / zerostat) | 0.77× | **no** |",
		"| StatsD: bytes per 10 s no more than datadog-go with extended client-side aggregation (datadog-go / zerostat) | 1.54× | yes |",
		"the CPU the sending process spent per second of the interval (recording, aggregating, encoding, sending), with and without the pacing loop's own (`baseline`, which records nothing; *within noise* when the difference from it is inside the two 95% intervals).",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("document lacks %q", want)
		}
	}
	// Without the statsd results, neither the section nor its targets.
	if doc := string(writeDoc(&results{vals: map[string]map[string][]float64{}}, nil, "p.svg", "s.svg")); strings.Contains(doc, "StatsD") {
		t.Errorf("a run without the statsd benchmarks renders StatsD rows")
	}
	if t.Failed() {
		t.Logf("document:\n%s", doc)
	}
}

// TestStatsdAllocsMissed: one allocating sample of zerostat's record is
// a missed target, whatever the median.
func TestStatsdAllocsMissed(t *testing.T) {
	var out strings.Builder
	for i := range 6 {
		a := "0"
		if i == 3 {
			a = "1"
		}
		out.WriteString("BenchmarkStatsdRecord/impl=zerostat-2 1000000 25 ns/op 0 B/op " + a + " allocs/op\n")
	}
	path := filepath.Join(t.TempDir(), "statsd.txt")
	if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := read([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	doc := string(writeDoc(r, nil, "performance.svg", "performance-scale.svg"))
	for _, want := range []string{
		"| StatsD: zerostat's record path 0 allocations while the exporter runs (the most of any sample) | 1.00 | **no** |",
		"| StatsD: record cost below datadog-go's without client-side aggregation (zerostat / datadog-go) | not measured | |",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("document lacks %q", want)
		}
	}
}
