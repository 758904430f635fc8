package stats_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// Benchmarks with OpenCensus's names (go.opencensus.io/stats
// benchmark_test.go) and the scenarios of the BRIEF's anchor table. Each
// registers fresh views (a benchmark function runs several times with
// growing b.N) and checks after its loop that every record was aggregated,
// so no benchmark can measure a no-op. The side-by-side comparison with
// OpenCensus and the other peers lives in the benchmarks module.

var benchSeq atomic.Int64

// benchBounds are the 15 bounds of the histogram scenarios.
var benchBounds = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000}

type benchView struct {
	m    *stats.Int64Measure
	name string
}

// newBenchView registers a view over a fresh measure and unregisters it
// when the benchmark ends.
func newBenchView(b *testing.B, agg *view.Aggregation, keys ...tag.Key) benchView {
	b.Helper()
	name := fmt.Sprintf("bench/%s/%d", b.Name(), benchSeq.Add(1))
	m := stats.Int64(name, "", stats.UnitDimensionless)
	v := &view.View{Name: name, Measure: m, Aggregation: agg, TagKeys: keys}
	if err := view.Register(v); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { view.Unregister(v) })
	return benchView{m: m, name: name}
}

// total returns the view's aggregate over all rows: the count for Count
// and Distribution, the sum for Sum.
func (bv benchView) total(b *testing.B) float64 {
	b.Helper()
	rs, err := view.RetrieveData(bv.name)
	if err != nil {
		b.Fatal(err)
	}
	var t float64
	for _, r := range rs {
		switch d := r.Data.(type) {
		case *view.CountData:
			t += float64(d.Value)
		case *view.SumData:
			t += d.Value
		case *view.DistributionData:
			t += float64(d.Count)
		case *view.ExponentialDistributionData:
			t += float64(d.Count)
		case *view.LastValueData:
			t++
		}
	}
	return t
}

func (bv benchView) expect(b *testing.B, want float64) {
	b.Helper()
	if got := bv.total(b); got != want {
		b.Fatalf("%s aggregated %v; want %v", bv.name, got, want)
	}
}

func benchCtx(b *testing.B, keys []tag.Key) context.Context {
	b.Helper()
	var ms []tag.Mutator
	for i, k := range keys {
		ms = append(ms, tag.Upsert(k, fmt.Sprintf("value%d", i)))
	}
	ctx, err := tag.New(context.Background(), ms...)
	if err != nil {
		b.Fatal(err)
	}
	return ctx
}

func keys(n int) []tag.Key {
	ks := make([]tag.Key, n)
	for i := range ks {
		ks[i] = tag.MustNewKey(fmt.Sprintf("key%d", i+1))
	}
	return ks
}

func BenchmarkRecord0(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		stats.Record(ctx)
	}
}

func BenchmarkRecord1(b *testing.B) {
	bv := newBenchView(b, view.Sum())
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		stats.Record(ctx, bv.m.M(1))
	}
	bv.expect(b, float64(b.N))
}

func BenchmarkRecord8(b *testing.B) {
	bv := newBenchView(b, view.Sum())
	m := bv.m
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		stats.Record(ctx, m.M(1), m.M(1), m.M(1), m.M(1), m.M(1), m.M(1), m.M(1), m.M(1))
	}
	bv.expect(b, 8*float64(b.N))
}

func BenchmarkRecord8_Parallel(b *testing.B) {
	bv := newBenchView(b, view.Sum())
	m := bv.m
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			stats.Record(ctx, m.M(1), m.M(1), m.M(1), m.M(1), m.M(1), m.M(1), m.M(1), m.M(1))
		}
	})
	bv.expect(b, 8*float64(b.N))
}

// BenchmarkRecord8_8Tags is OpenCensus's benchmark as it was meant: the
// tags are really in the context (OpenCensus's version drops tag.New's
// result) and 8 measures each feed a view keyed by all 8 tags.
func BenchmarkRecord8_8Tags(b *testing.B) { benchRecord8x8(b, false) }

// BenchmarkRecord8_8Tags_Wrapped is BenchmarkRecord8_8Tags with the tag
// context wrapped by a context.WithValue, as middleware that runs after
// tag.New leaves a request's context: the tags are found through
// ctx.Value (once per measurement).
func BenchmarkRecord8_8Tags_Wrapped(b *testing.B) { benchRecord8x8(b, true) }

func benchRecord8x8(b *testing.B, wrapped bool) {
	ks := keys(8)
	ctx := benchCtx(b, ks)
	if wrapped {
		ctx = context.WithValue(ctx, wrapKey{}, 1)
	}
	var bvs [8]benchView
	for i := range bvs {
		bvs[i] = newBenchView(b, view.Sum(), ks...)
	}
	b.ReportAllocs()
	for b.Loop() {
		stats.Record(ctx, bvs[0].m.M(1), bvs[1].m.M(1), bvs[2].m.M(1), bvs[3].m.M(1),
			bvs[4].m.M(1), bvs[5].m.M(1), bvs[6].m.M(1), bvs[7].m.M(1))
	}
	for _, bv := range bvs {
		bv.expect(b, float64(b.N))
	}
}

type wrapKey struct{}

// BenchmarkRecordNoView: a measure no view uses (one atomic load).
func BenchmarkRecordNoView(b *testing.B) {
	m := stats.Int64(fmt.Sprintf("bench/noview/%d", benchSeq.Add(1)), "", "")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		stats.Record(ctx, m.M(1))
	}
}

func BenchmarkCounterNoTags(b *testing.B) {
	bv := newBenchView(b, view.Count())
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		stats.Record(ctx, bv.m.M(1))
	}
	bv.expect(b, float64(b.N))
}

func BenchmarkCounter2Tags(b *testing.B) {
	ks := keys(2)
	bv := newBenchView(b, view.Count(), ks...)
	ctx := benchCtx(b, ks)
	b.ReportAllocs()
	for b.Loop() {
		stats.Record(ctx, bv.m.M(1))
	}
	bv.expect(b, float64(b.N))
}

func BenchmarkCounter2Tags_Parallel(b *testing.B) {
	ks := keys(2)
	bv := newBenchView(b, view.Count(), ks...)
	ctx := benchCtx(b, ks)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			stats.Record(ctx, bv.m.M(1))
		}
	})
	bv.expect(b, float64(b.N))
}

// BenchmarkCounter2Tags_NewMap builds the tag map per record, as code that
// calls tag.New per request does: the series is found by hash, not cache.
func BenchmarkCounter2Tags_NewMap(b *testing.B) {
	ks := keys(2)
	bv := newBenchView(b, view.Count(), ks...)
	b.ReportAllocs()
	for b.Loop() {
		ctx, _ := tag.New(context.Background(), tag.Upsert(ks[0], "GET"), tag.Upsert(ks[1], "/users"))
		stats.Record(ctx, bv.m.M(1))
	}
	bv.expect(b, float64(b.N))
}

func BenchmarkHistogram2Tags(b *testing.B) {
	ks := keys(2)
	bv := newBenchView(b, view.Distribution(benchBounds...), ks...)
	ctx := benchCtx(b, ks)
	b.ReportAllocs()
	var v int64
	for b.Loop() {
		v = (v + 7919) & 65535
		stats.Record(ctx, bv.m.M(v))
	}
	bv.expect(b, float64(b.N))
}

// BenchmarkHistogram2Tags_UpperInclusive: the same with Prometheus's
// bucket rule (view.DistributionUpperInclusive); it must cost the same.
func BenchmarkHistogram2Tags_UpperInclusive(b *testing.B) {
	ks := keys(2)
	bv := newBenchView(b, view.DistributionUpperInclusive(benchBounds...), ks...)
	ctx := benchCtx(b, ks)
	b.ReportAllocs()
	var v int64
	for b.Loop() {
		v = (v + 7919) & 65535
		stats.Record(ctx, bv.m.M(v))
	}
	bv.expect(b, float64(b.N))
}

func BenchmarkHistogram2Tags_Parallel(b *testing.B) {
	ks := keys(2)
	bv := newBenchView(b, view.Distribution(benchBounds...), ks...)
	ctx := benchCtx(b, ks)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var v int64
		for pb.Next() {
			v = (v + 7919) & 65535
			stats.Record(ctx, bv.m.M(v))
		}
	})
	bv.expect(b, float64(b.N))
}

func BenchmarkLastValue(b *testing.B) {
	bv := newBenchView(b, view.LastValue(), keys(2)...)
	ctx := benchCtx(b, keys(2))
	b.ReportAllocs()
	var v int64
	for b.Loop() {
		v++
		stats.Record(ctx, bv.m.M(v))
	}
	rs, _ := view.RetrieveData(bv.name)
	if len(rs) != 1 || rs[0].Data.(*view.LastValueData).Value != float64(v) {
		b.Fatalf("last value %v; want %v", rs, v)
	}
}

// BenchmarkRecordWithTags2Mut: a context holding 2 tags, 2 pre-built
// mutators, a view keyed by all 4 keys.
func BenchmarkRecordWithTags2Mut(b *testing.B) {
	ks := keys(4)
	bv := newBenchView(b, view.Count(), ks...)
	ctx := benchCtx(b, ks[:2])
	muts := []tag.Mutator{tag.Upsert(ks[2], "c"), tag.Upsert(ks[3], "d")}
	b.ReportAllocs()
	for b.Loop() {
		if err := stats.RecordWithTags(ctx, muts, bv.m.M(1)); err != nil {
			b.Fatal(err)
		}
	}
	bv.expect(b, float64(b.N))
}

// Floors: the minimum work of each scenario, measured in the same run.

func BenchmarkFloorCounter(b *testing.B) {
	var n atomic.Int64
	b.ReportAllocs()
	for b.Loop() {
		n.Add(1)
	}
	if n.Load() != int64(b.N) {
		b.Fatal("lost adds")
	}
}

// BenchmarkFloorHistogram: a linear search of the 15 bounds and two atomic
// adds (bucket, sum).
func BenchmarkFloorHistogram(b *testing.B) {
	var buckets [16]atomic.Int64
	var sum atomic.Int64
	b.ReportAllocs()
	var v int64
	for b.Loop() {
		v = (v + 7919) & 65535
		f := float64(v)
		i := 0
		for i < len(benchBounds) && !(f < benchBounds[i]) {
			i++
		}
		buckets[i].Add(1)
		sum.Add(v)
	}
	var n int64
	for i := range buckets {
		n += buckets[i].Load()
	}
	if n != int64(b.N) {
		b.Fatal("lost adds")
	}
}

// Bound handles: the measure and tag set resolved once (issue 15).

func BenchmarkCounter2Tags_Handle(b *testing.B) {
	ks := keys(2)
	bv := newBenchView(b, view.Count(), ks...)
	h := bv.m.Bind(tag.FromContext(benchCtx(b, ks)))
	b.ReportAllocs()
	for b.Loop() {
		h.Record(1)
	}
	bv.expect(b, float64(b.N))
}

func BenchmarkCounter2Tags_HandleParallel(b *testing.B) {
	ks := keys(2)
	bv := newBenchView(b, view.Count(), ks...)
	h := bv.m.Bind(tag.FromContext(benchCtx(b, ks)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			h.Record(1)
		}
	})
	bv.expect(b, float64(b.N))
}

func BenchmarkHistogram2Tags_Handle(b *testing.B) {
	ks := keys(2)
	bv := newBenchView(b, view.Distribution(benchBounds...), ks...)
	h := bv.m.Bind(tag.FromContext(benchCtx(b, ks)))
	b.ReportAllocs()
	var v int64
	for b.Loop() {
		v = (v + 7919) & 65535
		h.Record(v)
	}
	bv.expect(b, float64(b.N))
}

// The exponential distribution on the classic histogram's paths (issue
// 45: at most 1.3 times BenchmarkHistogram2Tags and _Handle). Values
// 0..65535 as the classic rows record: the scale settles at 3 after the
// first few records (160 buckets over 16 powers of 2).
func BenchmarkExpHistogram2Tags(b *testing.B) {
	ks := keys(2)
	bv := newBenchView(b, view.ExponentialDistribution(0, 0), ks...)
	ctx := benchCtx(b, ks)
	b.ReportAllocs()
	var v int64
	for b.Loop() {
		v = (v + 7919) & 65535
		stats.Record(ctx, bv.m.M(v))
	}
	bv.expect(b, float64(b.N))
}

func BenchmarkExpHistogram2Tags_Parallel(b *testing.B) {
	ks := keys(2)
	bv := newBenchView(b, view.ExponentialDistribution(0, 0), ks...)
	ctx := benchCtx(b, ks)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var v int64
		for pb.Next() {
			v = (v + 7919) & 65535
			stats.Record(ctx, bv.m.M(v))
		}
	})
	bv.expect(b, float64(b.N))
}

func BenchmarkExpHistogram2Tags_Handle(b *testing.B) {
	ks := keys(2)
	bv := newBenchView(b, view.ExponentialDistribution(0, 0), ks...)
	h := bv.m.Bind(tag.FromContext(benchCtx(b, ks)))
	b.ReportAllocs()
	var v int64
	for b.Loop() {
		v = (v + 7919) & 65535
		h.Record(v)
	}
	bv.expect(b, float64(b.N))
}

func BenchmarkExpHistogram2Tags_HandleParallel(b *testing.B) {
	ks := keys(2)
	bv := newBenchView(b, view.ExponentialDistribution(0, 0), ks...)
	h := bv.m.Bind(tag.FromContext(benchCtx(b, ks)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var v int64
		for pb.Next() {
			v = (v + 7919) & 65535
			h.Record(v)
		}
	})
	bv.expect(b, float64(b.N))
}
