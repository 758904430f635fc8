package benchmarks

// BenchmarkCollect10k: the collect path of each SDK over 10,000 live
// series. See README.md ("Collecting 10,000 live series").

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	ocstats "go.opencensus.io/stats"
	ocview "go.opencensus.io/stats/view"
	octag "go.opencensus.io/tag"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// 20 metrics × 500 series: metrics 0..9 are counters, 10..19 histograms
// with the 16 bounds of bounds16. Every metric has the 3 tags of
// collectKeys; series s has the values collectVals(s), 500 distinct
// combinations. A counter series is incremented s%7+1 times by one; a
// histogram series records 2 values.
const (
	collectMetrics   = 20
	collectPerMetric = 500
	collectSeries    = collectMetrics * collectPerMetric
	collectCounters  = collectMetrics / 2
)

var (
	collectKeys    = []string{"method", "status", "region"}
	collectMethods = []string{"GET", "POST", "PUT", "DELETE", "PATCH"}
	collectStatus  = []string{"200", "201", "204", "301", "304", "400", "401", "404", "500", "503"}
	collectRegions = []string{"us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-south-1", "ap-northeast-1", "sa-east-1", "ca-central-1", "af-south-1", "me-south-1"}
)

func collectVals(s int) (string, string, string) {
	return collectMethods[s%5], collectStatus[(s/5)%10], collectRegions[s/50]
}

// collectRecords calls rec(s, v) for every recording of series s of metric
// j: counters get s%7+1 increments of 1, histograms 2 values.
func collectRecords(j, s int, rec func(v float64)) {
	if j < collectCounters {
		for range s%7 + 1 {
			rec(1)
		}
		return
	}
	rec(histValues[(s*7+j)&1023])
	rec(histValues[(s*13+j+1)&1023])
}

func collectName(j int) string {
	if j < collectCounters {
		return fmt.Sprintf("collect_c%d", j)
	}
	return fmt.Sprintf("collect_h%d", j)
}

func BenchmarkCollect10k(b *testing.B) {
	for _, im := range []impl{
		{"zerostat_retrieve", collectZerostat(false)},
		{"zerostat_export", collectZerostat(true)},
		{"opencensus", collectOpenCensus},
		{"prometheus_gather", collectPrometheus(false)},
		{"prometheus_text", collectPrometheus(true)},
		{"victoriametrics", collectVictoriaMetrics},
		{"otel", collectOtel},
	} {
		b.Run("impl="+im.name, im.fn)
	}
}

// zerostat: 20 fresh views (unique names) over fresh measures, recorded
// with contexts built by tag.New, unregistered afterwards.
// zerostat_retrieve: view.RetrieveData of the 20 views. zerostat_export:
// Exporter.Export (snapshot + encode of every registered view) to a
// FuncSink that drops the payload.
//
//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func collectZerostat(export bool) func(*testing.B) {
	return func(b *testing.B) {
		keys := zsKeys(collectKeys...)
		names := make([]string, collectMetrics)
		recs := make([]func(ctx context.Context, v float64), collectMetrics)
		for j := range names {
			names[j] = uniq(collectName(j))
			var m stats.Measure
			agg := view.Sum()
			if j < collectCounters {
				im := stats.Int64(names[j], "", stats.UnitDimensionless)
				m, recs[j] = im, func(ctx context.Context, v float64) { stats.Record(ctx, im.M(int64(v))) }
			} else {
				fm := stats.Float64(names[j], "", stats.UnitMilliseconds)
				m, recs[j] = fm, func(ctx context.Context, v float64) { stats.Record(ctx, fm.M(v)) }
				agg = view.Distribution(bounds16...)
			}
			defer zsRegister(b, &view.View{Name: names[j], Measure: m, Aggregation: agg, TagKeys: append([]tag.Key(nil), keys...)})()
		}
		for s := range collectPerMetric {
			va, vb, vc := collectVals(s)
			ctx, err := tag.New(context.Background(), tag.Upsert(keys[0], va), tag.Upsert(keys[1], vb), tag.Upsert(keys[2], vc))
			if err != nil {
				b.Fatal(err)
			}
			for j, rec := range recs {
				collectRecords(j, s, func(v float64) { rec(ctx, v) })
			}
		}

		if !export {
			retrieve := func() int {
				n := 0
				for _, name := range names {
					rows, err := view.RetrieveData(name)
					if err != nil {
						b.Fatalf("zerostat RetrieveData(%q): got error %v; want nil", name, err)
					}
					n += len(rows)
				}
				return n
			}
			if n := retrieve(); n != collectSeries {
				b.Fatalf("zerostat RetrieveData: got %d rows; want %d", n, collectSeries)
			}
			b.ReportAllocs()
			for b.Loop() {
				retrieve()
			}
			return
		}

		// The check runs on the first export only; then the sink drops
		// the payload.
		var check func(p exporter.Payload) error
		var size int
		sink := exporter.FuncSink(func(_ context.Context, p exporter.Payload) error {
			if check != nil {
				return check(p)
			}
			return nil
		})
		// A ctx with a deadline earlier than Timeout: Export sends with it
		// and makes no context per send.
		ex, err := exporter.New(sink, exporter.Options{Timeout: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		rows, views := 0, 0
		check = func(p exporter.Payload) error {
			size += len(p.Data)
			w, err := wire.Decode(p.Data)
			if err != nil {
				return err
			}
			for _, v := range w.Views {
				views++
				rows += len(v.Rows)
			}
			return nil
		}
		if err := ex.Export(ctx); err != nil {
			b.Fatalf("zerostat Export: got error %v; want nil", err)
		}
		check = nil
		if rows != collectSeries || views != collectMetrics {
			b.Fatalf("zerostat Export: got %d rows in %d views; want %d in %d (views registered by others?)", rows, views, collectSeries, collectMetrics)
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := ex.Export(ctx); err != nil {
				b.Fatalf("zerostat Export: got error %v; want nil", err)
			}
		}
		b.ReportMetric(float64(size), "payload-bytes")
	}
}

// OpenCensus: the same views; view.RetrieveData of the 20 views (its
// worker copies the rows).
func collectOpenCensus(b *testing.B) {
	keys := ocKeys(collectKeys...)
	names := make([]string, collectMetrics)
	recs := make([]func(ctx context.Context, v float64), collectMetrics)
	for j := range names {
		names[j] = uniq(collectName(j))
		var m ocstats.Measure
		agg := ocview.Sum()
		if j < collectCounters {
			im := ocstats.Int64(names[j], "", ocstats.UnitDimensionless)
			m, recs[j] = im, func(ctx context.Context, v float64) { ocstats.Record(ctx, im.M(int64(v))) }
		} else {
			fm := ocstats.Float64(names[j], "", ocstats.UnitMilliseconds)
			m, recs[j] = fm, func(ctx context.Context, v float64) { ocstats.Record(ctx, fm.M(v)) }
			agg = ocview.Distribution(bounds16...)
		}
		defer ocRegister(b, &ocview.View{Name: names[j], Measure: m, Aggregation: agg, TagKeys: append([]octag.Key(nil), keys...)})()
	}
	for s := range collectPerMetric {
		va, vb, vc := collectVals(s)
		ctx, err := octag.New(context.Background(), octag.Upsert(keys[0], va), octag.Upsert(keys[1], vb), octag.Upsert(keys[2], vc))
		if err != nil {
			b.Fatal(err)
		}
		for j, rec := range recs {
			collectRecords(j, s, func(v float64) { rec(ctx, v) })
		}
	}
	retrieve := func() int {
		n := 0
		for _, name := range names {
			rows, err := ocview.RetrieveData(name)
			if err != nil {
				b.Fatalf("opencensus RetrieveData(%q): got error %v; want nil", name, err)
			}
			n += len(rows)
		}
		return n
	}
	if n := retrieve(); n != collectSeries {
		b.Fatalf("opencensus RetrieveData: got %d rows; want %d", n, collectSeries)
	}
	b.ReportAllocs()
	for b.Loop() {
		retrieve()
	}
}

// Prometheus: a fresh Registry with 10 CounterVecs and 10 HistogramVecs
// (16 buckets) over the 3 labels, recorded with WithLabelValues.
// prometheus_gather: Registry.Gather. prometheus_text: Gather, then every
// family encoded in the text format (expfmt) to io.Discard, as a scrape
// would.
//
//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func collectPrometheus(text bool) func(*testing.B) {
	return func(b *testing.B) {
		reg := prometheus.NewRegistry()
		for j := range collectMetrics {
			var obs func(va, vb, vc string, v float64)
			if j < collectCounters {
				vec := prometheus.NewCounterVec(prometheus.CounterOpts{Name: collectName(j) + "_total"}, collectKeys)
				reg.MustRegister(vec)
				obs = func(va, vb, vc string, v float64) { vec.WithLabelValues(va, vb, vc).Add(v) }
			} else {
				vec := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: collectName(j), Buckets: bounds16}, collectKeys)
				reg.MustRegister(vec)
				obs = func(va, vb, vc string, v float64) { vec.WithLabelValues(va, vb, vc).Observe(v) }
			}
			for s := range collectPerMetric {
				va, vb, vc := collectVals(s)
				collectRecords(j, s, func(v float64) { obs(va, vb, vc, v) })
			}
		}
		mfs, err := reg.Gather()
		if err != nil {
			b.Fatalf("prometheus Gather: got error %v; want nil", err)
		}
		n := 0
		for _, mf := range mfs {
			n += len(mf.GetMetric())
		}
		if n != collectSeries || len(mfs) != collectMetrics {
			b.Fatalf("prometheus Gather: got %d series in %d families; want %d in %d", n, len(mfs), collectSeries, collectMetrics)
		}
		if !text {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := reg.Gather(); err != nil {
					b.Fatalf("prometheus Gather: got error %v; want nil", err)
				}
			}
			return
		}
		scrape := func(w io.Writer) {
			mfs, err := reg.Gather()
			if err != nil {
				b.Fatalf("prometheus Gather: got error %v; want nil", err)
			}
			enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
			for _, mf := range mfs {
				if err := enc.Encode(mf); err != nil {
					b.Fatalf("prometheus text Encode: got error %v; want nil", err)
				}
			}
			if c, ok := enc.(expfmt.Closer); ok {
				if err := c.Close(); err != nil {
					b.Fatalf("prometheus text Close: got error %v; want nil", err)
				}
			}
		}
		var t expoTally
		scrape(&t)
		t.flush()
		if t.series != collectSeries {
			b.Fatalf("prometheus text: got %d series; want %d", t.series, collectSeries)
		}
		b.ReportAllocs()
		for b.Loop() {
			scrape(io.Discard)
		}
		b.ReportMetric(float64(t.bytes), "payload-bytes")
	}
}

// VictoriaMetrics: a fresh Set with 5,000 counters and 5,000
// PrometheusHistograms (16 bounds) named with the 3 labels;
// Set.WritePrometheus to io.Discard.
func collectVictoriaMetrics(b *testing.B) {
	s := vm.NewSet()
	for j := range collectMetrics {
		for i := range collectPerMetric {
			va, vb, vc := collectVals(i)
			if j < collectCounters {
				c := s.GetOrCreateCounter(fmt.Sprintf(`%s_total{method=%q,status=%q,region=%q}`, collectName(j), va, vb, vc))
				collectRecords(j, i, func(v float64) { c.Add(int(v)) })
			} else {
				h := s.GetOrCreatePrometheusHistogramExt(fmt.Sprintf(`%s{method=%q,status=%q,region=%q}`, collectName(j), va, vb, vc), bounds16)
				collectRecords(j, i, h.Update)
			}
		}
	}
	var t expoTally
	s.WritePrometheus(&t)
	t.flush()
	if t.series != collectSeries {
		b.Fatalf("victoriametrics WritePrometheus: got %d series; want %d", t.series, collectSeries)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.WritePrometheus(io.Discard)
	}
	b.ReportMetric(float64(t.bytes), "payload-bytes")
}

// OpenTelemetry: a fresh MeterProvider with a ManualReader (cumulative,
// default exemplar filter, default cardinality limit of 2000 per
// instrument, above the 500 series of each); 10 Int64Counters and 10
// Float64Histograms (16 explicit bounds) recorded with WithAttributes.
// ManualReader.Collect into one ResourceMetrics, reused.
func collectOtel(b *testing.B) {
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	meter := mp.Meter("bench")
	ctx := context.Background()
	for j := range collectMetrics {
		var rec func(v float64, opt metric.MeasurementOption)
		if j < collectCounters {
			c, err := meter.Int64Counter(collectName(j))
			if err != nil {
				b.Fatal(err)
			}
			rec = func(v float64, opt metric.MeasurementOption) { c.Add(ctx, int64(v), opt) }
		} else {
			h, err := meter.Float64Histogram(collectName(j), metric.WithExplicitBucketBoundaries(bounds16...))
			if err != nil {
				b.Fatal(err)
			}
			rec = func(v float64, opt metric.MeasurementOption) { h.Record(ctx, v, opt) }
		}
		for s := range collectPerMetric {
			va, vb, vc := collectVals(s)
			opt := metric.WithAttributes(attribute.String(collectKeys[0], va), attribute.String(collectKeys[1], vb), attribute.String(collectKeys[2], vc))
			collectRecords(j, s, func(v float64) { rec(v, opt) })
		}
	}
	var rm metricdata.ResourceMetrics
	if err := r.Collect(ctx, &rm); err != nil {
		b.Fatalf("otel Collect: got error %v; want nil", err)
	}
	if n := otelPoints(b, &rm, 1); n != collectSeries {
		b.Fatalf("otel Collect: got %d data points; want %d", n, collectSeries)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Collect(ctx, &rm); err != nil {
			b.Fatalf("otel Collect: got error %v; want nil", err)
		}
	}
}
