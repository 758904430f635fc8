package opencensus_test

import (
	"context"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	ocprom "contrib.go.opencensus.io/exporter/prometheus"
	"go.opencensus.io/metric/metricdata"
	"go.opencensus.io/metric/metricproducer"

	"github.com/zerostat/zerostat/bridge/opencensus"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

var (
	keyRoute  = tag.MustNewKey("route")
	keyMethod = tag.MustNewKey("method")
)

func register(t *testing.T, vs ...*view.View) {
	t.Helper()
	if err := view.Register(vs...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(vs...) })
}

func ctxWith(t *testing.T, ms ...tag.Mutator) context.Context {
	t.Helper()
	ctx, err := tag.New(context.Background(), ms...)
	if err != nil {
		t.Fatal(err)
	}
	return ctx
}

// scrape serves the contrib exporter's handler once and returns the
// sample lines (comments dropped), sorted.
func scrape(t *testing.T, exp *ocprom.Exporter) []string {
	t.Helper()
	rec := httptest.NewRecorder()
	exp.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, err := io.ReadAll(rec.Result().Body)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for l := range strings.Lines(string(b)) {
		if l = strings.TrimSpace(l); l != "" && (!strings.HasPrefix(l, "#") || strings.HasPrefix(l, "# TYPE ")) {
			lines = append(lines, l)
		}
	}
	slices.Sort(lines)
	return lines
}

// OpenCensus's own Prometheus exporter, unchanged, exports zerostat's
// views through the bridge, with the exact values recorded.
func TestContribPrometheusExportsZerostatViews(t *testing.T) {
	lat := stats.Float64("bridge/latency", "request latency", stats.UnitMilliseconds)
	req := stats.Int64("bridge/requests", "requests", stats.UnitDimensionless)
	bytes := stats.Int64("bridge/bytes", "bytes sent", stats.UnitBytes)
	depth := stats.Float64("bridge/depth", "queue depth", stats.UnitDimensionless)
	inflight := stats.Int64("bridge/inflight", "requests in flight", stats.UnitDimensionless)
	register(t,
		&view.View{Name: "bridge_inflight", Measure: inflight, Aggregation: view.UpDownSum()},
		&view.View{Name: "bridge_latency", Measure: lat, Aggregation: view.Distribution(10, 100), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: "bridge_requests", Measure: req, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute, keyMethod}},
		&view.View{Name: "bridge_bytes", Measure: bytes, Aggregation: view.Sum()},
		&view.View{Name: "bridge_depth", Measure: depth, Aggregation: view.LastValue()},
	)
	a := ctxWith(t, tag.Insert(keyRoute, "/a"), tag.Insert(keyMethod, "GET"))
	b := ctxWith(t, tag.Insert(keyRoute, "/b"))
	stats.Record(a, lat.M(5), lat.M(50), req.M(1), req.M(1), bytes.M(300))
	stats.Record(b, lat.M(500), req.M(1), bytes.M(12), depth.M(2.5))
	stats.Record(a, lat.M(0.25), inflight.M(2), inflight.M(-3)) // an up-down sum below zero

	p := opencensus.Register(opencensus.Options{})
	defer p.Unregister()
	exp, err := ocprom.NewExporter(ocprom.Options{Namespace: "oc", OnError: func(err error) { t.Errorf("exporter: %v", err) }})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`# TYPE oc_bridge_bytes counter`,
		`# TYPE oc_bridge_depth gauge`,
		`# TYPE oc_bridge_inflight gauge`, // an up-down sum is never a counter
		`# TYPE oc_bridge_latency histogram`,
		`# TYPE oc_bridge_requests counter`,
		`oc_bridge_bytes 312`,
		`oc_bridge_depth 2.5`,
		`oc_bridge_inflight -1`,
		`oc_bridge_latency_bucket{route="/a",le="+Inf"} 3`,
		`oc_bridge_latency_bucket{route="/a",le="10"} 2`,
		`oc_bridge_latency_bucket{route="/a",le="100"} 3`,
		`oc_bridge_latency_bucket{route="/b",le="+Inf"} 1`,
		`oc_bridge_latency_bucket{route="/b",le="10"} 0`,
		`oc_bridge_latency_bucket{route="/b",le="100"} 0`,
		`oc_bridge_latency_count{route="/a"} 3`,
		`oc_bridge_latency_count{route="/b"} 1`,
		`oc_bridge_latency_sum{route="/a"} 55.25`,
		`oc_bridge_latency_sum{route="/b"} 500`,
		`oc_bridge_requests{method="",route="/b"} 1`,
		`oc_bridge_requests{method="GET",route="/a"} 2`,
	}
	got := scrape(t, exp)
	var mine []string
	for _, l := range got {
		if strings.HasPrefix(l, "oc_bridge_") || strings.HasPrefix(l, "# TYPE oc_bridge_") {
			mine = append(mine, l)
		}
	}
	if !slices.Equal(mine, want) {
		t.Errorf("scrape:\n%s\nwant:\n%s", strings.Join(mine, "\n"), strings.Join(want, "\n"))
	}
}

// The metrics carry OpenCensus's descriptor types and units, the read
// exemplars, and the overflow row under its own label.
func TestReadMapping(t *testing.T) {
	lat := stats.Float64("bridge/map_latency", "", stats.UnitMilliseconds)
	cnt := stats.Float64("bridge/map_count", "", "s")
	register(t,
		&view.View{Name: "map_latency", Measure: lat, Aggregation: view.Distribution(10)},
		&view.View{Name: "map_count", Measure: cnt, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}, CardinalityLimit: 1},
		&view.View{Name: "map_sum", Measure: cnt, Aggregation: view.Sum()},
		&view.View{Name: "map_empty", Measure: stats.Int64("bridge/never", "", "1"), Aggregation: view.Count()},
	)
	att := map[string]interface{}{"id": "x"}
	if err := stats.RecordWithOptions(context.Background(), stats.WithMeasurements(lat.M(3)), stats.WithAttachments(att)); err != nil {
		t.Fatal(err)
	}
	stats.Record(ctxWith(t, tag.Insert(keyRoute, "/a")), cnt.M(1))
	stats.Record(ctxWith(t, tag.Insert(keyRoute, "/b")), cnt.M(1)) // past the limit: overflow
	p := opencensus.NewProducer(opencensus.Options{})
	byName := map[string]*metricdata.Metric{}
	for _, m := range p.Read() {
		byName[m.Descriptor.Name] = m
	}
	if _, ok := byName["map_empty"]; ok {
		t.Error("a view without rows was read")
	}
	l := byName["map_latency"]
	if l == nil || l.Descriptor.Type != metricdata.TypeCumulativeDistribution || l.Descriptor.Unit != metricdata.UnitMilliseconds {
		t.Fatalf("map_latency: %+v", l)
	}
	dist := l.TimeSeries[0].Points[0].Value.(*metricdata.Distribution)
	if ex := dist.Buckets[0].Exemplar; ex == nil || ex.Value != 3 || ex.Attachments["id"] != "x" {
		t.Errorf("bucket 0 exemplar %+v; want 3 with id=x", ex)
	}
	if dist.Buckets[1].Exemplar != nil || dist.Count != 1 || dist.Sum != 3 || !slices.Equal(dist.BucketOptions.Bounds, []float64{10}) {
		t.Errorf("distribution %+v", dist)
	}
	c := byName["map_count"]
	if c == nil || c.Descriptor.Type != metricdata.TypeCumulativeInt64 || c.Descriptor.Unit != metricdata.UnitDimensionless {
		t.Fatalf("map_count: %+v", c)
	}
	if len(c.Descriptor.LabelKeys) != 2 || c.Descriptor.LabelKeys[1].Key != view.OverflowKey.Name() || len(c.TimeSeries) != 2 {
		t.Fatalf("map_count keys %v, %d series; want route and the overflow key, 2 series", c.Descriptor.LabelKeys, len(c.TimeSeries))
	}
	if lv := c.TimeSeries[1].LabelValues; lv[0].Present || !lv[1].Present || lv[1].Value != "true" {
		t.Errorf("overflow series labels %+v", lv)
	}
	if s := byName["map_sum"]; s == nil || s.Descriptor.Type != metricdata.TypeCumulativeFloat64 || s.Descriptor.Unit != metricdata.UnitDimensionless {
		t.Errorf("map_sum: %+v (an unknown unit reads as 1, as in OpenCensus)", s)
	}
	if slices.Contains(metricproducer.GlobalManager().GetAll(), metricproducer.Producer(p)) {
		t.Error("NewProducer registered itself")
	}
}
