package agenttest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/statsd"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// TestStatsdExporterExponential: an exponential view (maxScale 0: its
// buckets are (2^i, 2^(i+1)] or, lowered, unions of them) sent natively,
// DogStatsD |d and plain |ms, over UDP, to a real statsd_exporter whose
// histogram buckets are the powers of two: every le count it holds is
// exactly the number of recorded values at or below the bound (each
// exponential bucket's value lands in the statsd_exporter bucket of its
// upper edge, both upper-inclusive), over two exports (delta reads of
// the interval's own scale), zeros included.
func TestStatsdExporterExponential(t *testing.T) {
	var bounds []float64
	for k := -12; k <= 14; k++ {
		bounds = append(bounds, math.Ldexp(1, k))
	}
	for _, dialect := range []statsd.Dialect{statsd.DogStatsD, statsd.Plain} {
		name := map[statsd.Dialect]string{statsd.DogStatsD: "dogstatsd", statsd.Plain: "plain"}[dialect]
		t.Run(name, func(t *testing.T) {
			// Plain sends |ms, which statsd_exporter divides by 1000.
			scale := 1.0
			if dialect == statsd.Plain {
				scale = 1000
			}
			hb := make([]float64, len(bounds))
			for i, b := range bounds {
				hb[i] = b / scale
			}
			x := startStatsdExporter(t, hb)
			p := fmt.Sprintf("ae%d", seq.Add(1))
			lat := stats.Float64(p+"/lat", "", stats.UnitMilliseconds)
			register(t, &view.View{Name: p + "/latency", Measure: lat, Aggregation: view.ExponentialDistribution(160, 0),
				TagKeys: []tag.Key{keyRoute}})
			ctx := ctxWith(t, tag.Upsert(keyRoute, "/a"))
			e, err := statsd.New(statsd.Options{Addr: x.udp, Dialect: dialect, Namespace: "ns", Interval: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Stop(context.Background())
			r := rand.New(rand.NewPCG(46, 9))
			var vals []float64
			for round := range 2 {
				for range 200 {
					v := math.Exp(r.NormFloat64()*2 + float64(round))
					if r.IntN(10) == 0 {
						v = 0
					}
					vals = append(vals, v)
					stats.Record(ctx, lat.M(v))
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				if err := e.Export(ctx); err != nil {
					t.Fatal(err)
				}
				cancel()
			}
			metric := promName("ns." + promName(p) + "_latency")
			labels := map[string]string{"route": "/a"}
			if dialect == statsd.Plain {
				metric = promName("ns." + promName(p) + "_latency.route._a")
				labels = nil
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				fams := x.scrape(t)
				m := sample(fams, metric, labels)
				if m != nil && m.Histogram != nil && m.Histogram.GetSampleCount() == uint64(len(vals)) {
					x.checkClean(t, fams)
					for _, b := range m.Histogram.Bucket {
						le := b.GetUpperBound() * scale
						var want uint64
						for _, v := range vals {
							if v <= le {
								want++
							}
						}
						if b.GetCumulativeCount() != want {
							t.Errorf("le=%v: %d; want %d", le, b.GetCumulativeCount(), want)
						}
					}
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s%v: %v after 10 s; want a histogram of %d values", metric, labels, m, len(vals))
				}
				time.Sleep(50 * time.Millisecond) // polling a scrape: no event to wait for
			}
		})
	}
}
