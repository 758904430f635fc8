package benchmarks

// BenchmarkCollect10kHistograms: the snapshot and encoding of 10,000 live
// histogram series, classic (16 bounds) beside exponential (issue 45), on
// each of zerostat's outputs and beside the peers' collect. See README.md
// ("Collecting 10,000 live series").

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/proto"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	zprom "github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// collectHistSeries live series of one histogram with 2 tags (series i
// has the tag values heapVals(i)), each holding the 16 values of
// heapExphistSpread (log-spread over 1 to 30,000: an exponential
// histogram of them is at scale 3 with about 100 buckets between its
// first and last non-empty one; the classic one fills its 17).
const collectHistSeries = 10_000

// BenchmarkCollect10kHistograms reports, besides ns/op (one collect of
// the 10,000 series), ns/series and, for the encoders, payload-bytes.
//
//	kind=histogram16: zerostat view.Distribution(bounds16...), the SDK's
//	  explicit bounds, client_golang's classic buckets;
//	kind=exphist: zerostat view.ExponentialDistribution(0, 0), the SDK's
//	  AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20},
//	  client_golang's native histogram (factor 1.1, no classic buckets).
//
// impl=zerostat_export is the msgpack exporter's Export (snapshot +
// encode, wire version 1, the path of Collect10k's zerostat_export);
// zerostat_otlp the OTLP exporter's Export (snapshot + protobuf; the
// request handed to a Sender that keeps it); zerostat_prometheus the
// Prometheus handler's protobuf exposition (the only format with native
// histograms); otel the SDK's ManualReader.Collect; prometheus_gather
// client_golang's Registry.Gather, prometheus_proto Gather and the
// delimited protobuf encoding a scrape negotiating it gets.
func BenchmarkCollect10kHistograms(b *testing.B) {
	for _, kind := range []heapKind{heapHistogram16, heapExphist} {
		b.Run("kind="+string(kind), func(b *testing.B) {
			for _, im := range []struct {
				name string
				fn   func(*testing.B, heapKind)
			}{
				{"zerostat_export", collectHistZerostat("msgpack")},
				{"zerostat_otlp", collectHistZerostat("otlp")},
				{"zerostat_prometheus", collectHistZerostat("prometheus")},
				{"otel", collectHistOtel},
				{"prometheus_gather", collectHistPrometheus(false)},
				{"prometheus_proto", collectHistPrometheus(true)},
			} {
				b.Run("impl="+im.name, func(b *testing.B) { im.fn(b, kind) })
			}
		})
	}
}

// reportPerSeries reports ns/series (after the loop) and, if size > 0,
// payload-bytes.
func reportPerSeries(b *testing.B, size int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/collectHistSeries, "ns/series")
	if size > 0 {
		b.ReportMetric(float64(size), "payload-bytes")
	}
}

// collectHistZerostat registers a fresh view of the kind, records the
// series with contexts built by tag.New, and measures one output.
//
//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func collectHistZerostat(output string) func(*testing.B, heapKind) {
	return func(b *testing.B, kind heapKind) {
		name := uniq("collect_hist")
		m := stats.Float64(name, "", stats.UnitMilliseconds)
		agg := view.Distribution(bounds16...)
		if kind.exp() {
			agg = view.ExponentialDistribution(0, 0)
		}
		keys := zsKeys(keys2...)
		defer zsRegister(b, &view.View{Name: name, Measure: m, Aggregation: agg, TagKeys: append([]tag.Key(nil), keys...)})()
		for i := range collectHistSeries {
			va, vb := heapVals(i)
			ctx, err := tag.New(context.Background(), tag.Upsert(keys[0], va), tag.Upsert(keys[1], vb))
			if err != nil {
				b.Fatal(err)
			}
			heapExphistSpread.records(i, func(v float64) { stats.Record(ctx, m.M(v)) })
		}
		// A ctx with a deadline earlier than the exporters' Timeout: Export
		// sends with it and makes no context per send.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		var check func(p []byte) error // set for the first run only
		var size int
		var run func()
		switch output {
		case "msgpack":
			ex, err := exporter.New(exporter.FuncSink(func(_ context.Context, p exporter.Payload) error {
				size += len(p.Data)
				if check != nil {
					return check(p.Data)
				}
				return nil
			}), exporter.Options{Timeout: time.Hour})
			if err != nil {
				b.Fatal(err)
			}
			// A snapshot above the default MaxPayloadBytes (1 MiB; the
			// exponential one is) goes in several payloads: count the rows
			// of all.
			rows := 0
			check = func(p []byte) error {
				n, err := checkHistWire(p, kind)
				rows += n
				return err
			}
			run = func() {
				if err := ex.Export(ctx); err != nil {
					b.Fatalf("zerostat Export: got error %v; want nil", err)
				}
				if check != nil && rows != collectHistSeries {
					b.Fatalf("zerostat Export: got %d rows; want %d", rows, collectHistSeries)
				}
			}
		case "otlp":
			ex, err := otlp.NewWithSender(otlp.Options{Timeout: time.Hour, ExportTimeout: time.Hour}, "bench", func(_ context.Context, body []byte) ([]byte, error) {
				size += len(body)
				if check != nil {
					return nil, check(body)
				}
				return nil, nil
			})
			if err != nil {
				b.Fatal(err)
			}
			check = func(p []byte) error { return checkHistOTLP(p, kind) }
			run = func() {
				if err := ex.Export(ctx); err != nil {
					b.Fatalf("zerostat OTLP Export: got error %v; want nil", err)
				}
			}
		case "prometheus":
			h := zprom.NewHandler(zprom.Options{})
			var buf []byte
			run = func() {
				buf = h.AppendFormat(buf[:0], zprom.FormatProtobuf)
				if check != nil {
					size = len(buf)
					if err := check(buf); err != nil {
						b.Fatalf("zerostat Prometheus protobuf: %v", err)
					}
				}
			}
			check = func(p []byte) error { return checkHistProto(bytes.NewReader(p), kind) }
		}
		run()
		check = nil
		first := size
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			run()
		}
		b.StopTimer()
		reportPerSeries(b, first)
	}
}

// checkHistWire checks a msgpack payload holds rows of the one view,
// each of 16 values, as the kind's aggregation, and returns how many.
func checkHistWire(p []byte, kind heapKind) (int, error) {
	w, err := wire.Decode(p)
	if err != nil {
		return 0, err
	}
	if len(w.Views) != 1 {
		return 0, fmt.Errorf("got %d views; want 1 (views registered by others?)", len(w.Views))
	}
	v := w.Views[0]
	want := wire.Distribution
	if kind.exp() {
		want = wire.ExponentialDistribution
	}
	if v.Aggregation != want {
		return 0, fmt.Errorf("got a %v view; want %v", v.Aggregation, want)
	}
	for i, r := range v.Rows {
		var n uint64
		if kind.exp() {
			n = v.Exp[i].ZeroCount
			for _, c := range v.Exp[i].Positive.Counts {
				n += c
			}
		} else {
			for _, c := range r.Buckets {
				n += c
			}
		}
		if r.Count != 16 || n != 16 {
			return 0, fmt.Errorf("row %v: got count %d, %d in its buckets; want 16", r.Values, r.Count, n)
		}
	}
	return len(v.Rows), nil
}

// checkHistOTLP checks an OTLP request holds 10,000 data points of 16
// values each, of the kind's type.
func checkHistOTLP(p []byte, kind heapKind) error {
	var req metricspb.MetricsData // ExportMetricsServiceRequest's one field is the same
	if err := proto.Unmarshal(p, &req); err != nil {
		return err
	}
	n := 0
	for _, rm := range req.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				switch d := m.Data.(type) {
				case *metricspb.Metric_Histogram:
					if kind.exp() {
						return fmt.Errorf("metric %q: a Histogram; want an ExponentialHistogram", m.Name)
					}
					for _, dp := range d.Histogram.DataPoints {
						if dp.Count != 16 {
							return fmt.Errorf("metric %q: a data point of count %d; want 16", m.Name, dp.Count)
						}
						n++
					}
				case *metricspb.Metric_ExponentialHistogram:
					if !kind.exp() {
						return fmt.Errorf("metric %q: an ExponentialHistogram; want a Histogram", m.Name)
					}
					for _, dp := range d.ExponentialHistogram.DataPoints {
						var c uint64
						for _, x := range dp.GetPositive().GetBucketCounts() {
							c += x
						}
						if dp.Count != 16 || c != 16 {
							return fmt.Errorf("metric %q: a data point of count %d, %d in its buckets; want 16", m.Name, dp.Count, c)
						}
						n++
					}
				default:
					return fmt.Errorf("metric %q: %T", m.Name, m.Data)
				}
			}
		}
	}
	if n != collectHistSeries {
		return fmt.Errorf("got %d data points; want %d", n, collectHistSeries)
	}
	return nil
}

// checkHistProto checks a delimited protobuf exposition holds one
// histogram family of 10,000 series of 16 values each: classic buckets
// for histogram16, native (schema 3) and no classic buckets for exphist.
func checkHistProto(r io.Reader, kind heapKind) error {
	br := protodelimReader{r}
	n, fams := 0, 0
	for {
		var mf dto.MetricFamily
		if err := protodelim.UnmarshalFrom(br, &mf); err == io.EOF {
			break
		} else if err != nil {
			return err
		}
		fams++
		if mf.GetType() != dto.MetricType_HISTOGRAM {
			return fmt.Errorf("family %q: type %v; want HISTOGRAM", mf.GetName(), mf.GetType())
		}
		for _, m := range mf.GetMetric() {
			h := m.GetHistogram()
			native := len(h.GetPositiveSpan()) > 0
			if h.GetSampleCount() != 16 || native != kind.exp() || (len(h.GetBucket()) > 0) == kind.exp() {
				return fmt.Errorf("family %q: a series of count %d with %d spans and %d classic buckets", mf.GetName(), h.GetSampleCount(), len(h.GetPositiveSpan()), len(h.GetBucket()))
			}
			n++
		}
	}
	if fams != 1 || n != collectHistSeries {
		return fmt.Errorf("got %d series in %d families; want %d in 1", n, fams, collectHistSeries)
	}
	return nil
}

// protodelimReader gives an io.Reader the io.ByteReader protodelim needs.
type protodelimReader struct{ io.Reader }

func (r protodelimReader) ReadByte() (byte, error) {
	var b [1]byte
	_, err := io.ReadFull(r.Reader, b[:])
	return b[0], err
}

// collectHistOtel: a fresh SDK MeterProvider (ManualReader, no
// cardinality limit) with one Float64Histogram of the kind's aggregation;
// ManualReader.Collect into one ResourceMetrics, reused.
func collectHistOtel(b *testing.B, kind heapKind) {
	r := sdkmetric.NewManualReader()
	opts := []sdkmetric.Option{sdkmetric.WithReader(r), sdkmetric.WithCardinalityLimit(0)}
	if kind.exp() {
		opts = append(opts, sdkmetric.WithView(sdkmetric.NewView(sdkmetric.Instrument{Name: "collect_hist"},
			sdkmetric.Stream{Aggregation: sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: expMaxSize, MaxScale: expMaxScale}})))
	}
	mp := sdkmetric.NewMeterProvider(opts...)
	defer func() { _ = mp.Shutdown(context.Background()) }()
	h, err := mp.Meter("bench").Float64Histogram("collect_hist", metric.WithExplicitBucketBoundaries(bounds16...))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := range collectHistSeries {
		va, vb := heapVals(i)
		opt := metric.WithAttributes(attribute.String(keys2[0], va), attribute.String(keys2[1], vb))
		heapExphistSpread.records(i, func(v float64) { h.Record(ctx, v, opt) })
	}
	var rm metricdata.ResourceMetrics
	if err := r.Collect(ctx, &rm); err != nil {
		b.Fatal(err)
	}
	if n := otelPoints(b, &rm, 16); n != collectHistSeries {
		b.Fatalf("otel Collect: got %d data points; want %d", n, collectHistSeries)
	}
	if _, ok := rm.ScopeMetrics[0].Metrics[0].Data.(metricdata.ExponentialHistogram[float64]); ok != kind.exp() {
		b.Fatalf("otel Collect: got %T for kind %s", rm.ScopeMetrics[0].Metrics[0].Data, kind)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := r.Collect(ctx, &rm); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportPerSeries(b, 0)
}

// collectHistPrometheus: a fresh Registry with one HistogramVec of the
// kind over 2 labels, recorded with WithLabelValues; Gather, and with
// proto the delimited protobuf encoding of what it gathered.
//
//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func collectHistPrometheus(proto bool) func(*testing.B, heapKind) {
	return func(b *testing.B, kind heapKind) {
		reg := prometheus.NewRegistry()
		opts := prometheus.HistogramOpts{Name: "collect_hist", Buckets: bounds16}
		if kind.exp() {
			opts = prometheus.HistogramOpts{Name: "collect_hist", NativeHistogramBucketFactor: promFactor}
		}
		vec := prometheus.NewHistogramVec(opts, keys2)
		reg.MustRegister(vec)
		for i := range collectHistSeries {
			va, vb := heapVals(i)
			heapExphistSpread.records(i, vec.WithLabelValues(va, vb).Observe)
		}
		var buf bytes.Buffer
		scrape := func() {
			mfs, err := reg.Gather()
			if err != nil {
				b.Fatalf("prometheus Gather: got error %v; want nil", err)
			}
			if !proto {
				return
			}
			buf.Reset()
			enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeProtoDelim))
			for _, mf := range mfs {
				if err := enc.Encode(mf); err != nil {
					b.Fatalf("prometheus protobuf Encode: got error %v; want nil", err)
				}
			}
		}
		mfs, err := reg.Gather()
		if err != nil {
			b.Fatal(err)
		}
		var all bytes.Buffer
		enc := expfmt.NewEncoder(&all, expfmt.NewFormat(expfmt.TypeProtoDelim))
		for _, mf := range mfs {
			if err := enc.Encode(mf); err != nil {
				b.Fatal(err)
			}
		}
		size := all.Len()
		if err := checkHistProto(&all, kind); err != nil {
			b.Fatalf("prometheus: %v", err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			scrape()
		}
		b.StopTimer()
		if proto {
			reportPerSeries(b, size)
		} else {
			reportPerSeries(b, 0)
		}
	}
}
