package core

import (
	"math"
	"runtime"
	"sync/atomic"
)

// distCell is one cell of a distribution. Its statistics are OpenCensus's
// (stats/view/aggregation_data.go): count, min, max, and the running mean
// and sum of squared deviations of Welford's online algorithm
// (https://en.wikipedia.org/wiki/Algorithms_for_calculating_variance#Welford's_online_algorithm),
// so that a series recorded from one goroutine gives the same bits as
// OpenCensus. Welford's update changes count, mean and m2 together, so the
// cell has a lock bit: a record takes it with one compare-and-swap and
// releases it with one store, and a reader takes it just long enough to
// copy the cell. A failed first compare-and-swap is the contention signal
// that stripes the series.
type distCell struct {
	distFields
	// 56 bytes of padding: with 8-byte alignment, the last byte of a
	// cell's fields and the first of its neighbour's are then never in one
	// 64-byte cache line, however the allocator aligns the array.
	_ [56]byte
}

type distFields struct {
	lock    atomic.Uint32
	count   int64
	mean    float64
	m2      float64
	sum     float64 // exact running sum (OpenCensus derives Mean×Count)
	min     float64
	max     float64
	buckets []int64
}

// newDistCells returns n cells of nb buckets, the bucket arrays of each on
// their own cache lines.
func newDistCells(n, nb int) []distCell {
	cells := make([]distCell, n)
	stride := (nb + wordsPerLine - 1) / wordsPerLine * wordsPerLine
	buckets := make([]int64, (n+1)*stride)
	off := alignOffset(buckets)
	for i := range cells {
		c := &cells[i]
		c.min, c.max = math.Inf(1), math.Inf(-1)
		b := off + i*stride
		c.buckets = buckets[b : b+nb : b+nb]
	}
	return cells
}

func (c *distCell) lockCell() (contended bool) {
	if c.lock.CompareAndSwap(0, 1) {
		return false
	}
	for spins := 0; !c.lock.CompareAndSwap(0, 1); spins++ {
		if spins > 30 {
			runtime.Gosched() // the holder may have been preempted
		}
	}
	return true
}

// add records v as OpenCensus's DistributionData.addSample does and
// reports whether the cell was contended.
func (c *distCell) add(bounds []float64, v float64) (contended bool) {
	i := bucketIndex(bounds, v)
	contended = c.lockCell()
	if v < c.min {
		c.min = v
	}
	if v > c.max {
		c.max = v
	}
	c.count++
	c.sum += v
	c.buckets[i]++
	if c.count == 1 {
		c.mean = v
	} else {
		old := c.mean
		c.mean += (v - old) / float64(c.count)
		c.m2 += (v - old) * (v - c.mean)
	}
	c.lock.Store(0)
	return contended
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
type DistStats struct {
	Count    int64
	Mean, M2 float64
	Sum      float64
	Min, Max float64
}

// Merge combines the statistics of two disjoint sets of samples (Chan et
// al.'s parallel update of Welford's algorithm).
func Merge(a, b DistStats) DistStats {
	switch {
	case b.Count == 0:
		return a
	case a.Count == 0:
		return b
	}
	n := a.Count + b.Count
	d := b.Mean - a.Mean
	fa, fb, fn := float64(a.Count), float64(b.Count), float64(n)
	return DistStats{
		Count: n,
		Mean:  a.Mean + d*fb/fn,
		M2:    a.M2 + b.M2 + d*d*fa*fb/fn,
		Sum:   a.Sum + b.Sum,
		Min:   math.Min(a.Min, b.Min),
		Max:   math.Max(a.Max, b.Max),
	}
}

// Sub returns the statistics of the samples of total that are not in
// prefix, where prefix is an earlier read of the same series (delta
// temporality). Min and Max stay total's: extremes cannot be un-merged.
func Sub(total, prefix DistStats) DistStats {
	nb := total.Count - prefix.Count
	if nb <= 0 {
		return DistStats{Min: total.Min, Max: total.Max}
	}
	if prefix.Count == 0 {
		return total
	}
	fa, fb, fn := float64(prefix.Count), float64(nb), float64(total.Count)
	mean := (fn*total.Mean - fa*prefix.Mean) / fb
	d := mean - prefix.Mean
	m2 := total.M2 - prefix.M2 - d*d*fa*fb/fn
	if m2 < 0 || math.IsNaN(m2) && !math.IsNaN(total.M2) {
		m2 = 0 // rounding; the true value is never negative
	}
	return DistStats{Count: nb, Mean: mean, M2: m2, Sum: total.Sum - prefix.Sum, Min: total.Min, Max: total.Max}
}

// read copies the cell's statistics and adds its buckets to buckets.
func (c *distCell) read(buckets []int64) DistStats {
	c.lockCell()
	st := DistStats{Count: c.count, Mean: c.mean, M2: c.m2, Sum: c.sum, Min: c.min, Max: c.max}
	for i, b := range c.buckets {
		buckets[i] += b
	}
	c.lock.Store(0)
	return st
}

// ReadDist fills buckets (len(bounds)+1) with the bucket counts and returns
// the statistics, combining the stripes of a contended series. It does not
// allocate. It locks each cell only while copying it.
func (s *Series) ReadDist(buckets []int64) DistStats {
	clear(buckets)
	st := s.dist.read(buckets)
	if sp := s.stripes.Load(); sp != nil {
		for p := range sp.dists {
			st = Merge(st, sp.dists[p].read(buckets))
		}
	}
	return st
}
