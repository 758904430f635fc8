package exphist

import (
	"math"
	"runtime"
	"sync/atomic"
)

// Defaults of the OpenTelemetry SDK specification's "Base2 Exponential
// Bucket Histogram Aggregation"
// (https://opentelemetry.io/docs/specs/otel/metrics/sdk/#base2-exponential-bucket-histogram-aggregation):
// 160 buckets cover 1 ms to 100 s with under 5% relative error.
const (
	DefaultMaxSize  = 160
	DefaultMaxScale = MaxScale
)

// Zero-size sentinel errors (they do not allocate), naming the argument.
type configError uint8

const (
	// ErrMaxSize: maxSize below 2. One bucket cannot hold two values
	// differing by more than a factor of 2^1024 (the SDK accepts 1 and
	// drops such values).
	ErrMaxSize configError = iota + 1
	// ErrMaxScale: maxScale outside MinScale..MaxScale.
	ErrMaxScale
	// ErrNotPrefix: Sub's prev is not an earlier read of the same
	// histogram (a bucket, the count or the zero count would be negative,
	// or prev's scale is below the current one).
	ErrNotPrefix
)

var _ error = ErrMaxSize

func (e configError) Error() string {
	switch e {
	case ErrMaxSize:
		return "exphist: maxSize must be at least 2"
	case ErrMaxScale:
		return "exphist: maxScale must be within -10..20"
	case ErrNotPrefix:
		return "exphist: prev is not an earlier read of this histogram"
	}
	return "exphist: unknown error"
}

// Histogram is a base-2 exponential histogram with the OpenTelemetry
// SDK's aggregation semantics: at most maxSize buckets per sign, at the
// largest scale (at most maxScale) at which every value recorded so far
// fits; a new value that does not fit lowers the scale (each step merges
// pairs of buckets) until it does. Values exactly 0 (either sign) count in
// the zero bucket (the zero threshold is 0), negative values in their own
// bucket range. It also keeps the count, the sum and the min and max.
//
// # Concurrency
//
// The fields after maxScale are guarded by lock, a word taken by
// compare-and-swap (the protocol and states of internal/core's distCell,
// sealing included): a recorder takes it with one compare-and-swap and
// releases it with one store (a plain MOV on amd64, see
// release_amd64.go); a reader (Snapshot) takes it just long enough to
// copy. Nothing in a record allocates, waits on a channel or calls
// through an interface.
//
// A record computes its value's bucket index before taking the lock, at
// the scale it loads from scale (an atomic written only under the lock).
// Under the lock it compares that scale with the current one: if a
// downscale happened in between, the index is shifted right by the
// difference (buckets of a scale nest exactly in those of the next lower
// one, so the shifted index is the exact index at the new scale); if the
// scale went up (only SnapshotReset raises it), it is recomputed. The
// index's cost (about 3 ns at scale 8 and below, 8 ns above) is thereby
// outside the critical section, which holds only adds, compares and,
// rarely, a downscale.
//
// A downscale runs under the lock, in place: concurrent records wait for
// it, and a snapshot sees the histogram wholly before or wholly after it.
// So every record is counted exactly once, in the bucket its value has at
// the scale of the snapshot that reads it.
//
// # Memory
//
// New allocates maxSize counters per sign up front (2·8·maxSize bytes,
// 2,560 for the default) plus the 128-byte struct: buckets are used as a circular
// buffer, so adding a bucket below the lowest never moves the others, and
// a record never allocates.
type Histogram struct {
	lock atomic.Uint32
	// scale is written under lock (a downscale, a reset) and loaded
	// without it by Record to compute an index before locking.
	scale    atomic.Int32
	maxSize  int32
	maxScale int32

	// Guarded by lock.
	count    uint64 // zero + every bucket
	zero     uint64
	sum      float64 // the values' sum, added in record order
	sumLo    float64 // sum's rounding errors (TwoSum): sum+sumLo is the exact running total
	min, max float64 // +Inf, -Inf while no value is recorded
	// counts holds both signs' buckets: positive in counts[:maxSize],
	// negative in counts[maxSize:].
	counts   []uint64
	pos, neg span
	// dropped counts the values not in count: NaN and ±Inf (ignored, as
	// the SDK's aggregation ignores them) and, with maxSize 2 only, a value
	// whose bucket cannot fit even at scale -10 (see Record).
	dropped uint64
	// 128 bytes in all: a size class that is a multiple of 64, so that
	// two histograms allocated one after the other (per-goroutine or per-P
	// stripes) never share a cache line, and a record touches two lines
	// of it (the first 64 bytes, then counts and its sign's span).
}

// span is one sign's buckets: n consecutive bucket indexes from start, in
// a circular buffer of maxSize counters, counts[lim-maxSize:lim] of the
// histogram's counts, bin start at counts[head]. Counters outside the n
// in use are 0.
type span struct {
	start int32
	n     int32
	head  int32
	lim   int32
}

// New returns an empty histogram of at most maxSize buckets per sign and
// scale at most maxScale. It fails with ErrMaxSize if maxSize < 2 and
// ErrMaxScale if maxScale is outside MinScale..MaxScale. Cost: two
// allocations, 2·8·maxSize bytes of counters and the 128-byte struct.
func New(maxSize, maxScale int32) (*Histogram, error) {
	h := new(Histogram)
	if err := h.Init(maxSize, maxScale); err != nil {
		return nil, err
	}
	return h, nil
}

// Init makes h, a zero Histogram not yet shared, an empty histogram as New
// returns, for a caller that keeps the histogram inside a struct of its
// own (internal/core's series: one load fewer per record). Same errors
// and cost as New, less the struct.
func (h *Histogram) Init(maxSize, maxScale int32) error {
	if err := Check(maxSize, maxScale); err != nil {
		return err
	}
	*h = Histogram{
		maxSize:  maxSize,
		maxScale: maxScale,
		min:      math.Inf(1),
		max:      math.Inf(-1),
		counts:   make([]uint64, 2*int(maxSize)),
		pos:      span{lim: maxSize},
		neg:      span{head: maxSize, lim: 2 * maxSize},
	}
	h.scale.Store(maxScale)
	return nil
}

// Check reports whether maxSize and maxScale are valid: ErrMaxSize if
// maxSize < 2, ErrMaxScale if maxScale is outside MinScale..MaxScale.
func Check(maxSize, maxScale int32) error {
	if maxSize < 2 {
		return ErrMaxSize
	}
	if maxScale < MinScale || maxScale > MaxScale {
		return ErrMaxScale
	}
	return nil
}

// MustNew is New for arguments known to be valid; it panics on an error.
func MustNew(maxSize, maxScale int32) *Histogram {
	h, err := New(maxSize, maxScale)
	if err != nil {
		panic(err)
	}
	return h
}

// MaxSize returns the histogram's maximum number of buckets per sign.
func (h *Histogram) MaxSize() int32 { return h.maxSize }

// MaxScale returns the histogram's maximum scale.
func (h *Histogram) MaxScale() int32 { return h.maxScale }

// Result is what Record did.
type Result uint8

const (
	// Recorded: the value is recorded (or dropped, see Record), the lock
	// was free.
	Recorded Result = iota
	// Contended: recorded, but another recorder held the lock: the signal
	// internal/core uses to stripe a series.
	Contended
	// Sealed: nothing recorded, the histogram is sealed (see Seal).
	Sealed
)

// Record adds v to the histogram. Safe for concurrent use; no allocation.
//
// As the OpenTelemetry Go SDK does (expoHistogram.measure), NaN and ±Inf
// are ignored: not counted, not in the sum, min or max (the specification
// says they SHOULD NOT be), only in Dropped. Values exactly 0 (and -0)
// count in the zero bucket. With maxSize 2, a value whose sign's buckets
// would span 3 indexes even at scale -10 (from below 2^-1024 to at least 1
// in magnitude) is not counted, but is in the sum, min and max, and in
// Dropped: the SDK's behaviour (its "scale underflow"), the only case
// where Count misses a finite value.
//
// Cost: the index (see Index), one compare-and-swap, a few adds and
// compares, and a store; a downscale (at most 30 in a histogram's life,
// each O(maxSize)) when the value does not fit.
func (h *Histogram) Record(v float64) Result {
	if v-v != 0 { // NaN or ±Inf: v-v is 0 for every finite v
		return h.recordNonFinite()
	}
	s := h.scale.Load()
	var bin int32
	if v != 0 {
		bin = Index(v, s)
	}
	r := h.acquire()
	if r == Sealed {
		return r
	}
	if v != 0 {
		if now := h.scale.Load(); now != s {
			bin = rebin(v, bin, s, now)
		}
		sp := &h.pos
		if v < 0 {
			sp = &h.neg
		}
		if d := bin - sp.start; uint32(d) < uint32(sp.n) {
			p := sp.head + d
			if p >= sp.lim {
				p -= h.maxSize
			}
			h.counts[p]++
		} else if !h.grow(sp, bin) {
			h.dropped++
			h.addStats(v)
			h.release()
			return r
		}
	} else {
		h.zero++
	}
	h.count++
	h.addStats(v)
	h.release()
	return r
}

// recordNonFinite counts a NaN or ±Inf in dropped, under the lock like
// any record (so that a sealed histogram turns it away too).
//
//go:noinline
func (h *Histogram) recordNonFinite() Result {
	r := h.acquire()
	if r != Sealed {
		h.dropped++
		h.release()
	}
	return r
}

// addStats adds v to the sum and min and max (under the lock).
func (h *Histogram) addStats(v float64) {
	s := h.sum + v
	h.sumLo += twoSumErr(h.sum, v, s)
	h.sum = s
	if v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
}

// rebin returns the index of v at scale now, given its index bin at scale
// was (the scale changed between the index and the lock).
func rebin(v float64, bin, was, now int32) int32 {
	if now < was {
		return bin >> (was - now)
	}
	return Index(v, now)
}

// grow records a value of bin (at the current scale), outside sp's
// range or in an empty sp: it lowers the scale if sp cannot span bin
// within maxSize buckets, then extends sp to bin. It reports false,
// recording nothing, if even scale -10 cannot fit it (maxSize 2 only).
// Under the lock.
//
//go:noinline
func (h *Histogram) grow(sp *span, bin int32) bool {
	if sp.n == 0 {
		sp.start, sp.n, sp.head = bin, 1, sp.lim-h.maxSize
		h.counts[sp.head] = 1
		return true
	}
	if change := scaleChange(bin, sp.start, sp.n, h.maxSize); change > 0 {
		s := h.scale.Load()
		if s-change < MinScale {
			return false
		}
		h.pos.downscale(h.counts, change, h.maxSize)
		h.neg.downscale(h.counts, change, h.maxSize)
		h.scale.Store(s - change)
		bin >>= change
	}
	if d := bin - sp.start; d < 0 {
		sp.head += d
		if sp.head < sp.lim-h.maxSize {
			sp.head += h.maxSize
		}
		sp.start = bin
		sp.n -= d
	} else if d >= sp.n {
		sp.n = d + 1
	}
	h.counts[sp.pos(bin-sp.start, h.maxSize)]++
	return true
}

// scaleChange returns by how much the scale must drop for n buckets from
// start and bin to span fewer than maxSize indexes (the SDK's
// scaleChange). It stops counting past the whole scale range.
func scaleChange(bin, start, n, maxSize int32) int32 {
	lo, hi := int64(start), int64(start)+int64(n)-1
	if int64(bin) < lo {
		lo = int64(bin)
	} else if int64(bin) > hi {
		hi = int64(bin)
	}
	var c int32
	for hi-lo >= int64(maxSize) && c <= MaxScale-MinScale {
		lo >>= 1
		hi >>= 1
		c++
	}
	return c
}

// pos returns the position in counts of the i-th bucket of sp.
func (sp *span) pos(i, size int32) int32 {
	p := sp.head + i
	if p >= sp.lim {
		p -= size
	}
	return p
}

// downscale lowers sp's scale by change (> 0): bucket i becomes i>>change,
// summing the buckets that merge, in place. Its first bucket keeps its
// position; the counters freed are zeroed. Cost: O(n).
func (sp *span) downscale(counts []uint64, change, size int32) {
	if sp.n == 0 {
		return
	}
	start := sp.start >> change
	end := (sp.start + sp.n - 1) >> change
	// Reading in order, bucket i's merged bucket j <= i: its counter has
	// been read (and cleared) already when it receives i's count.
	for i := int32(0); i < sp.n; i++ {
		p := sp.pos(i, size)
		c := counts[p]
		counts[p] = 0
		j := (sp.start+i)>>change - start
		counts[sp.pos(j, size)] += c
	}
	sp.start = start
	sp.n = end - start + 1
}

// Lock word values: free, held by a recorder, held by a reader, sealed
// (recorders are turned away, readers read what it froze), and sealed
// while a reader copies it: internal/core's distCell states.
const (
	lockFree         = 0
	lockWriter       = 1
	lockReader       = 2
	lockSealed       = 3
	lockSealedReader = 4
)

// acquire takes the lock for a recorder and reports contention (another
// recorder held it) or that the histogram is sealed, in which case it is
// not taken. A reader holding it is waited for but is not contention: a
// series recorded from one goroutine must not stripe because an exporter
// read it at that moment. The free word's one compare-and-swap inlines.
func (h *Histogram) acquire() Result {
	if h.lock.CompareAndSwap(lockFree, lockWriter) {
		return Recorded
	}
	return h.acquireSlow()
}

//go:noinline
func (h *Histogram) acquireSlow() Result {
	r := Recorded
	for spins := 0; !h.lock.CompareAndSwap(lockFree, lockWriter); spins++ {
		switch h.lock.Load() {
		case lockWriter:
			r = Contended
		case lockSealed, lockSealedReader:
			return Sealed
		}
		if spins > 30 {
			runtime.Gosched() // the holder may have been preempted
		}
	}
	return r
}

// release releases the lock a recorder holds.
func (h *Histogram) release() { releaseLock(&h.lock) }

// rlock takes the lock for a reader, sealed or not, and returns the state
// runlock restores.
func (h *Histogram) rlock() (restore uint32) {
	for spins := 0; ; spins++ {
		if h.lock.CompareAndSwap(lockFree, lockReader) {
			return lockFree
		}
		if h.lock.CompareAndSwap(lockSealed, lockSealedReader) {
			return lockSealed
		}
		if spins > 30 {
			runtime.Gosched()
		}
	}
}

func (h *Histogram) runlock(restore uint32) { h.lock.Store(restore) }

// Seal turns later records away (they return Sealed and record nothing)
// once the records and reads in progress are done; Snapshot still reads
// the histogram. For internal/core's eviction of a series, whose cells it
// seals before folding them. Safe for concurrent use; not to be called
// twice without Unseal in between (it would wait forever).
func (h *Histogram) Seal() { h.swapLock(lockFree, lockSealed) }

// Unseal undoes Seal. Safe for concurrent use.
func (h *Histogram) Unseal() { h.swapLock(lockSealed, lockFree) }

// swapLock moves the lock word from one state to another, waiting while a
// recorder or reader holds it.
func (h *Histogram) swapLock(from, to uint32) {
	for spins := 0; !h.lock.CompareAndSwap(from, to); spins++ {
		if spins > 30 {
			runtime.Gosched()
		}
	}
}

// twoSumErr returns the rounding error of s = a + b: a + b - s exactly,
// for finite operands (Knuth's TwoSum, no branch). Cost: 5 additions.
func twoSumErr(a, b, s float64) float64 {
	bp := s - a
	return (a - (s - bp)) + (b - bp)
}
