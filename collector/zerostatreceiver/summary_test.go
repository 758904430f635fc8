package zerostatreceiver

import (
	"math"
	"runtime"
	"testing"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/metric"
	"github.com/zerostat/zerostat/tag"
)

// TestSummarySameAsOTLP: a callback summary sent as msgpack (aggregation
// 8) converts to the pdata Summary the OTLP path gives (zerostat's OTLP
// encoder read by the Collector's pdata), in each wire version and
// temporality: count, sum, each quantile's value in order, attributes,
// and the view's start (a delta payload's summary is its current values
// too).
func TestSummarySameAsOTLP(t *testing.T) {
	k := tag.MustNewKey("route")
	s, err := metric.NewSummary("recvsum/pause", "Pauses", "s", []float64{0, 0.5, 0.99, 1}, []tag.Key{k}, func(o *metric.SummaryObserver) {
		o.Observe(12, 0.75, []float64{0.01, 0.05, 0.2, 0.25}, "/a")
		o.Observe(0, 0, []float64{0, 0, 0, 0}, "/b")
		o.Observe(1, -2, []float64{-2, -2, -2, math.Inf(1)})
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Unregister)
	for _, version := range wire.Versions {
		for _, temporality := range []wire.Temporality{wire.Cumulative, wire.Delta} {
			p, ours, theirs := bothPathsVersion(t, version, temporality)
			a, b := findMetric(t, ours, "recvsum/pause"), findMetric(t, theirs, "recvsum/pause")
			if a.Type() != pmetric.MetricTypeSummary || b.Type() != pmetric.MetricTypeSummary {
				t.Fatalf("version %d %v: types %v and %v; want Summary", version, temporality, a.Type(), b.Type())
			}
			if a.Description() != "Pauses" || a.Unit() != "s" || a.Description() != b.Description() || a.Unit() != b.Unit() {
				t.Errorf("version %d %v: description %q/%q, unit %q/%q", version, temporality, a.Description(), b.Description(), a.Unit(), b.Unit())
			}
			x, y := a.Summary().DataPoints(), b.Summary().DataPoints()
			if x.Len() != 3 || y.Len() != 3 {
				t.Fatalf("version %d %v: %d and %d points; want 3", version, temporality, x.Len(), y.Len())
			}
			x.Sort(func(a, b pmetric.SummaryDataPoint) bool { return attrKey(a.Attributes()) < attrKey(b.Attributes()) })
			y.Sort(func(a, b pmetric.SummaryDataPoint) bool { return attrKey(a.Attributes()) < attrKey(b.Attributes()) })
			var start int64
			for _, v := range p.Views {
				if v.Name == "recvsum/pause" {
					start = v.Start.UnixNano()
				}
			}
			for i := range 3 {
				xp, yp := x.At(i), y.At(i)
				if int64(xp.StartTimestamp()) != start || xp.StartTimestamp() != yp.StartTimestamp() {
					t.Errorf("version %d %v point %d: starts %v and %v; want the view's %d", version, temporality, i, xp.StartTimestamp(), yp.StartTimestamp(), start)
				}
				// The times are each path's own instants (bothPaths).
				xp.SetTimestamp(0)
				yp.SetTimestamp(0)
				xs, ys := summaryPointJSON(t, xp), summaryPointJSON(t, yp)
				if xs != ys {
					t.Errorf("version %d %v point %d:\nmsgpack %s\notlp    %s", version, temporality, i, xs, ys)
				}
			}
			// Sorted by attributes: the row without tags, /a, /b.
			if q := x.At(1).QuantileValues(); q.Len() != 4 || q.At(2).Quantile() != 0.99 || q.At(2).Value() != 0.2 || x.At(1).Count() != 12 {
				t.Errorf("version %d %v: point /a %s", version, temporality, summaryPointJSON(t, x.At(1)))
			}
		}
	}
}

// summaryPointJSON renders one Summary point as pdata's JSON.
func summaryPointJSON(t *testing.T, dp pmetric.SummaryDataPoint) string {
	md := pmetric.NewMetrics()
	dp.CopyTo(md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty().
		SetEmptySummary().DataPoints().AppendEmpty())
	return toJSON(t, md)
}

// TestConvertBytesBoundSummary is TestConvertBytesBound for summaries:
// what Convert allocates for 1 to 20,000 rows of 0 to 40 quantiles and 0
// to 5 tag values is within convertBytes, and not under half of it for
// large payloads.
func TestConvertBytesBoundSummary(t *testing.T) {
	for _, k := range []int{0, 1, 5} {
		for _, nq := range []int{0, 1, 5, 40} {
			for _, n := range []int{1, 100, 20000} {
				p := summaryShape(k, nq, n)
				Convert(summaryShape(k, nq, 1), pmetric.NewMetrics()) // warm pdata's lazily built state
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				Convert(p, pmetric.NewMetrics())
				runtime.ReadMemStats(&after)
				alloc, bound := int64(after.TotalAlloc-before.TotalAlloc), convertBytes(p)
				if alloc > bound {
					t.Errorf("%d tags, %d quantiles, %d rows: Convert allocated %d bytes; bound %d", k, nq, n, alloc, bound)
				}
				if n == 20000 && bound > 2*alloc {
					t.Errorf("%d tags, %d quantiles, %d rows: bound %d over twice the %d allocated", k, nq, n, bound, alloc)
				}
			}
		}
	}
}

// summaryShape is a payload of one summary view of k keys, nq quantiles
// and n rows, every tag value present.
func summaryShape(k, nq, n int) *wire.Payload {
	v := wire.View{Name: "s", Aggregation: wire.Summary}
	for i := range k {
		v.Keys = append(v.Keys, string(rune('a'+i)))
	}
	for j := range nq {
		v.Bounds = append(v.Bounds, float64(j+1)/float64(nq+1))
	}
	v.Rows = make([]wire.Row, n)
	v.QuantileValues = make([]float64, n*nq)
	for i := range v.Rows {
		v.Rows[i].Count, v.Rows[i].Sum = uint64(i), float64(i)
		v.Rows[i].Values = make([]string, k)
		for j := range v.Rows[i].Values {
			v.Rows[i].Values[j] = "value"
		}
	}
	return &wire.Payload{Views: []wire.View{v}}
}
