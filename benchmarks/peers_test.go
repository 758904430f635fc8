package benchmarks

// The peers of zerostat beyond OpenCensus, on the same scenarios. Each peer
// has a "natural" API (how its documentation records a labelled value) and,
// where it differs, a "fastest" one, benchmarked as impl=<peer>_handle or
// impl=<peer>_attrset. See README.md.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	vm "github.com/VictoriaMetrics/metrics"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

func init() {
	peers := map[string][]impl{
		"counter_notags": {
			{"prometheus", promCounter(0, false, false)},
			{"victoriametrics", vmCounter(0, false, false)},
			{"otel", otelCounter(0, false, false)},
			{"zerostat_otel", otelCounterOn(zotelSetup, 0, false, false)},
		},
		"counter_2tags": {
			{"prometheus", promCounter(2, true, false)},
			{"prometheus_handle", promCounter(2, false, false)},
			{"victoriametrics", vmCounter(2, true, false)},
			{"victoriametrics_handle", vmCounter(2, false, false)},
			{"otel", otelCounter(2, true, false)},
			{"otel_attrset", otelCounter(2, false, false)},
			{"zerostat_otel", otelCounterOn(zotelSetup, 2, true, false)},
			{"zerostat_otel_attrset", otelCounterOn(zotelSetup, 2, false, false)},
		},
		"histogram_2tags": {
			{"prometheus", promHist(true, false)},
			{"prometheus_handle", promHist(false, false)},
			{"victoriametrics", vmHist(true, false)},
			{"victoriametrics_handle", vmHist(false, false)},
			{"otel", otelHist(true, false)},
			{"otel_attrset", otelHist(false, false)},
			{"zerostat_otel", otelHistOn(zotelSetup, true, false)},
			{"zerostat_otel_attrset", otelHistOn(zotelSetup, false, false)},
		},
		"8measures_8tags": {
			{"prometheus", promCounter(8, true, false)},
			{"prometheus_handle", promCounter(8, false, false)},
			{"victoriametrics", vmCounter(8, true, false)},
			{"victoriametrics_handle", vmCounter(8, false, false)},
			{"otel", otelCounter(8, true, false)},
			{"otel_attrset", otelCounter(8, false, false)},
			{"zerostat_otel", otelCounterOn(zotelSetup, 8, true, false)},
			{"zerostat_otel_attrset", otelCounterOn(zotelSetup, 8, false, false)},
		},
		"counter_2tags_parallel": {
			{"prometheus", promCounter(2, true, true)},
			{"prometheus_handle", promCounter(2, false, true)},
			{"victoriametrics", vmCounter(2, true, true)},
			{"victoriametrics_handle", vmCounter(2, false, true)},
			{"otel", otelCounter(2, true, true)},
			{"otel_attrset", otelCounter(2, false, true)},
			{"zerostat_otel", otelCounterOn(zotelSetup, 2, true, true)},
			{"zerostat_otel_attrset", otelCounterOn(zotelSetup, 2, false, true)},
		},
		"histogram_2tags_parallel": {
			{"prometheus", promHist(true, true)},
			{"prometheus_handle", promHist(false, true)},
			{"victoriametrics", vmHist(true, true)},
			{"victoriametrics_handle", vmHist(false, true)},
			{"otel", otelHist(true, true)},
			{"otel_attrset", otelHist(false, true)},
			{"zerostat_otel", otelHistOn(zotelSetup, true, true)},
			{"zerostat_otel_attrset", otelHistOn(zotelSetup, false, true)},
		},
	}
	for i := range scenarios {
		scenarios[i].impls = append(scenarios[i].impls, peers[scenarios[i].name]...)
	}
}

// The label values of the scenarios: key i has value "v<i>".
var vals8 = []string{"v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7"}

// histIndexLE is the bucket of v with upper-inclusive bounds (Prometheus,
// VictoriaMetrics, OpenTelemetry): bounds[i-1] < v <= bounds[i].
func histIndexLE(v float64) int {
	i := 0
	for i < len(histBounds) && v > histBounds[i] {
		i++
	}
	return i
}

// expectLE returns the upper-inclusive bucket counts, total count and sum of
// per-goroutine iteration counts.
func expectLE(counts []int) (buckets [len(histBounds) + 1]int64, n int64, sum float64) {
	for _, c := range counts {
		full, rest := c/len(histValues), c%len(histValues)
		for i, v := range histValues {
			k := full
			if i < rest {
				k++
			}
			buckets[histIndexLE(v)] += int64(k)
			sum += v * float64(k)
		}
		n += int64(c)
	}
	return buckets, n, sum
}

func checkHistLE(b *testing.B, impl string, counts []int, n int64, sum float64, buckets []int64) {
	b.Helper()
	wb, wn, ws := expectLE(counts)
	if n != wn {
		b.Fatalf("%s: got count %d; want %d", impl, n, wn)
	}
	if sum != ws {
		b.Fatalf("%s: got sum %v; want %v", impl, sum, ws)
	}
	for i := range wb {
		if buckets[i] != wb[i] {
			b.Fatalf("%s: bucket %d: got %d; want %d (all: %v)", impl, i, buckets[i], wb[i], buckets)
		}
	}
}

// ---------------------------------------------------------------------------
// Prometheus client_golang: natural API WithLabelValues(...).Inc()/Observe
// per call; fastest a kept handle. Unregistered metrics record the same.

func promWrite(b *testing.B, m prometheus.Metric) *dto.Metric {
	b.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		b.Fatalf("prometheus Write: got error %v; want nil", err)
	}
	return &d
}

// promCounter: nkeys 0 is a plain Counter; 2 one CounterVec; 8 is eight
// CounterVecs with 8 labels, counter j adding j+1 per iteration.
//
//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func promCounter(nkeys int, natural, parallel bool) func(*testing.B) {
	return func(b *testing.B) {
		if nkeys == 0 {
			c := prometheus.NewCounter(prometheus.CounterOpts{Name: "counter_notags_total"})
			b.ReportAllocs()
			for b.Loop() {
				c.Inc()
			}
			if got := promWrite(b, c).GetCounter().GetValue(); got != float64(b.N) {
				b.Fatalf("prometheus counter: got %v; want %d", got, b.N)
			}
			return
		}
		if nkeys == 8 {
			var vecs [8]*prometheus.CounterVec
			var hs [8]prometheus.Counter
			for j := range vecs {
				vecs[j] = prometheus.NewCounterVec(prometheus.CounterOpts{Name: fmt.Sprintf("m%d_total", j)}, keys8)
				hs[j] = vecs[j].WithLabelValues(vals8...)
			}
			b.ReportAllocs()
			if natural {
				for b.Loop() {
					vecs[0].WithLabelValues("v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7").Add(1)
					vecs[1].WithLabelValues("v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7").Add(2)
					vecs[2].WithLabelValues("v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7").Add(3)
					vecs[3].WithLabelValues("v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7").Add(4)
					vecs[4].WithLabelValues("v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7").Add(5)
					vecs[5].WithLabelValues("v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7").Add(6)
					vecs[6].WithLabelValues("v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7").Add(7)
					vecs[7].WithLabelValues("v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7").Add(8)
				}
			} else {
				for b.Loop() {
					hs[0].Add(1)
					hs[1].Add(2)
					hs[2].Add(3)
					hs[3].Add(4)
					hs[4].Add(5)
					hs[5].Add(6)
					hs[6].Add(7)
					hs[7].Add(8)
				}
			}
			for j, h := range hs {
				if got, want := promWrite(b, h).GetCounter().GetValue(), float64(b.N)*float64(j+1); got != want {
					b.Fatalf("prometheus counter %d: got %v; want %v", j, got, want)
				}
			}
			return
		}
		vec := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "counter_2tags_total"}, keys2)
		h := vec.WithLabelValues("v0", "v1")
		var counts []int
		b.ReportAllocs()
		switch {
		case parallel && natural:
			counts = parallelLoops(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					vec.WithLabelValues("v0", "v1").Inc()
				}
				return i
			})
		case parallel:
			counts = parallelLoops(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					h.Inc()
				}
				return i
			})
		case natural:
			for b.Loop() {
				vec.WithLabelValues("v0", "v1").Inc()
			}
		default:
			for b.Loop() {
				h.Inc()
			}
		}
		b.StopTimer()
		want := b.N
		if parallel {
			want = total(counts)
		}
		if got := promWrite(b, h).GetCounter().GetValue(); got != float64(want) {
			b.Fatalf("prometheus counter: got %v; want %d", got, want)
		}
	}
}

//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func promHist(natural, parallel bool) func(*testing.B) {
	return func(b *testing.B) {
		vec := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "histogram_2tags", Buckets: histBounds[:]}, keys2)
		h := vec.WithLabelValues("v0", "v1")
		var counts []int
		b.ReportAllocs()
		switch {
		case parallel && natural:
			counts = parallelLoops(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					vec.WithLabelValues("v0", "v1").Observe(histValues[i&1023])
				}
				return i
			})
		case parallel:
			counts = parallelLoops(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					h.Observe(histValues[i&1023])
				}
				return i
			})
		case natural:
			i := 0
			for b.Loop() {
				vec.WithLabelValues("v0", "v1").Observe(histValues[i&1023])
				i++
			}
			counts = []int{i}
		default:
			i := 0
			for b.Loop() {
				h.Observe(histValues[i&1023])
				i++
			}
			counts = []int{i}
		}
		b.StopTimer()
		d := promWrite(b, h.(prometheus.Metric)).GetHistogram()
		// Prometheus buckets are cumulative and leave out +Inf.
		buckets := make([]int64, len(histBounds)+1)
		var prev uint64
		for i, bk := range d.GetBucket() {
			buckets[i] = int64(bk.GetCumulativeCount() - prev)
			prev = bk.GetCumulativeCount()
		}
		buckets[len(histBounds)] = int64(d.GetSampleCount() - prev)
		checkHistLE(b, "prometheus histogram", counts, int64(d.GetSampleCount()), d.GetSampleSum(), buckets)
	}
}

// ---------------------------------------------------------------------------
// VictoriaMetrics/metrics: natural API GetOrCreate*(fmt.Sprintf(name with
// labels)) per call, as its README shows for labelled metrics; fastest a
// kept handle. Each invocation uses its own Set. The histogram is its
// PrometheusHistogram with the scenario's bounds.

func vmName(base string, nkeys int, j int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s%d_total{", base, j)
	for i := 0; i < nkeys; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "%s=%q", keys8[i], vals8[i])
	}
	sb.WriteByte('}')
	return sb.String()
}

//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func vmCounter(nkeys int, natural, parallel bool) func(*testing.B) {
	return func(b *testing.B) {
		s := vm.NewSet()
		if nkeys == 0 {
			c := s.NewCounter("counter_notags_total")
			b.ReportAllocs()
			for b.Loop() {
				c.Inc()
			}
			if got := c.Get(); got != uint64(b.N) {
				b.Fatalf("victoriametrics counter: got %d; want %d", got, b.N)
			}
			return
		}
		if nkeys == 8 {
			var hs [8]*vm.Counter
			for j := range hs {
				hs[j] = s.GetOrCreateCounter(vmName("m", 8, j))
			}
			b.ReportAllocs()
			if natural {
				const f = `m%d_total{k1=%q,k2=%q,k3=%q,k4=%q,k5=%q,k6=%q,k7=%q,k8=%q}`
				for b.Loop() {
					for j := 0; j < 8; j++ {
						s.GetOrCreateCounter(fmt.Sprintf(f, j, "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7")).Add(j + 1)
					}
				}
			} else {
				for b.Loop() {
					hs[0].Add(1)
					hs[1].Add(2)
					hs[2].Add(3)
					hs[3].Add(4)
					hs[4].Add(5)
					hs[5].Add(6)
					hs[6].Add(7)
					hs[7].Add(8)
				}
			}
			for j, h := range hs {
				if got, want := h.Get(), uint64(b.N)*uint64(j+1); got != want {
					b.Fatalf("victoriametrics counter %d: got %d; want %d", j, got, want)
				}
			}
			return
		}
		h := s.GetOrCreateCounter(`counter_2tags_total{method="v0",status="v1"}`)
		var counts []int
		b.ReportAllocs()
		const f = `counter_2tags_total{method=%q,status=%q}`
		switch {
		case parallel && natural:
			counts = parallelLoops(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					s.GetOrCreateCounter(fmt.Sprintf(f, "v0", "v1")).Inc()
				}
				return i
			})
		case parallel:
			counts = parallelLoops(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					h.Inc()
				}
				return i
			})
		case natural:
			for b.Loop() {
				s.GetOrCreateCounter(fmt.Sprintf(f, "v0", "v1")).Inc()
			}
		default:
			for b.Loop() {
				h.Inc()
			}
		}
		b.StopTimer()
		want := b.N
		if parallel {
			want = total(counts)
		}
		if got := h.Get(); got != uint64(want) {
			b.Fatalf("victoriametrics counter: got %d; want %d", got, want)
		}
	}
}

// vmHistData parses a Set's exposition of one PrometheusHistogram.
func vmHistData(b *testing.B, s *vm.Set) (n int64, sum float64, buckets []int64) {
	b.Helper()
	var out bytes.Buffer
	s.WritePrometheus(&out)
	buckets = make([]int64, len(histBounds)+1)
	var cum []int64 // cumulative, le bounds then +Inf
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		line := sc.Text()
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 || strings.HasPrefix(line, "#") {
			continue
		}
		num := line[sp+1:]
		switch {
		case strings.HasPrefix(line, "histogram_2tags_bucket{"):
			c, err := strconv.ParseInt(num, 10, 64)
			if err != nil {
				b.Fatalf("victoriametrics exposition %q: %v", line, err)
			}
			cum = append(cum, c)
		case strings.HasPrefix(line, "histogram_2tags_count{"):
			n, _ = strconv.ParseInt(num, 10, 64)
		case strings.HasPrefix(line, "histogram_2tags_sum{"):
			sum, _ = strconv.ParseFloat(num, 64)
		}
	}
	if len(cum) != len(histBounds)+1 {
		b.Fatalf("victoriametrics exposition: got %d bucket lines; want %d:\n%s", len(cum), len(histBounds)+1, out.String())
	}
	var prev int64
	for i, c := range cum {
		buckets[i] = c - prev
		prev = c
	}
	return n, sum, buckets
}

//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func vmHist(natural, parallel bool) func(*testing.B) {
	return func(b *testing.B) {
		s := vm.NewSet()
		const name = `histogram_2tags{method="v0",status="v1"}`
		h := s.GetOrCreatePrometheusHistogramExt(name, histBounds[:])
		var counts []int
		b.ReportAllocs()
		const f = `histogram_2tags{method=%q,status=%q}`
		switch {
		case parallel && natural:
			counts = parallelLoops(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					s.GetOrCreatePrometheusHistogramExt(fmt.Sprintf(f, "v0", "v1"), histBounds[:]).Update(histValues[i&1023])
				}
				return i
			})
		case parallel:
			counts = parallelLoops(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					h.Update(histValues[i&1023])
				}
				return i
			})
		case natural:
			i := 0
			for b.Loop() {
				s.GetOrCreatePrometheusHistogramExt(fmt.Sprintf(f, "v0", "v1"), histBounds[:]).Update(histValues[i&1023])
				i++
			}
			counts = []int{i}
		default:
			i := 0
			for b.Loop() {
				h.Update(histValues[i&1023])
				i++
			}
			counts = []int{i}
		}
		b.StopTimer()
		n, sum, buckets := vmHistData(b, s)
		checkHistLE(b, "victoriametrics histogram", counts, n, sum, buckets)
	}
}

// ---------------------------------------------------------------------------
// OpenTelemetry SDK: natural API Add/Record(ctx, v,
// metric.WithAttributes(...)) per call; fastest a precomputed
// metric.WithAttributeSet option. A fresh MeterProvider with a ManualReader
// per invocation (cumulative temporality, default exemplar filter).

// otelSetupFunc returns a fresh meter and a function collecting what it
// recorded.
type otelSetupFunc func(b *testing.B) (metric.Meter, func() metricdata.ResourceMetrics)

func otelSetup(b *testing.B) (metric.Meter, func() metricdata.ResourceMetrics) {
	b.Helper()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return mp.Meter("bench"), func() metricdata.ResourceMetrics {
		var rm metricdata.ResourceMetrics
		if err := r.Collect(context.Background(), &rm); err != nil {
			b.Fatalf("otel Collect: got error %v; want nil", err)
		}
		return rm
	}
}

func otelData(b *testing.B, rm metricdata.ResourceMetrics, name string) metricdata.Aggregation {
	b.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m.Data
			}
		}
	}
	b.Fatalf("otel: no metric %q collected", name)
	return nil
}

func otelSum(b *testing.B, rm metricdata.ResourceMetrics, name string, nattrs int) int64 {
	b.Helper()
	s, ok := otelData(b, rm, name).(metricdata.Sum[int64])
	if !ok || len(s.DataPoints) != 1 {
		b.Fatalf("otel %q: got %#v; want one int64 sum data point", name, otelData(b, rm, name))
	}
	if got := s.DataPoints[0].Attributes.Len(); got != nattrs {
		b.Fatalf("otel %q: got %d attributes; want %d", name, got, nattrs)
	}
	return s.DataPoints[0].Value
}

func otelAttrs(n int) []attribute.KeyValue {
	names := keys2
	if n == 8 {
		names = keys8
	}
	kvs := make([]attribute.KeyValue, n)
	for i := range kvs {
		kvs[i] = attribute.String(names[i], vals8[i])
	}
	return kvs
}

//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func otelCounter(nkeys int, natural, parallel bool) func(*testing.B) {
	return otelCounterOn(otelSetup, nkeys, natural, parallel)
}

// otelCounterOn runs the counter scenarios on the MeterProvider setup
// returns: the SDK's (otelSetup) or zerostat's (zotelSetup).
//
//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func otelCounterOn(setup otelSetupFunc, nkeys int, natural, parallel bool) func(*testing.B) {
	return func(b *testing.B) {
		meter, collect := setup(b)
		ctx := context.Background()
		if nkeys == 0 {
			c, err := meter.Int64Counter("counter_notags")
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				c.Add(ctx, 1)
			}
			if got := otelSum(b, collect(), "counter_notags", 0); got != int64(b.N) {
				b.Fatalf("otel counter: got %d; want %d", got, b.N)
			}
			return
		}
		// The fastest form: the attribute set and the variadic option slice
		// built once (a fresh slice per call would escape: 16 B, 1 alloc).
		set := []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(otelAttrs(nkeys)...))}
		if nkeys == 8 {
			var cs [8]metric.Int64Counter
			for j := range cs {
				var err error
				if cs[j], err = meter.Int64Counter(fmt.Sprintf("m%d", j)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			if natural {
				for b.Loop() {
					// One attribute option per call, shared by the 8 Adds.
					opt := metric.WithAttributes(
						attribute.String("k1", "v0"), attribute.String("k2", "v1"),
						attribute.String("k3", "v2"), attribute.String("k4", "v3"),
						attribute.String("k5", "v4"), attribute.String("k6", "v5"),
						attribute.String("k7", "v6"), attribute.String("k8", "v7"))
					for j := range cs {
						cs[j].Add(ctx, int64(j+1), opt)
					}
				}
			} else {
				for b.Loop() {
					cs[0].Add(ctx, 1, set...)
					cs[1].Add(ctx, 2, set...)
					cs[2].Add(ctx, 3, set...)
					cs[3].Add(ctx, 4, set...)
					cs[4].Add(ctx, 5, set...)
					cs[5].Add(ctx, 6, set...)
					cs[6].Add(ctx, 7, set...)
					cs[7].Add(ctx, 8, set...)
				}
			}
			rm := collect()
			for j := range cs {
				if got, want := otelSum(b, rm, fmt.Sprintf("m%d", j), 8), int64(b.N)*int64(j+1); got != want {
					b.Fatalf("otel counter %d: got %d; want %d", j, got, want)
				}
			}
			return
		}
		c, err := meter.Int64Counter("counter_2tags")
		if err != nil {
			b.Fatal(err)
		}
		var counts []int
		b.ReportAllocs()
		switch {
		case parallel && natural:
			counts = parallelLoops(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					c.Add(ctx, 1, metric.WithAttributes(attribute.String("method", "v0"), attribute.String("status", "v1")))
				}
				return i
			})
		case parallel:
			counts = parallelLoops(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					c.Add(ctx, 1, set...)
				}
				return i
			})
		case natural:
			for b.Loop() {
				c.Add(ctx, 1, metric.WithAttributes(attribute.String("method", "v0"), attribute.String("status", "v1")))
			}
		default:
			for b.Loop() {
				c.Add(ctx, 1, set...)
			}
		}
		b.StopTimer()
		want := b.N
		if parallel {
			want = total(counts)
		}
		if got := otelSum(b, collect(), "counter_2tags", 2); got != int64(want) {
			b.Fatalf("otel counter: got %d; want %d", got, want)
		}
	}
}

//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func otelHist(natural, parallel bool) func(*testing.B) {
	return otelHistOn(otelSetup, natural, parallel)
}

// otelHistOn runs the histogram scenarios on the MeterProvider setup
// returns.
//
//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func otelHistOn(setup otelSetupFunc, natural, parallel bool) func(*testing.B) {
	return func(b *testing.B) {
		meter, collect := setup(b)
		ctx := context.Background()
		h, err := meter.Float64Histogram("histogram_2tags", metric.WithExplicitBucketBoundaries(histBounds[:]...))
		if err != nil {
			b.Fatal(err)
		}
		set := []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(otelAttrs(2)...))}
		var counts []int
		b.ReportAllocs()
		switch {
		case parallel && natural:
			counts = parallelLoops(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					h.Record(ctx, histValues[i&1023], metric.WithAttributes(attribute.String("method", "v0"), attribute.String("status", "v1")))
				}
				return i
			})
		case parallel:
			counts = parallelLoops(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					h.Record(ctx, histValues[i&1023], set...)
				}
				return i
			})
		case natural:
			i := 0
			for b.Loop() {
				h.Record(ctx, histValues[i&1023], metric.WithAttributes(attribute.String("method", "v0"), attribute.String("status", "v1")))
				i++
			}
			counts = []int{i}
		default:
			i := 0
			for b.Loop() {
				h.Record(ctx, histValues[i&1023], set...)
				i++
			}
			counts = []int{i}
		}
		b.StopTimer()
		d, ok := otelData(b, collect(), "histogram_2tags").(metricdata.Histogram[float64])
		if !ok || len(d.DataPoints) != 1 {
			b.Fatalf("otel histogram: got %#v; want one float64 histogram data point", d)
		}
		p := d.DataPoints[0]
		buckets := make([]int64, len(p.BucketCounts))
		for i, c := range p.BucketCounts {
			buckets[i] = int64(c)
		}
		if len(buckets) != len(histBounds)+1 {
			b.Fatalf("otel histogram: got %d buckets; want %d", len(buckets), len(histBounds)+1)
		}
		checkHistLE(b, "otel histogram", counts, int64(p.Count), p.Sum, buckets)
	}
}
