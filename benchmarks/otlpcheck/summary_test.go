package otlpcheck

import (
	"bytes"
	"math"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/metric"
	"github.com/zerostat/zerostat/tag"
)

// TestSummaryMatchesOfficial: a callback summary's OTLP request, decoded
// with the official types, holds the Summary the reference builds from
// the same rows (a SummaryDataPoint per row: the view's start, the
// export's time, count, sum, each quantile's ValueAtQuantile in order,
// the attributes), with Cumulative and Delta temporality alike; and our
// bytes are protobuf-go's for that message (zero values left out: a row
// of count 0 and sum 0, the quantile 0, a value of 0).
func TestSummaryMatchesOfficial(t *testing.T) {
	s, err := metric.NewSummary("otlpcheck/summary", "GC pauses", "s", []float64{0, 0.5, 0.99}, nil, func(o *metric.SummaryObserver) {
		o.Observe(5, 0.0125, []float64{0.001, 0.0025, 0.004})
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Unregister)
	r, err := metric.NewSummary("otlpcheck/summary_route", "", "1", []float64{0, 1}, []tag.Key{kRoute}, func(o *metric.SummaryObserver) {
		o.Observe(0, 0, []float64{0, math.Inf(1)}, "/a")
		o.Observe(3, -1.5, []float64{-2, 0}, "/b")
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Unregister)
	metric.Collect()
	for _, temp := range []otlp.Temporality{otlp.Cumulative, otlp.Delta} {
		enc, err := otlp.NewEncoder(temp, exporter.Resource{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			end := time.Now()
			raw := bytes.Clone(enc.Encode(end))
			var req colmetricspb.ExportMetricsServiceRequest
			if err := proto.Unmarshal(raw, &req); err != nil {
				t.Fatal(err)
			}
			if canon, err := (proto.MarshalOptions{Deterministic: true}).Marshal(&req); err != nil {
				t.Fatal(err)
			} else if !bytes.Equal(canon, raw) {
				t.Errorf("%v, export %d: our %d bytes differ from protobuf-go's %d", temp, i, len(raw), len(canon))
			}
			got := map[string]*metricspb.Metric{}
			for _, m := range req.ResourceMetrics[0].ScopeMetrics[0].Metrics {
				got[m.Name] = m
			}
			start := func(name string) uint64 {
				if m := got[name]; m != nil && m.GetSummary() != nil && len(m.GetSummary().DataPoints) > 0 {
					return m.GetSummary().DataPoints[0].StartTimeUnixNano
				}
				return 0
			}
			at := uint64(end.UnixNano())
			q := func(q, v float64) *metricspb.SummaryDataPoint_ValueAtQuantile {
				return &metricspb.SummaryDataPoint_ValueAtQuantile{Quantile: q, Value: v}
			}
			attr := func(v string) []*commonpb.KeyValue { return []*commonpb.KeyValue{strAttr("route", v)} }
			want := map[string]*metricspb.Metric{
				"otlpcheck/summary": {Name: "otlpcheck/summary", Description: "GC pauses", Unit: "s",
					Data: &metricspb.Metric_Summary{Summary: &metricspb.Summary{DataPoints: []*metricspb.SummaryDataPoint{
						{StartTimeUnixNano: start("otlpcheck/summary"), TimeUnixNano: at, Count: 5, Sum: 0.0125,
							QuantileValues: []*metricspb.SummaryDataPoint_ValueAtQuantile{q(0, 0.001), q(0.5, 0.0025), q(0.99, 0.004)}},
					}}}},
				"otlpcheck/summary_route": {Name: "otlpcheck/summary_route", Unit: "1",
					Data: &metricspb.Metric_Summary{Summary: &metricspb.Summary{DataPoints: []*metricspb.SummaryDataPoint{
						{StartTimeUnixNano: start("otlpcheck/summary_route"), TimeUnixNano: at, Attributes: attr("/a"),
							QuantileValues: []*metricspb.SummaryDataPoint_ValueAtQuantile{q(0, 0), q(1, math.Inf(1))}},
						{StartTimeUnixNano: start("otlpcheck/summary_route"), TimeUnixNano: at, Count: 3, Sum: -1.5, Attributes: attr("/b"),
							QuantileValues: []*metricspb.SummaryDataPoint_ValueAtQuantile{q(0, -2), q(1, 0)}},
					}}}},
			}
			for name, w := range want {
				g := got[name]
				if g != nil {
					sortSummaryPoints(g)
				}
				if start(name) == 0 || start(name) > at || !proto.Equal(g, w) {
					t.Errorf("%v, export %d: %s:\n%v\nwant\n%v", temp, i, name, g, w)
				}
			}
		}
	}
}

// sortSummaryPoints orders a Summary's points by their attributes.
func sortSummaryPoints(m *metricspb.Metric) {
	dps := m.GetSummary().GetDataPoints()
	for i := 1; i < len(dps); i++ {
		for j := i; j > 0 && attrsKey(dps[j].Attributes) < attrsKey(dps[j-1].Attributes); j-- {
			dps[j], dps[j-1] = dps[j-1], dps[j]
		}
	}
}
