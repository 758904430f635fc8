// Package exphist_test is the differential test of internal/exphist
// against the OpenTelemetry Go SDK's Base2 exponential histogram
// aggregation (go.opentelemetry.io/otel/sdk/metric v1.47.0), in one
// process, and the record benchmarks beside the SDK's.
package exphist_test

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/zerostat/zerostat/internal/exphist"
	"github.com/zerostat/zerostat/internal/exphist/exphisttest"
	"github.com/zerostat/zerostat/internal/race"
)

// sdk is one SDK pipeline for a case: a provider with a cumulative and a
// delta ManualReader, and the case's aggregation on its one instrument.
type sdk struct {
	cum, delta *sdkmetric.ManualReader
	mp         *sdkmetric.MeterProvider
	hist       metric.Float64Histogram
}

// newSDK returns the pipeline; without delta, the cumulative reader only
// (the benchmarks: a second reader is a second aggregation per record).
func newSDK(t testing.TB, maxSize, maxScale int32, delta bool) *sdk {
	t.Helper()
	s := &sdk{cum: sdkmetric.NewManualReader()}
	opts := []sdkmetric.Option{sdkmetric.WithReader(s.cum)}
	if delta {
		s.delta = sdkmetric.NewManualReader(sdkmetric.WithTemporalitySelector(func(sdkmetric.InstrumentKind) metricdata.Temporality {
			return metricdata.DeltaTemporality
		}))
		opts = append(opts, sdkmetric.WithReader(s.delta))
	}
	s.mp = sdkmetric.NewMeterProvider(append(opts,
		sdkmetric.WithView(sdkmetric.NewView(sdkmetric.Instrument{Name: "h"}, sdkmetric.Stream{
			Aggregation: sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: maxSize, MaxScale: maxScale},
		})))...)
	t.Cleanup(func() { _ = s.mp.Shutdown(context.Background()) })
	h, err := s.mp.Meter("exphist").Float64Histogram("h")
	if err != nil {
		t.Fatal(err)
	}
	s.hist = h
	return s
}

// collect returns the reader's one data point, or false if it has none.
func collect(t testing.TB, r *sdkmetric.ManualReader) (metricdata.ExponentialHistogramDataPoint[float64], bool) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			d, ok := m.Data.(metricdata.ExponentialHistogram[float64])
			if !ok {
				t.Fatalf("metric %s: %T; want an exponential histogram", m.Name, m.Data)
			}
			if len(d.DataPoints) > 1 {
				t.Fatalf("%d data points; want 1", len(d.DataPoints))
			}
			if len(d.DataPoints) == 1 {
				return d.DataPoints[0], true
			}
		}
	}
	return metricdata.ExponentialHistogramDataPoint[float64]{}, false
}

// point is what the comparison reads of a data point, from any of the
// three sources (SDK, model, exphist).
type point struct {
	present        bool
	scale          int32
	zero, count    uint64
	posOff, negOff int32
	pos, neg       []uint64
	sum, min, max  float64
	minMaxSet      bool
	zeroThreshold  float64
}

func fromSDK(p metricdata.ExponentialHistogramDataPoint[float64], ok bool) point {
	if !ok {
		return point{}
	}
	q := point{present: true, scale: p.Scale, zero: p.ZeroCount, count: p.Count,
		posOff: p.PositiveBucket.Offset, negOff: p.NegativeBucket.Offset,
		pos: p.PositiveBucket.Counts, neg: p.NegativeBucket.Counts, sum: p.Sum, zeroThreshold: p.ZeroThreshold}
	mn, okMin := p.Min.Value()
	mx, okMax := p.Max.Value()
	if okMin != okMax {
		panic("min and max not both set")
	}
	q.min, q.max, q.minMaxSet = mn, mx, okMin
	return q
}

// fromModel reads the model; sdkSum picks its SDK-order sum.
func fromModel(m *exphisttest.Model, sdkSum bool) point {
	if !m.MinMaxSet {
		return point{} // the SDK creates no data point before a finite value
	}
	q := point{present: true, scale: m.Scale, zero: m.ZeroCount, count: m.Count(),
		posOff: m.PosOffset, negOff: m.NegOffset, pos: m.Pos, neg: m.Neg, sum: m.Sum(),
		min: m.Min, max: m.Max, minMaxSet: true}
	if sdkSum {
		q.sum = m.SDKSum()
	}
	return q
}

func fromExphist(s *exphist.Snapshot) point {
	if !(s.Min <= s.Max) {
		return point{}
	}
	return point{present: true, scale: s.Scale, zero: s.ZeroCount, count: s.Count,
		posOff: s.Positive.Offset, negOff: s.Negative.Offset, pos: s.Positive.Counts, neg: s.Negative.Counts,
		sum: s.Sum, min: s.Min, max: s.Max, minMaxSet: true}
}

// diff returns the differences of got from want: buckets (scale, zero
// count, offsets, counts, count), extremes (min, max, bit for bit) and, if
// sum, the sum bit for bit. Empty buckets compare equal whatever their
// offset (the SDK's empty offset is 0 too, checked apart).
func diff(got, want point, sum bool) string {
	var d []string
	if got.present != want.present {
		return fmt.Sprintf("data point present %v; want %v", got.present, want.present)
	}
	if !got.present {
		return ""
	}
	if got.scale != want.scale {
		d = append(d, fmt.Sprintf("scale %d; want %d", got.scale, want.scale))
	}
	if got.zero != want.zero || got.count != want.count {
		d = append(d, fmt.Sprintf("zero count, count %d, %d; want %d, %d", got.zero, got.count, want.zero, want.count))
	}
	if got.posOff != want.posOff || !slices.Equal(got.pos, want.pos) {
		d = append(d, fmt.Sprintf("positive %d %v; want %d %v", got.posOff, got.pos, want.posOff, want.pos))
	}
	if got.negOff != want.negOff || !slices.Equal(got.neg, want.neg) {
		d = append(d, fmt.Sprintf("negative %d %v; want %d %v", got.negOff, got.neg, want.negOff, want.neg))
	}
	if got.minMaxSet != want.minMaxSet || math.Float64bits(got.min) != math.Float64bits(want.min) ||
		math.Float64bits(got.max) != math.Float64bits(want.max) {
		d = append(d, fmt.Sprintf("min, max %v, %v; want %v, %v", got.min, got.max, want.min, want.max))
	}
	if got.zeroThreshold != 0 || want.zeroThreshold != 0 {
		d = append(d, "zero threshold not 0")
	}
	if sum && math.Float64bits(got.sum) != math.Float64bits(want.sum) {
		d = append(d, fmt.Sprintf("sum %v; want %v", got.sum, want.sum))
	}
	return strings.Join(d, "; ")
}

func bucketsDiffer(a, b *exphisttest.Model) bool {
	return diff(fromModel(a, false), fromModel(b, false), false) != ""
}

// cases returns the shared seeded cases (exphisttest.Cases: every
// generator at maxSize 2, 4 and 160 and maxScale -10, 0, 5 and 20).
func cases() []exphisttest.Case {
	n := 5000
	if testing.Short() || race.Enabled {
		n = 500
	}
	return exphisttest.Cases(n)
}

// TestDifferential records every case through the SDK and through
// exphist, reading both cumulatively and as deltas at each cut, and
// compares them field by field.
//
// Buckets, counts, scale, min and max must be identical, and are, except
// where the SDK's getBin misplaces a value next to a bucket boundary at
// scale 5 and above (exphist.Index is exact there; the SDK's logarithm is
// not, which the specification allows). Such a case must then satisfy,
// at every read: a replay of the SDK's algorithm with the SDK's getBin
// (exphisttest.Model with SDKGetBin) gives the SDK's output exactly, the
// same replay with exphist.Index gives exphist's exactly, and every value
// the two index functions place differently is placed by exphist.Index
// where the math/big oracle puts it. So the index function is the only
// difference, and the SDK's is the wrong one.
//
// Sums: the SDK adds values that are whole numbers fitting an int64 into
// an int64 (wrapping on overflow) and the others into a float64, in
// record order, and reads float+float64(int); exphist adds every value
// into a float64 in record order (the bits of a plain running sum). Each
// is checked bit for bit against a replay of its own order (the model's
// SDKSum and Sum), and against the exact sum (math/big) within
// (n+1)·2^-53·Σ|v| — the SDK's only where its int64 did not overflow:
// whole values between 2^53 and 2^63 ("wide", "base-powers") wrap it, and
// the test logs by how much. The two sums are equal to the bit when every
// value takes the SDK's float path, or when every partial sum is exact.
//
// Delta: each interval's SDK data point (the SDK starts a new one, at
// MaxScale, each interval) against exphist's SnapshotReset, the same way;
// and exphist's Sub of two cumulative reads against the SDK's interval
// lowered to the cumulative scale (Sub's documented result).
func TestDifferential(t *testing.T) {
	// The SDK reports a scale underflow (maxSize 2 only) to the global
	// error handler: count them, to compare with the replay's.
	var underflows int
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		if strings.Contains(err.Error(), "scale underflow") {
			underflows++
			return
		}
		t.Errorf("otel error: %v", err)
	}))
	defer otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
	wantUnderflows := 0
	var diverged, intWrong []string
	subs := 0
	for _, c := range cases() {
		t.Run(c.Name, func(t *testing.T) {
			s := newSDK(t, c.MaxSize, c.MaxScale, true)
			cum := exphist.MustNew(c.MaxSize, c.MaxScale)
			del := exphist.MustNew(c.MaxSize, c.MaxScale)
			mSDK := exphisttest.NewModel(c.MaxSize, c.MaxScale, exphisttest.SDKGetBin)
			mExact := exphisttest.NewModel(c.MaxSize, c.MaxScale, exphist.Index)
			var snap, dsnap, prevCum, sub exphist.Snapshot
			cum.Snapshot(&prevCum)
			ctx := context.Background()
			last := 0
			for _, cut := range c.Cuts {
				dSDK := exphisttest.NewModel(c.MaxSize, c.MaxScale, exphisttest.SDKGetBin)
				dExact := exphisttest.NewModel(c.MaxSize, c.MaxScale, exphist.Index)
				for _, v := range c.Values[last:cut] {
					s.hist.Record(ctx, v)
					cum.Record(v)
					del.Record(v)
					for _, m := range []*exphisttest.Model{mSDK, mExact, dSDK, dExact} {
						m.Record(v)
					}
				}
				at := fmt.Sprintf("values %d..%d", last, cut)
				cum.Snapshot(&snap)
				del.SnapshotReset(&dsnap)
				sdkCum, sdkDelta := fromSDK(collect(t, s.cum)), fromSDK(collect(t, s.delta))

				for _, r := range []struct {
					name         string
					sdk          point
					model, exact *exphisttest.Model
					ours         *exphist.Snapshot
					values       []float64
				}{
					{"cumulative", sdkCum, mSDK, mExact, &snap, c.Values[:cut]},
					{"delta", sdkDelta, dSDK, dExact, &dsnap, c.Values[last:cut]},
				} {
					// The model replays the SDK exactly, sums included.
					if d := diff(r.sdk, fromModel(r.model, true), true); d != "" {
						t.Fatalf("%s, %s: the SDK differs from its replay: %s", r.name, at, d)
					}
					// exphist is the replay with the exact index, sum in record order.
					ours := fromExphist(r.ours)
					if d := diff(ours, fromModel(r.exact, false), true); d != "" {
						t.Fatalf("%s, %s: exphist differs from the replay with exphist.Index: %s", r.name, at, d)
					}
					if d := diff(ours, r.sdk, false); d != "" {
						if !bucketsDiffer(r.model, r.exact) {
							t.Fatalf("%s, %s: exphist differs from the SDK: %s", r.name, at, d)
						}
						n := checkMisplaced(t, r.values, r.model.Scale, c.MaxScale)
						if n == 0 {
							t.Fatalf("%s, %s: exphist differs from the SDK, but no value is misplaced by getBin: %s", r.name, at, d)
						}
						if r.name == "cumulative" && cut == len(c.Values) {
							diverged = append(diverged, fmt.Sprintf("%s (%d values misplaced)", c.Name, n))
						}
					}
					if r.ours.Dropped != nonFinite(r.values)+uint64(r.exact.Underflows) {
						t.Fatalf("%s, %s: dropped %d; want %d", r.name, at, r.ours.Dropped, nonFinite(r.values)+uint64(r.exact.Underflows))
					}
					if ours.present {
						checkSum(t, r.name+", "+at, ours.sum, r.values)
					}
					if r.sdk.present && !intSumWrong(r.values) {
						checkSum(t, r.name+", "+at+", the SDK's", r.sdk.sum, r.values)
					}
					if r.name == "delta" {
						wantUnderflows += r.model.Underflows // each interval's own data point
					}
					if r.name == "cumulative" && cut == len(c.Values) {
						wantUnderflows += r.model.Underflows
						if r.sdk.present && intSumWrong(c.Values) {
							intWrong = append(intWrong, fmt.Sprintf("%s (sum %.6g; exact %.6g)", c.Name, r.sdk.sum, exactSum(c.Values)))
						}
					}
				}

				// Sub of two cumulative reads: the SDK's interval at the
				// cumulative's scale, min and max the cumulative's.
				snap.CopyTo(&sub)
				if err := sub.Sub(&prevCum); err != nil {
					t.Fatalf("%s: Sub: %v", at, err)
				}
				if dExact.Underflows == 0 && mExact.Underflows == 0 && !bucketsDiffer(dSDK, dExact) && !bucketsDiffer(mSDK, mExact) {
					want := lowered(sdkDelta, sub.Scale)
					want.min, want.max = snap.Min, snap.Max
					got := fromExphist(&sub)
					if !want.present && got.present && got.count == 0 {
						got = point{} // an interval of NaNs only: no SDK data point
					}
					if !want.present && !got.present {
						// nothing
					} else if d := diff(got, want, false); d != "" {
						t.Fatalf("%s: Sub: %s", at, d)
					}
					if !math.IsInf(snap.Sum, 0) && !math.IsInf(prevCum.Sum, 0) && got.present {
						checkSum(t, at+", Sub", got.sum, c.Values[last:cut])
					}
					subs++
				}
				snap.CopyTo(&prevCum)
				last = cut
			}
		})
	}
	if underflows != wantUnderflows {
		t.Errorf("the SDK reported %d scale underflows; its replay had %d", underflows, wantUnderflows)
	}
	t.Logf("%d Sub results compared with the SDK's delta", subs)
	t.Logf("%d scale underflows, cumulative and delta (maxSize 2: values dropped by both)", underflows)
	t.Logf("%d cases; exphist and the SDK differ only where getBin misplaces boundary values, in %d: %s",
		len(cases()), len(diverged), strings.Join(diverged, ", "))
	if len(intWrong) > 0 {
		t.Logf("the SDK's int64 sum of whole values overflowed (its sum is off by a multiple of 2^64) in %d cases: %s",
			len(intWrong), strings.Join(intWrong, ", "))
	}
}

// checkMisplaced returns how many (value, scale) pairs, for the scales
// from low to high, the SDK's getBin and exphist.Index place differently,
// failing the test if the math/big oracle does not agree with Index on
// every one.
func checkMisplaced(t *testing.T, vs []float64, low, high int32) int {
	t.Helper()
	n := 0
	for _, v := range vs {
		if v-v != 0 || v == 0 {
			continue
		}
		a := math.Abs(v)
		for s := max(low, 1); s <= high; s++ {
			got, sdk := exphist.Index(a, s), exphisttest.SDKGetBin(a, s)
			if got == sdk {
				continue
			}
			want, err := exphisttest.OracleIndex(a, s)
			if err != nil || int64(got) != want {
				t.Fatalf("Index(%v, %d) = %d, getBin %d; the oracle says %d (%v)", a, s, got, sdk, want, err)
			}
			n++
		}
	}
	return n
}

// lowered returns p with its buckets lowered to scale and trimmed.
func lowered(p point, scale int32) point {
	if !p.present {
		return p
	}
	d := p.scale - scale
	low := func(off int32, c []uint64) (int32, []uint64) {
		if len(c) == 0 || d <= 0 {
			return off, c
		}
		start, end := off>>d, (off+int32(len(c))-1)>>d
		out := make([]uint64, end-start+1)
		for i, x := range c {
			out[(off+int32(i))>>d-start] += x
		}
		return start, out
	}
	p.posOff, p.pos = low(p.posOff, p.pos)
	p.negOff, p.neg = low(p.negOff, p.neg)
	p.scale = scale
	return p
}

func nonFinite(vs []float64) uint64 {
	var n uint64
	for _, v := range vs {
		if v-v != 0 {
			n++
		}
	}
	return n
}

// checkSum checks a sum of the finite values against their exact sum,
// within (n+1)·2^-53·Σ|v|: a running sum's error bound is (n-1)·2^-53·Σ|v|;
// the SDK's two partial sums and their final addition add two roundings.
func checkSum(t *testing.T, at string, sum float64, vs []float64) {
	t.Helper()
	abs, n := 0.0, 0
	for _, v := range vs {
		if v-v == 0 {
			abs += math.Abs(v)
			n++
		}
	}
	exact := exactSum(vs)
	if math.IsInf(abs, 0) || math.IsInf(exact, 0) {
		return
	}
	if tol := float64(n+1) * 0x1p-53 * abs; math.Abs(sum-exact) > tol {
		t.Fatalf("%s: sum %v; want %v within %g", at, sum, exact, tol)
	}
}

// intSumWrong reports whether the SDK's int64 sum of the whole values
// (those an int64 holds) differs from their exact sum: it overflowed.
func intSumWrong(vs []float64) bool {
	var s int64
	exact := new(big.Int)
	for _, v := range vs {
		if iv := int64(v); float64(iv) == v && v-v == 0 {
			s += iv
			exact.Add(exact, big.NewInt(iv))
		}
	}
	return !exact.IsInt64() || exact.Int64() != s
}

// exactSum returns the finite values' sum, rounded once (math/big at
// 2,200 bits holds any sum of float64s exactly).
func exactSum(vs []float64) float64 {
	s := new(big.Float).SetPrec(2200)
	for _, v := range vs {
		if v-v == 0 {
			s.Add(s, big.NewFloat(v))
		}
	}
	f, _ := s.Float64()
	return f
}

// TestDifferentialDetects plants a difference (one bucket count off by
// one) in exphist's read and checks that the comparison reports it.
func TestDifferentialDetects(t *testing.T) {
	s := newSDK(t, 160, 20, false)
	h := exphist.MustNew(160, 20)
	for _, v := range []float64{1, 2, 3, 0, -5} {
		s.hist.Record(context.Background(), v)
		h.Record(v)
	}
	var snap exphist.Snapshot
	h.Snapshot(&snap)
	sdkp := fromSDK(collect(t, s.cum))
	if d := diff(fromExphist(&snap), sdkp, false); d != "" {
		t.Fatalf("unplanted: %s", d)
	}
	snap.Positive.Counts[0]++
	if d := diff(fromExphist(&snap), sdkp, false); d == "" {
		t.Fatal("a bucket count off by one was not reported")
	}
	snap.Positive.Counts[0]--
	snap.Scale--
	if d := diff(fromExphist(&snap), sdkp, false); d == "" {
		t.Fatal("a scale off by one was not reported")
	}
}

var sinkR exphist.Result

// histValues are the record benchmarks' values (the benchmarks module's
// own histValues, benchmarks/record_test.go): integers spread
// log-uniformly over [1, 30000), scale 3 at 160 buckets.
var histValues = func() (vs [1024]float64) {
	r := rand.New(rand.NewPCG(42, 42))
	for i := range vs {
		vs[i] = math.Floor(math.Exp(r.Float64() * math.Log(30000)))
	}
	return vs
}()

// BenchmarkRecord: one record into exphist's raw structure
// (impl=exphist: the histogram alone, no tags) and through the SDK's
// Float64Histogram with the exponential aggregation and a precomputed
// attribute set of 2 attributes (impl=otel), single and parallel.
func BenchmarkRecord(b *testing.B) {
	b.Run("impl=exphist", func(b *testing.B) {
		h := exphist.MustNew(exphist.DefaultMaxSize, exphist.DefaultMaxScale)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			sinkR = h.Record(histValues[i&1023])
			i++
		}
	})
	b.Run("impl=otel", func(b *testing.B) {
		s := newSDK(b, exphist.DefaultMaxSize, exphist.DefaultMaxScale, false)
		set := []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attribute.String("method", "v0"), attribute.String("status", "v1")))}
		ctx := context.Background()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			s.hist.Record(ctx, histValues[i&1023], set...)
			i++
		}
	})
}

func BenchmarkRecordParallel(b *testing.B) {
	b.Run("impl=exphist", func(b *testing.B) {
		h := exphist.MustNew(exphist.DefaultMaxSize, exphist.DefaultMaxScale)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				h.Record(histValues[i&1023])
				i++
			}
		})
	})
	b.Run("impl=otel", func(b *testing.B) {
		s := newSDK(b, exphist.DefaultMaxSize, exphist.DefaultMaxScale, false)
		set := []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attribute.String("method", "v0"), attribute.String("status", "v1")))}
		ctx := context.Background()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				s.hist.Record(ctx, histValues[i&1023], set...)
				i++
			}
		})
	})
}
