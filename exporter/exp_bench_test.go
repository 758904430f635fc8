package exporter

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/delta"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// BenchmarkEncodeSeries measures the msgpack encoder's cost per series
// (a cumulative snapshot of one view: reading each series and writing
// its row) of an exponential distribution beside a classic 15-bound
// distribution's, with 1,000 series of 20 latency-like values each, in
// both wire versions. ns/series is the figure to compare; allocs/op is 0.
func BenchmarkEncodeSeries(b *testing.B) {
	const series = 1000
	bounds := []float64{0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000}
	for _, tc := range []struct {
		name string
		agg  *view.Aggregation
	}{{"distribution15", view.DistributionUpperInclusive(bounds...)}, {"exponential160", view.ExponentialDistribution(0, 0)}} {
		expSeq++
		m := stats.Float64(fmt.Sprintf("expbench%d/m", expSeq), "", stats.UnitMilliseconds)
		v := &view.View{Name: fmt.Sprintf("expbench%d/%s", expSeq, tc.name), Measure: m, Aggregation: tc.agg, TagKeys: []tag.Key{keyRoute}}
		if err := view.Register(v); err != nil {
			b.Fatal(err)
		}
		x := 0.7
		for i := range series {
			ctx, _ := tag.New(context.Background(), tag.Upsert(keyRoute, fmt.Sprint("/r", i)))
			for range 20 {
				x = x*1.618 + 0.3
				if x > 30000 {
					x -= 29999.5
				}
				stats.Record(ctx, m.M(x))
			}
		}
		for _, version := range wire.Versions {
			b.Run(fmt.Sprintf("%s/v%d", tc.name, version), func(b *testing.B) {
				attrs, err := Resource{ServiceName: "s"}.attributes()
				if err != nil {
					b.Fatal(err)
				}
				enc := newEncoder(DefaultMaxPayloadBytes, delta.Kinds{}, 0, attrs)
				enc.version, enc.only = version, v.Name
				var n int
				emit := func(p []byte, last bool) error { n = len(p); return nil }
				now := time.Now()
				_ = enc.encode(now, now, emit)
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					_ = enc.encode(now, now, emit)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/series, "ns/series")
				b.ReportMetric(float64(n)/series, "bytes/series")
			})
		}
		view.Unregister(v)
	}
}
