package core

import (
	"math"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// distCell is one cell of a distribution: its fields and bucket counts in
// one contiguous run of words (one allocation, few cache lines to read).
// Its statistics are OpenCensus's (stats/view/aggregation_data.go): count,
// min, max, and the running mean and sum of squared deviations of Welford's
// online algorithm
// (https://en.wikipedia.org/wiki/Algorithms_for_calculating_variance#Welford's_online_algorithm),
// so that a series recorded from one goroutine gives the same bits as
// OpenCensus; plus an exact running sum. Those accumulators (count, mean,
// m2, sum and the words delta reads need) take finite samples only: a
// non-finite one (+Inf, -Inf, NaN) goes to its bucket, Min/Max and one of
// three counters (dPosInf, dNegInf, dNaN), so that a delta read can
// subtract two reads' finite totals and still get the interval's own
// values once an infinity has been recorded (see Sub); readers compose
// the cumulative sum, mean and sum of squared deviations from the two
// parts (DistStats.compose). Welford's update changes count,
// mean and m2 together, so the cell has a lock bit (in word dLock): a
// record takes it with one compare-and-swap and releases it with one store,
// and a reader takes it just long enough to copy the cell. A failed first
// compare-and-swap is the contention signal that stripes the series.
type distCell []uint64

// Word offsets in a distCell. Floats are stored as their bits.
const (
	dLock  = 0 // the low 32 bits, used as an atomic.Uint32
	dCount = 1 // finite samples: Welford's n (every sample is dCount+dPosInf+dNegInf+dNaN)
	dMean  = 2
	dM2    = 3
	dSum   = 4
	dMin   = 5
	dMax   = 6
	// dSumLo holds the rounding errors of the additions to dSum (Knuth's
	// TwoSum), so that sum+lo is the exact running total: a delta read
	// subtracts two large totals, and the sum alone would leave it only
	// the last few bits (see Sub). dQ and dQLo are the sum of squares as
	// a double-double (each square exact, TwoProd; the pair renormalised
	// after each addition), from which Sub gets an interval's sum of
	// squared deviations to within its own precision, however far its
	// mean is from the history's. Reads of the cumulative values report
	// dSum and dM2, OpenCensus's bits, composed with the non-finite
	// samples' counters when there are any (DistStats.compose).
	dSumLo = 7
	dQ     = 8
	dQLo   = 9
	// dPosInf, dNegInf and dNaN count the non-finite samples (dCount counts
	// the finite ones). They are written only by a record of a non-finite
	// value (addNonFinite, a cold call), under the cell lock like every
	// other word, and read under it. Three full words rather than counters
	// packed into one: they never wrap, so a delta read's difference of
	// two reads is exact however many such samples an interval holds.
	// Cost: 24 bytes per cell.
	dPosInf  = 10
	dNegInf  = 11
	dNaN     = 12
	dBuckets = 13 // len(bounds)+1 counts follow

	// dPad words separate neighbouring cells: with 8-byte alignment, the
	// last word of a cell and the first of the next are then never in one
	// 64-byte cache line, however the allocator aligns the array.
	dPad = 7
)

// newDistCells returns n cells of nb buckets in one allocation, padded
// apart when there are several.
func newDistCells(n, nb int) []distCell {
	size := dBuckets + nb
	stride := size + dPad
	if n == 1 {
		stride = size
	}
	words := make([]uint64, n*stride)
	cells := make([]distCell, n)
	for i := range cells {
		c := distCell(words[i*stride : i*stride+size : i*stride+size])
		c[dMin] = math.Float64bits(math.Inf(1))
		c[dMax] = math.Float64bits(math.Inf(-1))
		cells[i] = c
	}
	return cells
}

func (c distCell) lockWord() *atomic.Uint32 {
	return (*atomic.Uint32)(unsafe.Pointer(&c[dLock]))
}

// Lock word values: free, held by a recorder, held by a reader, sealed
// (see Series.sealFinish: recorders are turned away, readers read what the cell
// froze), and sealed while a reader copies it.
const (
	lockFree         = 0
	lockWriter       = 1
	lockReader       = 2
	lockSealed       = 3
	lockSealedReader = 4
)

// lock takes the cell for a recorder and reports contention (another
// recorder holding it) or that the cell is sealed, in which case it is not
// taken. A reader holding it (an export copying the cell) is waited for but
// is not contention: a series recorded from one goroutine must not stripe
// because an exporter read it at that moment. The free cell's one
// compare-and-swap inlines; anything else is lockSlow's.
func (c distCell) lock() addResult {
	if c.lockWord().CompareAndSwap(lockFree, lockWriter) {
		return addOK
	}
	return c.lockSlow()
}

//go:noinline
func (c distCell) lockSlow() addResult {
	l := c.lockWord()
	r := addOK
	for spins := 0; !l.CompareAndSwap(lockFree, lockWriter); spins++ {
		switch l.Load() {
		case lockWriter:
			r = addContended
		case lockSealed, lockSealedReader:
			return addSealed
		}
		if spins > 30 {
			runtime.Gosched() // the holder may have been preempted
		}
	}
	return r
}

// rlock takes the cell for a reader, sealed or not, and returns the state
// runlock restores.
func (c distCell) rlock() (restore uint32) {
	l := c.lockWord()
	for spins := 0; ; spins++ {
		if l.CompareAndSwap(lockFree, lockReader) {
			return lockFree
		}
		if l.CompareAndSwap(lockSealed, lockSealedReader) {
			return lockSealed
		}
		if spins > 30 {
			runtime.Gosched()
		}
	}
}

func (c distCell) runlock(restore uint32) { c.lockWord().Store(restore) }

// unlock releases the cell a recorder holds (a plain store on amd64, see
// releaseLock).
func (c distCell) unlock() { releaseLock(c.lockWord()) }

// swapLock moves the cell's lock word from one state to another, waiting
// while a recorder or reader holds it: sealing (free to sealed) and
// reviving (sealed to free).
func (c distCell) swapLock(from, to uint32) {
	l := c.lockWord()
	for spins := 0; !l.CompareAndSwap(from, to); spins++ {
		if spins > 30 {
			runtime.Gosched()
		}
	}
}

// distHead is a typed view of a cell's first dBuckets words (the same
// memory as c[dLock:dBuckets]), for add: named fields where indexing the
// slice would check bounds and move each float through an integer
// register.
type distHead struct {
	lock     uint32 // dLock, accessed through lockWord only
	_        uint32
	count    uint64
	mean, m2 float64
	sum      float64
	min, max float64
	sumLo    float64
	q, qLo   float64
	// dPosInf, dNegInf, dNaN: written by addNonFinite only.
	posInf, negInf, nan uint64
}

// add records v as OpenCensus's DistributionData.addSample does and
// reports whether the cell was contended. While keepErrs is set (the
// aggregator has a delta reader, see Aggregator.keepErrs), it also keeps the sum's rounding
// error and the sum of squares, for Sub. Cost: the bucket search, the
// lock's compare-and-swap, Welford's update (one division) and the
// releasing store; no call when the cell is free. A non-finite v (v-v is
// 0 for every finite v, NaN for ±Inf and NaN) goes to addNonFinite
// before anything else: one compare on the record path. (The same compare
// after the lock measured 20% slower, histogram_2tags 50 → 60 ns: it
// kept more values live across the lock.)
func (c distCell) add(bounds []float64, keepErrs *atomic.Bool, v float64) addResult {
	if v-v != 0 {
		return c.addNonFinite(bounds, v, 1)
	}
	i := bucketIndex(bounds, v)
	r := c.lock()
	if r == addSealed {
		return r
	}
	h := (*distHead)(unsafe.Pointer(&c[dLock]))
	// Read under the lock: a delta reader's first read copies the cell
	// under it too, so a record it does not see keeps its square.
	if keepErrs.Load() {
		h.sumLo += twoSumErr(h.sum, v, h.sum+v)
		sq := v * v
		h.q, h.qLo = ddAdd(h.q, h.qLo, sq, math.FMA(v, v, -sq))
	}
	if v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	n := h.count + 1
	h.count = n
	h.sum += v
	c[dBuckets+i]++
	if n == 1 {
		h.mean = v
	} else {
		old := h.mean
		mean := old + (v-old)/float64(int64(n))
		h.mean = mean
		h.m2 += float64((v - old) * (v - mean)) // rounded: not fused into the addition
	}
	c.unlock()
	return r
}

// addNonFinite records n samples of the non-finite value v into the cell,
// as add and addN do for a finite one (the bucket search, the lock, a
// seal turning it away): its bucket, Min/Max (±Inf; NaN compares false)
// and its counter, leaving the finite accumulators alone. Kept out of add
// so that the record path stays small.
//
//go:noinline
func (c distCell) addNonFinite(bounds []float64, v float64, n uint64) addResult {
	i := bucketIndex(bounds, v)
	r := c.lock()
	if r == addSealed {
		return r
	}
	defer c.unlock()
	c.minMax(v)
	c[dBuckets+i] += n
	switch {
	case v > 0:
		c[dPosInf] += n
	case v < 0:
		c[dNegInf] += n
	default:
		c[dNaN] += n
	}
	return r
}

// tryAddDist is add for an unstriped distribution series, or an
// exponential one, without add's dispatch: the bucket search, the cell's
// lock, Welford's update (or exphist.Histogram.Record). It
// reports false, having done nothing, when the series is striped or its
// cell sealed (add then handles it); a contended cell is recorded and then
// striped, as add does.
func (s *Series) tryAddDist(v float64) bool {
	if s.stripes.Load() != nil {
		return false
	}
	a := s.agg
	var r addResult
	if a.kind == KindExponential {
		r = addExp(&s.expCell().h, v)
	} else {
		r = s.distCell().add(a.bounds, &a.keepErrs, v)
	}
	switch r {
	case addOK:
		return true
	case addContended:
		s.inflate()
		return true
	}
	return false
}

// ddAdd adds two double-doubles (a value and its rounding error, |lo| <=
// ulp(hi)/2), and returns the sum as one: TwoSum of the high parts, then
// Fast2Sum to renormalise, so that the low part never grows and its own
// rounding stays 2^-53 of an ulp of the total.
func ddAdd(ahi, alo, bhi, blo float64) (hi, lo float64) {
	s := ahi + bhi
	e := twoSumErr(ahi, bhi, s) + (alo + blo)
	hi = s + e
	return hi, e - (hi - s)
}

// twoSumErr returns the rounding error of s = a + b: a + b - s exactly,
// for finite operands (Knuth's TwoSum, no branch). Cost: 5 additions.
func twoSumErr(a, b, s float64) float64 {
	bp := s - a
	return (a - (s - bp)) + (b - bp)
}

// minMax updates the cell's Min and Max with v (the cell is locked).
func (c distCell) minMax(v float64) {
	if v < math.Float64frombits(c[dMin]) {
		c[dMin] = math.Float64bits(v)
	}
	if v > math.Float64frombits(c[dMax]) {
		c[dMax] = math.Float64bits(v)
	}
}

// bucketIndex returns i such that bounds[i-1] <= v < bounds[i], the
// OpenCensus bucketing; NaN goes to the last bucket, as in OpenCensus
// (and in Prometheus's +Inf bucket).
func bucketIndex(bounds []float64, v float64) int {
	if len(bounds) <= 16 {
		i := 0
		for i < len(bounds) && !(v < bounds[i]) {
			i++
		}
		return i
	}
	if v != v {
		return len(bounds)
	}
	lo, hi := 0, len(bounds)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if v < bounds[m] {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// DistStats are a distribution's statistics, with OpenCensus's
// definitions: M2 is the sum of squared deviations from the mean.
//
// They come in two forms. ReadDist and Sub return them composed: Count
// counts every sample, and Sum, Mean and M2 are those of every sample,
// non-finite ones included (below). ReadDistParts returns the parts, the
// form Merge and Sub take: Count still counts every sample, PosInf, NegInf
// and NaN the non-finite ones, and Mean, M2, Sum, SumLo, Q and QLo are
// those of the Count-PosInf-NegInf-NaN finite samples only.
//
// Composition (compose), with no non-finite sample, changes nothing: the
// bits are OpenCensus's. Otherwise Sum is the finite sum plus the
// non-finite samples' IEEE sum (+Inf if only +Inf samples, -Inf likewise,
// NaN for a NaN or both infinities): the running sum's value; M2 is NaN
// (0 for a single sample), as Welford's update makes it; Mean is the
// non-finite value Sum/Count is (Welford's update gives NaN in most such
// cases and +Inf in some, depending on the samples' order).
type DistStats struct {
	Count    int64
	Mean, M2 float64
	Sum      float64
	Min, Max float64
	// SumLo is the rounding error of Sum (its exact value is Sum+SumLo),
	// and Q+QLo the sum of the squares of the samples, a double-double:
	// what Sub needs; 0 in its results.
	SumLo, Q, QLo float64
	// PosInf, NegInf and NaN count the samples of +Inf, -Inf and NaN
	// (included in Count, the buckets and Min/Max).
	PosInf, NegInf, NaN int64
}

// finite returns the number of finite samples.
func (d *DistStats) finite() int64 { return d.Count - d.PosInf - d.NegInf - d.NaN }

// nonFinite returns the IEEE sum of the non-finite samples, or 0 when
// there are none.
func (d *DistStats) nonFinite() float64 {
	switch {
	case d.NaN > 0 || d.PosInf > 0 && d.NegInf > 0:
		return math.NaN()
	case d.PosInf > 0:
		return math.Inf(1)
	case d.NegInf > 0:
		return math.Inf(-1)
	}
	return 0
}

// compose turns parts (ReadDistParts) into the composed form (see
// DistStats). Cost: three compares when every sample is finite.
func (d DistStats) compose() DistStats {
	if d.PosInf|d.NegInf|d.NaN == 0 {
		return d
	}
	x := d.nonFinite()
	d.Sum += x
	d.Mean = x
	d.M2 = math.NaN()
	if d.Count == 1 {
		d.M2 = 0
	}
	return d
}

// Merge combines the statistics of two disjoint sets of samples (Chan et
// al.'s parallel update of Welford's algorithm over the finite samples),
// in the parts form (see DistStats).
func Merge(a, b DistStats) DistStats {
	r := a
	if fa, fb := a.finite(), b.finite(); fa == 0 {
		r = b
	} else if fb != 0 {
		n := fa + fb
		d := b.Mean - a.Mean
		fa, fb, fn := float64(fa), float64(fb), float64(n)
		sum := a.Sum + b.Sum
		q, qlo := ddAdd(a.Q, a.QLo, b.Q, b.QLo)
		r = DistStats{
			Mean:  a.Mean + d*fb/fn,
			M2:    a.M2 + b.M2 + d*d*fa*fb/fn,
			Sum:   sum,
			SumLo: a.SumLo + b.SumLo + twoSumErr(a.Sum, b.Sum, sum),
			Q:     q, QLo: qlo,
		}
	}
	r.Count = a.Count + b.Count
	r.PosInf, r.NegInf, r.NaN = a.PosInf+b.PosInf, a.NegInf+b.NegInf, a.NaN+b.NaN
	r.Min, r.Max = math.Min(a.Min, b.Min), math.Max(a.Max, b.Max)
	return r
}

// Sub returns the statistics of the samples of total that are not in
// prefix, where prefix is an earlier read of the same series (delta
// temporality), both in the parts form (ReadDistParts); the result is
// composed (see DistStats). Min and Max stay total's: extremes cannot be
// un-merged. The finite samples' values are subtracted apart from the
// non-finite counters, so an interval's sum, mean and M2 are its own: a
// +Inf recorded once makes the sum of the interval that holds it +Inf,
// not that of every later one (Inf-Inf = NaN). squares says that every
// sample between the two reads is in their sums of squares (the
// aggregator kept them throughout, Aggregator.keepErrs); without it, M2
// comes from the totals' M2 (Chan et al.), as it does when the finite
// sums themselves overflowed.
func Sub(total, prefix DistStats, squares bool) DistStats {
	nb := total.Count - prefix.Count
	if nb <= 0 {
		return DistStats{Min: total.Min, Max: total.Max}
	}
	d := DistStats{Count: nb, PosInf: total.PosInf - prefix.PosInf, NegInf: total.NegInf - prefix.NegInf,
		NaN: total.NaN - prefix.NaN, Min: total.Min, Max: total.Max}
	if fp := prefix.finite(); fp == 0 {
		d.Mean, d.M2, d.Sum = total.Mean, total.M2, total.Sum
	} else if fi := total.finite() - fp; fi > 0 {
		d.Mean, d.M2, d.Sum = subFinite(total, prefix, float64(fp), float64(fi), squares)
	}
	return d.compose()
}

// subFinite is Sub for the finite samples: their mean, M2 and sum in the
// interval, fa finite samples in prefix and fb > 0 in the interval.
func subFinite(total, prefix DistStats, fa, fb float64, squares bool) (mean, m2, sum float64) {
	fn := fa + fb
	// The two totals are close and large: their difference is taken hi
	// from hi (exact when within a factor of 2, Sterbenz) and lo from lo,
	// so it keeps the interval's own precision rather than the last bits
	// of the totals.
	sh, sl := ddAdd(total.Sum, total.SumLo, -prefix.Sum, -prefix.SumLo)
	sum = sh + sl
	mean = sum / fb
	// The interval's squared deviations: Q - S²/n over its samples, in
	// double-double (S² by TwoProd, the division's remainder by FMA), so
	// that the cancellation of two close large terms leaves the interval's
	// own precision, wherever its mean lies.
	qh, ql := ddAdd(total.Q, total.QLo, -prefix.Q, -prefix.QLo)
	p := sh * sh
	plo := math.FMA(sh, sh, -p) + 2*sh*sl
	t := p / fb
	tlo := (math.FMA(-t, fb, p) + plo) / fb
	mh, ml := ddAdd(qh, ql, -t, -tlo)
	m2 = mh + ml
	if nonFinite := math.IsNaN(sum) || math.IsInf(sum, 0); nonFinite || !squares || math.IsNaN(m2) || math.IsInf(m2, 0) {
		// Finite samples whose sum or squares overflowed float64, or
		// squares not kept: as Welford's means and Chan et al. say (total
		// = prefix + interval + d²·fa·fb/fn).
		if nonFinite {
			mean = (fn*total.Mean - fa*prefix.Mean) / fb
			sum = total.Sum - prefix.Sum
		}
		d := mean - prefix.Mean
		m2 = total.M2 - prefix.M2 - d*d*fa*fb/fn
	}
	if m2 < 0 || math.IsNaN(m2) && !math.IsNaN(total.M2) {
		m2 = 0 // rounding; the true value is never negative
	}
	return mean, m2, sum
}

// read copies the cell's statistics (parts, see DistStats) and its
// buckets, added to buckets when add is set, into buckets otherwise.
func (c distCell) read(buckets []int64, add bool) DistStats {
	b := c[dBuckets : dBuckets+len(buckets)]
	restore := c.rlock()
	pi, ni, nan := int64(c[dPosInf]), int64(c[dNegInf]), int64(c[dNaN])
	st := DistStats{
		Count:  int64(c[dCount]) + pi + ni + nan,
		PosInf: pi, NegInf: ni, NaN: nan,
		Mean:  math.Float64frombits(c[dMean]),
		M2:    math.Float64frombits(c[dM2]),
		Sum:   math.Float64frombits(c[dSum]),
		Min:   math.Float64frombits(c[dMin]),
		Max:   math.Float64frombits(c[dMax]),
		SumLo: math.Float64frombits(c[dSumLo]),
		Q:     math.Float64frombits(c[dQ]),
		QLo:   math.Float64frombits(c[dQLo]),
	}
	if add {
		for i, x := range b {
			buckets[i] += int64(x)
		}
	} else {
		for i, x := range b {
			buckets[i] = int64(x)
		}
	}
	c.runlock(restore)
	return st
}

// ReadDist fills buckets (len(bounds)+1) with the bucket counts and returns
// the statistics, composed (see DistStats: the sum, mean and sum of
// squared deviations of every sample, non-finite ones included),
// combining the stripes of a contended series. It does not allocate. It
// locks each cell only while copying it.
func (s *Series) ReadDist(buckets []int64) DistStats {
	return s.ReadDistParts(buckets).compose()
}

// ReadDistParts is ReadDist in the parts form (see DistStats): the finite
// samples' statistics apart from the counts of non-finite ones, which Sub
// takes.
func (s *Series) ReadDistParts(buckets []int64) DistStats {
	st := s.distCell().read(buckets, false)
	sp := s.stripes.Load()
	if sp != nil && sp.seal != nil {
		sp = sp.seal.orig // sealed: its cells are read sealed or, revived, live
	}
	if sp != nil {
		for p := range sp.dists {
			st = Merge(st, sp.dists[p].read(buckets, true))
		}
	}
	return st
}

// IntegerSums makes a Sum aggregator keep each series' own cell as an
// exact integer (for a view over an Int64 measure): records of integers
// under 2^31 in magnitude then add with one atomic add instead of a load
// and a compare-and-swap, and the sum is exact to ±2^61 where a float64
// rounds past 2^53. A value that is not an integer, or a sum that would
// pass ±2^61, goes to the series' stripes (see addIntSum): an integer
// within ±2^31 to a stripe's integer word, anything else to its float
// word (addStriped), so a read is the integer plus the stripes' sums. No effect on other
// kinds. Not safe for concurrent use: call it before the aggregator is
// published.
func (a *Aggregator) IntegerSums() {
	a.intSum = a.kind == KindSum
	a.cellK = a.fastCellKind()
}

// CountUpperInclusive switches a distribution aggregator, before it is
// subscribed to a measure, to Prometheus's and OpenTelemetry's bucket
// rule: bucket i counts b[i-1] < v <= b[i], so a value equal to a bound
// counts in the bucket it bounds. Bounds still returns the registered
// bounds; records search a copy in which each bound is the next float
// above it, since for every float v, v < nextafter(b, +Inf) exactly when
// v <= b. The record path is then the same code as OpenCensus's rule, with
// no extra branch. Set-up cost: one allocation. Not safe for concurrent
// use: call it before the aggregator is published.
func (a *Aggregator) CountUpperInclusive() {
	if a.upper || len(a.shown) == 0 {
		a.upper = true
		return
	}
	a.upper = true
	next := make([]float64, len(a.shown))
	for i, b := range a.shown {
		next[i] = math.Nextafter(b, math.Inf(1))
	}
	a.bounds = next
}

// UpperInclusive reports whether the buckets count b[i-1] < v <= b[i]
// (CountUpperInclusive) rather than OpenCensus's b[i-1] <= v < b[i].
func (a *Aggregator) UpperInclusive() bool { return a.upper }

// addN records n copies of v (n >= 1): add with weights (Welford's update
// of n equal samples at once, the Merge of a sample set of variance 0).
func (c distCell) addN(bounds []float64, v float64, n uint64) addResult {
	if v-v != 0 {
		return c.addNonFinite(bounds, v, n)
	}
	i := bucketIndex(bounds, v)
	r := c.lock()
	if r == addSealed {
		return r
	}
	c.minMax(v)
	old := c[dCount]
	c[dCount] = old + n
	c[dBuckets+i] += n
	// The running sum with its rounding error (see dSumLo) and the sum of
	// squares, the products' own errors included.
	fn := float64(n)
	x := v * fn
	sq := v * v
	sqlo := math.FMA(v, v, -sq)
	q := sq * fn
	st := Merge(DistStats{Count: int64(old), Mean: math.Float64frombits(c[dMean]), M2: math.Float64frombits(c[dM2]),
		Sum: math.Float64frombits(c[dSum]), SumLo: math.Float64frombits(c[dSumLo]),
		Q: math.Float64frombits(c[dQ]), QLo: math.Float64frombits(c[dQLo])},
		DistStats{Count: int64(n), Mean: v, Sum: x, SumLo: math.FMA(v, fn, -x), Q: q, QLo: math.FMA(sq, fn, -q) + sqlo*fn})
	c[dMean], c[dM2], c[dSum] = math.Float64bits(st.Mean), math.Float64bits(st.M2), math.Float64bits(st.Sum)
	c[dSumLo], c[dQ], c[dQLo] = math.Float64bits(st.SumLo), math.Float64bits(st.Q), math.Float64bits(st.QLo)
	c.unlock()
	return r
}

// RecordDistN records n copies of v (n 0: nothing) into the series of
// tags (internal order) of a Distribution aggregator, as n calls of
// RecordTags would, in one cell update: for collectors that read
// pre-bucketed counts (runtime/metrics histograms), not for the record
// path. It does nothing for other kinds. Safe for concurrent use.
func (a *Aggregator) RecordDistN(tags []Tag, v float64, n uint64) {
	if n == 0 || a.kind != KindDistribution {
		return
	}
	s, recorded := a.obtain(tags, v)
	if s == nil {
		return
	}
	if recorded {
		if n--; n == 0 {
			return
		}
	}
	cell := s.distCell()
	if st := s.stripes.Load(); st != nil {
		if st.seal != nil {
			cell = nil
		} else {
			cell = st.dists[0]
		}
	}
	if cell != nil && cell.addN(a.bounds, v, n) != addSealed {
		if s.overflow {
			s.agg.overflowed.Add(n)
		}
		return
	}
	for ; n > 0; n-- { // sealed (being evicted): rare, the one-by-one path revives it
		a.RecordTags(tags, v)
	}
}
