package zerostatreceiver

import (
	"bytes"
	"context"
	"fmt"
	"github.com/zerostat/zerostat/internal/attrval"
	"github.com/zerostat/zerostat/internal/core"
	"math"
	"net/http"
	"slices"
	"strconv"
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

// workload registers a view of each aggregation over an Int64 and a
// Float64 measure (Count views with their measure's description and with
// their own), with two tag keys, and returns a function recording a round
// of values: into every series (all true), or into all but the ephemeral
// ones (every fifth), which an evicting reader then frees. A third of the
// series have no code tag (an absent value). Int64 values are integers;
// Float64 values are integral in some rounds, fractional in others.
func workload(t testing.TB, prefix string, rows int) (record func(all bool)) {
	t.Helper()
	kRoute, kCode := tag.MustNewKey("route"), tag.MustNewKey("code")
	lat := stats.Float64(prefix+"latency", "Latency", stats.UnitMilliseconds)
	size := stats.Int64(prefix+"size", "Size", stats.UnitBytes)
	keys := []tag.Key{kRoute, kCode}
	views := []*view.View{
		{Name: prefix + "f/count", Measure: lat, TagKeys: keys, Aggregation: view.Count()}, // the measure's description
		{Name: prefix + "f/sum", Measure: lat, TagKeys: keys, Aggregation: view.Sum()},
		{Name: prefix + "f/last", Measure: lat, TagKeys: keys, Aggregation: view.LastValue()},
		{Name: prefix + "f/dist", Measure: lat, TagKeys: keys, Aggregation: view.Distribution(1, 5, 10, 50)},
		{Name: prefix + "f/dist_upper", Measure: lat, TagKeys: keys, Aggregation: view.DistributionUpperInclusive(0, 1, 5, 10, 50)}, // aggregation 6
		{Name: prefix + "i/count", Description: "Requests", Measure: size, TagKeys: keys, Aggregation: view.Count()},
		{Name: prefix + "i/count2", Measure: size, TagKeys: []tag.Key{kCode}, Aggregation: view.Count()},
		{Name: prefix + "i/sum", Measure: size, TagKeys: keys, Aggregation: view.Sum()},
		{Name: prefix + "i/last", Description: "Last size", Measure: size, TagKeys: keys, Aggregation: view.LastValue()},
		{Name: prefix + "i/dist", Measure: size, TagKeys: keys, Aggregation: view.Distribution(100, 1000)},
		{Name: prefix + "f/updown", Measure: lat, TagKeys: keys, Aggregation: view.UpDownSum()},
		{Name: prefix + "i/updown", Measure: size, TagKeys: keys, Aggregation: view.UpDownSum()}, // row 0 goes down
		// Exponential (aggregation 7): the defaults; and 4 buckets per sign
		// from scale 20, which every series' range lowers (a delta
		// interval's own values to a finer scale than the cumulative's),
		// negative sizes in their own range.
		{Name: prefix + "f/exp", Measure: lat, TagKeys: keys, Aggregation: view.ExponentialDistribution(0, 0)},
		{Name: prefix + "i/exp", Measure: size, TagKeys: keys, Aggregation: view.ExponentialDistribution(4, 20)},
	}
	if err := view.Register(views...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(views...) })
	// The code tag typed as an OpenTelemetry int attribute (as the otel
	// provider types a key by its first attribute) in half of the views:
	// both paths carry it as an int.
	for i, v := range views {
		if i%2 == 0 {
			core.FindView(v.Name).Agg.SetKeyType("code", attrval.Int64)
		}
	}
	ctxs := make([]context.Context, rows)
	for i := range ctxs {
		m := []tag.Mutator{tag.Upsert(kRoute, "/r"+strconv.Itoa(i))}
		if i%3 != 0 { // some rows without a code: an absent value
			m = append(m, tag.Upsert(kCode, []string{"200", "404", "500"}[i%3]))
		}
		ctx, err := tag.New(context.Background(), m...)
		if err != nil {
			t.Fatal(err)
		}
		ctxs[i] = ctx
	}
	round := 0
	return func(all bool) {
		round++
		for i, ctx := range ctxs {
			if i%5 == 4 && !all { // ephemeral
				continue
			}
			f := float64((i*7+round)%60) + 0.5*float64(round%2) // integral in even rounds
			stats.Record(ctx, lat.M(f), size.M(int64(100*i-round*round)))
		}
	}
}

// normalize sorts md's metrics by name and their points by attributes,
// and makes the times of one export comparable with another's of the
// same data: it checks that every point ends at end (then zeroed), and
// replaces a start at prevEnd (the previous export's end: a delta
// interval's start, which each exporter takes at its own instant) by 1.
// Every other start (a view's registration, a series' creation) is the
// same instant in any export of the same views and is kept.
func normalize(t testing.TB, md pmetric.Metrics, end, prevEnd pcommon.Timestamp) {
	t.Helper()
	fix := func(name string, start, ts pcommon.Timestamp, setStart, setTime func(pcommon.Timestamp)) {
		if ts != end {
			t.Errorf("%s: a point ends at %v; want the export's %v", name, ts, end)
		}
		setTime(0)
		if prevEnd != 0 && start == prevEnd {
			setStart(1)
		}
	}
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		sms := rms.At(i).ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			ms.Sort(func(a, b pmetric.Metric) bool { return a.Name() < b.Name() })
			for k := range ms.Len() {
				m := ms.At(k)
				var dps pmetric.NumberDataPointSlice
				switch m.Type() {
				case pmetric.MetricTypeSum:
					dps = m.Sum().DataPoints()
				case pmetric.MetricTypeGauge:
					dps = m.Gauge().DataPoints()
				case pmetric.MetricTypeHistogram:
					hs := m.Histogram().DataPoints()
					hs.Sort(func(a, b pmetric.HistogramDataPoint) bool { return attrKey(a.Attributes()) < attrKey(b.Attributes()) })
					for l := range hs.Len() {
						dp := hs.At(l)
						fix(m.Name(), dp.StartTimestamp(), dp.Timestamp(), dp.SetStartTimestamp, dp.SetTimestamp)
					}
					continue
				case pmetric.MetricTypeExponentialHistogram:
					hs := m.ExponentialHistogram().DataPoints()
					hs.Sort(func(a, b pmetric.ExponentialHistogramDataPoint) bool {
						return attrKey(a.Attributes()) < attrKey(b.Attributes())
					})
					for l := range hs.Len() {
						dp := hs.At(l)
						fix(m.Name(), dp.StartTimestamp(), dp.Timestamp(), dp.SetStartTimestamp, dp.SetTimestamp)
					}
					continue
				}
				dps.Sort(func(a, b pmetric.NumberDataPoint) bool { return attrKey(a.Attributes()) < attrKey(b.Attributes()) })
				for l := range dps.Len() {
					dp := dps.At(l)
					fix(m.Name(), dp.StartTimestamp(), dp.Timestamp(), dp.SetStartTimestamp, dp.SetTimestamp)
				}
			}
		}
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

// rowStarts counts the rows of p's views under prefix that carry a start.
func rowStarts(p *wire.Payload, prefix string) int {
	n := 0
	for _, v := range p.Views {
		if strings.HasPrefix(v.Name, prefix) {
			n += len(v.RowStarts)
		}
	}
	return n
}

// TestSamePdataAsOTLP (issue 17): the same views and recordings, sent as
// msgpack to this receiver and as OTLP (zerostat's encoder) to the
// Collector's otlp receiver, give identical pdata, cumulative and delta,
// in a first export and in later ones: names, types, monotonicity, units,
// descriptions (a Count view's from its measure's), temporality,
// attributes (absent values left out), integer and double values, counts,
// sums, buckets, min and max, resource, scope, and start times, those of
// views and those of series re-created after eviction (only a delta
// interval's start, each exporter's previous export instant, is mapped to
// one token; see normalize).
//
// Between the first and the last export an evicting delta exporter frees
// the ephemeral series (every fifth), which the last round re-creates: a
// cumulative point of such a series starts at its re-creation (a reset),
// a delta histogram point of it has min and max (its series' whole life).
func TestSamePdataAsOTLP(t *testing.T) {
	for _, version := range wire.Versions {
		for _, temporality := range []wire.Temporality{wire.Cumulative, wire.Delta} {
			testSamePdataAsOTLP(t, version, temporality)
		}
	}
}

func testSamePdataAsOTLP(t *testing.T, version int, temporality wire.Temporality) {
	{
		t.Run(fmt.Sprintf("version=%d/%v", version, temporality), func(t *testing.T) {
			prefix := fmt.Sprintf("same/v%d/%v/", version, temporality)
			const rows = 40
			record := workload(t, prefix, rows)
			res := exporter.Resource{ServiceName: "svc", Host: "h", PID: 42, Attributes: []wire.Attribute{{Key: "deployment", Value: "test"}}}
			zsSink, otlpSink := new(consumertest.MetricsSink), new(consumertest.MetricsSink)
			zsURL, otlpURL := start(t, zsSink, nil), startOTLP(t, otlpSink)

			var payload []byte
			msgExp, err := exporter.New(exporter.FuncSink(func(_ context.Context, p exporter.Payload) error {
				payload = bytes.Clone(p.Data)
				return nil
			}), exporter.Options{Temporality: temporality, Resource: res, WireVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			enc, err := otlp.NewEncoder(temporality, res)
			if err != nil {
				t.Fatal(err)
			}
			evictor, err := exporter.New(exporter.FuncSink(func(context.Context, exporter.Payload) error { return nil }),
				exporter.Options{Temporality: exporter.Delta, EvictIdleAfter: 1})
			if err != nil {
				t.Fatal(err)
			}
			evict := func() {
				if err := evictor.Export(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			var zsPrev, otPrev pcommon.Timestamp
			var payloads []*wire.Payload
			exportBoth := func() {
				t.Helper()
				if err := msgExp.Export(context.Background()); err != nil {
					t.Fatal(err)
				}
				end := time.Now()
				body := enc.Encode(end)
				if s, _, msg := post(t, zsURL, wire.ContentType, "", bytes.NewReader(payload)); s != 204 {
					t.Fatalf("zerostat receiver: %d %s", s, msg)
				}
				if s, _, msg := post(t, otlpURL, "application/x-protobuf", "", bytes.NewReader(body)); s != http.StatusOK {
					t.Fatalf("otlp receiver: %d %s", s, msg)
				}
				p, err := wire.Decode(payload)
				if err != nil {
					t.Fatal(err)
				}
				payloads = append(payloads, p)
				zs, ot := zsSink.AllMetrics(), otlpSink.AllMetrics()
				n := len(payloads)
				if len(zs) != n || len(ot) != n {
					t.Fatalf("batches: %d zerostat, %d otlp; want %d each", len(zs), len(ot), n)
				}
				zsEnd, otEnd := pcommon.NewTimestampFromTime(p.End), pcommon.NewTimestampFromTime(end)
				a, b := zs[n-1], ot[n-1]
				normalize(t, a, zsEnd, zsPrev)
				normalize(t, b, otEnd, otPrev)
				zsPrev, otPrev = zsEnd, otEnd
				if a, b := toJSON(t, a), toJSON(t, b); a != b {
					t.Errorf("export %d: pdata differ:\nzerostat receiver: %s\notlp receiver:     %s", n, a, b)
				}
			}

			record(true)
			exportBoth() // every series' first export
			evict()      // the evictor's first read
			record(false)
			evict() // the ephemeral series, unchanged, are sealed
			record(false)
			exportBoth() // reads them sealed (nothing new: no delta point)
			record(false)
			evict() // reads them sealed: freed
			record(true)
			exportBoth() // the ephemeral series re-created

			// The payloads said what makes the points identical.
			ephemeral := rows / 5
			var want [3]int
			switch temporality {
			case wire.Cumulative: // the re-created rows of the Count (over route), Sum, Distribution and exponential views
				want = [3]int{0, 0, ephemeral * 9}
			case wire.Delta: // first exports of the three distribution views' rows (an exponential row's delta min and max are always the interval's)
				want = [3]int{rows * 3, 0, ephemeral * 3}
			}
			for i, p := range payloads {
				if n := rowStarts(p, prefix); n != want[i] {
					t.Errorf("export %d: %d rows with a start; want %d", i+1, n, want[i])
				}
			}
			if d := payloads[2].Views; len(d) == 0 {
				t.Fatal("no views")
			}
			var sawInt, sawCountHelp bool
			for _, v := range payloads[0].Views {
				switch v.Name {
				case prefix + "i/sum", prefix + "i/last":
					sawInt = v.Int
				case prefix + "f/count":
					sawCountHelp = v.Description == "Count of "+prefix+"latency recordings: Latency"
				case prefix + "f/sum", prefix + "f/last":
					if v.Int {
						t.Errorf("%s: a Float64 measure's values in integer form", v.Name)
					}
				}
			}
			// The exponential views were compared: a point per row, both
			// signs, scales lowered from 20.
			md := zsSink.AllMetrics()[0]
			for _, name := range []string{prefix + "f/exp", prefix + "i/exp"} {
				m := findMetric(t, md, name)
				if m.Type() != pmetric.MetricTypeExponentialHistogram || m.ExponentialHistogram().DataPoints().Len() != rows {
					t.Fatalf("%s: %v of %d points; want an exponential histogram of %d", name, m.Type(), m.ExponentialHistogram().DataPoints().Len(), rows)
				}
			}
			var neg, lowered bool
			for _, md := range zsSink.AllMetrics() {
				dps := findMetric(t, md, prefix+"i/exp").ExponentialHistogram().DataPoints()
				for i := range dps.Len() {
					neg = neg || dps.At(i).Negative().BucketCounts().Len() > 0
					lowered = lowered || dps.At(i).Scale() < 20
				}
			}
			if !neg || !lowered {
				t.Errorf("i/exp: negative buckets %v, a scale below 20 %v; want both", neg, lowered)
			}
			if !sawInt || !sawCountHelp {
				t.Errorf("payload: Int64 values as integers %v, Count description from the mapping %v; want both", sawInt, sawCountHelp)
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

// bothPaths exports the registered views once each way, in process: as
// msgpack, decoded and converted (ours, and the payload p), and as
// zerostat's OTLP, unmarshalled as the otlp receiver does (theirs).
func bothPaths(t *testing.T, temporality wire.Temporality) (p *wire.Payload, ours, theirs pmetric.Metrics) {
	return bothPathsVersion(t, wire.Version, temporality)
}

// bothPathsVersion is bothPaths with the msgpack payload in the given
// wire format version.
func bothPathsVersion(t *testing.T, version int, temporality wire.Temporality) (p *wire.Payload, ours, theirs pmetric.Metrics) {
	t.Helper()
	var data []byte
	msgExp, err := exporter.New(exporter.FuncSink(func(_ context.Context, pl exporter.Payload) error {
		data = bytes.Clone(pl.Data)
		return nil
	}), exporter.Options{Temporality: temporality, WireVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	if err := msgExp.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p, err = wire.Decode(data); err != nil {
		t.Fatal(err)
	}
	ours = pmetric.NewMetrics()
	Convert(p, ours)
	enc, err := otlp.NewEncoder(temporality, exporter.Resource{})
	if err != nil {
		t.Fatal(err)
	}
	req := pmetricotlp.NewExportRequest()
	if err := req.UnmarshalProto(enc.Encode(time.Now())); err != nil {
		t.Fatal(err)
	}
	return p, ours, req.Metrics()
}

// findMetric returns md's metric name.
func findMetric(t *testing.T, md pmetric.Metrics, name string) pmetric.Metric {
	t.Helper()
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := range ms.Len() {
		if ms.At(i).Name() == name {
			return ms.At(i)
		}
	}
	t.Fatalf("%s not found", name)
	return pmetric.Metric{}
}

// TestFormerDifferences (issue 17): what the msgpack path once left out or
// said otherwise is now what the OTLP path says, checked on pdata made in
// process from one set of views: an Int64 measure's Sum and LastValue are
// integers, a Float64 measure's doubles even when integral; a cumulative
// point starts at its view's registration on both; a Count view's
// description is its measure's mapped one; a delta histogram's first
// export has min and max; the scope has a name and no version.
func TestFormerDifferences(t *testing.T) {
	im := stats.Int64("former/bytes", "Bytes", stats.UnitBytes)
	fm := stats.Float64("former/ms", "Latency", stats.UnitMilliseconds)
	views := []*view.View{
		{Name: "former/isum", Measure: im, Aggregation: view.Sum()},
		{Name: "former/ilast", Measure: im, Aggregation: view.LastValue()},
		{Name: "former/fsum", Measure: fm, Aggregation: view.Sum()},
		{Name: "former/count", Measure: fm, Aggregation: view.Count()},
		{Name: "former/dist", Measure: fm, Aggregation: view.Distribution(10)},
	}
	if err := view.Register(views...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(views...) })
	stats.Record(context.Background(), im.M(7), fm.M(3), fm.M(4))

	for _, temporality := range []wire.Temporality{wire.Cumulative, wire.Delta} {
		p, ours, theirs := bothPaths(t, temporality)
		find := func(md pmetric.Metrics, name string) pmetric.Metric { return findMetric(t, md, name) }
		viewStart := map[string]pcommon.Timestamp{}
		for _, v := range p.Views {
			viewStart[v.Name] = pcommon.NewTimestampFromTime(v.Start)
		}
		for _, c := range []struct {
			name  string
			typ   pmetric.NumberDataPointValueType
			value string
		}{
			{"former/isum", pmetric.NumberDataPointValueTypeInt, "7"},
			{"former/ilast", pmetric.NumberDataPointValueTypeInt, "7"},
			{"former/fsum", pmetric.NumberDataPointValueTypeDouble, "7"},
		} {
			for side, md := range map[string]pmetric.Metrics{"msgpack": ours, "otlp": theirs} {
				m := find(md, c.name)
				var dp pmetric.NumberDataPoint
				if m.Type() == pmetric.MetricTypeSum {
					dp = m.Sum().DataPoints().At(0)
					if want := viewStart[c.name]; want == 0 || dp.StartTimestamp() != want {
						t.Errorf("%v %s %s: start %v; want the view's %v", temporality, side, c.name, dp.StartTimestamp(), want)
					}
				} else {
					dp = m.Gauge().DataPoints().At(0)
				}
				if dp.ValueType() != c.typ || fmt.Sprint(dp.IntValue()+int64(dp.DoubleValue())) != c.value {
					t.Errorf("%v %s %s: %v %v %v; want %v %s", temporality, side, c.name, dp.ValueType(), dp.IntValue(), dp.DoubleValue(), c.typ, c.value)
				}
			}
		}
		for side, md := range map[string]pmetric.Metrics{"msgpack": ours, "otlp": theirs} {
			if d := find(md, "former/count").Description(); d != "Count of former/ms recordings: Latency" {
				t.Errorf("%v %s: count description %q", temporality, side, d)
			}
			if h := find(md, "former/dist").Histogram().DataPoints().At(0); !h.HasMin() || !h.HasMax() || h.Min() != 3 || h.Max() != 4 {
				t.Errorf("%v %s: histogram min %v (%v), max %v (%v); want 3 and 4", temporality, side, h.Min(), h.HasMin(), h.Max(), h.HasMax())
			}
			if sc := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Scope(); sc.Name() != otlp.ScopeName || sc.Version() != "" {
				t.Errorf("%v %s: scope %q %q; want %q, no version", temporality, side, sc.Name(), sc.Version(), otlp.ScopeName)
			}
		}
	}
}

// TestOverflowFirstExportSameAsOTLP: a delta histogram's overflow point
// has min and max on its first export by both paths, as other points do
// (docs/collector.md, "Same pdata"), in wire format version 2: the
// overflow row carries its start then. Version 1's overflow row cannot
// (its readers refuse one), so that path leaves them out, as the msgpack
// path did before version 2. A cumulative payload's overflow row carries
// none (the overflow series starts with nothing to reset).
func TestOverflowFirstExportSameAsOTLP(t *testing.T) {
	k := tag.MustNewKey("k")
	m := stats.Int64("overflowfirst/m", "", stats.UnitBytes)
	views := []*view.View{
		{Name: "overflowfirst/dist", Measure: m, TagKeys: []tag.Key{k}, Aggregation: view.Distribution(10), CardinalityLimit: 1},
	}
	if err := view.Register(views...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(views...) })
	for i, v := range []string{"a", "b", "c"} { // b and c overflow
		ctx, err := tag.New(context.Background(), tag.Upsert(k, v))
		if err != nil {
			t.Fatal(err)
		}
		stats.Record(ctx, m.M(int64(5+10*i)))
	}
	for _, c := range []struct {
		version     int
		temporality wire.Temporality
	}{{wire.Version, wire.Cumulative}, {wire.Version, wire.Delta}, {wire.Version2, wire.Cumulative}, {wire.Version2, wire.Delta}} {
		temporality := c.temporality
		p, ours, theirs := bothPathsVersion(t, c.version, temporality)
		overflow := func(md pmetric.Metrics) (pmetric.HistogramDataPoint, int) {
			dps := findMetric(t, md, "overflowfirst/dist").Histogram().DataPoints()
			for i := range dps.Len() {
				if _, ok := dps.At(i).Attributes().Get(otlp.OverflowAttribute); ok {
					return dps.At(i), dps.Len()
				}
			}
			t.Fatalf("%v: no overflow point", temporality)
			return pmetric.HistogramDataPoint{}, 0
		}
		a, na := overflow(ours)
		b, nb := overflow(theirs)
		if c.version == wire.Version && temporality == wire.Delta {
			if a.HasMin() || a.HasMax() || !b.HasMin() || !b.HasMax() || a.Count() != 2 || na != 2 {
				t.Errorf("version 1, delta: overflow point: msgpack min and max %v %v, OTLP %v %v, count %d (%d points); want none by msgpack, both by OTLP, count 2 (2 points)",
					a.HasMin(), a.HasMax(), b.HasMin(), b.HasMax(), a.Count(), na)
			}
		} else if !a.HasMin() || !a.HasMax() || !b.HasMin() || !b.HasMax() || a.Min() != b.Min() || a.Max() != b.Max() ||
			a.Min() != 15 || a.Max() != 25 || a.Count() != 2 || b.Count() != 2 || na != 2 || nb != 2 {
			t.Errorf("%v: overflow point: msgpack min %v (%v) max %v (%v) count %d, OTLP min %v (%v) max %v (%v) count %d (%d, %d points); want min 15, max 25, count 2 on both (2 points each)",
				temporality, a.Min(), a.HasMin(), a.Max(), a.HasMax(), a.Count(), b.Min(), b.HasMin(), b.Max(), b.HasMax(), b.Count(), na, nb)
		}
		for _, v := range p.Views {
			if v.Name != "overflowfirst/dist" {
				continue
			}
			want := temporality == wire.Delta && c.version == wire.Version2
			if got := !v.OverflowStart.IsZero(); got != want {
				t.Errorf("version %d, %v: the payload's overflow row has a start: %v; want %v", c.version, temporality, got, want)
			}
		}
	}
}
