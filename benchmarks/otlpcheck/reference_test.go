package otlpcheck

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

// The reference conversion: the OTLP request for the same data, built with
// the official types from what the public API reports (view.RetrieveData
// rows), independently of exporter/otlp. It follows the mapping documented
// in exporter/otlp and docs/metric-mapping.md: Count → monotonic Sum of
// ints, unit "1"; Sum → Sum, monotonic unless a point is negative, of ints
// for an Int64 measure and doubles otherwise; LastValue → Gauge, ints for
// an Int64 measure; Distribution → Histogram with explicit bounds (sum
// only when no value is negative; with delta temporality, min and max only
// for a series' first interval). The overflow row of a view
// past its cardinality limit has the bool attribute otel.metric.overflow.

// snapshot is the rows of some views at one time, by view name.
type snapshot map[string][]*view.Row

// retrieve returns the rows of vs now.
func retrieve(vs []*view.View) (snapshot, error) {
	s := snapshot{}
	for _, v := range vs {
		rows, err := view.RetrieveData(v.Name)
		if err != nil {
			return nil, err
		}
		s[v.Name] = rows
	}
	return s, nil
}

// rowKey identifies a row within its view by its tags.
func rowKey(r *view.Row) string {
	var sb strings.Builder
	for _, t := range r.Tags {
		fmt.Fprintf(&sb, "%s=%s\x00", t.Key.Name(), t.Value)
	}
	return sb.String()
}

func strAttr(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

// times are a metric's timestamps, which the reference cannot know: the
// test checks them separately and hands them over. starts are each
// point's start, by attrsKey.
type times struct {
	start, end uint64
	starts     map[string]uint64
}

// number is a NumberDataPoint value: an int for an Int64 measure's
// integral values.
func number(dp *metricspb.NumberDataPoint, isInt bool, x float64) *metricspb.NumberDataPoint {
	if isInt && x == math.Trunc(x) && math.Abs(x) < 1<<62 {
		dp.Value = &metricspb.NumberDataPoint_AsInt{AsInt: int64(x)}
	} else {
		dp.Value = &metricspb.NumberDataPoint_AsDouble{AsDouble: x}
	}
	return dp
}

// referenceMetrics converts the rows of vs (sorted by name, as the
// exporter writes them) at cur; prev is the snapshot of the previous
// export for delta temporality, nil for cumulative. ts gives each view's
// timestamps.
func referenceMetrics(vs []*view.View, cur, prev snapshot, ts map[string]times) []*metricspb.Metric {
	vs = slices.SortedFunc(slices.Values(vs), func(a, b *view.View) int { return strings.Compare(a.Name, b.Name) })
	delta := prev != nil
	temporality := metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE
	if delta {
		temporality = metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA
	}
	var out []*metricspb.Metric
	for _, v := range vs {
		before := map[string]*view.Row{}
		for _, r := range prev[v.Name] {
			before[rowKey(r)] = r
		}
		t := ts[v.Name]
		m := &metricspb.Metric{Name: v.Name, Description: v.Description, Unit: v.Measure.Unit()}
		_, isInt := v.Measure.(*stats.Int64Measure)
		attrs := func(r *view.Row) []*commonpb.KeyValue {
			var kvs []*commonpb.KeyValue
			if r.IsOverflow() { // the overflow row: one bool attribute, as OTel SDKs write it
				return append(kvs, &commonpb.KeyValue{Key: view.OverflowKey.Name(),
					Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: true}}})
			}
			for _, tg := range r.Tags {
				kvs = append(kvs, strAttr(tg.Key.Name(), tg.Value))
			}
			return kvs
		}
		var n int
		switch v.Aggregation.Type {
		case view.AggTypeCount:
			m.Unit = "1" // it counts recordings
			if v.Description == v.Measure.Description() {
				m.Description = "Count of " + v.Measure.Name() + " recordings: " + v.Description
			}
			sum := &metricspb.Sum{AggregationTemporality: temporality, IsMonotonic: true}
			for _, r := range cur[v.Name] {
				c := r.Data.(*view.CountData).Value
				if b := before[rowKey(r)]; b != nil {
					c -= b.Data.(*view.CountData).Value
				}
				if delta && c == 0 {
					continue
				}
				a := attrs(r)
				sum.DataPoints = append(sum.DataPoints, &metricspb.NumberDataPoint{Attributes: a,
					StartTimeUnixNano: t.starts[attrsKey(a)], TimeUnixNano: t.end, Value: &metricspb.NumberDataPoint_AsInt{AsInt: c}})
			}
			m.Data, n = &metricspb.Metric_Sum{Sum: sum}, len(sum.DataPoints)
		case view.AggTypeSum:
			sum := &metricspb.Sum{AggregationTemporality: temporality, IsMonotonic: true}
			for _, r := range cur[v.Name] {
				x := r.Data.(*view.SumData).Value
				if b := before[rowKey(r)]; b != nil {
					x -= b.Data.(*view.SumData).Value
				}
				if delta && x == 0 {
					continue
				}
				if !(x >= 0) {
					sum.IsMonotonic = false
				}
				a := attrs(r)
				sum.DataPoints = append(sum.DataPoints, number(&metricspb.NumberDataPoint{Attributes: a,
					StartTimeUnixNano: t.starts[attrsKey(a)], TimeUnixNano: t.end}, isInt, x))
			}
			m.Data, n = &metricspb.Metric_Sum{Sum: sum}, len(sum.DataPoints)
		case view.AggTypeLastValue:
			g := &metricspb.Gauge{}
			for _, r := range cur[v.Name] {
				g.DataPoints = append(g.DataPoints, number(&metricspb.NumberDataPoint{Attributes: attrs(r),
					TimeUnixNano: t.end}, isInt, r.Data.(*view.LastValueData).Value))
			}
			m.Data, n = &metricspb.Metric_Gauge{Gauge: g}, len(g.DataPoints)
		default:
			h := &metricspb.Histogram{AggregationTemporality: temporality}
			for _, r := range cur[v.Name] {
				d := r.Data.(*view.DistributionData)
				count, sum := uint64(d.Count), d.Sum()
				buckets := make([]uint64, len(d.CountPerBucket))
				for i, c := range d.CountPerBucket {
					buckets[i] = uint64(c)
				}
				first := true
				if b := before[rowKey(r)]; b != nil {
					bd := b.Data.(*view.DistributionData)
					first = false
					count -= uint64(bd.Count)
					sum -= bd.Sum()
					for i, c := range bd.CountPerBucket {
						buckets[i] -= uint64(c)
					}
				}
				if count == 0 {
					continue
				}
				a := attrs(r)
				dp := &metricspb.HistogramDataPoint{Attributes: a, StartTimeUnixNano: t.starts[attrsKey(a)], TimeUnixNano: t.end,
					Count: count, BucketCounts: buckets}
				if len(d.Bounds()) > 0 {
					dp.ExplicitBounds = d.Bounds()
				}
				if d.Min >= 0 {
					dp.Sum = proto.Float64(sum)
				}
				if first {
					dp.Min, dp.Max = proto.Float64(d.Min), proto.Float64(d.Max)
				}
				h.DataPoints = append(h.DataPoints, dp)
			}
			m.Data, n = &metricspb.Metric_Histogram{Histogram: h}, len(h.DataPoints)
		}
		if n > 0 {
			out = append(out, m)
		}
	}
	return out
}

// referenceRequest wraps metrics in a request for resource r.
func referenceRequest(r exporter.Resource, metrics []*metricspb.Metric) *colmetricspb.ExportMetricsServiceRequest {
	host := r.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	res := &resourcepb.Resource{Attributes: []*commonpb.KeyValue{
		strAttr("service.name", cmp.Or(r.ServiceName, "unknown_service:"+filepath.Base(os.Args[0]))),
		strAttr("host.name", host),
		{Key: "process.pid", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: int64(cmp.Or(r.PID, os.Getpid()))}}},
	}}
	for _, a := range r.Attributes {
		res.Attributes = append(res.Attributes, strAttr(a.Key, a.Value))
	}
	// telemetry.sdk.*, as OpenTelemetry's SDKs send: zerostat, go, and the
	// version the build info gives (the exporter's own lookup).
	for _, a := range r.SDKAttributes() {
		res.Attributes = append(res.Attributes, strAttr(a.Key, a.Value))
	}
	return &colmetricspb.ExportMetricsServiceRequest{ResourceMetrics: []*metricspb.ResourceMetrics{{
		Resource: res,
		ScopeMetrics: []*metricspb.ScopeMetrics{{
			Scope:   &commonpb.InstrumentationScope{Name: "github.com/zerostat/zerostat"}, // no version (otlp.ScopeName)
			Metrics: metrics,
		}},
	}}}
}

// keepMetrics returns a copy of req keeping only the metrics whose name
// starts with prefix (other tests' views are registered in the same
// process), with each metric's data points sorted by attributes (their
// order has no meaning: the exporter writes them in hash-table order, the
// rows are sorted by tag values).
func keepMetrics(req *colmetricspb.ExportMetricsServiceRequest, prefix string) *colmetricspb.ExportMetricsServiceRequest {
	req = proto.Clone(req).(*colmetricspb.ExportMetricsServiceRequest)
	for _, rm := range req.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			sm.Metrics = slices.DeleteFunc(sm.Metrics, func(m *metricspb.Metric) bool { return !strings.HasPrefix(m.Name, prefix) })
			for _, m := range sm.Metrics {
				sortPoints(m)
			}
		}
	}
	return req
}

func attrsKey(kvs []*commonpb.KeyValue) string {
	var sb strings.Builder
	for _, kv := range kvs {
		sb.WriteString(prototext.Format(kv))
		sb.WriteByte(0)
	}
	return sb.String()
}

func sortPoints(m *metricspb.Metric) {
	switch d := m.Data.(type) {
	case *metricspb.Metric_Sum:
		slices.SortFunc(d.Sum.DataPoints, func(a, b *metricspb.NumberDataPoint) int {
			return strings.Compare(attrsKey(a.Attributes), attrsKey(b.Attributes))
		})
	case *metricspb.Metric_Gauge:
		slices.SortFunc(d.Gauge.DataPoints, func(a, b *metricspb.NumberDataPoint) int {
			return strings.Compare(attrsKey(a.Attributes), attrsKey(b.Attributes))
		})
	case *metricspb.Metric_Histogram:
		slices.SortFunc(d.Histogram.DataPoints, func(a, b *metricspb.HistogramDataPoint) int {
			return strings.Compare(attrsKey(a.Attributes), attrsKey(b.Attributes))
		})
	}
}

// diff describes how got and want differ, metric by metric ("" if they
// are equal).
func diff(got, want *colmetricspb.ExportMetricsServiceRequest) string {
	if proto.Equal(got, want) {
		return ""
	}
	if len(got.ResourceMetrics) != 1 || len(want.ResourceMetrics) != 1 ||
		len(got.ResourceMetrics[0].ScopeMetrics) != 1 || len(want.ResourceMetrics[0].ScopeMetrics) != 1 {
		return fmt.Sprintf("got:\n%s\nwant:\n%s", prototext.Format(got), prototext.Format(want))
	}
	var sb strings.Builder
	g, w := got.ResourceMetrics[0], want.ResourceMetrics[0]
	if !proto.Equal(g.Resource, w.Resource) {
		fmt.Fprintf(&sb, "resource: got %v; want %v\n", prototext.Format(g.Resource), prototext.Format(w.Resource))
	}
	gs, ws := g.ScopeMetrics[0], w.ScopeMetrics[0]
	if !proto.Equal(gs.Scope, ws.Scope) {
		fmt.Fprintf(&sb, "scope: got %v; want %v\n", prototext.Format(gs.Scope), prototext.Format(ws.Scope))
	}
	byName := func(ms []*metricspb.Metric) map[string]*metricspb.Metric {
		out := map[string]*metricspb.Metric{}
		for _, m := range ms {
			out[m.Name] = m
		}
		return out
	}
	gm, wm := byName(gs.Metrics), byName(ws.Metrics)
	for name, m := range wm {
		switch o := gm[name]; {
		case o == nil:
			fmt.Fprintf(&sb, "metric %q: missing; want:\n%s\n", name, prototext.Format(m))
		case !proto.Equal(o, m):
			fmt.Fprintf(&sb, "metric %q:\ngot:\n%s\nwant:\n%s\n", name, prototext.Format(o), prototext.Format(m))
		}
	}
	for name, m := range gm {
		if wm[name] == nil {
			fmt.Fprintf(&sb, "metric %q: unexpected:\n%s\n", name, prototext.Format(m))
		}
	}
	if sb.Len() == 0 {
		sb.WriteString("the requests differ in metric order or in fields outside the metrics\n")
	}
	return sb.String()
}

// pointTimes returns the times of m's data points: each one's start (a
// cumulative point starts when its view was registered, or its series
// was re-created after eviction), the first one's
// as start, and their end, and whether they all end at the same time.
func pointTimes(m *metricspb.Metric) (t times, ok bool) {
	var pts [][2]uint64
	t.starts = map[string]uint64{}
	add := func(a []*commonpb.KeyValue, start, end uint64) {
		pts = append(pts, [2]uint64{start, end})
		t.starts[attrsKey(a)] = start
	}
	switch d := m.Data.(type) {
	case *metricspb.Metric_Sum:
		for _, p := range d.Sum.DataPoints {
			add(p.Attributes, p.StartTimeUnixNano, p.TimeUnixNano)
		}
	case *metricspb.Metric_Gauge:
		for _, p := range d.Gauge.DataPoints {
			add(p.Attributes, p.StartTimeUnixNano, p.TimeUnixNano)
		}
	case *metricspb.Metric_Histogram:
		for _, p := range d.Histogram.DataPoints {
			add(p.Attributes, p.StartTimeUnixNano, p.TimeUnixNano)
		}
	}
	if len(pts) == 0 {
		return t, false
	}
	for _, p := range pts[1:] {
		if p[1] != pts[0][1] {
			return t, false
		}
	}
	t.start, t.end = pts[0][0], pts[0][1]
	return t, true
}

func ns(t time.Time) uint64 { return uint64(t.UnixNano()) }
