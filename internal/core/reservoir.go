package core

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
)

// A Count's, a Sum's or a LastValue's series keeps the exemplars a bound
// handle offers it (Bound.KeepExemplar: the otel MeterProvider's
// counters, up-down counters and gauges) in a fixed-size reservoir, as
// the OTel SDK's default for every aggregation but explicit-bucket
// histograms (v1.47.0's DefaultExemplarReservoirProviderSelector:
// exemplar.FixedSizeReservoir, the specification's
// SimpleFixedSizeExemplarReservoir, of GOMAXPROCS exemplars): the first
// reservoirSize offers of a sampling cycle fill its slots in order, each
// later one replaces a slot chosen at random with a decreasing
// probability (reservoir sampling, Algorithm L: each of n offers of a
// cycle is kept with probability k/n), and a reader's collection
// (Series.Exemplars) ends the cycle, as the SDK's Collect does: the
// slots keep their exemplars, and the next offers fill them again from
// the first. The slots are the entry's buckets (exemplarEntry).

// reservoirSize is the number of slots of a series' reservoir made now:
// GOMAXPROCS, at least 1 (the SDK's default size).
func reservoirSize() int { return max(runtime.GOMAXPROCS(0), 1) }

// sampler is the sampling state of a reservoir of k slots: Algorithm L
// (Li, "Reservoir-Sampling Algorithms of Time Complexity
// O(n(1+log(N/n)))", ACM TOMS 20(4), 1994), which draws random numbers
// only for the offers it keeps. Its offers are serialised by mu; ended
// is set without it by a collection.
type sampler struct {
	mu    sync.Mutex
	k     int64
	count int64   // offers in the cycle
	next  int64   // the count at which the next offer past the first k is kept
	w     float64 // the largest of the k smallest uniform draws so far
	ended atomic.Bool
}

func newSampler(k int) *sampler {
	r := &sampler{k: int64(k)}
	r.restart()
	return r
}

// restart begins a sampling cycle: the next k offers fill the slots in
// order.
func (r *sampler) restart() {
	r.count = 0
	r.w = math.Exp(math.Log(uniform()) / float64(r.k))
	r.next = r.k - 1
	r.skip()
}

// skip draws the count of the next offer kept once the slots are full
// (the skip of a geometric distribution of parameter w), and the w that
// follows its keeping.
func (r *sampler) skip() {
	if n := math.Log(uniform()) / math.Log1p(-r.w); n < 1<<62 {
		r.next += int64(n) + 1
	} else {
		r.next = math.MaxInt64 // w so small (or NaN) that no later offer is kept this cycle
	}
	r.w *= math.Exp(math.Log(uniform()) / float64(r.k))
}

// offer counts an offer and returns the slot it is kept in, false when
// it is not kept. Called under mu.
func (r *sampler) offer() (int, bool) {
	if r.ended.Load() && r.ended.Swap(false) { // a collection since the last offer
		r.restart()
	}
	n := r.count
	r.count++
	switch {
	case n < r.k:
		return int(n), true
	case n == r.next:
		r.skip()
		return int(rand.Int64N(r.k)), true
	}
	return 0, false
}

// uniform returns a uniform draw in (0, 1).
func uniform() float64 {
	for {
		if f := rand.Float64(); f > 0 {
			return f
		}
	}
}

// keepInReservoir offers ex, the exemplar of a value recorded into s (a
// Count's, a Sum's or a LastValue's series), to s's reservoir, made with
// its first offer.
func (a *Aggregator) keepInReservoir(s *Series, ex *Exemplar) {
	e := a.exemplarEntry(s, true)
	r := e.res
	r.mu.Lock()
	if i, ok := r.offer(); ok {
		e.buckets[i].Store(ex)
	}
	r.mu.Unlock()
}

// keepsReservoir reports whether a series of kind k keeps its exemplars
// in a reservoir (only a bound handle's: Bound.KeepExemplar).
func keepsReservoir(k Kind) bool {
	return k == KindCount || k == KindSum || k == KindLastValue
}
