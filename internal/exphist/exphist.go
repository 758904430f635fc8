package exphist

import (
	"math"
	"runtime"
	"sync/atomic"
	"unsafe"
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
// Each sign's buckets are a circular buffer (a ring), so adding a bucket
// below the lowest never moves the others. A ring is allocated by the
// first value of its sign (8 counters, or maxSize if fewer) and doubles,
// up to maxSize counters, when a value extends its sign's range past it:
// at most 5 allocations per sign in a histogram's life at the default
// maxSize (8, 16, ..., 160), none once its range has settled. A
// histogram of positive values over 100 buckets holds 128 counters
// (1,024 bytes) plus the 128-byte struct, where rings of maxSize per sign
// up front would take 2,560 bytes.
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
	pos, neg span    // each sign's buckets
	// dropped counts the values not in count: NaN and ±Inf (ignored, as
	// the SDK's aggregation ignores them) and, with maxSize 2 only, a value
	// whose bucket cannot fit even at scale -10 (see Record).
	dropped uint64
	// 128 bytes in all: a size class that is a multiple of 64, so that
	// two histograms allocated one after the other (per-goroutine or per-P
	// stripes) never share a cache line, and a record touches two lines
	// of it (the first 64 bytes, then its sign's span), and its ring.
}

// span is one sign's buckets: n consecutive bucket indexes from start, in
// a ring of size counters (bucket start at ring[head]). Counters outside
// the n in use are 0. size is 0 and ring nil until the sign's first value.
type span struct {
	start int32
	n     int32
	head  int32
	size  int32
	ring  *uint64 // the first of size counters: a pointer, to keep the struct at 128 bytes
}

// at returns the counter at position p (0 <= p < size) of sp's ring.
func (sp *span) at(p int32) *uint64 {
	return (*uint64)(unsafe.Add(unsafe.Pointer(sp.ring), uintptr(p)*8))
}

// counters returns sp's ring as a slice.
func (sp *span) counters() []uint64 { return unsafe.Slice(sp.ring, sp.size) }

// minRing is the size of a sign's first ring (maxSize if smaller).
const minRing = 8

// reserve makes sp's ring hold at least need buckets (need <= maxSize):
// a new ring of twice the size (at least minRing, at most maxSize, at
// least need), the buckets in use copied to its start. Under the lock.
func (sp *span) reserve(need, maxSize int32) {
	if need <= sp.size {
		return
	}
	n := min(max(2*sp.size, minRing, need), maxSize)
	ring := make([]uint64, n)
	for i := int32(0); i < sp.n; i++ {
		ring[i] = *sp.at(sp.pos(i))
	}
	sp.ring, sp.size, sp.head = &ring[0], n, 0
}

// New returns an empty histogram of at most maxSize buckets per sign and
// scale at most maxScale. It fails with ErrMaxSize if maxSize < 2 and
// ErrMaxScale if maxScale is outside MinScale..MaxScale. Cost: the
// 128-byte struct (the counters come with the values, see Histogram).
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
			*sp.at(sp.pos(d))++
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
		sp.reserve(1, h.maxSize)
		sp.start, sp.n, sp.head = bin, 1, 0
		*sp.at(0) = 1
		return true
	}
	if change := scaleChange(bin, sp.start, sp.n, h.maxSize); change > 0 {
		s := h.scale.Load()
		if s-change < MinScale {
			return false
		}
		h.pos.downscale(change)
		h.neg.downscale(change)
		h.scale.Store(s - change)
		bin >>= change
	}
	// The range from bin to the span's far end fits maxSize (scaleChange).
	sp.reserve(max(sp.start+sp.n, bin+1)-min(sp.start, bin), h.maxSize)
	if d := bin - sp.start; d < 0 {
		sp.head += d
		if sp.head < 0 {
			sp.head += sp.size
		}
		sp.start = bin
		sp.n -= d
	} else if d >= sp.n {
		sp.n = d + 1
	}
	*sp.at(sp.pos(bin - sp.start))++
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

// pos returns the position in sp's ring of its i-th bucket (0 <= i <
// size).
func (sp *span) pos(i int32) int32 {
	p := sp.head + i
	if p >= sp.size {
		p -= sp.size
	}
	return p
}

// downscale lowers sp's scale by change (> 0): bucket i becomes i>>change,
// summing the buckets that merge, in place. Its first bucket keeps its
// position; the counters freed are zeroed. Cost: O(n).
func (sp *span) downscale(change int32) {
	if sp.n == 0 {
		return
	}
	start := sp.start >> change
	end := (sp.start + sp.n - 1) >> change
	// Reading in order, bucket i's merged bucket j <= i: its counter has
	// been read (and cleared) already when it receives i's count.
	for i := int32(0); i < sp.n; i++ {
		p := sp.at(sp.pos(i))
		c := *p
		*p = 0
		j := (sp.start+i)>>change - start
		*sp.at(sp.pos(j)) += c
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
