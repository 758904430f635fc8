package benchmarks

// The per-request family (issue 19): a request handler records n counters
// (n = 1, 4, 8; counter j adds j+1) with 2 tags, method=v0 and status=v1.
// Rows are BenchmarkRecord/scenario=request_<n>m/impl=<impl>:
//
// Tags resolved per call, as a handler that knows them only per request:
//   - zerostat_new: tag.New(ctx, Upsert, Upsert) then one Record of n
//     measurements; the mutators are built per call.
//   - zerostat_rwt: RecordWithTags with mutators built per call.
//   - opencensus_new: OpenCensus's tag.New then Record.
//   - otel: metric.WithAttributes per call, one option for the n Adds.
//   - prometheus: WithLabelValues("v0", "v1") per counter.
//   - victoriametrics: GetOrCreateCounter by formatted name per counter.
//
// Tags resolved once and kept:
//   - zerostat_ctx: the context built once, Record per request.
//   - zerostat_handle: stats handles bound once (Int64Measure.Bind).
//   - otel_attrset: a precomputed metric.WithAttributeSet option.
//   - prometheus_handle, victoriametrics_handle: kept children.
//   - floor: n atomic adds.

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	vm "github.com/VictoriaMetrics/metrics"
	"github.com/prometheus/client_golang/prometheus"
	ocstats "go.opencensus.io/stats"
	ocview "go.opencensus.io/stats/view"
	octag "go.opencensus.io/tag"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

func init() {
	for _, n := range []int{1, 4, 8} {
		scenarios = append(scenarios, scenario{fmt.Sprintf("request_%dm", n), []impl{
			{"floor", reqFloor(n)},
			{"zerostat_new", reqZerostat(n, "new")},
			{"zerostat_rwt", reqZerostat(n, "rwt")},
			{"zerostat_ctx", reqZerostat(n, "ctx")},
			{"zerostat_handle", reqZerostat(n, "handle")},
			{"opencensus_new", reqOpenCensus(n)},
			{"otel", reqOtel(n, true)},
			{"otel_attrset", reqOtel(n, false)},
			{"prometheus", reqProm(n, true)},
			{"prometheus_handle", reqProm(n, false)},
			{"victoriametrics", reqVM(n, true)},
			{"victoriametrics_handle", reqVM(n, false)},
		}})
	}
}

//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func reqFloor(n int) func(*testing.B) {
	return func(b *testing.B) {
		var c [8]atomic.Int64
		b.ReportAllocs()
		for b.Loop() {
			for j := range n {
				c[j].Add(int64(j + 1))
			}
		}
		for j := range n {
			checkCount(b, "floor", fmt.Sprint("counter ", j), c[j].Load(), int64(b.N)*int64(j+1))
		}
	}
}

//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func reqZerostat(n int, form string) func(*testing.B) {
	return func(b *testing.B) {
		keys := zsKeys(keys2...)
		ms := make([]*stats.Int64Measure, n)
		names := make([]string, n)
		for j := range ms {
			ms[j] = stats.Int64(fmt.Sprintf("bench/request/m%d", j), "", stats.UnitDimensionless)
			names[j] = uniq(fmt.Sprintf("request_%dm/m%d", n, j))
			defer zsRegister(b, &view.View{Name: names[j], Measure: ms[j], Aggregation: view.Sum(), TagKeys: keys})()
		}
		req := context.Background() // the request's context, without tags
		kept := zsCtx(b, keys)
		hs := make([]*stats.Int64Handle, n)
		for j := range hs {
			hs[j] = ms[j].Bind(tag.FromContext(kept))
		}
		var mbuf [8]stats.Measurement
		measurements := func() []stats.Measurement {
			for j := range n {
				mbuf[j] = ms[j].M(int64(j + 1))
			}
			return mbuf[:n]
		}
		b.ReportAllocs()
		switch form {
		case "new":
			for b.Loop() {
				ctx, err := tag.New(req, tag.Upsert(keys[0], "v0"), tag.Upsert(keys[1], "v1"))
				if err != nil {
					b.Fatalf("zerostat tag.New: got error %v; want nil", err)
				}
				stats.Record(ctx, measurements()...)
			}
		case "rwt":
			for b.Loop() {
				muts := [2]tag.Mutator{tag.Upsert(keys[0], "v0"), tag.Upsert(keys[1], "v1")}
				if err := stats.RecordWithTags(req, muts[:], measurements()...); err != nil {
					b.Fatalf("zerostat RecordWithTags: got error %v; want nil", err)
				}
			}
		case "ctx":
			for b.Loop() {
				stats.Record(kept, measurements()...)
			}
		case "handle":
			for b.Loop() {
				for j, h := range hs {
					h.Record(int64(j + 1))
				}
			}
		}
		b.StopTimer()
		for j, name := range names {
			checkSum(b, "zerostat", name, zsRow(b, name, 2).(*view.SumData).Value, float64(b.N)*float64(j+1))
		}
	}
}

//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func reqOpenCensus(n int) func(*testing.B) {
	return func(b *testing.B) {
		keys := ocKeys(keys2...)
		ms := make([]*ocstats.Int64Measure, n)
		names := make([]string, n)
		for j := range ms {
			ms[j] = ocstats.Int64(fmt.Sprintf("bench/request/m%d", j), "", ocstats.UnitDimensionless)
			names[j] = uniq(fmt.Sprintf("request_%dm/m%d", n, j))
			defer ocRegister(b, &ocview.View{Name: names[j], Measure: ms[j], Aggregation: ocview.Sum(), TagKeys: keys})()
		}
		req := context.Background()
		mbuf := make([]ocstats.Measurement, n)
		b.ReportAllocs()
		for b.Loop() {
			ctx, err := octag.New(req, octag.Upsert(keys[0], "v0"), octag.Upsert(keys[1], "v1"))
			if err != nil {
				b.Fatalf("opencensus tag.New: got error %v; want nil", err)
			}
			for j := range mbuf {
				mbuf[j] = ms[j].M(int64(j + 1))
			}
			ocstats.Record(ctx, mbuf...)
		}
		b.StopTimer()
		for j, name := range names {
			checkSum(b, "opencensus", name, ocRow(b, name, 2).(*ocview.SumData).Value, float64(b.N)*float64(j+1))
		}
	}
}

//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func reqOtel(n int, natural bool) func(*testing.B) {
	return func(b *testing.B) {
		meter, collect := otelSetup(b)
		ctx := context.Background()
		cs := make([]metric.Int64Counter, n)
		for j := range cs {
			var err error
			if cs[j], err = meter.Int64Counter(fmt.Sprintf("m%d", j)); err != nil {
				b.Fatal(err)
			}
		}
		set := []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(otelAttrs(2)...))}
		b.ReportAllocs()
		if natural {
			for b.Loop() {
				opt := metric.WithAttributes(attribute.String("method", "v0"), attribute.String("status", "v1"))
				for j, c := range cs {
					c.Add(ctx, int64(j+1), opt)
				}
			}
		} else {
			for b.Loop() {
				for j, c := range cs {
					c.Add(ctx, int64(j+1), set...)
				}
			}
		}
		b.StopTimer()
		rm := collect()
		for j := range cs {
			if got, want := otelSum(b, rm, fmt.Sprintf("m%d", j), 2), int64(b.N)*int64(j+1); got != want {
				b.Fatalf("otel counter %d: got %d; want %d", j, got, want)
			}
		}
	}
}

//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func reqProm(n int, natural bool) func(*testing.B) {
	return func(b *testing.B) {
		vecs := make([]*prometheus.CounterVec, n)
		hs := make([]prometheus.Counter, n)
		for j := range vecs {
			vecs[j] = prometheus.NewCounterVec(prometheus.CounterOpts{Name: fmt.Sprintf("m%d_total", j)}, keys2)
			hs[j] = vecs[j].WithLabelValues("v0", "v1")
		}
		b.ReportAllocs()
		if natural {
			for b.Loop() {
				for j, v := range vecs {
					v.WithLabelValues("v0", "v1").Add(float64(j + 1))
				}
			}
		} else {
			for b.Loop() {
				for j, h := range hs {
					h.Add(float64(j + 1))
				}
			}
		}
		b.StopTimer()
		for j, h := range hs {
			if got, want := promWrite(b, h).GetCounter().GetValue(), float64(b.N)*float64(j+1); got != want {
				b.Fatalf("prometheus counter %d: got %v; want %v", j, got, want)
			}
		}
	}
}

//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func reqVM(n int, natural bool) func(*testing.B) {
	return func(b *testing.B) {
		s := vm.NewSet()
		hs := make([]*vm.Counter, n)
		for j := range hs {
			hs[j] = s.GetOrCreateCounter(fmt.Sprintf(`m%d_total{method="v0",status="v1"}`, j))
		}
		b.ReportAllocs()
		if natural {
			const f = `m%d_total{method=%q,status=%q}`
			for b.Loop() {
				for j := range hs {
					s.GetOrCreateCounter(fmt.Sprintf(f, j, "v0", "v1")).Add(j + 1)
				}
			}
		} else {
			for b.Loop() {
				for j, h := range hs {
					h.Add(j + 1)
				}
			}
		}
		b.StopTimer()
		for j, h := range hs {
			if got, want := h.Get(), uint64(b.N)*uint64(j+1); got != want {
				b.Fatalf("victoriametrics counter %d: got %d; want %d", j, got, want)
			}
		}
	}
}

// Bound handles in the record scenarios (issue 15), as impl=zerostat_handle:
// the measure and its tag set resolved once by Int64Measure.Bind or
// Float64Measure.Bind, then Record per iteration.
func init() {
	handles := map[string]func(*testing.B){
		"counter_notags":           zsHandleCounter(0, false),
		"counter_2tags":            zsHandleCounter(2, false),
		"counter_2tags_parallel":   zsHandleCounter(2, true),
		"histogram_2tags":          zsHandleHist(false),
		"histogram_2tags_parallel": zsHandleHist(true),
		"8measures_8tags":          zsHandle8x8,
	}
	for i := range scenarios {
		if fn := handles[scenarios[i].name]; fn != nil {
			scenarios[i].impls = append(scenarios[i].impls, impl{"zerostat_handle", fn})
		}
	}
}

//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func zsHandleCounter(nkeys int, parallel bool) func(*testing.B) {
	return func(b *testing.B) {
		m := stats.Int64("bench/handle/counter", "", stats.UnitDimensionless)
		keys := zsKeys(keys2[:nkeys]...)
		name := uniq("handle_counter")
		defer zsRegister(b, &view.View{Name: name, Measure: m, Aggregation: view.Sum(), TagKeys: keys})()
		h := m.Bind(tag.FromContext(zsCtx(b, keys)))
		b.ReportAllocs()
		var n int
		if parallel {
			b.ResetTimer()
			n = total(parallelLoops(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					h.Record(1)
				}
				return i
			}))
		} else {
			for b.Loop() {
				h.Record(1)
			}
			n = b.N
		}
		b.StopTimer()
		checkSum(b, "zerostat", name, zsRow(b, name, nkeys).(*view.SumData).Value, float64(n))
	}
}

//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func zsHandleHist(parallel bool) func(*testing.B) {
	return func(b *testing.B) {
		m := stats.Float64("bench/handle/histogram", "", stats.UnitMilliseconds)
		keys := zsKeys(keys2...)
		name := uniq("handle_histogram")
		defer zsRegister(b, &view.View{Name: name, Measure: m, Aggregation: view.Distribution(histBounds[:]...), TagKeys: keys})()
		h := m.Bind(tag.FromContext(zsCtx(b, keys)))
		b.ReportAllocs()
		var counts []int
		if parallel {
			b.ResetTimer()
			counts = parallelLoops(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					h.Record(histValues[i&1023])
				}
				return i
			})
		} else {
			i := 0
			for b.Loop() {
				h.Record(histValues[i&1023])
				i++
			}
			counts = []int{i}
		}
		b.StopTimer()
		d := zsRow(b, name, 2).(*view.DistributionData)
		checkDist(b, "zerostat", name, d.Count, d.CountPerBucket, d.Mean, counts)
	}
}

func zsHandle8x8(b *testing.B) {
	keys := zsKeys(keys8...)
	tm := tag.FromContext(zsCtx(b, keys))
	var hs [8]*stats.Int64Handle
	var names [8]string
	for j := range hs {
		m := stats.Int64(fmt.Sprintf("bench/8measures_8tags/m%d", j), "", stats.UnitDimensionless)
		names[j] = uniq(fmt.Sprintf("8measures_8tags/handle/m%d", j))
		defer zsRegister(b, &view.View{Name: names[j], Measure: m, Aggregation: view.Sum(), TagKeys: keys})()
		hs[j] = m.Bind(tm)
	}
	b.ReportAllocs()
	for b.Loop() {
		hs[0].Record(1)
		hs[1].Record(2)
		hs[2].Record(3)
		hs[3].Record(4)
		hs[4].Record(5)
		hs[5].Record(6)
		hs[6].Record(7)
		hs[7].Record(8)
	}
	for j, name := range names {
		checkSum(b, "zerostat", name, zsRow(b, name, 8).(*view.SumData).Value, float64(b.N)*float64(j+1))
	}
}
