// Package otelexp checks zerostat's OTLP encoding of exponential views
// (exporter/otlp's ExponentialHistogram) against the official Go protobuf
// types of OTLP (go.opentelemetry.io/proto/otlp): the requests decode
// with proto.Unmarshal into the values the views hold (view.RetrieveData),
// and their bytes are exactly those protobuf-go writes for the message
// they decode to (field order, proto3 defaults left out, zigzag sint32,
// packed varint counts, minimal varints).
package otelexp

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	colpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	cpb "go.opentelemetry.io/proto/otlp/common/v1"
	mpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

var keyShape = tag.MustNewKey("shape")

// shapes are series each of which covers something of the encoding.
var shapes = map[string][]float64{
	"one":        {1.5},                                      // offset 0 at scale 0 (maxScale 0 view)
	"wide":       {1e-300, 1, 1e300, 5e-324},                 // a negative scale
	"zeros":      {0, math.Copysign(0, -1), 0},               // zero_count, no buckets
	"negatives":  {-1, -2, -1e10},                            // no positive buckets, no sum
	"mixed":      {-3, 0, 2, 1e-5, 7e8},                      // both signs
	"small":      {1e-5, 2e-5, 3e-5},                         // negative offsets
	"nan-only":   {math.NaN(), math.Inf(1)},                  // counted nothing: no min, max
	"big-counts": slices.Repeat([]float64{7, 9, 1e4}, 20000), // counts of 3-byte varints
}

// TestExpBytesMatchOfficial: cumulative and delta, two exports each.
func TestExpBytesMatchOfficial(t *testing.T) {
	for _, tm := range []otlp.Temporality{otlp.Cumulative, otlp.Delta} {
		t.Run(fmt.Sprint(tm), func(t *testing.T) {
			prefix := fmt.Sprintf("otelexp/%d/", tm)
			fm := stats.Float64(prefix+"f", "Latency", stats.UnitMilliseconds)
			im := stats.Int64(prefix+"i", "Size", stats.UnitBytes)
			views := []*view.View{
				{Name: prefix + "default", Measure: fm, Aggregation: view.ExponentialDistribution(0, 0), TagKeys: []tag.Key{keyShape}},
				{Name: prefix + "scale0", Measure: fm, Aggregation: view.ExponentialDistribution(160, 0), TagKeys: []tag.Key{keyShape}},
				{Name: prefix + "tiny", Measure: fm, Aggregation: view.ExponentialDistribution(2, 20), TagKeys: []tag.Key{keyShape}, CardinalityLimit: 4},
				{Name: prefix + "int", Measure: im, Aggregation: view.ExponentialDistribution(20, 10)},
			}
			if err := view.Register(views...); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { view.Unregister(views...) })
			enc, err := otlp.NewEncoder(tm, exporter.Resource{ServiceName: "otelexp"})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for phase := range 2 {
				for name, vs := range shapes {
					ctx, _ := tag.New(context.Background(), tag.Upsert(keyShape, name))
					for _, v := range vs {
						stats.Record(ctx, fm.M(v*float64(phase+1)))
						if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
							stats.Record(ctx, im.M(int64(v)))
						}
					}
				}
				raw := enc.Encode(time.Now())
				var req colpb.ExportMetricsServiceRequest
				if err := proto.Unmarshal(raw, &req); err != nil {
					t.Fatal(err)
				}
				if canon, err := (proto.MarshalOptions{Deterministic: true}).Marshal(&req); err != nil {
					t.Fatal(err)
				} else if !bytes.Equal(canon, raw) {
					t.Errorf("phase %d: our %d bytes differ from protobuf-go's %d for the same message", phase, len(raw), len(canon))
				}
				metrics := 0
				for _, m := range req.ResourceMetrics[0].ScopeMetrics[0].Metrics {
					if !strings.HasPrefix(m.Name, prefix) {
						continue
					}
					metrics++
					checkMetric(t, m, tm, phase, seen)
				}
				if metrics != len(views) {
					t.Errorf("phase %d: %d metrics; want %d", phase, metrics, len(views))
				}
			}
			want := []string{"scale 0", "negative scale", "positive scale", "offset 0", "negative offset", "positive offset",
				"no positive", "no negative", "zero count", "no sum", "sum", "min/max", "3-byte count", "overflow", "no attributes"}
			if tm == otlp.Cumulative {
				// A series of NaNs only: count 0 (left out), no min or
				// max. A delta interval that counts nothing has no point.
				want = append(want, "no min/max", "count 0")
			}
			for _, c := range want {
				if !seen[c] {
					t.Errorf("no data point with %s was compared", c)
				}
			}
		})
	}
}

// checkMetric compares each point of m with the row of its series
// (cumulative) or checks its shape (delta: the interval's values), and
// records what it covered in seen.
func checkMetric(t *testing.T, m *mpb.Metric, tm otlp.Temporality, phase int, seen map[string]bool) {
	t.Helper()
	eh := m.GetExponentialHistogram()
	wantTemp := mpb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE
	if tm == otlp.Delta {
		wantTemp = mpb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA
	}
	if eh == nil || eh.AggregationTemporality != wantTemp {
		t.Fatalf("%s: %v; want an ExponentialHistogram, %v", m.Name, m, wantTemp)
	}
	rows := map[string]*view.ExponentialDistributionData{}
	if tm == otlp.Cumulative {
		rs, err := view.RetrieveData(m.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.IsOverflow() {
				rows[view.OverflowKey.Name()+"=true"] = r.Data.(*view.ExponentialDistributionData)
				continue
			}
			var kvs []string
			for _, tg := range r.Tags {
				kvs = append(kvs, tg.Key.Name()+"="+tg.Value)
			}
			rows[strings.Join(kvs, ",")] = r.Data.(*view.ExponentialDistributionData)
		}
	}
	for _, dp := range eh.DataPoints {
		var kvs []string
		for _, kv := range dp.Attributes {
			kvs = append(kvs, kv.Key+"="+valueString(kv))
		}
		attrs := strings.Join(kvs, ",")
		cover(dp, attrs, seen)
		if dp.ZeroThreshold != 0 || dp.Flags != 0 || len(dp.Exemplars) != 0 {
			t.Errorf("%s %q: zero threshold %v, flags %d, %d exemplars; want none", m.Name, attrs, dp.ZeroThreshold, dp.Flags, len(dp.Exemplars))
		}
		var bucketed uint64
		for _, c := range slices.Concat(dp.GetPositive().GetBucketCounts(), dp.GetNegative().GetBucketCounts()) {
			bucketed += c
		}
		if dp.Count != dp.ZeroCount+bucketed {
			t.Errorf("%s %q: count %d; zero count and buckets %d", m.Name, attrs, dp.Count, dp.ZeroCount+bucketed)
		}
		if (dp.Min != nil) != (dp.Count > 0) || (dp.Max != nil) != (dp.Count > 0) {
			t.Errorf("%s %q: count %d, min %v, max %v; want min and max when it counts something", m.Name, attrs, dp.Count, dp.Min, dp.Max)
		}
		if dp.Sum != nil && dp.Min != nil && *dp.Min < 0 {
			t.Errorf("%s %q: a sum with a negative minimum", m.Name, attrs)
		}
		if tm == otlp.Delta {
			if dp.Count == 0 {
				t.Errorf("%s %q: a delta point that counts nothing", m.Name, attrs)
			}
			continue
		}
		r := rows[attrs]
		if r == nil {
			t.Errorf("%s: no row for point %q", m.Name, attrs)
			continue
		}
		if uint64(r.Count) != dp.Count || r.Scale != dp.Scale || uint64(r.ZeroCount) != dp.ZeroCount ||
			r.PositiveOffset != dp.GetPositive().GetOffset() && len(r.PositiveCounts) > 0 || !equalCounts(r.PositiveCounts, dp.GetPositive().GetBucketCounts()) ||
			r.NegativeOffset != dp.GetNegative().GetOffset() && len(r.NegativeCounts) > 0 || !equalCounts(r.NegativeCounts, dp.GetNegative().GetBucketCounts()) ||
			dp.Sum != nil && math.Float64bits(*dp.Sum) != math.Float64bits(r.Sum) ||
			dp.Min != nil && (*dp.Min != r.Min || *dp.Max != r.Max) {
			t.Errorf("%s %q, phase %d:\n OTLP %v\n row  %+v", m.Name, attrs, phase, dp, r)
		}
	}
}

// valueString is an attribute's value: a tag's string, or the overflow
// point's bool.
func valueString(kv *cpb.KeyValue) string {
	switch v := kv.Value.Value.(type) {
	case *cpb.AnyValue_StringValue:
		return v.StringValue
	case *cpb.AnyValue_BoolValue:
		return fmt.Sprint(v.BoolValue)
	}
	return fmt.Sprintf("%T", kv.Value.Value)
}

func equalCounts(row []int64, otlp []uint64) bool {
	if len(row) != len(otlp) {
		return false
	}
	for i := range row {
		if uint64(row[i]) != otlp[i] {
			return false
		}
	}
	return true
}

// cover records what encoding cases dp goes through.
func cover(dp *mpb.ExponentialHistogramDataPoint, attrs string, seen map[string]bool) {
	mark := func(c string, ok bool) {
		if ok {
			seen[c] = true
		}
	}
	pos, neg := dp.GetPositive(), dp.GetNegative()
	mark("scale 0", dp.Scale == 0 && dp.Count > dp.ZeroCount)
	mark("negative scale", dp.Scale < 0)
	mark("positive scale", dp.Scale > 0)
	mark("offset 0", pos != nil && pos.Offset == 0 || neg != nil && neg.Offset == 0)
	mark("negative offset", pos.GetOffset() < 0 || neg.GetOffset() < 0)
	mark("positive offset", pos.GetOffset() > 0 || neg.GetOffset() > 0)
	mark("no positive", pos == nil)
	mark("no negative", neg == nil)
	mark("zero count", dp.ZeroCount > 0)
	mark("no sum", dp.Sum == nil)
	mark("sum", dp.Sum != nil)
	mark("no min/max", dp.Min == nil)
	mark("count 0", dp.Count == 0)
	mark("min/max", dp.Min != nil)
	mark("3-byte count", slices.ContainsFunc(pos.GetBucketCounts(), func(c uint64) bool { return c >= 1<<14 }))
	mark("overflow", strings.Contains(attrs, "otel.metric.overflow=true"))
	mark("no attributes", attrs == "")
}
