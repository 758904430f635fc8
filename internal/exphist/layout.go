package exphist

import "math"

// Boundary returns base^i at the given scale, base = 2^(2^-scale): the
// lower edge of positive bucket i, and minus the upper edge of negative
// bucket i. Exact for scale <= 0 (powers of two); above, within an ulp
// (an Exp2 of the fractional exponent); 0 or +Inf beyond float64's range.
// Cost: an Ldexp, and an Exp2 above scale 0.
func Boundary(i, scale int32) float64 {
	if scale <= 0 {
		return math.Ldexp(1, int(i)<<-scale)
	}
	q, r := int(i)>>scale, int(i)&(1<<scale-1)
	return math.Ldexp(math.Exp2(float64(r)/float64(int(1)<<scale)), q)
}

// Layout lays out exponential histograms at one scale over one range of
// buckets per sign as a distribution with explicit bounds, for formats
// that have no exponential histogram (OpenCensus's distribution, which the
// OpenCensus bridge publishes and exporter/statsd's OpenCensusDatadog mode
// writes as Datadog's exporter would). With negative buckets n..N and
// positive buckets p..P (base b) the bounds are
//
//	-b^(N+1), ..., -b^(n+1), -b^n, 0, b^p, b^(p+1), ..., b^(P+1)
//
// and the buckets (-Inf, -b^(N+1)), [-b^(N+1), -b^N), ..., [-b^n, 0),
// [0, b^p), [b^p, b^(p+1)), ..., [b^(P+1), +Inf) hold 0, the negative
// buckets' counts (most negative first), 0, the zero count, the positive
// buckets' counts, 0. A bound that is not finite or not above the one
// before it (an edge beyond float64's range; two edges that round to the
// same subnormal) is left out, its two buckets merged. Its slices are
// reused from one Reset to the next. Not safe for concurrent use.
type Layout struct {
	scale       int32
	negLo, negN int32 // negative buckets negLo .. negLo+negN-1
	posLo, posN int32
	// Bounds are the explicit bounds (valid until the next Reset).
	Bounds  []float64
	index   []int // raw bucket -> bucket (after left-out bounds)
	zero    int   // raw bucket of the zero count
	posAt   int   // raw bucket of positive bucket posLo
	negAt   int   // raw bucket of negative bucket negLo+negN-1
	buckets int   // len(Bounds)+1
}

// Reset lays out the scale and ranges of s. Cost: O(buckets), a
// Boundary per bound; no allocation once the slices have grown.
func (l *Layout) Reset(s *Snapshot) {
	l.scale = s.Scale
	l.negLo, l.negN = s.Negative.Offset, int32(len(s.Negative.Counts))
	l.posLo, l.posN = s.Positive.Offset, int32(len(s.Positive.Counts))
	l.Bounds, l.index = l.Bounds[:0], append(l.index[:0], 0)
	keep := func(b float64) {
		if b-b == 0 && (len(l.Bounds) == 0 || b > l.Bounds[len(l.Bounds)-1]) {
			l.Bounds = append(l.Bounds, b)
		}
		l.index = append(l.index, len(l.Bounds))
	}
	for i := l.negLo + l.negN; i >= l.negLo && l.negN > 0; i-- {
		keep(-Boundary(i, l.scale))
	}
	keep(0)
	for i := l.posLo; i <= l.posLo+l.posN && l.posN > 0; i++ {
		keep(Boundary(i, l.scale))
	}
	// Raw buckets: 0 below everything; the negative buckets from 1; the
	// empty [-b^n, 0); the zero count; the positive buckets.
	l.negAt = 1
	l.zero = 1 + int(l.negN)
	if l.negN > 0 {
		l.zero++
	}
	l.posAt = l.zero + 1
	l.buckets = len(l.Bounds) + 1
}

// Counts writes s's counts laid out on l's buckets into dst (grown to
// len(Bounds)+1) and returns it. s must be at l's scale or finer and,
// lowered to l's scale (its buckets nest in l's), within l's ranges; it
// is not modified. Cost: O(buckets); no allocation when dst has the
// capacity.
func (l *Layout) Counts(dst []int64, s *Snapshot) []int64 {
	if cap(dst) < l.buckets {
		dst = make([]int64, l.buckets)
	}
	dst = dst[:l.buckets]
	clear(dst)
	d := s.Scale - l.scale
	for k, c := range s.Negative.Counts {
		j := (s.Negative.Offset + int32(k)) >> d
		dst[l.index[l.negAt+int(l.negLo+l.negN-1-j)]] += int64(c)
	}
	dst[l.index[l.zero]] += int64(s.ZeroCount)
	for k, c := range s.Positive.Counts {
		i := (s.Positive.Offset + int32(k)) >> d
		dst[l.index[l.posAt+int(i-l.posLo)]] += int64(c)
	}
	return dst
}
