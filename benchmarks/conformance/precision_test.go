package conformance

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	ocstats "go.opencensus.io/stats"
	ocview "go.opencensus.io/stats/view"

	"github.com/zerostat/zerostat/benchmarks/internal/sdkrows"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

// Precision regressions: two numerical bugs the differential tests found
// in zerostat's first distribution design (sums shifted by the first
// value). Distributions now use OpenCensus's Welford update and must match
// it exactly here.

// recordBoth registers a distribution over a fresh Float64 measure in both
// SDKs, records values and returns both rows' data.
func recordBoth(t *testing.T, name string, values func(yield func(float64))) (*view.DistributionData, *ocview.DistributionData) {
	t.Helper()
	mp := newMeasurePair(name, false)
	vp := &viewPair{name: name, agg: "Distribution", bounds: []float64{1, 10, 100}, measure: mp}
	vp.build()
	vp.register(t)
	t.Cleanup(vp.unregister)
	values(func(v float64) {
		zm, om := mp.measurement(v)
		stats.Record(context.Background(), zm)
		ocstats.Record(context.Background(), om)
	})
	zr, zerr := view.RetrieveData(name)
	or, oerr := ocview.RetrieveData(name)
	if zerr != nil || oerr != nil || len(zr) != 1 || len(or) != 1 {
		t.Fatalf("RetrieveData: got %d rows (error %v) and %d rows (error %v); want 1 row each", len(zr), zerr, len(or), oerr)
	}
	return zr[0].Data.(*view.DistributionData), or[0].Data.(*ocview.DistributionData)
}

// TestOutlierFirstPrecision: zerostat accumulated a distribution's
// sums shifted by the FIRST value recorded. When that value is an outlier
// (a 1000 ms cold start, then sub-millisecond latencies) the shifted sums
// are large and lose the small values' digits: SumOfSquaredDev is off by
// ~3e-9 relative after 1e5 values (~5e-8 after 1e6), beyond the 1e-9
// tolerance; OpenCensus's Welford update stays within ~1e-13, and so must
// zerostat's now (it runs the same update).
func TestOutlierFirstPrecision(t *testing.T) {
	n := 100000
	if raceEnabled {
		n = 20000 // the error is then ~1e-9; the test reports what it sees
	}
	var sum, ref float64
	var xs []float64
	zd, od := recordBoth(t, "conformance/known/outlier-first", func(yield func(float64)) {
		r := rand.New(rand.NewPCG(1, 2))
		for i := 0; i < n; i++ {
			v := r.Float64()
			if i == 0 {
				v = 1000
			}
			xs = append(xs, v)
			sum += v
			yield(v)
		}
	})
	mean := sum / float64(n)
	for _, x := range xs { // two-pass reference
		ref += (x - mean) * (x - mean)
	}
	zerr := math.Abs(zd.SumOfSquaredDev-ref) / ref
	oerr := math.Abs(od.SumOfSquaredDev-ref) / ref
	t.Logf("SumOfSquaredDev relative error vs a two-pass reference: zerostat %.3g, opencensus %.3g", zerr, oerr)
	if !sdkrows.Near(zd.SumOfSquaredDev, od.SumOfSquaredDev) {
		t.Errorf("first value 1000 then %d values in [0,1): SumOfSquaredDev: got %v (relative error %.3g); want %v (OpenCensus, relative error %.3g)",
			n-1, zd.SumOfSquaredDev, zerr, od.SumOfSquaredDev, oerr)
	}
}

// TestSumOfSquaredDevOverflow: recording 0 then 1.8e154 (finite; true
// SumOfSquaredDev = 1.62e308 < MaxFloat64) gave the shifted-sums design NaN
// (Σd² overflows to +Inf, minus (Σd)²/n = +Inf); OpenCensus reports 1.62e308.
// With 1e200 and 3e200 (true value overflows) OpenCensus reports +Inf and
// the old design NaN.
func TestSumOfSquaredDevOverflow(t *testing.T) {
	for i, vs := range [][]float64{{0, 1.8e154}, {1e200, 3e200}} {
		t.Run(fmt.Sprint(vs), func(t *testing.T) {
			zd, od := recordBoth(t, fmt.Sprintf("conformance/known/overflow%d", i), func(yield func(float64)) {
				for _, v := range vs {
					yield(v)
				}
			})
			if zd.SumOfSquaredDev != od.SumOfSquaredDev {
				t.Errorf("values %v: SumOfSquaredDev: got %v; want %v (OpenCensus)", vs, zd.SumOfSquaredDev, od.SumOfSquaredDev)
			}
		})
	}
}
