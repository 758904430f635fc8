package debugstats

import (
	"math"
	"strconv"

	"github.com/zerostat/zerostat/internal/exphist"
	"github.com/zerostat/zerostat/view"
)

// An exponential distribution (view.ExponentialDistribution) is shown as
// a distribution is: count, mean, min, max, p50, p90 and p99, and a bar
// chart of its buckets. Its buckets are those of OpenTelemetry's data
// model: at scale s, base = 2^(2^-s), positive bucket i holds base^i < v
// <= base^(i+1), negative bucket i holds -base^(i+1) <= v < -base^i, and
// the zero bucket holds 0.

// maxExpBars is the most bars an exponential distribution is drawn with:
// above it the chart shows the histogram at a lower scale (each step
// merges pairs of buckets, which nest exactly), so 160 buckets per sign
// are not 320 bars of a pixel. The quantiles are estimated at the
// histogram's own scale.
const maxExpBars = 48

// expBar is one bar of an exponential distribution's chart: a bucket, or
// the zero bucket.
type expBar struct {
	lo, hi float64 // the bucket's edges (the zero bucket: the gap between its neighbours)
	count  uint64
	sign   int8 // -1 negative, 0 zero, +1 positive
}

// expBars returns s's buckets in ascending order of their values: the
// negative buckets (most negative first), the zero bucket when it holds
// values or lies between negative and positive ones, the positive
// buckets.
func expBars(s *exphist.Snapshot) []expBar {
	neg, pos := s.Negative, s.Positive
	bars := make([]expBar, 0, len(neg.Counts)+len(pos.Counts)+1)
	for k := len(neg.Counts) - 1; k >= 0; k-- {
		i := neg.Offset + int32(k)
		bars = append(bars, expBar{lo: -exphist.Boundary(i+1, s.Scale), hi: -exphist.Boundary(i, s.Scale), count: neg.Counts[k], sign: -1})
	}
	if s.ZeroCount > 0 || len(neg.Counts) > 0 && len(pos.Counts) > 0 {
		z := expBar{count: s.ZeroCount}
		if len(neg.Counts) > 0 {
			z.lo = -exphist.Boundary(neg.Offset, s.Scale)
		}
		if len(pos.Counts) > 0 {
			z.hi = exphist.Boundary(pos.Offset, s.Scale)
		}
		bars = append(bars, z)
	}
	for k, c := range pos.Counts {
		i := pos.Offset + int32(k)
		bars = append(bars, expBar{lo: exphist.Boundary(i, s.Scale), hi: exphist.Boundary(i+1, s.Scale), count: c, sign: 1})
	}
	return bars
}

// expQuantile estimates the q-quantile of s: the bucket holding rank
// q·Count, its edges clamped to s's Min and Max (as the classic estimate
// clamps them, internal/quantile), and within it the interpolation
// Prometheus's histogram_quantile uses for a native histogram's
// exponential buckets in current Prometheus (promql/quantile.go,
// HistogramQuantile): geometric, linear in the logarithm of the value
// (the buckets' edges are evenly spaced in it), mirrored for a negative
// bucket; the zero bucket answers 0. Prometheus 2.42 (Debian's) still
// interpolated linearly within a bucket; at scale 3 (base 1.09) the two
// differ by under 0.2% of the value. NaN when s is empty.
func expQuantile(s *exphist.Snapshot, q float64) float64 {
	return expQuantileOf(expBars(s), s.Count, s.Min, s.Max, q)
}

func expQuantileOf(bars []expBar, count uint64, lo, hi, q float64) float64 {
	if count == 0 {
		return math.NaN()
	}
	rank := q * float64(count)
	var cum float64
	for _, b := range bars {
		c := float64(b.count)
		if c == 0 || cum+c < rank {
			cum += c
			continue
		}
		return interpolate(b, lo, hi, (rank-cum)/c)
	}
	return hi
}

// interpolate returns the value a fraction f of the way through bar b,
// geometrically, with b's edges clamped to min and max.
func interpolate(b expBar, min, max, f float64) float64 {
	if b.sign == 0 {
		return 0
	}
	lo, hi := math.Max(b.lo, min), math.Min(b.hi, max)
	switch {
	case hi <= lo:
		// One value (min = max), or an edge off by the rounding of
		// boundary: the clamp is the answer.
		return math.Min(math.Max(lo, min), max)
	case f <= 0:
		return lo
	case f >= 1:
		return hi
	case b.sign > 0:
		ll, lh := math.Log2(lo), math.Log2(hi)
		return math.Exp2(ll + (lh-ll)*f)
	}
	// Negative: mirrored, as Prometheus does.
	ll, lh := math.Log2(-lo), math.Log2(-hi)
	return -math.Exp2(lh + (ll-lh)*(1-f))
}

// fraction is where v lies in bar b, as interpolate spaces it (clamped to
// min and max, 0 to 1); 0.5 for the zero bucket.
func fraction(b expBar, min, max, v float64) float64 {
	lo, hi := math.Max(b.lo, min), math.Min(b.hi, max)
	if b.sign == 0 || hi <= lo {
		return 0.5
	}
	var f float64
	if b.sign > 0 {
		f = (math.Log2(v) - math.Log2(lo)) / (math.Log2(hi) - math.Log2(lo))
	} else {
		f = 1 - (math.Log2(-v)-math.Log2(-hi))/(math.Log2(-lo)-math.Log2(-hi))
	}
	if math.IsNaN(f) {
		return 0.5
	}
	return math.Min(1, math.Max(0, f))
}

// expChart draws s: its buckets as bars, at a lower scale when they are
// more than maxExpBars (a copy of s is downscaled), each titled with its
// range under the data model's rule ("(1, 2]", "[-2, -1)", "0"), the edges
// between bars labelled, and p50 and p99 marked.
func expChart(s *exphist.Snapshot) chart {
	shown := s
	bars := expBars(s)
	if len(bars) > maxExpBars {
		var d exphist.Snapshot
		s.CopyTo(&d)
		for len(bars) > maxExpBars && d.Scale > exphist.MinScale {
			d.Downscale(d.Scale - 1)
			bars = expBars(&d)
		}
		shown = &d
	}
	counts := make([]uint64, len(bars))
	labels := make([]string, 0, len(bars))
	for i, b := range bars {
		counts[i] = b.count
		if i < len(bars)-1 {
			labels = append(labels, compact(b.hi))
		}
	}
	c := newChart(counts, s.Count, func(i int) string { return expRange(bars[i], shown.Scale) }, labels)
	if s.Count > 0 {
		for _, q := range chartQuantiles {
			v := expQuantile(s, q.q) // at s's own scale
			c.mark(expPosition(bars, s.Min, s.Max, v, c.step, c.barW), q.name, v)
		}
	}
	c.Caption = "exponential histogram of " + strconv.Itoa(len(s.Negative.Counts)+len(s.Positive.Counts)) +
		" buckets at scale " + strconv.Itoa(int(s.Scale))
	if shown.Scale != s.Scale {
		c.Caption += ", drawn at scale " + strconv.Itoa(int(shown.Scale))
	}
	c.Caption += ", " + strconv.FormatUint(s.Count, 10) + " values"
	return c
}

// expPosition maps v to the chart's x: the bar holding it, and within the
// bar as interpolate spaces values.
func expPosition(bars []expBar, min, max, v, step, barW float64) float64 {
	i := 0
	for i < len(bars)-1 && !inBar(bars[i], v) {
		i++
	}
	return chartPad + float64(i)*step + fraction(bars[i], min, max, v)*barW
}

// inBar reports whether v is at or below bar b's upper end (so in b, for
// bars in ascending order).
func inBar(b expBar, v float64) bool {
	switch b.sign {
	case 0:
		return v <= 0
	case 1:
		return v <= b.hi
	}
	return v < b.hi
}

// expRange names bar b of a histogram at scale: "(1, 2]" for a positive
// bucket, "[-2, -1)" for a negative one, "0" for the zero bucket.
func expRange(b expBar, scale int32) string {
	switch b.sign {
	case 0:
		return "0"
	case 1:
		return "(" + formatEdge(b.lo, scale) + ", " + formatEdge(b.hi, scale) + "]"
	}
	return "[" + formatEdge(b.lo, scale) + ", " + formatEdge(b.hi, scale) + ")"
}

// formatEdge formats a bucket edge at scale with the significant digits
// that tell it from its neighbours (4 up to scale 5, 8 at scale 20: a
// bucket is about ln 2·2^-scale of its value wide).
func formatEdge(x float64, scale int32) string {
	digits := 4
	if scale > 0 {
		w := math.Ln2 * math.Ldexp(1, -int(scale))
		digits = max(4, int(math.Ceil(-math.Log10(w)))+2)
	}
	if x == math.Trunc(x) && math.Abs(x) < 1e15 || math.IsInf(x, 0) {
		return formatFloat(x)
	}
	return strconv.FormatFloat(x, 'g', digits, 64)
}

// snapshotOf converts a row's data to exphist's type, whose Downscale the
// chart uses. Empty: Min and Max +Inf and -Inf, as exphist has them.
func snapshotOf(d *view.ExponentialDistributionData) *exphist.Snapshot {
	s := &exphist.Snapshot{Scale: d.Scale, ZeroCount: uint64(d.ZeroCount), Count: uint64(d.Count),
		Sum: d.Sum, Min: d.Min, Max: d.Max}
	if d.Count == 0 {
		s.Min, s.Max = math.Inf(1), math.Inf(-1)
	}
	s.Positive = buckets(d.PositiveOffset, d.PositiveCounts)
	s.Negative = buckets(d.NegativeOffset, d.NegativeCounts)
	return s
}

func buckets(offset int32, counts []int64) exphist.Buckets {
	b := exphist.Buckets{Offset: offset, Counts: make([]uint64, len(counts))}
	for i, c := range counts {
		b.Counts[i] = uint64(max(c, 0))
	}
	return b
}
