package benchmarks

// BenchmarkHeapPerSeries: bytes of heap each SDK keeps per live series,
// over 100,000 series. See README.md ("Heap per live series").

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
	"github.com/prometheus/client_golang/prometheus"
	ocstats "go.opencensus.io/stats"
	ocview "go.opencensus.io/stats/view"
	octag "go.opencensus.io/tag"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// heapSeries is the number of live series each measurement creates.
const heapSeries = 100_000

// bounds16 are the 16 bucket bounds (17 buckets) of the histogram series
// of BenchmarkHeapPerSeries and BenchmarkCollect10k.
var bounds16 = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768}

// Series i has the tag values heapA[i%1000] and heapB[i/1000]: unique per
// series. The strings are built once, before any measurement, as constants
// would be in a program: what an SDK allocates and keeps for a series is
// counted, the caller's strings are not (an SDK may keep references to them
// for free).
var heapA, heapB = func() (a, b []string) {
	a = make([]string, 1000)
	for i := range a {
		a[i] = fmt.Sprintf("a%d", i)
	}
	b = make([]string, heapSeries/1000)
	for i := range b {
		b[i] = fmt.Sprintf("b%d", i)
	}
	return a, b
}()

func heapVals(i int) (string, string) { return heapA[i%1000], heapB[i/1000] }

// heapValue is the value series i records (once).
func heapValue(i int) float64 { return histValues[i&1023] }

// A heapImpl creates a fresh SDK instance holding heapSeries live series,
// each recorded once. build must not keep anything but what the SDK itself
// keeps: its temporaries (contexts, label slices, formatted names) die when
// it returns. It returns the SDK's root objects (kept alive across the
// measurement), a check run after the measurement that returns the number
// of series the SDK reports, and a clean-up.
type heapImpl struct {
	name  string
	build func(b *testing.B, kind heapKind) (keep any, count func() int, cleanup func())
	exp   bool // has an exponential histogram (the exphist kinds)
}

var heapImpls = []heapImpl{
	{"zerostat", heapZerostat, true},
	{"opencensus", heapOpenCensus, false},
	{"prometheus", heapPrometheus, true},
	{"victoriametrics", heapVictoriaMetrics, false},
	{"otel", heapOtel, true},
}

// heapKind is what each series is: a counter recorded once, a 16-bound
// histogram recorded once, or an exponential histogram (zerostat's
// view.ExponentialDistribution(0, 0), the OTel SDK's
// AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20},
// client_golang's native histogram of factor 1.1 without classic buckets)
// recorded once (exphist, as the other kinds) or with 16 values spread
// over 1 to 30,000 (exphist_spread: about 100 buckets apart, at scale 3;
// a histogram that grows its buckets as values arrive takes more).
type heapKind string

const (
	heapCounter       heapKind = "counter"
	heapHistogram16   heapKind = "histogram16"
	heapExphist       heapKind = "exphist"
	heapExphistSpread heapKind = "exphist_spread"
)

func (k heapKind) exp() bool { return k == heapExphist || k == heapExphistSpread }

// heapRecords calls rec with the values series i records.
func (k heapKind) records(i int, rec func(v float64)) {
	if k == heapExphistSpread {
		for j := range 16 {
			rec(histValues[(i*16+j)&1023])
		}
		return
	}
	rec(heapValue(i))
}

// heapRecordings is the number of values each series records.
func (k heapKind) recordings() int {
	if k == heapExphistSpread {
		return 16
	}
	return 1
}

// BenchmarkHeapPerSeries reports B/series: the growth of the live heap
// (HeapAlloc after runtime.GC) from before a fresh SDK instance is created
// to after it holds 100,000 series, divided by 100,000. It measures once per
// invocation, whatever b.N (run it with -benchtime=1x): the set-up is
// outside the benchmark loop, which is empty, and ns/op is reported as 0.
// setup-ns/series and setup-allocs/series are the time and heap
// allocations of creating and recording the series.
func BenchmarkHeapPerSeries(b *testing.B) {
	for _, kind := range []heapKind{heapCounter, heapHistogram16, heapExphist, heapExphistSpread} {
		b.Run("kind="+string(kind), func(b *testing.B) {
			for _, im := range heapImpls {
				if kind.exp() && !im.exp {
					continue
				}
				b.Run("impl="+im.name, func(b *testing.B) {
					heapMeasure(b, im.build, kind)
				})
			}
		})
	}
}

func heapMeasure(b *testing.B, build func(*testing.B, heapKind) (any, func() int, func()), kind heapKind) {
	var before, after runtime.MemStats
	gc := func(ms *runtime.MemStats) {
		// Twice: the first cycle may leave objects with finalizers and
		// sync.Pool's victim cache for the second.
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(ms)
	}
	gc(&before)
	start := time.Now()
	keep, count, cleanup := build(b, kind)
	setup := time.Since(start)
	var mid runtime.MemStats
	runtime.ReadMemStats(&mid) // allocations of the set-up, before GC's own
	gc(&after)
	runtime.KeepAlive(keep)
	defer cleanup()

	if n := count(); n != heapSeries {
		b.Fatalf("got %d series; want %d", n, heapSeries)
	}
	for b.Loop() {
		// Nothing: b.Loop makes the testing package call this function
		// once, whatever -benchtime. (Its first call resets the timer and
		// the reported metrics: report after it.)
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric((float64(after.HeapAlloc)-float64(before.HeapAlloc))/heapSeries, "B/series")
	b.ReportMetric(float64(setup.Nanoseconds())/heapSeries, "setup-ns/series")
	b.ReportMetric(float64(mid.Mallocs-before.Mallocs)/heapSeries, "setup-allocs/series")
}

// zerostat and OpenCensus: a fresh measure and a fresh view (unique names)
// keyed by 2 tags (zerostat's without a cardinality limit; for the exphist
// kinds view.ExponentialDistribution(0, 0)); each series recorded with a
// context built by tag.New, as OpenCensus users write it.
// The view is unregistered afterwards.

func heapZerostat(b *testing.B, kind heapKind) (any, func() int, func()) {
	name := uniq("heap")
	var m stats.Measure
	var agg *view.Aggregation
	var rec func(ctx context.Context, i int)
	if kind != heapCounter {
		fm := stats.Float64(name, "", stats.UnitMilliseconds)
		m, agg = fm, view.Distribution(bounds16...)
		if kind.exp() {
			agg = view.ExponentialDistribution(0, 0)
		}
		rec = func(ctx context.Context, i int) { kind.records(i, func(v float64) { stats.Record(ctx, fm.M(v)) }) }
	} else {
		im := stats.Int64(name, "", stats.UnitDimensionless)
		m, agg = im, view.Sum()
		rec = func(ctx context.Context, _ int) { stats.Record(ctx, im.M(1)) }
	}
	keys := zsKeys(keys2...)
	// No cardinality limit: the default (view.DefaultCardinalityLimit,
	// 10,000 rows) would fold all but 10,000 series into the overflow row.
	v := &view.View{Name: name, Measure: m, Aggregation: agg, TagKeys: append([]tag.Key(nil), keys...), CardinalityLimit: -1}
	cleanup := zsRegister(b, v)
	for i := range heapSeries {
		va, vb := heapVals(i)
		ctx, err := tag.New(context.Background(), tag.Upsert(keys[0], va), tag.Upsert(keys[1], vb))
		if err != nil {
			b.Fatalf("zerostat tag.New: got error %v; want nil", err)
		}
		rec(ctx, i)
	}
	count := func() int {
		rows, err := view.RetrieveData(name)
		if err != nil {
			b.Fatalf("zerostat RetrieveData(%q): got error %v; want nil", name, err)
		}
		var n int64
		for _, r := range rows {
			switch d := r.Data.(type) {
			case *view.SumData:
				n += int64(d.Value)
			case *view.DistributionData:
				n += d.Count
			case *view.ExponentialDistributionData:
				n += d.Count
			}
		}
		if want := int64(heapSeries * kind.recordings()); n != want {
			b.Fatalf("zerostat view %q: got %d recordings; want %d", name, n, want)
		}
		return len(rows)
	}
	return v, count, cleanup
}

func heapOpenCensus(b *testing.B, kind heapKind) (any, func() int, func()) {
	hist := kind == heapHistogram16
	name := uniq("heap")
	var m ocstats.Measure
	var agg *ocview.Aggregation
	var rec func(ctx context.Context, i int)
	if hist {
		fm := ocstats.Float64(name, "", ocstats.UnitMilliseconds)
		m, agg = fm, ocview.Distribution(bounds16...)
		rec = func(ctx context.Context, i int) { ocstats.Record(ctx, fm.M(heapValue(i))) }
	} else {
		im := ocstats.Int64(name, "", ocstats.UnitDimensionless)
		m, agg = im, ocview.Sum()
		rec = func(ctx context.Context, _ int) { ocstats.Record(ctx, im.M(1)) }
	}
	keys := ocKeys(keys2...)
	v := &ocview.View{Name: name, Measure: m, Aggregation: agg, TagKeys: append([]octag.Key(nil), keys...)}
	cleanup := ocRegister(b, v)
	for i := range heapSeries {
		va, vb := heapVals(i)
		ctx, err := octag.New(context.Background(), octag.Upsert(keys[0], va), octag.Upsert(keys[1], vb))
		if err != nil {
			b.Fatalf("opencensus tag.New: got error %v; want nil", err)
		}
		rec(ctx, i)
	}
	// OpenCensus records through a channel to its worker: a RetrieveData
	// (through the same channel) returns once every recording above has
	// been aggregated and its command dropped. Its rows are dropped too.
	if _, err := ocview.RetrieveData(name); err != nil {
		b.Fatalf("opencensus RetrieveData(%q): got error %v; want nil", name, err)
	}
	count := func() int {
		rows, err := ocview.RetrieveData(name)
		if err != nil {
			b.Fatalf("opencensus RetrieveData(%q): got error %v; want nil", name, err)
		}
		var n int64
		for _, r := range rows {
			switch d := r.Data.(type) {
			case *ocview.SumData:
				n += int64(d.Value)
			case *ocview.DistributionData:
				n += d.Count
			}
		}
		if n != heapSeries {
			b.Fatalf("opencensus view %q: got %d recordings; want %d", name, n, heapSeries)
		}
		return len(rows)
	}
	return v, count, cleanup
}

// Prometheus: a fresh Registry with one CounterVec or HistogramVec (16
// buckets; for the exphist kinds a native histogram of factor 1.1 and no
// classic buckets) over 2 labels; vec.WithLabelValues(a, b).Inc() /
// .Observe(v).

func heapPrometheus(b *testing.B, kind heapKind) (any, func() int, func()) {
	reg := prometheus.NewRegistry()
	var c prometheus.Collector
	hist := kind != heapCounter
	if hist {
		opts := prometheus.HistogramOpts{Name: "heap_histogram", Buckets: bounds16}
		if kind.exp() {
			// Native only: with a factor above 1 and Buckets nil,
			// client_golang makes no classic buckets.
			opts = prometheus.HistogramOpts{Name: "heap_histogram", NativeHistogramBucketFactor: promFactor}
		}
		vec := prometheus.NewHistogramVec(opts, keys2)
		for i := range heapSeries {
			va, vb := heapVals(i)
			o := vec.WithLabelValues(va, vb)
			kind.records(i, o.Observe)
		}
		c = vec
	} else {
		vec := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "heap_counter_total"}, keys2)
		for i := range heapSeries {
			va, vb := heapVals(i)
			vec.WithLabelValues(va, vb).Inc()
		}
		c = vec
	}
	reg.MustRegister(c)
	count := func() int {
		mfs, err := reg.Gather()
		if err != nil {
			b.Fatalf("prometheus Gather: got error %v; want nil", err)
		}
		n := 0
		var total uint64
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				n++
				if hist {
					total += m.GetHistogram().GetSampleCount()
				} else {
					total += uint64(m.GetCounter().GetValue())
				}
			}
		}
		if want := uint64(heapSeries * kind.recordings()); total != want {
			b.Fatalf("prometheus: got %d recordings; want %d", total, want)
		}
		return n
	}
	return reg, count, func() {}
}

// VictoriaMetrics: a fresh Set; GetOrCreateCounter(name{labels}).Inc() or
// GetOrCreatePrometheusHistogramExt(name{labels}, bounds16).Update(v). The
// formatted name is built per series by the caller, and kept by the Set.

func heapVictoriaMetrics(b *testing.B, kind heapKind) (any, func() int, func()) {
	hist := kind == heapHistogram16
	s := vm.NewSet()
	for i := range heapSeries {
		va, vb := heapVals(i)
		if hist {
			s.GetOrCreatePrometheusHistogramExt(fmt.Sprintf(`heap_histogram{method=%q,status=%q}`, va, vb), bounds16).Update(heapValue(i))
		} else {
			s.GetOrCreateCounter(fmt.Sprintf(`heap_counter_total{method=%q,status=%q}`, va, vb)).Inc()
		}
	}
	count := func() int {
		var t expoTally
		s.WritePrometheus(&t)
		t.flush()
		if t.total != heapSeries {
			b.Fatalf("victoriametrics: got %v recordings in the exposition; want %d", t.total, heapSeries)
		}
		if n := len(s.ListMetricNames()); n != t.series {
			b.Fatalf("victoriametrics: %d metric names, %d series in the exposition", n, t.series)
		}
		return t.series
	}
	return s, count, func() {}
}

// expoTally is an io.Writer that reads a Prometheus text exposition and
// counts the series in it: the samples named *_total (counters) and
// *_count (histograms), and the sum of their values.
type expoTally struct {
	partial []byte
	series  int
	total   float64
	bytes   int
}

func (t *expoTally) Write(p []byte) (int, error) {
	t.bytes += len(p)
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			t.partial = append(t.partial, p...)
			break
		}
		if len(t.partial) > 0 {
			t.partial = append(t.partial, p[:i]...)
			t.line(t.partial)
			t.partial = t.partial[:0]
		} else {
			t.line(p[:i])
		}
		p = p[i+1:]
	}
	return n, nil
}

func (t *expoTally) flush() {
	if len(t.partial) > 0 {
		t.line(t.partial)
		t.partial = t.partial[:0]
	}
}

func (t *expoTally) line(l []byte) {
	if len(l) == 0 || l[0] == '#' {
		return
	}
	end := bytes.IndexAny(l, "{ ")
	sp := bytes.LastIndexByte(l, ' ')
	if end < 0 || sp < 0 {
		return
	}
	name := l[:end]
	if !bytes.HasSuffix(name, []byte("_total")) && !bytes.HasSuffix(name, []byte("_count")) {
		return
	}
	v, err := strconv.ParseFloat(string(l[sp+1:]), 64)
	if err != nil {
		return
	}
	t.series++
	t.total += v
}

// OpenTelemetry: a fresh MeterProvider with a ManualReader and no
// cardinality limit (the default, 2000 per instrument, would fold all but
// 1,999 of the series into one overflow series); c.Add(ctx, 1,
// metric.WithAttributes(...)) or h.Record with 16 explicit bounds (for the
// exphist kinds a view makes the histogram
// AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20}). Default
// exemplar filter (trace-based: a background context samples nothing, but
// each series has its reservoir).

func heapOtel(b *testing.B, kind heapKind) (any, func() int, func()) {
	r := sdkmetric.NewManualReader()
	opts := []sdkmetric.Option{sdkmetric.WithReader(r), sdkmetric.WithCardinalityLimit(0)}
	if kind.exp() {
		opts = append(opts, sdkmetric.WithView(sdkmetric.NewView(sdkmetric.Instrument{Name: "heap_histogram"},
			sdkmetric.Stream{Aggregation: sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: expMaxSize, MaxScale: expMaxScale}})))
	}
	mp := sdkmetric.NewMeterProvider(opts...)
	meter := mp.Meter("bench")
	ctx := context.Background()
	var inst any
	if kind != heapCounter {
		h, err := meter.Float64Histogram("heap_histogram", metric.WithExplicitBucketBoundaries(bounds16...))
		if err != nil {
			b.Fatal(err)
		}
		for i := range heapSeries {
			va, vb := heapVals(i)
			opt := metric.WithAttributes(attribute.String(keys2[0], va), attribute.String(keys2[1], vb))
			kind.records(i, func(v float64) { h.Record(ctx, v, opt) })
		}
		inst = h
	} else {
		c, err := meter.Int64Counter("heap_counter")
		if err != nil {
			b.Fatal(err)
		}
		for i := range heapSeries {
			va, vb := heapVals(i)
			c.Add(ctx, 1, metric.WithAttributes(attribute.String(keys2[0], va), attribute.String(keys2[1], vb)))
		}
		inst = c
	}
	count := func() int {
		var rm metricdata.ResourceMetrics
		if err := r.Collect(ctx, &rm); err != nil {
			b.Fatalf("otel Collect: got error %v; want nil", err)
		}
		return otelPoints(b, &rm, uint64(kind.recordings()))
	}
	return []any{mp, r, inst}, count, func() { _ = mp.Shutdown(context.Background()) }
}

// otelPoints counts the data points of rm, checking none is the overflow
// series and each holds want recordings (want 0: not checked).
func otelPoints(b *testing.B, rm *metricdata.ResourceMetrics, want uint64) int {
	b.Helper()
	overflow := attribute.Bool("otel.metric.overflow", true)
	n := 0
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					if p.Attributes.HasValue(overflow.Key) {
						b.Fatalf("otel %q: an overflow data point", m.Name)
					}
					if want != 0 && uint64(p.Value) < want {
						b.Fatalf("otel %q: got %d; want >= %d", m.Name, p.Value, want)
					}
				}
				n += len(d.DataPoints)
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					if p.Attributes.HasValue(overflow.Key) {
						b.Fatalf("otel %q: an overflow data point", m.Name)
					}
					if want != 0 && p.Count < want {
						b.Fatalf("otel %q: got count %d; want >= %d", m.Name, p.Count, want)
					}
				}
				n += len(d.DataPoints)
			case metricdata.ExponentialHistogram[float64]:
				for _, p := range d.DataPoints {
					if p.Attributes.HasValue(overflow.Key) {
						b.Fatalf("otel %q: an overflow data point", m.Name)
					}
					if want != 0 && p.Count < want {
						b.Fatalf("otel %q: got count %d; want >= %d", m.Name, p.Count, want)
					}
				}
				n += len(d.DataPoints)
			default:
				b.Fatalf("otel %q: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	return n
}

// TestOtelDefaultCardinalityLimit pins down why heapOtel disables the
// limit: with the defaults of sdk/metric v1.47.0 an instrument keeps 2,000
// data points, the last one the overflow series holding every later
// attribute set.
func TestOtelDefaultCardinalityLimit(t *testing.T) {
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	ctx := context.Background()
	c, err := mp.Meter("test").Int64Counter("c")
	if err != nil {
		t.Fatal(err)
	}
	const n = 2500
	for i := range n {
		c.Add(ctx, 1, metric.WithAttributes(attribute.Int("i", i)))
	}
	var rm metricdata.ResourceMetrics
	if err := r.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	pts := rm.ScopeMetrics[0].Metrics[0].Data.(metricdata.Sum[int64]).DataPoints
	overflow, total := 0, int64(0)
	for _, p := range pts {
		total += p.Value
		if v, ok := p.Attributes.Value("otel.metric.overflow"); ok && v.AsBool() {
			overflow++
			if want := int64(n - 1999); p.Value != want {
				t.Errorf("overflow data point: got %d; want %d", p.Value, want)
			}
		}
	}
	if len(pts) != 2000 || overflow != 1 || total != n {
		t.Errorf("got %d data points (%d overflow) totalling %d; want 2000 (1 overflow) totalling %d", len(pts), overflow, total, n)
	}
}
