package exphist

import "math"

// Snapshot is a copy of a histogram, in the shape of OpenTelemetry's
// ExponentialHistogramDataPoint: bucket i of Positive counts the values v
// with base^(Offset+i) < v <= base^(Offset+i+1), base = 2^(2^-Scale), and
// likewise Negative for -v. It is a plain value: not safe for concurrent
// use, owned by its caller, whose Counts slices Snapshot and the methods
// below reuse (a dst with capacity maxSize in each never allocates).
type Snapshot struct {
	Scale     int32
	ZeroCount uint64
	Positive  Buckets
	Negative  Buckets
	// Count is ZeroCount plus every bucket's count.
	Count uint64
	// Sum is the sum of the counted values, added in the order the lock
	// admitted them (for one goroutine: record order, the bits of a plain
	// running sum); SumLo is its rounding error (Sum+SumLo is the exact
	// sum to about 2^-106 of it), for Sub.
	Sum, SumLo float64
	// Min and Max are +Inf and -Inf while nothing has been recorded.
	Min, Max float64
	// Dropped counts values recorded but not counted (see
	// Histogram.Record).
	Dropped uint64
}

// Buckets is one sign's buckets: Counts[i] is bucket Offset+i. Empty
// buckets have Offset 0 and no counts.
type Buckets struct {
	Offset int32
	Counts []uint64
}

// Snapshot copies the histogram into dst, reusing dst's Counts. Safe for
// concurrent use with Record: it holds the lock while it copies (a
// downscale happens wholly before or after it). Cost: O(buckets); no
// allocation when dst's Counts have capacity for the buckets in use.
func (h *Histogram) Snapshot(dst *Snapshot) {
	restore := h.rlock()
	h.copyTo(dst)
	h.runlock(restore)
}

// SnapshotReset is Snapshot, and then empties the histogram and returns it
// to its maximum scale, atomically: a record lands either in dst or in the
// histogram afterwards. This is the SDK's delta read (each interval at its
// own scale). Safe for concurrent use with Record.
func (h *Histogram) SnapshotReset(dst *Snapshot) {
	restore := h.rlock()
	h.copyTo(dst)
	h.dropped = 0
	h.pos.clear()
	h.neg.clear()
	h.count, h.zero = 0, 0
	h.sum, h.sumLo = 0, 0
	h.min, h.max = math.Inf(1), math.Inf(-1)
	h.scale.Store(h.maxScale)
	h.runlock(restore)
}

// copyTo copies the histogram into dst (under the lock).
func (h *Histogram) copyTo(dst *Snapshot) {
	dst.Scale = h.scale.Load()
	dst.ZeroCount = h.zero
	dst.Count = h.count
	dst.Sum, dst.SumLo = h.sum, h.sumLo
	dst.Min, dst.Max = h.min, h.max
	dst.Dropped = h.dropped
	h.pos.copyTo(&dst.Positive)
	h.neg.copyTo(&dst.Negative)
}

// copyTo copies sp's buckets in order into b.
func (sp *span) copyTo(b *Buckets) {
	n := int(sp.n)
	c := grow(b.Counts, n)
	b.Offset = sp.start
	if n == 0 {
		b.Offset = 0
	}
	ring := sp.counters()
	k := copy(c, ring[sp.head:min(int(sp.head)+n, len(ring))])
	copy(c[k:], ring[:n-k])
	b.Counts = c
}

// clear empties sp, keeping its ring.
func (sp *span) clear() {
	for i := int32(0); i < sp.n; i++ {
		*sp.at(sp.pos(i)) = 0
	}
	sp.start, sp.n, sp.head = 0, 0, 0
}

// grow returns c resliced to length n, reallocated only when its capacity
// is short, then to at least twice it: a snapshot that keeps a series'
// history (internal/core's drained delta reads) reallocates a few times
// as the range widens, not at every new bucket.
func grow(c []uint64, n int) []uint64 {
	if cap(c) < n {
		return make([]uint64, n, max(n, 2*cap(c)))
	}
	return c[:n]
}

// CopyTo copies s into dst, reusing dst's Counts.
func (s *Snapshot) CopyTo(dst *Snapshot) {
	p, n := dst.Positive.Counts, dst.Negative.Counts
	*dst = *s
	dst.Positive.Counts = append(grow(p, 0), s.Positive.Counts...)
	dst.Negative.Counts = append(grow(n, 0), s.Negative.Counts...)
}

// Downscale lowers s to scale (nothing if s is at it or below): bucket i
// becomes i>>(s.Scale-scale), merging counts, in place. For an exporter
// whose format caps the scale (Prometheus native histograms: schema at
// most 8). Cost: O(buckets); no allocation.
func (s *Snapshot) Downscale(scale int32) {
	if d := s.Scale - scale; d > 0 {
		s.Positive.downscale(d)
		s.Negative.downscale(d)
		s.Scale = scale
	}
}

// Merge adds o into s, as if s's histogram had also recorded o's values:
// both at the lower of their scales, lowered further until each sign's
// buckets span at most maxSize indexes, so that the result has the scale
// a single histogram of maxSize buckets recording every value of both
// would have (the largest at which they all fit), and the same bucket
// counts. An empty s (nothing recorded, or a zero Snapshot) becomes a
// copy of o. Sum and SumLo add as a double-double, Min and Max combine,
// Count, ZeroCount and Dropped add. o is not modified.
//
// With maxSize 2, two histograms whose buckets of one sign together span
// 3 indexes at scale -10 merge into 3 buckets there (a single histogram
// would have dropped one of the values, see Histogram.Record).
//
// For core to combine a series' stripes, or a stripe into its series.
// Cost: O(buckets); no allocation when s's Counts have capacity for
// maxSize (3 if maxSize is 2).
func (s *Snapshot) Merge(o *Snapshot, maxSize int32) {
	if o.Count == 0 && o.Dropped == 0 {
		return // o empty: its scale must not lower s's
	}
	if s.Count == 0 && s.Dropped == 0 {
		o.CopyTo(s) // s empty (a zero Snapshot too): o's scale
		return
	}
	scale := min(s.Scale, o.Scale)
	scale -= max(mergeChange(&s.Positive, s.Scale, &o.Positive, o.Scale, scale, maxSize),
		mergeChange(&s.Negative, s.Scale, &o.Negative, o.Scale, scale, maxSize))
	scale = max(scale, MinScale)
	s.Positive.mergeFrom(s.Scale, &o.Positive, o.Scale, scale)
	s.Negative.mergeFrom(s.Scale, &o.Negative, o.Scale, scale)
	s.Scale = scale
	s.Count += o.Count
	s.ZeroCount += o.ZeroCount
	s.Dropped += o.Dropped
	sum := s.Sum + o.Sum
	s.SumLo += o.SumLo + twoSumErr(s.Sum, o.Sum, sum)
	s.Sum = sum
	s.Min = math.Min(s.Min, o.Min)
	s.Max = math.Max(s.Max, o.Max)
}

// mergeChange returns how far below scale a and b (at scales sa and sb)
// must go for their union to span at most maxSize indexes.
func mergeChange(a *Buckets, sa int32, b *Buckets, sb, scale, maxSize int32) int32 {
	lo, hi, ok := union(a, sa, b, sb, scale)
	if !ok {
		return 0
	}
	var c int32
	for hi-lo >= int64(maxSize) && scale-c > MinScale {
		lo >>= 1
		hi >>= 1
		c++
	}
	return c
}

// union returns the lowest and highest index of a and b at scale (at most
// both sa and sb), and false if both are empty.
func union(a *Buckets, sa int32, b *Buckets, sb, scale int32) (lo, hi int64, ok bool) {
	lo, hi = math.MaxInt64, math.MinInt64
	for _, x := range [2]struct {
		b *Buckets
		s int32
	}{{a, sa}, {b, sb}} {
		if n := len(x.b.Counts); n > 0 {
			d := x.s - scale
			lo = min(lo, int64(x.b.Offset>>d))
			hi = max(hi, int64((x.b.Offset+int32(n)-1)>>d))
			ok = true
		}
	}
	return lo, hi, ok
}

// downscale lowers b's scale by d > 0 in place (bucket i becomes i>>d).
func (b *Buckets) downscale(d int32) {
	n := int32(len(b.Counts))
	if n == 0 || d <= 0 {
		return
	}
	start, end := b.Offset>>d, (b.Offset+n-1)>>d
	// Bucket i merges into j <= i, whose counter has been read already.
	for i := int32(0); i < n; i++ {
		c := b.Counts[i]
		b.Counts[i] = 0
		b.Counts[(b.Offset+i)>>d-start] += c
	}
	b.Offset = start
	b.Counts = b.Counts[:end-start+1]
}

// mergeFrom lowers b from scale sb to scale, then adds o (at scale so)
// lowered to scale too; the result may begin below b's first bucket.
func (b *Buckets) mergeFrom(sb int32, o *Buckets, so, scale int32) {
	b.downscale(sb - scale)
	if len(o.Counts) == 0 {
		return
	}
	d := so - scale
	oStart := o.Offset >> d
	oEnd := (o.Offset + int32(len(o.Counts)) - 1) >> d
	if len(b.Counts) == 0 {
		b.Offset = oStart
		b.Counts = grow(b.Counts, int(oEnd-oStart+1))
		clear(b.Counts)
	} else {
		start := min(b.Offset, oStart)
		end := max(b.Offset+int32(len(b.Counts))-1, oEnd)
		n := int(end - start + 1)
		old := b.Counts
		c := old
		if cap(c) < n {
			c = make([]uint64, n, max(n, 2*cap(c))) // see grow
		}
		c = c[:n]
		shift := int(b.Offset - start)
		copy(c[shift:], old) // memmove: overlapping is fine
		clear(c[:shift])
		clear(c[shift+len(old):])
		b.Counts, b.Offset = c, start
	}
	for i, c := range o.Counts {
		b.Counts[(o.Offset+int32(i))>>d-b.Offset] += c
	}
}

// Sub turns s, a read of a cumulative histogram, into the interval since
// prev, an earlier read of the same histogram: prev is lowered to s's
// scale and subtracted bucket by bucket, with the counts; the sums are
// subtracted as double-doubles (so the interval's sum keeps its own
// precision however large the totals), Dropped likewise. The result is
// the interval's values at the cumulative's scale, which may be coarser
// than the scale a histogram of the interval's values alone would have
// (SnapshotReset gives that one). Min and Max stay s's: extremes cannot
// be un-merged. Empty buckets at either end of a sign are trimmed.
//
// It fails with ErrNotPrefix, leaving s unchanged, when prev cannot be an
// earlier read: its scale is below s's, or a count would go negative.
// Cost: O(buckets); no allocation.
func (s *Snapshot) Sub(prev *Snapshot) error {
	if prev.Count == 0 && prev.Dropped == 0 {
		return nil
	}
	d := prev.Scale - s.Scale
	if d < 0 || prev.Count > s.Count || prev.ZeroCount > s.ZeroCount || prev.Dropped > s.Dropped ||
		!s.Positive.covers(&prev.Positive, d) || !s.Negative.covers(&prev.Negative, d) {
		return ErrNotPrefix
	}
	s.Positive.sub(&prev.Positive, d)
	s.Negative.sub(&prev.Negative, d)
	s.Count -= prev.Count
	s.ZeroCount -= prev.ZeroCount
	s.Dropped -= prev.Dropped
	// (Sum, SumLo) - (prev.Sum, prev.SumLo) as double-doubles.
	sh := s.Sum - prev.Sum
	e := twoSumErr(s.Sum, -prev.Sum, sh) + (s.SumLo - prev.SumLo)
	s.Sum = sh + e
	s.SumLo = e - (s.Sum - sh)
	if math.IsNaN(s.SumLo) || math.IsInf(s.Sum, 0) {
		s.SumLo = 0 // the totals overflowed: the plain difference
	}
	return nil
}

// covers reports whether p, lowered by d, fits within b with no count
// going negative.
func (b *Buckets) covers(p *Buckets, d int32) bool {
	n := int32(len(p.Counts))
	if n == 0 {
		return true
	}
	end := b.Offset + int32(len(b.Counts)) - 1
	if p.Offset>>d < b.Offset || (p.Offset+n-1)>>d > end {
		return false
	}
	// Buckets of p merging into one of b are consecutive.
	var acc uint64
	j := p.Offset >> d
	for i := int32(0); i < n; i++ {
		k := (p.Offset + i) >> d
		if k != j {
			if acc > b.Counts[j-b.Offset] {
				return false
			}
			acc, j = 0, k
		}
		acc += p.Counts[i]
	}
	return acc <= b.Counts[j-b.Offset]
}

// sub subtracts p, lowered by d, from b (covers(p, d) holds), and trims
// empty buckets at both ends.
func (b *Buckets) sub(p *Buckets, d int32) {
	for i, c := range p.Counts {
		b.Counts[(p.Offset+int32(i))>>d-b.Offset] -= c
	}
	lo, hi := 0, len(b.Counts)
	for lo < hi && b.Counts[lo] == 0 {
		lo++
	}
	for hi > lo && b.Counts[hi-1] == 0 {
		hi--
	}
	if lo == hi {
		b.Offset, b.Counts = 0, b.Counts[:0]
		return
	}
	n := copy(b.Counts, b.Counts[lo:hi])
	b.Counts = b.Counts[:n]
	b.Offset += int32(lo)
}
