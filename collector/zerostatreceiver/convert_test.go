package zerostatreceiver

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// startOTLP starts the Collector's otlp receiver (HTTP only) consuming
// into sink, and returns its /v1/metrics URL.
func startOTLP(t testing.TB, sink *consumertest.MetricsSink) string {
	t.Helper()
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	cfg.Protocols.GRPC = configoptional.None[configgrpc.ServerConfig]()
	addr := freeAddr(t)
	cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = addr
	r, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Shutdown(context.Background()) })
	return "http://" + addr + "/v1/metrics"
}

// workload registers one view of each aggregation, with tag keys, and
// returns a function recording a round of values into them.
func workload(t testing.TB, prefix string, rows int) func() {
	t.Helper()
	kRoute, kCode := tag.MustNewKey("route"), tag.MustNewKey("code")
	lat := stats.Float64(prefix+"latency", "Latency", stats.UnitMilliseconds)
	size := stats.Float64(prefix+"size", "Size", stats.UnitBytes)
	depth := stats.Float64(prefix+"depth", "Depth", stats.UnitDimensionless)
	views := []*view.View{
		{Name: prefix + "requests", Description: "Requests", Measure: lat, TagKeys: []tag.Key{kRoute, kCode}, Aggregation: view.Count()},
		{Name: prefix + "latency", Measure: lat, TagKeys: []tag.Key{kRoute}, Aggregation: view.Distribution(1, 5, 10, 50)},
		{Name: prefix + "bytes", Measure: size, TagKeys: []tag.Key{kRoute}, Aggregation: view.Sum()},
		{Name: prefix + "depth", Measure: depth, TagKeys: []tag.Key{kCode}, Aggregation: view.LastValue()},
	}
	if err := view.Register(views...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(views...) })
	ctxs := make([]context.Context, rows)
	for i := range ctxs {
		m := []tag.Mutator{tag.Upsert(kRoute, "/r"+string(rune('a'+i%26))+strings.Repeat("x", i/26))}
		if i%3 != 0 { // some rows without a code: an absent key
			m = append(m, tag.Upsert(kCode, []string{"200", "404", "500"}[i%3]))
		}
		ctx, err := tag.New(context.Background(), m...)
		if err != nil {
			t.Fatal(err)
		}
		ctxs[i] = ctx
	}
	round := 0
	return func() {
		round++
		for i, ctx := range ctxs {
			v := float64((i*7+round)%60) + 0.5
			stats.Record(ctx, lat.M(v), size.M(float64(100*i+round)), depth.M(float64(i-round)))
		}
	}
}

// normalize sorts md's metrics by name and their points by attributes,
// and zeroes the timestamps (compared apart), so two exports of the same
// data compare equal.
func normalize(md pmetric.Metrics) {
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		sms := rms.At(i).ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			ms.Sort(func(a, b pmetric.Metric) bool { return a.Name() < b.Name() })
			for k := range ms.Len() {
				m := ms.At(k)
				switch m.Type() {
				case pmetric.MetricTypeSum:
					sortNumbers(m.Sum().DataPoints())
				case pmetric.MetricTypeGauge:
					sortNumbers(m.Gauge().DataPoints())
				case pmetric.MetricTypeHistogram:
					dps := m.Histogram().DataPoints()
					dps.Sort(func(a, b pmetric.HistogramDataPoint) bool { return attrKey(a.Attributes()) < attrKey(b.Attributes()) })
					for l := range dps.Len() {
						dps.At(l).SetStartTimestamp(0)
						dps.At(l).SetTimestamp(0)
					}
				}
			}
		}
	}
}

func sortNumbers(dps pmetric.NumberDataPointSlice) {
	dps.Sort(func(a, b pmetric.NumberDataPoint) bool { return attrKey(a.Attributes()) < attrKey(b.Attributes()) })
	for l := range dps.Len() {
		dps.At(l).SetStartTimestamp(0)
		dps.At(l).SetTimestamp(0)
	}
}

func attrKey(m pcommon.Map) string {
	var keys []string
	for k, v := range m.All() {
		keys = append(keys, k+"="+v.AsString())
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}

func toJSON(t testing.TB, md pmetric.Metrics) string {
	t.Helper()
	b, err := (&pmetric.JSONMarshaler{}).MarshalMetrics(md)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSamePdataAsOTLP: the same views and recordings, sent as msgpack to
// this receiver and as OTLP (zerostat's encoder) to the Collector's otlp
// receiver, give identical pdata, cumulative and delta: names, types,
// monotonicity, units, descriptions, temporality, attributes, values,
// buckets, resource and scope. Timestamps are compared apart
// (TestTimestamps): the two snapshots are taken at different instants.
func TestSamePdataAsOTLP(t *testing.T) {
	for _, temporality := range []wire.Temporality{wire.Cumulative, wire.Delta} {
		t.Run(temporality.String(), func(t *testing.T) {
			record := workload(t, "same/"+temporality.String()+"/", 40)
			res := exporter.Resource{ServiceName: "svc", Host: "h", PID: 42, Attributes: []wire.Attribute{{Key: "deployment", Value: "test"}}}
			zsSink, otlpSink := new(consumertest.MetricsSink), new(consumertest.MetricsSink)
			zsURL, otlpURL := start(t, zsSink, nil), startOTLP(t, otlpSink)

			var payload []byte
			msgExp, err := exporter.New(exporter.FuncSink(func(_ context.Context, p exporter.Payload) error {
				payload = bytes.Clone(p.Data)
				return nil
			}), exporter.Options{Temporality: temporality, Resource: res})
			if err != nil {
				t.Fatal(err)
			}
			enc, err := otlp.NewEncoder(temporality, res)
			if err != nil {
				t.Fatal(err)
			}
			// Two rounds: the second delta export covers only round 2,
			// and a distribution's min and max then cover more than the
			// interval in both (OTLP leaves them out; see Convert).
			for round := 1; round <= 2; round++ {
				record()
				if err := msgExp.Export(context.Background()); err != nil {
					t.Fatal(err)
				}
				body := enc.Encode(time.Now())
				if s, _, msg := post(t, zsURL, wire.ContentType, "", bytes.NewReader(payload)); s != 204 {
					t.Fatalf("zerostat receiver: %d %s", s, msg)
				}
				if s, _, msg := post(t, otlpURL, "application/x-protobuf", "", bytes.NewReader(body)); s != http.StatusOK {
					t.Fatalf("otlp receiver: %d %s", s, msg)
				}
			}
			zs, ot := zsSink.AllMetrics(), otlpSink.AllMetrics()
			if len(zs) != 2 || len(ot) != 2 {
				t.Fatalf("batches: %d zerostat, %d otlp; want 2 each", len(zs), len(ot))
			}
			// 40 rows of each view by route; the gauge by code: 404, 500
			// and absent.
			if n := zs[1].DataPointCount(); n != 3*40+3 {
				t.Errorf("%d points; want %d", n, 3*40+3)
			}
			normalize(zs[1])
			normalize(ot[1])
			if a, b := toJSON(t, zs[1]), toJSON(t, ot[1]); a != b {
				t.Errorf("pdata differ:\nzerostat receiver: %s\notlp receiver:     %s", a, b)
			}
		})
	}
}

// TestTimestamps: a point's times come from the payload: its end; its
// start, the view's start (cumulative) or the interval's (delta); a gauge
// point has no start.
func TestTimestamps(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, temporality := range []wire.Temporality{wire.Cumulative, wire.Delta} {
		p := &wire.Payload{Start: t0.Add(time.Second), End: t0.Add(10 * time.Second), Temporality: temporality,
			Views: []wire.View{
				{Name: "c", Aggregation: wire.Count, Start: t0, Rows: []wire.Row{{Count: 1}}},
				{Name: "g", Aggregation: wire.LastValue, Start: t0, Rows: []wire.Row{{Value: 1}}},
				{Name: "empty", Aggregation: wire.Count, Start: t0},
			}}
		md := pmetric.NewMetrics()
		Convert(p, md)
		ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
		if ms.Len() != 2 {
			t.Fatalf("%v: %d metrics; want 2 (the empty view left out)", temporality, ms.Len())
		}
		c, g := ms.At(0).Sum().DataPoints().At(0), ms.At(1).Gauge().DataPoints().At(0)
		wantStart := t0
		if temporality == wire.Delta {
			wantStart = p.Start
		}
		if !c.StartTimestamp().AsTime().Equal(wantStart) || !c.Timestamp().AsTime().Equal(p.End) ||
			g.StartTimestamp() != 0 || !g.Timestamp().AsTime().Equal(p.End) {
			t.Errorf("%v: count %v..%v, gauge %v..%v; want %v..%v and none..%v", temporality,
				c.StartTimestamp(), c.Timestamp(), g.StartTimestamp(), g.Timestamp(), wantStart, p.End, p.End)
		}
	}
}

// TestRowStart: a cumulative row that carries its own start (re-created
// after eviction) gets it as its point's start; the other rows the view's.
func TestRowStart(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := &wire.Payload{Start: t0, End: t0.Add(10 * time.Second), Temporality: wire.Cumulative,
		Views: []wire.View{{Name: "c", Aggregation: wire.Count, Keys: []string{"k"}, Start: t0,
			Rows:      []wire.Row{{Values: []string{"a"}, Count: 5}, {Values: []string{"b"}, Count: 1}},
			RowStarts: []wire.RowStart{{Row: 1, Start: t0.Add(5 * time.Second)}}}}}
	md := pmetric.NewMetrics()
	Convert(p, md)
	dps := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0).Sum().DataPoints()
	if a, b := dps.At(0).StartTimestamp().AsTime(), dps.At(1).StartTimestamp().AsTime(); !a.Equal(t0) || !b.Equal(t0.Add(5*time.Second)) {
		t.Errorf("starts %v and %v; want the view's %v and the row's %v", a, b, t0, t0.Add(5*time.Second))
	}
}

// TestConvertEdges: a negative Sum is non-monotonic, a histogram with a
// negative value has no sum, the overflow row has otel.metric.overflow,
// process.pid is an integer.
func TestConvertEdges(t *testing.T) {
	p := &wire.Payload{End: time.Unix(10, 0),
		Resource: []wire.Attribute{{Key: "service.name", Value: "s"}, {Key: "process.pid", Value: "7"}},
		Views: []wire.View{
			{Name: "s", Aggregation: wire.Sum, Keys: []string{"k"}, Rows: []wire.Row{{Values: []string{"a"}, Sum: -1}},
				Overflow: &wire.Row{Sum: 2}},
			{Name: "d", Aggregation: wire.Distribution, Bounds: []float64{0}, Rows: []wire.Row{{Count: 1, Sum: -1, Min: -1, Max: -1,
				Buckets: []uint64{1, 0}}}},
			{Name: "nan", Aggregation: wire.Sum, Rows: []wire.Row{{Sum: math.NaN()}}},
		}}
	md := pmetric.NewMetrics()
	Convert(p, md)
	rm := md.ResourceMetrics().At(0)
	if v, ok := rm.Resource().Attributes().Get("process.pid"); !ok || v.Type() != pcommon.ValueTypeInt || v.Int() != 7 {
		t.Errorf("process.pid: %v; want the integer 7", v.AsRaw())
	}
	ms := rm.ScopeMetrics().At(0).Metrics()
	s := ms.At(0).Sum()
	if s.IsMonotonic() || s.DataPoints().Len() != 2 {
		t.Errorf("negative sum: monotonic %v, %d points; want false, 2", s.IsMonotonic(), s.DataPoints().Len())
	}
	if v, ok := s.DataPoints().At(1).Attributes().Get(otlp.OverflowAttribute); !ok || !v.Bool() || s.DataPoints().At(1).DoubleValue() != 2 {
		t.Errorf("overflow point: %v", s.DataPoints().At(1).Attributes().AsRaw())
	}
	if h := ms.At(1).Histogram().DataPoints().At(0); h.HasSum() || h.Min() != -1 {
		t.Errorf("histogram with a negative value: has sum %v, min %v; want no sum, min -1", h.HasSum(), h.Min())
	}
	if ms.At(2).Sum().IsMonotonic() {
		t.Error("a NaN sum is monotonic")
	}
}

// TestWhereThePayloadIsSilent pins the differences from the OTLP path
// that docs/collector.md lists: an Int64 measure's Sum has double points
// here (integers in OTLP), and a cumulative point starts at its view's
// registration (OTLP: at its series' creation, later).
func TestWhereThePayloadIsSilent(t *testing.T) {
	m := stats.Int64("silent/bytes", "Bytes", stats.UnitBytes)
	v := &view.View{Name: "silent/bytes", Measure: m, Aggregation: view.Sum()}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(v) })
	stats.Record(context.Background(), m.M(7))

	p, err := wire.Decode(export(t))
	if err != nil {
		t.Fatal(err)
	}
	ours := pmetric.NewMetrics()
	Convert(p, ours)
	enc, err := otlp.NewEncoder(otlp.Cumulative, exporter.Resource{})
	if err != nil {
		t.Fatal(err)
	}
	req := pmetricotlp.NewExportRequest()
	if err := req.UnmarshalProto(enc.Encode(time.Now())); err != nil {
		t.Fatal(err)
	}
	find := func(md pmetric.Metrics) pmetric.NumberDataPoint {
		ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
		for i := range ms.Len() {
			if ms.At(i).Name() == "silent/bytes" {
				return ms.At(i).Sum().DataPoints().At(0)
			}
		}
		t.Fatal("silent/bytes not found")
		return pmetric.NumberDataPoint{}
	}
	a, b := find(ours), find(req.Metrics())
	if a.ValueType() != pmetric.NumberDataPointValueTypeDouble || a.DoubleValue() != 7 ||
		b.ValueType() != pmetric.NumberDataPointValueTypeInt || b.IntValue() != 7 {
		t.Errorf("Int64 sum: ours %v %v, OTLP %v %v; want double 7 and int 7", a.ValueType(), a.DoubleValue(), b.ValueType(), b.IntValue())
	}
	var viewStart time.Time
	for _, pv := range p.Views {
		if pv.Name == "silent/bytes" {
			viewStart = pv.Start
		}
	}
	if !a.StartTimestamp().AsTime().Equal(viewStart) || b.StartTimestamp() < a.StartTimestamp() {
		t.Errorf("start: ours %v, OTLP %v; want ours the view's (%v), OTLP's the series' (not earlier)",
			a.StartTimestamp(), b.StartTimestamp(), viewStart)
	}
}
