package otel_test

// The differential test of the provider's exponential histograms against
// the OTel SDK v1.47.0 (AggregationBase2ExponentialHistogram): the same
// seeded values through both providers' APIs, read cumulatively and as
// deltas after each of several cuts. zerostat is read directly (core's
// cumulative read and a delta.Tracker, the reads every exporter makes)
// and through its OTLP encoder (cumulative and delta, decoded with the
// official protobuf types), which must carry exactly what the direct
// reads hold.

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"strings"
	"testing"
	"time"

	otelglobal "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	colpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	mpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/delta"
	"github.com/zerostat/zerostat/internal/exphist"
	"github.com/zerostat/zerostat/internal/exphist/exphisttest"
	zotel "github.com/zerostat/zerostat/otel"
)

// expPoint is an exponential data point as the comparisons read it, from
// any source.
type expPoint struct {
	present        bool
	scale          int32
	zero, count    uint64
	posOff, negOff int32
	pos, neg       []uint64
	hasSum         bool
	sum            float64
	minMaxSet      bool
	min, max       float64
}

func (p expPoint) String() string {
	if !p.present {
		return "(no point)"
	}
	s := fmt.Sprintf("scale %d zero %d count %d +%d%v -%d%v min %v max %v", p.scale, p.zero, p.count, p.posOff, p.pos, p.negOff, p.neg, p.min, p.max)
	if p.hasSum {
		s += fmt.Sprintf(" sum %v", p.sum)
	}
	return s
}

func fromSDKExp[N int64 | float64](p metricdata.ExponentialHistogramDataPoint[N]) expPoint {
	q := expPoint{present: true, scale: p.Scale, zero: p.ZeroCount, count: p.Count,
		posOff: p.PositiveBucket.Offset, negOff: p.NegativeBucket.Offset,
		pos: p.PositiveBucket.Counts, neg: p.NegativeBucket.Counts, hasSum: true, sum: float64(p.Sum)}
	mn, okMin := p.Min.Value()
	mx, okMax := p.Max.Value()
	q.min, q.max, q.minMaxSet = float64(mn), float64(mx), okMin && okMax
	if p.ZeroThreshold != 0 {
		panic("SDK zero threshold not 0")
	}
	return q
}

func fromOTLPExp(p *mpb.ExponentialHistogramDataPoint) expPoint {
	q := expPoint{present: true, scale: p.Scale, zero: p.ZeroCount, count: p.Count,
		posOff: p.GetPositive().GetOffset(), negOff: p.GetNegative().GetOffset(),
		pos: p.GetPositive().GetBucketCounts(), neg: p.GetNegative().GetBucketCounts(),
		hasSum: p.Sum != nil, sum: p.GetSum(), minMaxSet: p.Min != nil && p.Max != nil, min: p.GetMin(), max: p.GetMax()}
	if p.ZeroThreshold != 0 || p.Flags != 0 || (p.Min != nil) != (p.Max != nil) {
		panic(fmt.Sprintf("OTLP point %v", p))
	}
	return q
}

// fromSnap reads a zerostat snapshot; present when a finite value was
// recorded (as the SDK makes a point).
func fromSnap(s *exphist.Snapshot) expPoint {
	if !(s.Min <= s.Max) {
		return expPoint{}
	}
	return expPoint{present: true, scale: s.Scale, zero: s.ZeroCount, count: s.Count,
		posOff: s.Positive.Offset, negOff: s.Negative.Offset, pos: slices.Clone(s.Positive.Counts), neg: slices.Clone(s.Negative.Counts),
		hasSum: true, sum: s.Sum, minMaxSet: true, min: s.Min, max: s.Max}
}

func fromModelExp(m *exphisttest.Model) expPoint {
	if !m.MinMaxSet {
		return expPoint{}
	}
	return expPoint{present: true, scale: m.Scale, zero: m.ZeroCount, count: m.Count(),
		posOff: m.PosOffset, negOff: m.NegOffset, pos: m.Pos, neg: m.Neg, minMaxSet: true, min: m.Min, max: m.Max}
}

// sameExtreme compares a min or max: bit for bit, but for the sign of a
// zero (the SDK keeps the first zero it saw; zerostat's merge of its
// cells and intervals takes math.Min and math.Max, which order -0 below
// +0).
func sameExtreme(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || a == 0 && b == 0
}

// diffExp returns how got differs from want in buckets (scale, zero
// count, offsets, counts, count) and extremes, and, with sum, in the sum
// (bit for bit, and its presence).
func diffExp(got, want expPoint, sum bool) string {
	if got.present != want.present {
		return fmt.Sprintf("point present %v; want %v", got.present, want.present)
	}
	if !got.present {
		return ""
	}
	var d []string
	if got.scale != want.scale {
		d = append(d, fmt.Sprintf("scale %d; want %d", got.scale, want.scale))
	}
	if got.zero != want.zero || got.count != want.count {
		d = append(d, fmt.Sprintf("zero count, count %d, %d; want %d, %d", got.zero, got.count, want.zero, want.count))
	}
	if got.posOff != want.posOff && len(want.pos) > 0 || !slices.Equal(got.pos, want.pos) {
		d = append(d, fmt.Sprintf("positive %d %v; want %d %v", got.posOff, got.pos, want.posOff, want.pos))
	}
	if got.negOff != want.negOff && len(want.neg) > 0 || !slices.Equal(got.neg, want.neg) {
		d = append(d, fmt.Sprintf("negative %d %v; want %d %v", got.negOff, got.neg, want.negOff, want.neg))
	}
	if got.minMaxSet != want.minMaxSet || got.minMaxSet && (!sameExtreme(got.min, want.min) || !sameExtreme(got.max, want.max)) {
		d = append(d, fmt.Sprintf("min, max %v, %v; want %v, %v", got.min, got.max, want.min, want.max))
	}
	if sum && (got.hasSum != want.hasSum || got.hasSum && math.Float64bits(got.sum) != math.Float64bits(want.sum)) {
		d = append(d, fmt.Sprintf("sum %v (%v); want %v (%v)", got.sum, got.hasSum, want.sum, want.hasSum))
	}
	return strings.Join(d, "; ")
}

// sdkExp is an SDK provider with a cumulative and a delta reader, and an
// exponential histogram "h" of each number type.
type sdkExp struct {
	cum, del *sdkmetric.ManualReader
	f        metric.Float64Histogram
	i        metric.Int64Histogram
}

func newSDKExp(t *testing.T, maxSize, maxScale int32) *sdkExp {
	t.Helper()
	s := &sdkExp{cum: sdkmetric.NewManualReader(), del: sdkmetric.NewManualReader(sdkmetric.WithTemporalitySelector(
		func(sdkmetric.InstrumentKind) metricdata.Temporality { return metricdata.DeltaTemporality }))}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(s.cum), sdkmetric.WithReader(s.del),
		sdkmetric.WithView(sdkmetric.NewView(sdkmetric.Instrument{Kind: sdkmetric.InstrumentKindHistogram}, sdkmetric.Stream{
			Aggregation: sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: maxSize, MaxScale: maxScale},
		})))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m := mp.Meter("m")
	s.f, _ = m.Float64Histogram("h")
	s.i, _ = m.Int64Histogram("hi")
	return s
}

// collect returns the reader's point of instrument name (absent: not
// present).
func (s *sdkExp) collect(t *testing.T, r *sdkmetric.ManualReader, name string) expPoint {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.ExponentialHistogram[float64]:
				if len(d.DataPoints) == 1 {
					return fromSDKExp(d.DataPoints[0])
				}
			case metricdata.ExponentialHistogram[int64]:
				if len(d.DataPoints) == 1 {
					return fromSDKExp(d.DataPoints[0])
				}
			default:
				t.Fatalf("SDK metric %s: %T", name, m.Data)
			}
		}
	}
	return expPoint{}
}

// zsExp reads a zerostat instrument's one series: directly (cumulative,
// and, withDelta, as deltas with its own tracker) and through OTLP
// encoders (the same).
type zsExp struct {
	name      string // the view's
	withDelta bool
	maxSize   int32
	tr        *delta.Tracker
	cum, del  *otlp.Encoder
	vals      delta.Values
	merged    exphist.Snapshot // the direct delta reads, merged
}

func newZSExp(t *testing.T, view string, withDelta bool, maxSize int32) *zsExp {
	t.Helper()
	z := &zsExp{name: view, withDelta: withDelta, maxSize: maxSize, tr: delta.NewTracker(0)}
	var err error
	if z.cum, err = otlp.NewEncoder(otlp.Cumulative, exporter.Resource{}); err != nil {
		t.Fatal(err)
	}
	if z.del, err = otlp.NewEncoder(otlp.Delta, exporter.Resource{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(z.tr.Close)
	return z
}

// read returns the direct cumulative and delta reads (the cumulative
// first: the delta read drains the series' cells).
func (z *zsExp) read(t *testing.T) (cum, del expPoint) {
	t.Helper()
	cv := core.FindView(z.name)
	if cv == nil {
		return expPoint{}, expPoint{}
	}
	ss, _ := cv.AppendSeries(nil)
	if len(ss) > 1 {
		t.Fatalf("%d series; want 1", len(ss))
	}
	for _, s := range ss {
		if delta.Read(core.KindExponential, s, nil, nil, &z.vals) {
			cum = fromSnap(&z.vals.Exp)
		}
	}
	if !z.withDelta {
		return cum, del
	}
	z.tr.Begin()
	defer z.tr.End()
	st := z.tr.View(cv.Agg)
	defer st.Done()
	for _, s := range ss {
		if delta.Read(core.KindExponential, s, st, nil, &z.vals) {
			del = fromSnap(&z.vals.Exp)
			z.merged.Merge(&z.vals.Exp, z.maxSize)
		}
	}
	return cum, del
}

// otlpRead returns the points of the view in the two encoders' requests.
func (z *zsExp) otlpRead(t *testing.T) (cum, del expPoint) {
	t.Helper()
	now := time.Now()
	cum = otlpExpPoint(t, z.cum.Encode(now), z.name, mpb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE)
	if z.withDelta {
		del = otlpExpPoint(t, z.del.Encode(now), z.name, mpb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA)
	}
	return cum, del
}

// otlpExpPoints decodes body with the official types and returns the
// ExponentialHistogram points of metric name by attributes.
func otlpExpPoints(t *testing.T, body []byte, name string, want mpb.AggregationTemporality) map[string]*mpb.ExponentialHistogramDataPoint {
	t.Helper()
	var req colpb.ExportMetricsServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	out := map[string]*mpb.ExponentialHistogramDataPoint{}
	for _, rm := range req.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name != name {
					continue
				}
				eh := m.GetExponentialHistogram()
				if eh == nil || eh.AggregationTemporality != want {
					t.Fatalf("metric %s: %v; want an exponential histogram, %v", name, m, want)
				}
				for _, dp := range eh.DataPoints {
					var kvs []string
					for _, kv := range dp.Attributes {
						kvs = append(kvs, kv.Key+"="+kv.Value.GetStringValue())
					}
					out[strings.Join(kvs, ",")] = dp
				}
			}
		}
	}
	return out
}

func otlpExpPoint(t *testing.T, body []byte, name string, want mpb.AggregationTemporality) expPoint {
	t.Helper()
	ps := otlpExpPoints(t, body, name, want)
	if len(ps) > 1 {
		t.Fatalf("%d points; want 1", len(ps))
	}
	for _, p := range ps {
		return fromOTLPExp(p)
	}
	return expPoint{}
}

// checkOTLP checks that an OTLP point carries what the direct read holds:
// everything, but the sum only when the minimum is not negative, min and
// max only when something was counted; no point for a delta interval
// that counted nothing.
func checkOTLP(t *testing.T, at string, got, direct expPoint, isDelta bool) {
	t.Helper()
	want := direct
	if want.present {
		want.hasSum = !(want.min < 0)
		if want.count == 0 {
			want.minMaxSet = false
			if isDelta {
				want = expPoint{}
			}
		}
	}
	if d := diffExp(got, want, true); d != "" {
		t.Fatalf("%s: OTLP differs from the direct read: %s\n OTLP   %v\n direct %v", at, d, got, direct)
	}
	// Min and max bit for bit: both are zerostat's.
	if got.minMaxSet && (math.Float64bits(got.min) != math.Float64bits(want.min) || math.Float64bits(got.max) != math.Float64bits(want.max)) {
		t.Fatalf("%s: OTLP min, max %v, %v; direct %v, %v", at, got.min, got.max, want.min, want.max)
	}
}

// TestExponentialConformance records every case of exphisttest.Cases
// (the structure-level test's workloads: narrow and wide ranges, forced
// downscales, zeros, negatives, powers of two, boundary values,
// subnormals, extremes, NaN and ±Inf, at MaxSize 2, 4, 160 and MaxScale
// -10, 0, 5, 20) through both providers' Float64Histogram, and the cases
// of whole values through their Int64Histogram too, and compares the
// cumulative and the delta point after each cut.
//
// Buckets (scale, zero count, offsets, counts, count), min and max are
// identical (a zero extreme's sign aside: see sameExtreme), except where
// the SDK's index misplaces a value within a few ulps of a bucket boundary
// at scale 5 and above (internal/exphist/doc.go). Such a read is checked
// as the structure-level test (benchmarks/exphist) checks it: a replay of
// the SDK's algorithm with its own index function gives the SDK's point
// exactly, the replay with exphist.Index gives zerostat's exactly, and
// every value the two index functions place differently is placed by
// exphist.Index where the math/big oracle puts it.
//
// Sums: neither side adds in a fixed order the other can reproduce (the
// SDK adds whole values into an int64 and the others into a float64, and
// reads their sum; zerostat adds in record order per cell, and adds its
// cells' and drained intervals' sums as double-doubles). Each is checked
// against the exact sum (math/big) within (n+1)·2^-53·Σ|v| (the SDK's only
// where its int64 did not overflow); and when every partial sum in any
// order is exact (every value a multiple of 2^e with Σ|v| < 2^(e+53):
// whole values, zeros, a constant, the narrow powers of two), both equal
// the exact sum, and each other, bit for bit.
func TestExponentialConformance(t *testing.T) {
	n := 1000
	if testing.Short() || raceEnabled {
		n = 200
	}
	var underflows int
	otelglobal.SetErrorHandler(otelglobal.ErrorHandlerFunc(func(err error) {
		if strings.Contains(err.Error(), "scale underflow") {
			underflows++ // the SDK's, at maxSize 2 (zerostat drops such a value too, silently)
			return
		}
		t.Errorf("otel error: %v", err)
	}))
	defer otelglobal.SetErrorHandler(otelglobal.ErrorHandlerFunc(func(error) {}))
	var diverged, mergedNotSingle []string
	exactSums, compared := 0, 0
	for _, c := range exphisttest.Cases(n) {
		t.Run(c.Name, func(t *testing.T) {
			insts := []string{"h"}
			if wholeValues(c.Values) {
				insts = append(insts, "hi") // through Int64Histogram too
			}
			// Two passes over the values, each with its own providers.
			// The first reads zerostat cumulatively only; the second as
			// deltas and cumulatively (a delta read drains the cells, so
			// the cumulative read is then the merge of the intervals:
			// see below). An OTLP delta encoder reads every view, so the
			// first pass's providers are shut down before the second's
			// starts.
			cumReads := map[string][]expPoint{} // pass 1's cumulative reads, by instrument and cut
			for pass := range 2 {
				withDelta := pass == 1
				s := newSDKExp(t, c.MaxSize, c.MaxScale)
				p := zotel.NewMeterProvider(zotel.WithViewPrefix(fmt.Sprintf("%s.%d.", t.Name(), pass)),
					zotel.WithExponentialHistograms(c.MaxSize, c.MaxScale))
				zf, err := p.Meter("m").Float64Histogram("h")
				if err != nil {
					t.Fatal(err)
				}
				zi, _ := p.Meter("m").Int64Histogram("hi")
				opt := []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attribute.String("k", "v")))}
				record := map[string]func(v float64){
					"h": func(v float64) {
						s.f.Record(ctx, v, opt...)
						zf.Record(ctx, v, opt...)
					},
					"hi": func(v float64) {
						s.i.Record(ctx, int64(v), opt...)
						zi.Record(ctx, int64(v), opt...)
					},
				}
				for _, name := range insts {
					z := newZSExp(t, p.ViewName(name), withDelta, c.MaxSize)
					mSDK := exphisttest.NewModel(c.MaxSize, c.MaxScale, exphisttest.SDKGetBin)
					mExact := exphisttest.NewModel(c.MaxSize, c.MaxScale, exphist.Index)
					last := 0
					for k, cut := range c.Cuts {
						dSDK := exphisttest.NewModel(c.MaxSize, c.MaxScale, exphisttest.SDKGetBin)
						dExact := exphisttest.NewModel(c.MaxSize, c.MaxScale, exphist.Index)
						for _, v := range c.Values[last:cut] {
							record[name](v)
							for _, m := range []*exphisttest.Model{mSDK, mExact, dSDK, dExact} {
								m.Record(v)
							}
						}
						at := fmt.Sprintf("%s, values %d..%d", name, last, cut)
						zCum, zDel := z.read(t)
						oCum, oDel := z.otlpRead(t)
						type cmp struct {
							name       string
							zs, sdk    expPoint
							model, exa *exphisttest.Model
							values     []float64
						}
						var cmps []cmp
						if !withDelta {
							checkOTLP(t, at+", cumulative", oCum, zCum, false)
							cumReads[name] = append(cumReads[name], zCum)
							cmps = append(cmps, cmp{"cumulative", zCum, s.collect(t, s.cum, name), mSDK, mExact, c.Values[:cut]})
						} else {
							checkOTLP(t, at+", cumulative with a delta reader", oCum, zCum, false)
							checkOTLP(t, at+", delta", oDel, zDel, true)
							cmps = append(cmps, cmp{"delta", zDel, s.collect(t, s.del, name), dSDK, dExact, c.Values[last:cut]})
							// A cumulative read of a series with delta
							// readers is the merge of the intervals
							// drained (core's expCell): the read of a
							// series without, except where a histogram
							// drops values (maxSize 2, values 3 buckets
							// apart at scale -10: the SDK's "scale
							// underflow", which drops whichever value
							// comes third), which merging intervals
							// (exphist.Snapshot.Merge: 3 buckets) does
							// not: the count may then be higher or lower
							// than one histogram's of every value.
							if mExact.Underflows == 0 {
								if d := diffExp(zCum, cumReads[name][k], false); d != "" {
									t.Fatalf("%s: the cumulative read with a delta reader differs from the one without: %s", at, d)
								}
							} else {
								if d := diffExp(zCum, fromSnap(&z.merged), false); d != "" {
									t.Fatalf("%s: the cumulative read with a delta reader differs from its deltas merged: %s", at, d)
								}
								if cut == len(c.Values) {
									mergedNotSingle = append(mergedNotSingle, fmt.Sprintf("%s %s (count %+d)", c.Name, name, int64(zCum.count)-int64(cumReads[name][k].count)))
								}
							}
							if zCum.present {
								checkExpSum(t, at+", cumulative with a delta reader", zCum.sum, c.Values[:cut])
							}
						}
						for _, r := range cmps {
							at := at + ", " + r.name
							if r.name == "delta" && !r.zs.present && r.sdk.present && r.sdk.count == 0 {
								// Values the scale underflow dropped, only:
								// zerostat's delta read sends no point then.
								continue
							}
							if d := diffExp(r.zs, fromModelExp(r.exa), false); d != "" {
								t.Fatalf("%s: zerostat differs from the replay with exphist.Index: %s", at, d)
							}
							if d := diffExp(r.zs, r.sdk, false); d != "" {
								if d2 := diffExp(r.sdk, fromModelExp(r.model), false); d2 != "" {
									t.Fatalf("%s: zerostat differs from the SDK (%s), and the SDK from its replay (%s)", at, d, d2)
								}
								if diffExp(fromModelExp(r.model), fromModelExp(r.exa), false) == "" {
									t.Fatalf("%s: zerostat differs from the SDK: %s\n zerostat %v\n SDK      %v", at, d, r.zs, r.sdk)
								}
								if misplaced(t, r.values, r.model.Scale, c.MaxScale) == 0 {
									t.Fatalf("%s: zerostat differs from the SDK, but no value is misplaced by the SDK's index: %s", at, d)
								}
								if r.name == "cumulative" && cut == len(c.Values) {
									diverged = append(diverged, c.Name+" "+name)
								}
							}
							compared++
							if !r.zs.present {
								continue
							}
							checkExpSum(t, at+", zerostat", r.zs.sum, r.values)
							if r.sdk.present && !intSumWrong(r.values) {
								checkExpSum(t, at+", the SDK", r.sdk.sum, r.values)
								if exactlySummable(r.values) {
									exactSums++
									if math.Float64bits(r.zs.sum) != math.Float64bits(r.sdk.sum) && !(r.zs.sum == 0 && r.sdk.sum == 0) {
										t.Fatalf("%s: sum %v; the SDK's %v (every partial sum is exact: they must be equal)", at, r.zs.sum, r.sdk.sum)
									}
								}
							}
						}
						last = cut
					}
				}
				_ = p.Shutdown(ctx) // its views unregistered: the next pass's delta encoders do not read them
			}
		})
	}
	t.Logf("maxSize 2: a cumulative read with delta readers (the intervals merged) counts other values than a single histogram, whose scale underflow drops depend on the order of the values, in %d cases: %s",
		len(mergedNotSingle), strings.Join(mergedNotSingle, ", "))
	t.Logf("%d reads compared, %d with exact sums compared bit for bit; %d scale underflows reported by the SDK", compared, exactSums, underflows)
	t.Logf("zerostat and the SDK differ only where the SDK's index misplaces boundary values, in %d cases: %s", len(diverged), strings.Join(diverged, ", "))
	if exactSums == 0 {
		t.Error("no case had exact sums")
	}
}

// misplaced returns how many (value, scale) pairs, for the scales from
// low to high, the SDK's getBin and exphist.Index place differently,
// failing the test if the math/big oracle does not agree with Index on
// every one (benchmarks/exphist's checkMisplaced).
func misplaced(t *testing.T, vs []float64, low, high int32) int {
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

// wholeValues reports whether every value is finite and a whole number
// an int64 holds (the cases also recorded through Int64Histogram).
func wholeValues(vs []float64) bool {
	for _, v := range vs {
		if v != math.Trunc(v) || math.Abs(v) >= 1<<62 {
			return false
		}
	}
	return true
}

// exactSum returns the finite values' sum, rounded once (math/big at
// 2,200 bits holds any sum of float64s exactly).
func exactSum(vs []float64) *big.Float {
	s := new(big.Float).SetPrec(2200)
	for _, v := range vs {
		if v-v == 0 {
			s.Add(s, big.NewFloat(v))
		}
	}
	return s
}

// checkExpSum checks a sum of the finite values against their exact sum,
// within (n+1)·2^-53·Σ|v|: a running sum's bound is (n-1)·2^-53·Σ|v|; the
// SDK's two partial sums and zerostat's merges of cells and intervals
// (double-double, rounded once) add two roundings.
func checkExpSum(t *testing.T, at string, sum float64, vs []float64) {
	t.Helper()
	abs, n := 0.0, 0
	for _, v := range vs {
		if v-v == 0 {
			abs += math.Abs(v)
			n++
		}
	}
	exact, _ := exactSum(vs).Float64()
	if math.IsInf(abs, 0) || math.IsInf(exact, 0) {
		return
	}
	if tol := float64(n+1) * 0x1p-53 * abs; math.Abs(sum-exact) > tol {
		t.Fatalf("%s: sum %v; want %v within %g", at, sum, exact, tol)
	}
}

// exactlySummable reports whether every partial sum of the finite values,
// in any order and grouping, is exact in a float64: every value is a
// multiple of 2^e and Σ|v| < 2^(e+53), for the smallest e of any value's
// lowest set bit.
func exactlySummable(vs []float64) bool {
	e := math.MaxInt
	abs := new(big.Float).SetPrec(2200)
	for _, v := range vs {
		if v-v != 0 || v == 0 {
			continue
		}
		frac, exp := math.Frexp(math.Abs(v))       // v = frac·2^exp, frac in [0.5, 1)
		m := uint64(math.Ldexp(frac, 53))          // the 53-bit significand
		e = min(e, exp-53+bits.TrailingZeros64(m)) // the lowest set bit's exponent
		abs.Add(abs, big.NewFloat(math.Abs(v)))
	}
	if e == math.MaxInt {
		return true // zeros only
	}
	limit := new(big.Float).SetMantExp(big.NewFloat(1), e+53)
	return abs.Cmp(limit) < 0
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

// expCollector collects a provider's instrument "h" concurrently with
// records (TestExponentialConcurrent): OTLP cumulative and delta, the
// delta points merged per attribute set.
type expCollector struct {
	name     string
	cum, del *otlp.Encoder
	maxSize  int32
	deltas   map[string]*exphist.Snapshot
	last     map[string]*mpb.ExponentialHistogramDataPoint
	n        int
}

func newExpCollector(t *testing.T, p *zotel.MeterProvider) *expCollector {
	z := newZSExp(t, p.ViewName("h"), true, 20)
	return &expCollector{name: z.name, cum: z.cum, del: z.del, maxSize: 20, deltas: map[string]*exphist.Snapshot{}}
}

func (c *expCollector) collect(t *testing.T) {
	now := time.Now()
	c.n++
	c.last = otlpExpPoints(t, c.cum.Encode(now), c.name, mpb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE)
	for k, dp := range otlpExpPoints(t, c.del.Encode(now), c.name, mpb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA) {
		if c.deltas[k] == nil {
			c.deltas[k] = &exphist.Snapshot{}
		}
		s := exphist.Snapshot{Scale: dp.Scale, ZeroCount: dp.ZeroCount, Count: dp.Count, Sum: dp.GetSum(), Min: dp.GetMin(), Max: dp.GetMax(),
			Positive: exphist.Buckets{Offset: dp.GetPositive().GetOffset(), Counts: dp.GetPositive().GetBucketCounts()},
			Negative: exphist.Buckets{Offset: dp.GetNegative().GetOffset(), Counts: dp.GetNegative().GetBucketCounts()}}
		c.deltas[k].Merge(&s, c.maxSize)
	}
}

// check compares the merged deltas and the last cumulative points with
// the references (buckets, count, min and max; the cumulative sum, when
// sent, exactly).
func (c *expCollector) check(t *testing.T, want map[string]*refHist) {
	t.Helper()
	if len(c.last) != len(want) || len(c.deltas) != len(want) {
		t.Fatalf("%d cumulative and %d delta points; want %d", len(c.last), len(c.deltas), len(want))
	}
	for k, r := range want {
		var ref exphist.Snapshot
		r.h.Snapshot(&ref)
		w := fromSnap(&ref)
		if d := diffExp(fromSnap(c.deltas[k]), w, false); d != "" {
			t.Errorf("%s: the delta points merged: %s", k, d)
		}
		cum := fromOTLPExp(c.last[k])
		if d := diffExp(cum, w, false); d != "" {
			t.Errorf("%s: the last cumulative point: %s", k, d)
		}
		if cum.hasSum != !(ref.Min < 0) || cum.hasSum && cum.sum != ref.Sum {
			t.Errorf("%s: cumulative sum %v (%v); want %v", k, cum.sum, cum.hasSum, ref.Sum)
		}
	}
}

// refHist is a single histogram fed every value in one goroutine.
type refHist struct{ h *exphist.Histogram }

func newRefHist(maxSize, maxScale int32) *refHist {
	return &refHist{exphist.MustNew(maxSize, maxScale)}
}

func (r *refHist) record(v float64) { r.h.Record(v) }
