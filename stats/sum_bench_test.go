package stats_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

// BenchmarkSum2Tags records an integer into a Sum view: every addition is
// exact, the path a byte counter takes.
func BenchmarkSum2Tags(b *testing.B) {
	ks := keys(2)
	bv := newBenchView(b, view.Sum(), ks...)
	ctx := benchCtx(b, ks)
	b.ReportAllocs()
	for b.Loop() {
		stats.Record(ctx, bv.m.M(3))
	}
	bv.expect(b, 3*float64(b.N))
}

// BenchmarkSum2Tags_Float records 0.1 into a Sum view of a Float64
// measure: every addition rounds. With a delta exporter reading the view
// (delta=on), each addition also keeps its rounding error, the price of
// exact delta sums (see internal/core's addFloat).
func BenchmarkSum2Tags_Float(b *testing.B) {
	for _, delta := range []bool{false, true} {
		b.Run(fmt.Sprintf("delta=%v", map[bool]string{false: "off", true: "on"}[delta]), func(b *testing.B) {
			ks := keys(2)
			name := fmt.Sprintf("bench/%s/%d", b.Name(), benchSeq.Add(1))
			m := stats.Float64(name, "", stats.UnitDimensionless)
			if err := view.Register(&view.View{Name: name, Measure: m, Aggregation: view.Sum(), TagKeys: ks}); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { view.Unregister(view.Find(name)) })
			ctx := benchCtx(b, ks)
			stats.Record(ctx, m.M(0.1))
			if delta {
				withDeltaReader(b)
			}
			b.ReportAllocs()
			for b.Loop() {
				stats.Record(ctx, m.M(0.1))
			}
			got := benchView{name: name}.total(b)
			if want := 0.1 * float64(b.N+1); math.Abs(got-want) > 1e-6*want {
				b.Fatalf("%s aggregated %v; want %v", name, got, want)
			}
		})
	}
}

// BenchmarkHistogram2Tags_Delta is Histogram2Tags with a delta exporter
// reading the view: each record also keeps the sum's rounding error and
// the sum of squares (internal/core's distCell.add), which exact delta
// statistics need.
func BenchmarkHistogram2Tags_Delta(b *testing.B) {
	ks := keys(2)
	bv := newBenchView(b, view.Distribution(benchBounds...), ks...)
	ctx := benchCtx(b, ks)
	stats.Record(ctx, bv.m.M(1))
	withDeltaReader(b)
	b.ReportAllocs()
	var v int64
	for b.Loop() {
		v = (v + 7919) & 65535 // as Histogram2Tags
		stats.Record(ctx, bv.m.M(v))
	}
	bv.expect(b, float64(b.N+1))
}

// withDeltaReader starts a delta exporter and exports once, which makes it
// a delta reader of every registered view, until the benchmark ends.
func withDeltaReader(b *testing.B) {
	b.Helper()
	e, err := exporter.New(exporter.FuncSink(func(context.Context, exporter.Payload) error { return nil }),
		exporter.Options{Temporality: wire.Delta})
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Export(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Stop(context.Background()) })
}
