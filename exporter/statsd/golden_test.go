package statsd

import (
	"context"
	"fmt"
	"github.com/zerostat/zerostat/internal/statsdgolden"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// readGolden returns the lines of each export in
// testdata/opencensus-datadog.golden.
func readGolden(t testing.TB) [][]string {
	t.Helper()
	g, err := statsdgolden.Read("testdata/opencensus-datadog.golden")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestOpenCensusDatadogGolden checks OpenCensusDatadog mode line by line
// against what the OpenCensus Datadog exporter sends for the same views
// and recordings (testdata/opencensus-datadog.golden). That exporter
// (github.com/DataDog/opencensus-go-exporter-datadog, master 731d59e) is
// not installable here; the golden file is written from its code, whose
// rules are these (file: function):
//
//   - datadog.go sanitizeString: the regexp [^a-zA-Z0-9]+ replaced by "_"
//     ("http/requests" -> "http_requests");
//   - datadog.go sanitizeMetricName: the namespace with spaces removed,
//     sanitised, then "." and the view name ("opencensus.http_requests");
//   - datadog.go tagMetrics: Options.Tags first, then the row's tags as
//     key:value in the row's order (OpenCensus's: keys sorted by name),
//     then the extra tags (bucket_idx:<i>);
//   - stats.go submitMetric, *view.CountData: client.Count(name,
//     data.Value - countData[row], tags, 1): the change since the last
//     period, every period, 0 included;
//   - stats.go submitMetric, *view.SumData and *view.LastValueData:
//     client.Gauge(name, value, tags, 1): the cumulative value;
//   - stats.go submitMetric, *view.DistributionData: a gauge each for
//     name.min, .max, .count, .avg (Mean), .squared_dev_sum
//     (SumOfSquaredDev), cumulative, in map order; then name.count_per_bucket
//     per bucket, tagged bucket_idx:<index> (unless DisableCountPerBuckets);
//   - datadog-go's format.go: name:value|type, a gauge's float written with
//     strconv.AppendFloat(v, 'f', -1, 64), a count with AppendInt, no rate
//     at 1, tags after |#, comma-separated.
//
// The agenttest module (TestGoldenIsTheDatadogExporters) runs that code
// itself on OpenCensus with datadog-go's client and compares with the same
// file; a planted difference (TestGoldenCatchesADifference) fails.
func TestOpenCensusDatadogGolden(t *testing.T) {
	golden := readGolden(t)
	ag := newAgent(t, "udp", false, 0)
	e := newExporter(t, Options{Addr: ag.addr, OpenCensusDatadog: true, Namespace: "opencensus", Tags: []string{"team:core"}})
	got := goldenWorkload(t, func() []string {
		export(t, e)
		time.Sleep(50 * time.Millisecond)
		var out []string
		for _, l := range ag.take() {
			if strings.HasPrefix(l.name, "opencensus.") {
				out = append(out, l.raw)
			}
		}
		return out
	})
	compareGolden(t, got, golden)
}

func compareGolden(t testing.TB, got, golden [][]string) {
	t.Helper()
	for _, d := range diffGolden(got, golden) {
		t.Error(d)
	}
}

// diffGolden lists the differences between the exports got and the
// golden file's, the order of lines within an export aside.
func diffGolden(got, golden [][]string) []string {
	if len(got) != len(golden) {
		return []string{fmt.Sprintf("%d exports; golden has %d", len(got), len(golden))}
	}
	var diffs []string
	for i := range golden {
		g, w := slices.Clone(got[i]), slices.Clone(golden[i])
		slices.Sort(g)
		slices.Sort(w)
		for _, l := range g {
			if !slices.Contains(w, l) {
				diffs = append(diffs, fmt.Sprintf("export %d: extra line %q", i+1, l))
			}
		}
		for _, l := range w {
			if !slices.Contains(g, l) {
				diffs = append(diffs, fmt.Sprintf("export %d: missing line %q", i+1, l))
			}
		}
		if len(diffs) == 0 && !slices.Equal(g, w) {
			diffs = append(diffs, fmt.Sprintf("export %d: a line repeated: %q; want %q", i+1, g, w))
		}
	}
	return diffs
}

// goldenWorkload registers the golden file's views, records its two
// periods, calling export after each, and returns what each export
// returned. The same workload, recorded into OpenCensus, is the agenttest
// module's.
func goldenWorkload(t testing.TB, export func() []string) [][]string {
	lat := stats.Float64("golden/latency", "", stats.UnitMilliseconds)
	size := stats.Int64("golden/size", "", stats.UnitBytes)
	depth := stats.Int64("golden/depth", "", stats.UnitDimensionless)
	method, route, queue := tag.MustNewKey("method"), tag.MustNewKey("route"), tag.MustNewKey("queue")
	register(t,
		&view.View{Name: "http/requests", Measure: lat, Aggregation: view.Count(), TagKeys: []tag.Key{route, method}},
		&view.View{Name: "io/bytes", Measure: size, Aggregation: view.Sum(), TagKeys: []tag.Key{route}},
		&view.View{Name: "queue/depth", Measure: depth, Aggregation: view.LastValue(), TagKeys: []tag.Key{queue}},
		&view.View{Name: "http/latency", Measure: lat, Aggregation: view.Distribution(10, 100, 1000), TagKeys: []tag.Key{route}},
	)
	a := ctxWith(t, tag.Upsert(method, "GET"), tag.Upsert(route, "/a"))
	b := ctxWith(t, tag.Upsert(method, "POST"), tag.Upsert(route, "/b"))
	q := ctxWith(t, tag.Upsert(queue, "jobs"))
	var out [][]string
	for _, v := range []float64{5, 15, 40} {
		stats.Record(a, lat.M(v))
	}
	stats.Record(b, lat.M(500))
	stats.Record(a, size.M(100))
	stats.Record(b, size.M(7))
	stats.Record(q, depth.M(12))
	out = append(out, export())
	stats.Record(a, lat.M(60), size.M(50))
	stats.Record(q, depth.M(3))
	out = append(out, export())
	return out
}

// TestGoldenCatchesADifference: the comparison fails on a planted
// difference (a count one off).
func TestGoldenCatchesADifference(t *testing.T) {
	golden := readGolden(t)
	bad := [][]string{slices.Clone(golden[0]), golden[1]}
	bad[0][0] = strings.Replace(bad[0][0], ":3|c", ":4|c", 1)
	if len(diffGolden(bad, golden)) != 2 { // one extra, one missing
		t.Error("a planted difference passed the comparison")
	}
}

// TestPercentiles ports the client-percentiles branch's tests of
// calculatePercentile and percentileName (stats_test.go at bdf6c27).
func TestPercentiles(t *testing.T) {
	for p, want := range map[float64]string{0.5: "50percentile", 0.75: "75percentile", 0.92: "92percentile",
		0.95: "95percentile", 0.99: "99percentile", 0.995: "995percentile", 0.999: "999percentile"} {
		if got := percentileName(p); got != want {
			t.Errorf("percentileName(%v) = %q; want %q", p, got, want)
		}
	}
	bounds := []float64{1, 2, 4, 8, 16, 32, 64, 128, 256}
	counts := []int64{10, 30, 60, 100, 20, 50, 100, 20, 9, 1}
	for p, want := range map[float64]float64{0.5: 8, 0.6: 32, 0.9: 64, 0.95: 128, 1: 256} {
		if got := calculatePercentile(p, bounds, counts); got != want {
			t.Errorf("calculatePercentile(%v) = %v; want %v", p, got, want)
		}
	}
	// The lines: "<name>.<p>percentile:<bound>|g", with the other gauges.
	ag := newAgent(t, "udp", false, 0)
	e := newExporter(t, Options{Addr: ag.addr, OpenCensusDatadog: true, Percentiles: []float64{0.5, 0.99}, DisableCountPerBuckets: true})
	m := stats.Float64("pct/m", "", "")
	register(t, &view.View{Name: "pct/d", Measure: m, Aggregation: view.Distribution(1, 2, 4)})
	for _, v := range []float64{0.5, 1.5, 3, 3, 10} {
		stats.Record(context.Background(), m.M(v))
	}
	export(t, e)
	ls := ag.wait(7)
	var got []string
	for _, l := range ls {
		if strings.HasPrefix(l.name, "pct_d") {
			got = append(got, l.raw)
		}
	}
	slices.Sort(got)
	want := []string{"pct_d.50percentile:2|g", "pct_d.99percentile:4|g", "pct_d.avg:3.6|g", "pct_d.count:5|g",
		"pct_d.max:10|g", "pct_d.min:0.5|g", "pct_d.squared_dev_sum:55.7|g"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q; want %q", got, want)
	}
}
