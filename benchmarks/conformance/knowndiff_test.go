package conformance

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	ocstats "go.opencensus.io/stats"
	ocview "go.opencensus.io/stats/view"

	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

// Known differences between zerostat and OpenCensus that are zerostat bugs
// awaiting a fix in the root module. They are reported with t.Skip so that
// `go test ./...` stays green; set ZEROSTAT_STRICT=1 to make them fail.

func knownDiff(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("ZEROSTAT_STRICT") == "1" {
		t.Error(msg)
		return
	}
	t.Skip("KNOWN DIFFERENCE (set ZEROSTAT_STRICT=1 to fail): " + msg)
}

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

// TestKnownDiffOutlierFirstPrecision: zerostat accumulates a distribution's
// sums shifted by the FIRST value recorded. When that value is an outlier
// (a 1000 ms cold start, then sub-millisecond latencies) the shifted sums
// are large and lose the small values' digits: SumOfSquaredDev is off by
// ~3e-9 relative after 1e5 values (~5e-8 after 1e6), beyond the 1e-9
// tolerance; OpenCensus's Welford update stays within ~1e-13.
func TestKnownDiffOutlierFirstPrecision(t *testing.T) {
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
	if !closeTo(zd.SumOfSquaredDev, od.SumOfSquaredDev) {
		knownDiff(t, "first value 1000 then %d values in [0,1): SumOfSquaredDev: got %v (relative error %.3g); want %v (OpenCensus, relative error %.3g)",
			n-1, zd.SumOfSquaredDev, zerr, od.SumOfSquaredDev, oerr)
	}
}

// TestKnownDiffSumOfSquaredDevOverflow: recording 0 then 1.8e154 (finite; true
// SumOfSquaredDev = 1.62e308 < MaxFloat64) gives zerostat SumOfSquaredDev NaN
// (Σd² overflows to +Inf, minus (Σd)²/n = +Inf); OpenCensus reports 1.62e308.
// With 1e200 and 3e200 (true value overflows) OpenCensus reports +Inf and
// zerostat NaN.
func TestKnownDiffSumOfSquaredDevOverflow(t *testing.T) {
	for i, vs := range [][]float64{{0, 1.8e154}, {1e200, 3e200}} {
		t.Run(fmt.Sprint(vs), func(t *testing.T) {
			zd, od := recordBoth(t, fmt.Sprintf("conformance/known/overflow%d", i), func(yield func(float64)) {
				for _, v := range vs {
					yield(v)
				}
			})
			if zd.SumOfSquaredDev != od.SumOfSquaredDev {
				knownDiff(t, "values %v: SumOfSquaredDev: got %v; want %v (OpenCensus)", vs, zd.SumOfSquaredDev, od.SumOfSquaredDev)
			}
		})
	}
}
