package statsd

import (
	"math"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/delta"
	"github.com/zerostat/zerostat/internal/exphist"
)

// Exponential distributions (view.ExponentialDistribution) are sent by the
// rule of distributions, over their buckets: natively, per bucket that
// changed one value inside it weighed by its count (expDistribution); in
// OpenCensusDatadog mode as the OpenCensus Datadog exporter sends the
// OpenCensus distribution that bridge/opencensus makes of the view
// (ocExpRow). At scale s, base = 2^(2^-s), positive bucket i holds base^i
// < v <= base^(i+1), negative bucket i holds -base^(i+1) <= v < -base^i,
// the zero bucket holds 0 (OpenTelemetry's data model).

// expDistribution writes a native exponential distribution, the interval's
// values s, as distribution writes a distribution: for each bucket that
// changed its count of one value inside it (the zero bucket's is 0), the
// interval's mean when only one bucket changed and the mean lies in it,
// grouped by count into multi-value lines. Buckets in ascending order of
// their values.
func (e *encoder) expDistribution(s *exphist.Snapshot) {
	nonEmpty := 0
	if s.ZeroCount > 0 {
		nonEmpty++
	}
	for _, b := range [2]*exphist.Buckets{&s.Negative, &s.Positive} {
		for _, c := range b.Counts {
			if c > 0 {
				nonEmpty++
			}
		}
	}
	only := nonEmpty == 1
	e.pairs = e.pairs[:0]
	neg := s.Negative
	for k := len(neg.Counts) - 1; k >= 0; k-- {
		if c := neg.Counts[k]; c > 0 {
			e.addPair(c, -expRepresentative(s, -1, neg.Offset+int32(k), only))
		}
	}
	if s.ZeroCount > 0 {
		e.addPair(s.ZeroCount, 0)
	}
	for k, c := range s.Positive.Counts {
		if c > 0 {
			e.addPair(c, expRepresentative(s, 1, s.Positive.Offset+int32(k), only))
		}
	}
	e.sendPairs()
}

// expRepresentative returns the magnitude of a value inside bucket i of
// sign (+1 or -1) of s: the interval's mean when only is set and it lies
// in the bucket (the interval's sum is then exact), else the middle of
// the bucket, base^i + (base^(i+1)-base^i)/2; where that is not inside it
// (an edge beyond float64's range, or a subnormal bucket narrower than a
// float's spacing) the interval's min or max if inside, else the first
// float inside from its lower edge. Every value returned is in bucket i by
// exphist.Index, the data model's exact index.
func expRepresentative(s *exphist.Snapshot, sign float64, i int32, only bool) float64 {
	in := func(x float64) bool {
		return isFinite(x) && x > 0 && exphist.Index(x, s.Scale) == i
	}
	if only && s.Dropped == 0 && s.Count > 0 {
		if m := sign * s.Sum / float64(s.Count); in(m) {
			return m
		}
	}
	lo, hi := exphist.Boundary(i, s.Scale), exphist.Boundary(i+1, s.Scale)
	if x := lo + (hi-lo)/2; in(x) {
		return x
	}
	for _, x := range [2]float64{sign * s.Min, sign * s.Max} {
		if in(x) {
			return x
		}
	}
	x := math.Nextafter(lo, 0)
	for n := 0; n < 64 && !in(x) && x < math.MaxFloat64; n++ {
		x = math.Nextafter(x, math.Inf(1))
	}
	return x
}

// ocExpView writes an exponential view in OpenCensusDatadog mode: as the
// OpenCensus Datadog exporter sends the view data bridge/opencensus's
// Exporter makes of it, whose rows share one layout: the scale and ranges
// a histogram of the view's maxSize holding every row's values would have
// (exphist.Snapshot.Merge), each row lowered to it. The series are read
// once (cumulative), into snapshots the encoder keeps for the next export.
func (e *encoder) ocExpView(v *core.View, overflow *core.Series) {
	maxSize, _ := v.Agg.Exponential()
	if maxSize == 0 {
		maxSize = exphist.DefaultMaxSize
	}
	n := len(e.series)
	for len(e.expRows) < n {
		e.expRows = append(e.expRows, exphist.Snapshot{})
	}
	resetSnapshot(&e.expAcc)
	rv := &e.rv
	for i, s := range e.series {
		rv.Exp, e.expRows[i] = e.expRows[i], rv.Exp // read into row i's Counts
		delta.Read(core.KindExponential, s, nil, nil, rv)
		rv.Exp, e.expRows[i] = e.expRows[i], rv.Exp
		e.expAcc.Merge(&e.expRows[i], maxSize)
	}
	e.expLayout.Reset(&e.expAcc)
	for i, s := range e.series {
		e.seriesTags(v, s, s == overflow)
		e.ocExpRow(&e.expRows[i])
	}
}

// ocExpRow writes one series of an exponential view in OpenCensusDatadog
// mode, as ocRow writes a distribution: the gauges .min, .max, .count,
// .avg (the sum over the count), the percentiles over the layout's bounds,
// .count_per_bucket per bucket of the layout tagged bucket_idx. Not
// .squared_dev_sum: an exponential histogram does not keep it (the bridge
// must fill OpenCensus's field, with 0; a gauge of 0 would be a false
// reading, so none is sent).
func (e *encoder) ocExpRow(s *exphist.Snapshot) {
	e.gauge(".min", s.Min, -1)
	e.gauge(".max", s.Max, -1)
	e.gauge(".count", float64(s.Count), -1)
	mean := 0.0
	if s.Count > 0 {
		mean = s.Sum / float64(s.Count)
	}
	e.gauge(".avg", mean, -1)
	e.buckets = e.expLayout.Counts(e.buckets, s)
	if bounds := e.expLayout.Bounds; len(bounds) > 0 {
		for _, p := range e.pcts {
			e.gauge("."+p.name, calculatePercentile(p.p, bounds, e.buckets), -1)
		}
	}
	if !e.o.DisableCountPerBuckets {
		for i, c := range e.buckets {
			e.gauge(".count_per_bucket", float64(c), i)
		}
	}
}

// resetSnapshot empties s, keeping its Counts' capacity.
func resetSnapshot(s *exphist.Snapshot) {
	p, n := s.Positive.Counts[:0], s.Negative.Counts[:0]
	*s = exphist.Snapshot{}
	s.Positive.Counts, s.Negative.Counts = p, n
}
