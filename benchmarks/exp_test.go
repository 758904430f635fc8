package benchmarks

// Exponential histograms (issue 45) in the record scenarios, beside the
// classic 15-bound histogram of histogram_2tags and its peers: the same
// values (histValues, cycling), the same 2 tags, the same paths.
//
//	scenario=exphist_2tags and exphist_2tags_parallel (b.RunParallel)
//
// impl=zerostat is stats.Record through a context built once into a view
// of view.ExponentialDistribution(0, 0) (MaxSize 160, MaxScale 20),
// zerostat_handle the same view through Float64Measure.Bind; otel and
// otel_attrset the OTel SDK v1.47.0 with AggregationBase2ExponentialHistogram
// (MaxSize 160, MaxScale 20) selected by a view, WithAttributes per call
// or a precomputed WithAttributeSet; zerostat_otel and
// zerostat_otel_attrset the same OTel code on zerostat's MeterProvider
// with WithExponentialHistograms(160, 20); prometheus and
// prometheus_handle client_golang v1.25.0's native histogram
// (NativeHistogramBucketFactor 1.1, so schema 3, and Buckets nil: with a
// factor above 1 client_golang then makes no classic buckets, which the
// check asserts) through WithLabelValues per call or a kept child;
// victoriametrics and victoriametrics_handle VictoriaMetrics/metrics'
// Histogram, whose buckets need no choosing either (18 log-spaced
// "vmrange" buckets per decade; not base 2, not exportable as an
// exponential histogram: a peer for the cost of a bucketless histogram,
// not for its format).
//
// Every row checks after its loop that the SDK holds exactly what it was
// given: count, sum, min and max, the scale (the largest at which every
// value fits in 160 buckets, computed by internal/exphist) and every
// bucket's count at it (Prometheus: at its schema 3, its index being the
// OTel index plus 1).

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/zerostat/zerostat/internal/exphist"
	zotel "github.com/zerostat/zerostat/otel"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// The exponential aggregation of every row: the OTel SDK's defaults.
const (
	expMaxSize  = 160
	expMaxScale = 20
	// promFactor is the native histograms' NativeHistogramBucketFactor:
	// client_golang picks the largest schema whose factor 2^(2^-schema)
	// is at most it, 3 (factor 1.0905).
	promFactor = 1.1
	promSchema = 3
)

func init() {
	for _, sc := range []struct {
		name     string
		parallel bool
	}{{"exphist_2tags", false}, {"exphist_2tags_parallel", true}} {
		p := sc.parallel
		scenarios = append(scenarios, scenario{sc.name, []impl{
			{"zerostat", zsExp(false, p)},
			{"zerostat_handle", zsExp(true, p)},
			{"prometheus", promNative(true, p)},
			{"prometheus_handle", promNative(false, p)},
			{"victoriametrics", vmLogHist(true, p)},
			{"victoriametrics_handle", vmLogHist(false, p)},
			{"otel", otelExpOn(otelExpSetup, true, p)},
			{"otel_attrset", otelExpOn(otelExpSetup, false, p)},
			{"zerostat_otel", otelExpOn(zotelExpSetup, true, p)},
			{"zerostat_otel_attrset", otelExpOn(zotelExpSetup, false, p)},
		}})
	}
}

// expWant is what an exponential histogram of MaxSize 160 and MaxScale 20
// holds after each recorder i of counts recorded histValues[0..counts[i]),
// cycling.
type expWant struct {
	count         uint64
	sum, min, max float64
	scale         int32
	mult          [len(histValues)]uint64 // how often each value was recorded
}

func expExpect(counts []int) *expWant {
	w := &expWant{min: math.Inf(1), max: math.Inf(-1)}
	for _, c := range counts {
		full, rest := c/len(histValues), c%len(histValues)
		for i := range w.mult {
			w.mult[i] += uint64(full)
			if i < rest {
				w.mult[i]++
			}
		}
	}
	// The scale is a function of the set of values recorded, not of how
	// often each was: record each distinct one once.
	h := exphist.MustNew(expMaxSize, expMaxScale)
	for i, v := range histValues {
		if w.mult[i] == 0 {
			continue
		}
		h.Record(v)
		w.count += w.mult[i]
		w.sum += v * float64(w.mult[i]) // integers: exact in any order
		w.min, w.max = min(w.min, v), max(w.max, v)
	}
	var s exphist.Snapshot
	h.Snapshot(&s)
	w.scale = s.Scale
	return w
}

// buckets returns the expected positive bucket counts at scale, by index
// (OTel's index plus shift: Prometheus's bucket i is OTel's i-1).
func (w *expWant) buckets(scale, shift int32) map[int32]uint64 {
	m := map[int32]uint64{}
	for i, v := range histValues {
		if w.mult[i] > 0 {
			m[exphist.Index(v, scale)+shift] += w.mult[i]
		}
	}
	return m
}

// check compares what an SDK reports with w: impl names the SDK; got
// holds the positive buckets by index (zero counts left out).
func (w *expWant) check(b *testing.B, impl string, scale int32, count uint64, sum, mn, mx float64, zero uint64, neg int, got map[int32]uint64) {
	b.Helper()
	if scale != w.scale {
		b.Fatalf("%s: got scale %d; want %d", impl, scale, w.scale)
	}
	w.checkAt(b, impl, scale, 0, count, sum, mn, mx, zero, neg, got)
}

func (w *expWant) checkAt(b *testing.B, impl string, scale, shift int32, count uint64, sum, mn, mx float64, zero uint64, neg int, got map[int32]uint64) {
	b.Helper()
	if count != w.count || sum != w.sum || zero != 0 || neg != 0 {
		b.Fatalf("%s: got count %d, sum %v, zero count %d, %d negative buckets; want %d, %v, 0, 0", impl, count, sum, zero, neg, w.count, w.sum)
	}
	if !math.IsNaN(mn) && (mn != w.min || mx != w.max) {
		b.Fatalf("%s: got min %v, max %v; want %v, %v", impl, mn, mx, w.min, w.max)
	}
	want := w.buckets(scale, shift)
	for i, c := range got {
		if c == 0 {
			delete(got, i)
		}
	}
	if len(got) != len(want) {
		b.Fatalf("%s: got %d non-empty buckets; want %d", impl, len(got), len(want))
	}
	for i, c := range want {
		if got[i] != c {
			b.Fatalf("%s: bucket %d: got %d; want %d", impl, i, got[i], c)
		}
	}
}

// spanCounts returns the counts of consecutive buckets from offset, by
// index.
func spanCounts[T int64 | uint64](offset int32, counts []T) map[int32]uint64 {
	m := map[int32]uint64{}
	for i, c := range counts {
		m[offset+int32(i)] = uint64(c)
	}
	return m
}

// runHistParallel runs the loop of a parallel histogram row under
// RunParallel (see parallelLoops); it returns each recorder's iterations.
func runHistParallel(b *testing.B, loop func(pb *testing.PB) int) []int {
	b.ReportAllocs()
	b.ResetTimer()
	counts := parallelLoops(b, loop)
	b.StopTimer()
	return counts
}

// zerostat: a view of view.ExponentialDistribution(0, 0) keyed by 2 tags;
// stats.Record through a context built once, or a bound handle.
//
//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func zsExp(handle, parallel bool) func(*testing.B) {
	return func(b *testing.B) {
		m := stats.Float64("bench/exphist_2tags", "", stats.UnitMilliseconds)
		keys := zsKeys(keys2...)
		name := uniq("exphist_2tags")
		defer zsRegister(b, &view.View{Name: name, Measure: m, Aggregation: view.ExponentialDistribution(0, 0), TagKeys: keys})()
		ctx := zsCtx(b, keys)
		var counts []int
		if handle {
			h := m.Bind(tag.FromContext(ctx))
			if parallel {
				counts = runHistParallel(b, func(pb *testing.PB) int {
					i := 0
					for ; pb.Next(); i++ {
						h.Record(histValues[i&1023])
					}
					return i
				})
			} else {
				// The loop written out, as a user's is (no closure call).
				i := 0
				b.ReportAllocs()
				for b.Loop() {
					h.Record(histValues[i&1023])
					i++
				}
				b.StopTimer()
				counts = []int{i}
			}
		} else {
			if parallel {
				counts = runHistParallel(b, func(pb *testing.PB) int {
					i := 0
					for ; pb.Next(); i++ {
						stats.Record(ctx, m.M(histValues[i&1023]))
					}
					return i
				})
			} else {
				i := 0
				b.ReportAllocs()
				for b.Loop() {
					stats.Record(ctx, m.M(histValues[i&1023]))
					i++
				}
				b.StopTimer()
				counts = []int{i}
			}
		}
		d, ok := zsRow(b, name, 2).(*view.ExponentialDistributionData)
		if !ok {
			b.Fatalf("zerostat view %q: got %T; want *view.ExponentialDistributionData", name, zsRow(b, name, 2))
		}
		expExpect(counts).check(b, "zerostat exponential distribution", d.Scale, uint64(d.Count), d.Sum, d.Min, d.Max,
			uint64(d.ZeroCount), len(d.NegativeCounts), spanCounts(d.PositiveOffset, d.PositiveCounts))
	}
}

// Prometheus client_golang: a native-only HistogramVec over 2 labels.
//
//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func promNative(natural, parallel bool) func(*testing.B) {
	return func(b *testing.B) {
		vec := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "exphist_2tags", NativeHistogramBucketFactor: promFactor}, keys2)
		h := vec.WithLabelValues("v0", "v1")
		var counts []int
		switch {
		case natural && parallel:
			counts = runHistParallel(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					vec.WithLabelValues("v0", "v1").Observe(histValues[i&1023])
				}
				return i
			})
		case parallel:
			counts = runHistParallel(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					h.Observe(histValues[i&1023])
				}
				return i
			})
		case natural:
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				vec.WithLabelValues("v0", "v1").Observe(histValues[i&1023])
				i++
			}
			b.StopTimer()
			counts = []int{i}
		default:
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				h.Observe(histValues[i&1023])
				i++
			}
			b.StopTimer()
			counts = []int{i}
		}
		promNativeCheck(b, "prometheus native histogram", promWrite(b, h.(prometheus.Metric)).GetHistogram(), expExpect(counts))
	}
}

// promNativeCheck checks a client_golang native histogram (no classic
// buckets) against w, at its schema.
func promNativeCheck(b *testing.B, impl string, d *dto.Histogram, w *expWant) {
	b.Helper()
	if n := len(d.GetBucket()); n != 0 {
		b.Fatalf("%s: got %d classic buckets; want none", impl, n)
	}
	if d.GetSchema() != promSchema {
		b.Fatalf("%s: got schema %d; want %d", impl, d.GetSchema(), promSchema)
	}
	got := map[int32]uint64{}
	var c int64
	deltas := d.GetPositiveDelta()
	idx, k := int32(0), 0
	for _, sp := range d.GetPositiveSpan() {
		idx += sp.GetOffset()
		for range sp.GetLength() {
			if k >= len(deltas) {
				b.Fatalf("%s: spans cover more buckets than the %d deltas", impl, len(deltas))
			}
			c += deltas[k]
			got[idx] = uint64(c)
			idx++
			k++
		}
	}
	w.checkAt(b, impl, promSchema, 1, d.GetSampleCount(), d.GetSampleSum(), math.NaN(), 0,
		d.GetZeroCount(), len(d.GetNegativeSpan()), got)
}

// VictoriaMetrics/metrics' Histogram (vmrange buckets): natural API
// GetOrCreateHistogram(formatted name) per call, fastest a kept
// *Histogram. Checked by count and sum (its buckets are not the
// exponential ones).
//
//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func vmLogHist(natural, parallel bool) func(*testing.B) {
	return func(b *testing.B) {
		s := vm.NewSet()
		h := s.GetOrCreateHistogram(`exphist_2tags{method="v0",status="v1"}`)
		const f = `exphist_2tags{method=%q,status=%q}`
		var counts []int
		switch {
		case natural && parallel:
			counts = runHistParallel(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					s.GetOrCreateHistogram(fmt.Sprintf(f, "v0", "v1")).Update(histValues[i&1023])
				}
				return i
			})
		case parallel:
			counts = runHistParallel(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					h.Update(histValues[i&1023])
				}
				return i
			})
		case natural:
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				s.GetOrCreateHistogram(fmt.Sprintf(f, "v0", "v1")).Update(histValues[i&1023])
				i++
			}
			b.StopTimer()
			counts = []int{i}
		default:
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				h.Update(histValues[i&1023])
				i++
			}
			b.StopTimer()
			counts = []int{i}
		}
		w := expExpect(counts)
		var out strings.Builder
		s.WritePrometheus(&out)
		var n, sum float64
		for _, line := range strings.Split(out.String(), "\n") {
			sp := strings.LastIndexByte(line, ' ')
			if sp < 0 {
				continue
			}
			var err error
			switch {
			case strings.HasPrefix(line, "exphist_2tags_count{"):
				n, err = strconv.ParseFloat(line[sp+1:], 64)
			case strings.HasPrefix(line, "exphist_2tags_sum{"):
				sum, err = strconv.ParseFloat(line[sp+1:], 64)
			}
			if err != nil {
				b.Fatalf("victoriametrics exposition %q: %v", line, err)
			}
		}
		if n != float64(w.count) || sum != w.sum {
			b.Fatalf("victoriametrics histogram: got count %v, sum %v; want %d, %v", n, sum, w.count, w.sum)
		}
	}
}

// OpenTelemetry: the SDK with the exponential aggregation selected by a
// view for the scenario's instrument; zerostat's MeterProvider with
// WithExponentialHistograms.

func otelExpSetup(b *testing.B) (metric.Meter, func() metricdata.ResourceMetrics) {
	b.Helper()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r), sdkmetric.WithView(sdkmetric.NewView(
		sdkmetric.Instrument{Name: "exphist_2tags"},
		sdkmetric.Stream{Aggregation: sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: expMaxSize, MaxScale: expMaxScale}})))
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return mp.Meter("bench"), func() metricdata.ResourceMetrics {
		var rm metricdata.ResourceMetrics
		if err := r.Collect(context.Background(), &rm); err != nil {
			b.Fatalf("otel Collect: got error %v; want nil", err)
		}
		return rm
	}
}

// zotelExpSetup is zotelSetup with every histogram exponential; its
// collect reads the views (view.RetrieveData) into the SDK's types.
func zotelExpSetup(b *testing.B) (metric.Meter, func() metricdata.ResourceMetrics) {
	b.Helper()
	prefix := uniq("zotelexp") + "."
	mp := zotel.NewMeterProvider(zotel.WithViewPrefix(prefix), zotel.WithExponentialHistograms(expMaxSize, expMaxScale))
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return mp.Meter("bench"), func() metricdata.ResourceMetrics {
		var ms []metricdata.Metrics
		for _, v := range mp.Views() {
			rows, err := view.RetrieveData(v.Name)
			if err != nil {
				b.Fatalf("zerostat otel: RetrieveData(%q): %v", v.Name, err)
			}
			var h metricdata.ExponentialHistogram[float64]
			for _, r := range rows {
				d, ok := r.Data.(*view.ExponentialDistributionData)
				if !ok {
					b.Fatalf("zerostat otel: view %q: got %T; want *view.ExponentialDistributionData", v.Name, r.Data)
				}
				h.DataPoints = append(h.DataPoints, metricdata.ExponentialHistogramDataPoint[float64]{
					Attributes: attrsOf(r.Tags), StartTime: d.Start, Time: time.Now(),
					Count: uint64(d.Count), Sum: d.Sum, Scale: d.Scale, ZeroCount: uint64(d.ZeroCount),
					Min: metricdata.NewExtrema(d.Min), Max: metricdata.NewExtrema(d.Max),
					PositiveBucket: metricdata.ExponentialBucket{Offset: d.PositiveOffset, Counts: toU64(d.PositiveCounts)},
					NegativeBucket: metricdata.ExponentialBucket{Offset: d.NegativeOffset, Counts: toU64(d.NegativeCounts)},
				})
			}
			ms = append(ms, metricdata.Metrics{Name: strings.TrimPrefix(v.Name, prefix), Data: h})
		}
		return metricdata.ResourceMetrics{ScopeMetrics: []metricdata.ScopeMetrics{{Metrics: ms}}}
	}
}

func toU64(cs []int64) []uint64 {
	out := make([]uint64, len(cs))
	for i, c := range cs {
		out[i] = uint64(c)
	}
	return out
}

// otelExpOn runs the exponential histogram scenarios on the provider
// setup returns.
//
//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func otelExpOn(setup otelSetupFunc, natural, parallel bool) func(*testing.B) {
	return func(b *testing.B) {
		meter, collect := setup(b)
		ctx := context.Background()
		h, err := meter.Float64Histogram("exphist_2tags")
		if err != nil {
			b.Fatal(err)
		}
		set := []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(otelAttrs(2)...))}
		var counts []int
		switch {
		case natural && parallel:
			counts = runHistParallel(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					h.Record(ctx, histValues[i&1023], metric.WithAttributes(attribute.String("method", "v0"), attribute.String("status", "v1")))
				}
				return i
			})
		case parallel:
			counts = runHistParallel(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					h.Record(ctx, histValues[i&1023], set...)
				}
				return i
			})
		case natural:
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				h.Record(ctx, histValues[i&1023], metric.WithAttributes(attribute.String("method", "v0"), attribute.String("status", "v1")))
				i++
			}
			b.StopTimer()
			counts = []int{i}
		default:
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				h.Record(ctx, histValues[i&1023], set...)
				i++
			}
			b.StopTimer()
			counts = []int{i}
		}
		d, ok := otelData(b, collect(), "exphist_2tags").(metricdata.ExponentialHistogram[float64])
		if !ok || len(d.DataPoints) != 1 {
			b.Fatalf("otel exponential histogram: got %#v; want one float64 exponential histogram data point", d)
		}
		p := d.DataPoints[0]
		if p.Attributes.Len() != 2 {
			b.Fatalf("otel exponential histogram: got %d attributes; want 2", p.Attributes.Len())
		}
		mn, _ := p.Min.Value()
		mx, _ := p.Max.Value()
		expExpect(counts).check(b, "otel exponential histogram", p.Scale, p.Count, p.Sum, mn, mx,
			p.ZeroCount, len(p.NegativeBucket.Counts), spanCounts(p.PositiveBucket.Offset, p.PositiveBucket.Counts))
	}
}
