package zerostatreceiver

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// TestConvertExponential: an aggregation-7 view becomes an
// ExponentialHistogram whose points carry the rows' scale, zero count
// (zero threshold 0), offsets and counts; no sum when a negative value was
// recorded (as OTLP's); min and max only when something was counted; a
// sign without buckets has offset 0 and no counts; the overflow row its
// own histogram and otel.metric.overflow.
func TestConvertExponential(t *testing.T) {
	inf := func(s float64) float64 { return s / 0 }
	p := &wire.Payload{End: time.Unix(10, 0), Temporality: wire.Delta, Start: time.Unix(5, 0),
		Views: []wire.View{{Name: "e", Aggregation: wire.ExponentialDistribution, Keys: []string{"k"}, Start: time.Unix(1, 0),
			Rows: []wire.Row{
				{Values: []string{"a"}, Count: 4, Sum: 3.5, Min: -1.5, Max: 5},
				{Values: []string{"b"}, Count: 0, Sum: 0, Min: inf(1), Max: inf(-1)}, // nothing counted
			},
			Exp: []wire.ExpHistogram{
				{Scale: 1, ZeroCount: 1, Positive: wire.ExpBuckets{Offset: 4, Counts: []uint64{2}}, Negative: wire.ExpBuckets{Offset: 1, Counts: []uint64{1}}},
				{Scale: 20},
			},
			Overflow:    &wire.Row{Count: 2, Sum: 6, Min: 2, Max: 4},
			OverflowExp: &wire.ExpHistogram{Scale: -1, Positive: wire.ExpBuckets{Offset: 0, Counts: []uint64{1, 1}}},
		}}}
	md := pmetric.NewMetrics()
	Convert(p, md)
	m := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0)
	if m.Type() != pmetric.MetricTypeExponentialHistogram || m.ExponentialHistogram().AggregationTemporality() != pmetric.AggregationTemporalityDelta {
		t.Fatalf("type %v, temporality %v", m.Type(), m.ExponentialHistogram().AggregationTemporality())
	}
	dps := m.ExponentialHistogram().DataPoints()
	if dps.Len() != 3 {
		t.Fatalf("%d points; want 3", dps.Len())
	}
	a, b, o := dps.At(0), dps.At(1), dps.At(2)
	if a.Count() != 4 || a.HasSum() || a.Scale() != 1 || a.ZeroCount() != 1 || a.ZeroThreshold() != 0 ||
		a.Positive().Offset() != 4 || !slices.Equal(a.Positive().BucketCounts().AsRaw(), []uint64{2}) ||
		a.Negative().Offset() != 1 || !slices.Equal(a.Negative().BucketCounts().AsRaw(), []uint64{1}) ||
		!a.HasMin() || a.Min() != -1.5 || !a.HasMax() || a.Max() != 5 {
		t.Errorf("row a: %v", toJSON(t, md))
	}
	if !a.StartTimestamp().AsTime().Equal(p.Start) || !a.Timestamp().AsTime().Equal(p.End) {
		t.Errorf("row a: %v..%v; want the interval %v..%v", a.StartTimestamp(), a.Timestamp(), p.Start, p.End)
	}
	if b.Count() != 0 || !b.HasSum() || b.HasMin() || b.HasMax() || b.Scale() != 20 ||
		b.Positive().BucketCounts().Len() != 0 || b.Negative().Offset() != 0 {
		t.Errorf("row b: count %d sum %v min %v max %v scale %d", b.Count(), b.HasSum(), b.HasMin(), b.HasMax(), b.Scale())
	}
	if v, ok := o.Attributes().Get(otlp.OverflowAttribute); !ok || !v.Bool() || o.Scale() != -1 || o.Sum() != 6 ||
		!slices.Equal(o.Positive().BucketCounts().AsRaw(), []uint64{1, 1}) || o.Min() != 2 || o.Max() != 4 {
		t.Errorf("overflow point: %v", toJSON(t, md))
	}
}

// TestExponentialOverflowSameAsOTLP: an exponential view past its
// cardinality limit gives the same points by both paths, in each wire
// version and temporality, the overflow point included.
func TestExponentialOverflowSameAsOTLP(t *testing.T) {
	k := tag.MustNewKey("k")
	m := stats.Float64("expoverflow/m", "", stats.UnitMilliseconds)
	v := &view.View{Name: "expoverflow/e", Measure: m, TagKeys: []tag.Key{k}, Aggregation: view.ExponentialDistribution(8, 20), CardinalityLimit: 1}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(v) })
	for i, val := range []string{"a", "b", "c"} { // b and c overflow
		ctx, err := tag.New(context.Background(), tag.Upsert(k, val))
		if err != nil {
			t.Fatal(err)
		}
		stats.Record(ctx, m.M(float64(5+10*i)), m.M(-0.5), m.M(0))
	}
	for _, version := range wire.Versions {
		for _, temporality := range []wire.Temporality{wire.Cumulative, wire.Delta} {
			_, ours, theirs := bothPathsVersion(t, version, temporality)
			a := findMetric(t, ours, v.Name).ExponentialHistogram().DataPoints()
			b := findMetric(t, theirs, v.Name).ExponentialHistogram().DataPoints()
			if a.Len() != 2 || b.Len() != 2 {
				t.Fatalf("version %d %v: %d and %d points; want 2 each", version, temporality, a.Len(), b.Len())
			}
			for i := range 2 {
				x, y := a.At(i), b.At(i)
				// The times are each path's own instants (bothPaths): compare the rest.
				x.SetTimestamp(0)
				y.SetTimestamp(0)
				if temporality == wire.Delta {
					x.SetStartTimestamp(0)
					y.SetStartTimestamp(0)
				}
				xs, ys := pointJSON(t, x), pointJSON(t, y)
				if xs != ys {
					t.Errorf("version %d %v point %d:\nmsgpack %s\notlp    %s", version, temporality, i, xs, ys)
				}
			}
		}
	}
}

// pointJSON renders one exponential point as pdata's JSON.
func pointJSON(t *testing.T, dp pmetric.ExponentialHistogramDataPoint) string {
	md := pmetric.NewMetrics()
	dp.CopyTo(md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty().
		SetEmptyExponentialHistogram().DataPoints().AppendEmpty())
	return toJSON(t, md)
}
