package core

import (
	"math"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/zerostat/zerostat/internal/exphist"
)

// Series is the aggregate of one tag-value combination of one view.
//
// Count, Sum and LastValue keep one 64-bit word, updated with atomics
// only. A Distribution keeps a distCell (see dist.go). A series starts with
// a single cell; the first time an update finds contention (a failed
// compare-and-swap, or for a Count's atomic add a failed probe, see
// tryAdd) it grows one cell per P, each on its own cache lines,
// and recorders then update the cell of the P they run on — the shape of
// Java's LongAdder: cold series stay small, hot ones stop sharing a cache
// line. Readers combine the cells.
type Series struct {
	agg     *Aggregator
	stripes atomic.Pointer[stripes]
	word    atomic.Uint64 // Count, Sum, LastValue
	hash    uint64
	start   int64 // creation time, Unix nanoseconds
	// dist is the first word of the distribution cell (Distribution, set
	// before the series is published), or the *atomic.Uint64 that keeps
	// word's rounding errors (a float Sum: installed atomically by the
	// first inexact addition while the aggregator keeps errors, see
	// keepErr), or the *boundCells attached to the series (a Count, an
	// integer Sum: see attachCell);
	// vids the first of the interned tag value ids in view order (0
	// for an absent key): bare pointers, the aggregator knows their
	// lengths (a growable one's series keep theirs before their ids), so
	// a series takes 64 bytes.
	dist     unsafe.Pointer
	vids     *uint32
	id       uint32 // index within the aggregator, reused once the series is freed
	overflow bool   // the aggregator's overflow series: counts its records
	fast     Kind   // the path tryAdd or tryAddDist takes (fastCount...), 0 for none and the overflow series (fills the 64 bytes)
	gen      uint16 // generation of id: how many series held it before this one
}

// stripes are the per-P cells of a contended series: words (Count, Sum)
// or distribution cells, each on cache lines of its own. A stripes value
// with seal set holds no cells: it marks a sealed series (see seal).
//
// An integer Sum's stripe holds two sums: its float word, as a float Sum's
// stripe (and its error word), and an integer word (stripeInt) that takes
// the records of integers within ±2^31 (addIntSumAt): one add, as a
// Count's stripe takes its records, where the float word takes a load, an
// addition and a compare-and-swap (two goroutines sharing a handle on 2
// cores: 0.76x -> 0.6x the single goroutine's time per record, with a
// locked add; a plain one since, see pinnedAdd). A reader adds both. Once
// one integer word reaches ±2^61 (intFull), records go to the float
// words.
type stripes struct {
	mask    int
	seal    *sealState
	intFull atomic.Bool          // an integer Sum's: an integer word reached ±2^61
	words   []atomic.Uint64      // Count, Sum: P cells, wordsPerLine apart
	dists   []distCell           // Distribution: P cells
	exps    []*exphist.Histogram // Exponential: P cells
}

// Words of a stripe's cache line: a Count's count, or a Sum's float sum,
// its kept rounding errors (addTo) and an integer Sum's integer word.
const (
	stripeErr = 1
	stripeInt = 2
)

// intWords reports whether s's stripes have integer words (an integer
// Sum's).
func (s *Series) intWords() bool { return s.agg.kind == KindSum && s.agg.intSum }

// newSeries creates the series of vals (view order) with v
// recorded. Called under a.mu.
func (a *Aggregator) newSeries(h uint64, vals []string, v float64) *Series {
	s := &Series{agg: a, fast: a.fastKind(), hash: h, start: time.Now().UnixNano()}
	if n := len(a.freeIDs); n > 0 {
		s.id = a.freeIDs[n-1]
		a.freeIDs = a.freeIDs[:n-1]
	} else {
		s.id = a.nextID
		a.nextID++
		a.gens = append(a.gens, 0)
	}
	s.gen = a.gens[s.id]
	if n := len(a.sch.Load().names); n > 0 {
		// In view order; vals may be shorter (resolved before addKeys
		// added keys): the rest are absent. A growable aggregator's
		// series keep their count before the ids: keys may be added
		// after them.
		hdr := 0
		if a.growable.Load() {
			hdr = 1
		}
		vids := make([]uint32, hdr+n)
		if hdr == 1 {
			vids[0] = uint32(n)
		}
		for i, v := range vals {
			// Interned once per distinct value, counted per series.
			vids[hdr+i] = internValue(v)
		}
		s.vids = &vids[hdr]
	}
	if a.kind == KindDistribution {
		s.dist = unsafe.Pointer(&newDistCells(1, len(a.bounds)+1)[0][0])
	} else if a.kind == KindExponential {
		s.dist = unsafe.Pointer(a.newExpCell())
	} else if s.fast == fastCount || s.fast == fastIntSum {
		// The list of its bound cells, empty (boundcell.go): allocated
		// with the series, so that a snapshot, which reads the series in
		// creation order, reads the lists in the order they are in memory.
		s.dist = unsafe.Pointer(new(boundCells))
	}
	if a.kind == KindSummary {
		s.dist = a.summaryInit() // set whole (SetSummary), never recorded into
		return s
	}
	if s.addTo(&s.word, nil, s.distCell(), v) == addFull {
		s.inflate()
		s.add(v, nil) // to a stripe: s is not published, so not sealed
	}
	return s
}

func (s *Series) distCell() distCell {
	if s.agg.kind != KindDistribution {
		return nil
	}
	return unsafe.Slice((*uint64)(s.dist), dBuckets+len(s.agg.bounds)+1)
}

// errWord returns the rounding-error word of a Sum series' own cell, nil
// when none was installed (no inexact addition while errors were kept).
func (s *Series) errWord() *atomic.Uint64 {
	if s.agg.kind != KindSum || s.agg.intSum {
		return nil
	}
	return (*atomic.Uint64)(atomic.LoadPointer(&s.dist))
}

// keepErr keeps the rounding error x of an addition to a Sum cell: in e,
// the stripe's error word, or (e nil) in the series' own, installed by
// the first error it keeps (8 bytes, once per series: an integer sum
// never allocates it). An exact addition (x 0) costs nothing; a
// non-finite x (the sum overflowed, or a NaN or an infinity was recorded)
// is not kept: the sum is then non-finite for good and its error means
// nothing.
func (s *Series) keepErr(e *atomic.Uint64, x float64) {
	if x == 0 || x-x != 0 {
		return
	}
	if e == nil {
		if e = (*atomic.Uint64)(atomic.LoadPointer(&s.dist)); e == nil {
			n := new(atomic.Uint64)
			if !atomic.CompareAndSwapPointer(&s.dist, nil, unsafe.Pointer(n)) {
				n = (*atomic.Uint64)(atomic.LoadPointer(&s.dist))
			}
			e = n
		}
	}
	for {
		old := e.Load()
		if e.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+x)) {
			return
		}
	}
}

// Start returns when the series was created.
func (s *Series) Start() time.Time { return time.Unix(0, s.start) }

// ID returns the series' index within its aggregator (0, 1, ...): unique
// among the series in the table, and reused by a new series once this one
// is freed (see Evict). Gen tells the holders of one ID apart.
func (s *Series) ID() uint32 { return s.id }

// Gen returns how many series held ID before this one (modulo 2^16). A
// delta reader that keeps state by ID resets it when Gen changes; it cannot
// miss 2^16 generations, since a series is freed only once every
// registered reader has read it sealed.
func (s *Series) Gen() uint16 { return s.gen }

// ValueIDs returns the interned ids of the tag values in view order (the
// order of Aggregator.Keys and View.Keys; 0 for an absent key; Interned()
// maps them to strings). A series of a growable aggregator may have fewer
// values than it has keys now (keys added after the series): the keys
// past its values are absent; it never has more than the keys a reader
// loaded after it. The caller must not modify them.
func (s *Series) ValueIDs() []uint32 {
	if s.vids == nil {
		return nil
	}
	if s.agg.growable.Load() {
		return unsafe.Slice(s.vids, *(*uint32)(unsafe.Add(unsafe.Pointer(s.vids), -4)))
	}
	return unsafe.Slice(s.vids, len(s.agg.sch.Load().names))
}

// NextID returns an upper bound of the IDs of the live series.
func (a *Aggregator) NextID() uint32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.nextID
}

// Fast-path codes (Series.fast): which of tryAdd's and tryAddDist's paths
// a series takes. fastIntSum is a Sum over an Int64 measure (see
// Aggregator.IntegerSums), whose own cell is an exact integer.
const (
	fastNone   Kind = 0 // LastValue, and the overflow series: add
	fastCount  Kind = 1 // tryAdd
	fastIntSum Kind = 2 // tryAdd
	fastSum    Kind = 3 // tryAddFloat
	fastDist   Kind = 4 // tryAddDist
)

// fastKind returns the fast-path code of a's series.
func (a *Aggregator) fastKind() Kind {
	switch a.kind {
	case KindCount:
		return fastCount
	case KindSum:
		if a.intSum {
			return fastIntSum
		}
		return fastSum
	case KindDistribution, KindExponential:
		return fastDist // tryAddDist takes both
	}
	return fastNone
}

// tryAdd is add's fast path for a Count and an integer Sum (a Sum over an
// Int64 measure, see Aggregator.IntegerSums), small enough to inline into
// the callers on the record path: an unstriped, unsealed series updated
// with one atomic add (LOCK XADD). It reports false, having counted
// nothing, for anything else, and the caller then tries tryAddFloat (a
// float Sum) or tryAddDist, and else calls add, which handles every case.
// On success it returns w, the cell's new value, and the caller then
// checks followUp(w), after the update and off the chain of loads it
// waits for.
//
// An atomic add, not a load and a compare-and-swap: 9.1 against 12.5 ns
// on the project's VM, and when the series' line was last written by
// another core, one transfer of the line instead of two (the load's,
// shared, then the swap's). An integer Sum adds so an integer under 2^31
// in magnitude (else add's exact path). An add that finds the word sealed
// (intSealed) counted nothing, and the caller's add takes the record to
// the series' revival or successor. Contention, which a failed swap shows,
// is probed for instead (probe).
//
// The atomics are the sync/atomic functions on the fields' words: with
// the methods' wrappers the same body cost the inliner more than its budget
// of 80 (72 as written; 105 with tryAddFloat's body in it too)
// (TestAtomicFieldLayout checks that the words are where these read them).
func (s *Series) tryAdd(v float64) (ok bool, w uint64) {
	if atomic.LoadPointer((*unsafe.Pointer)(unsafe.Pointer(&s.stripes))) != nil || s.fast-1 > fastIntSum-1 {
		return false, 0 // striped or sealed, or not a Count or an integer Sum
	}
	d, ok := cellDelta(s.fast, v)
	if !ok {
		return false, 0
	}
	// Past a seal, the add counted nothing.
	w = atomic.AddUint64((*uint64)(unsafe.Pointer(&s.word)), d)
	return !intSealed(w), w
}

// cellDelta returns what a record of v adds to the own cell of a series
// whose fast code is k, fastCount or fastIntSum: 1 for a Count, v for an
// integer Sum if v is an integer under 2^31 in magnitude (ok false
// otherwise: add's exact path takes it).
func cellDelta(k Kind, v float64) (d uint64, ok bool) {
	if k != fastIntSum {
		return 1, true
	}
	d = uint64(int64(v))
	return d, d+1<<31 < 1<<32 && float64(int64(d)) == v
}

// Cells: the slot that caches the series of a measure's only view for
// records without tags (a Subs') also keeps, in its cell
// word, the series' fast code while the series is a Count or an integer
// Sum (0 otherwise, or once the series striped): a record then adds to
// the series' own word with one atomic add, without loading the series'
// fields first (tryAdd reads its stripes pointer and fast code, two loads
// that wait for the series' address). The own word stays a correct cell
// for any add at any time: a read sums it with the stripes, a seal seals
// it, so a cell that went stale (the series striped, or was sealed and
// its slot re-pointed) costs speed until cellFinish clears it, never a
// record. (A Bound adds to a cell of its own instead: boundcell.go.)

// addCell adds d to the own cell of s (a Count's, an integer Sum's) and
// returns the word it left, for cellFollowUp.
func (s *Series) addCell(d uint64) uint64 {
	return atomic.AddUint64((*uint64)(unsafe.Pointer(&s.word)), d)
}

// cellFollowUp reports whether addCell's add, which left w, needs
// cellFinish: about one add in 64 (a probe for contention), a cell that
// reached ±2^61 (an integer Sum's, which then stripes), or a sealed cell
// (intSealed: past 2^61 too), where the add counted nothing.
func cellFollowUp(w uint64) bool { return w*probeMul>>58 == 0 || intSumFull(w) }

// cellFinish does what cellFollowUp found needed after addCell left w in
// the own cell of s, the series in slot, for a record of v; cell is the
// slot's cell word. A sealed cell counted nothing: the record goes on as
// add takes it (to the revival or successor, which slot is pointed at;
// the cell stays, a successor of one aggregator is a cell too). A sum
// that reached 2^61 stripes the series; a probe that finds contention
// does too; either way the cell is cleared and records take the striped
// path. Not inlined.
//
//go:noinline
func (s *Series) cellFinish(cell *atomic.Uint32, slot *atomic.Pointer[Series], w uint64, v float64) {
	switch {
	case intSealed(w):
		s.add(v, slot)
		return
	case intSumFull(w):
		s.inflate()
	default:
		s.probe(w)
	}
	if s.stripes.Load() != nil {
		cell.Store(0)
	}
}

// cellKind returns the fast code of a's series if they are cells (a
// Count, an integer Sum), else 0.
func (a *Aggregator) cellKind() uint32 { return a.cellK }

// fastCellKind computes cellKind, when kind or intSum is set.
func (a *Aggregator) fastCellKind() uint32 {
	if k := a.fastKind(); k == fastCount || k == fastIntSum {
		return uint32(k)
	}
	return 0
}

// tryAddFloat is tryAdd for a float Sum: one load and compare-and-swap of
// an unstriped series' cell. It reports false, having added nothing, for
// anything else, a sealed cell or a lost race; on success it returns the
// bits the swap replaced, for followUp. The new bits are never sealedWord,
// since IEEE addition never yields a signalling NaN (see sealedWord).
func (s *Series) tryAddFloat(v float64) (ok bool, w uint64) {
	if atomic.LoadPointer((*unsafe.Pointer)(unsafe.Pointer(&s.stripes))) != nil || s.fast != fastSum {
		return false, 0
	}
	p := (*uint64)(unsafe.Pointer(&s.word))
	w = atomic.LoadUint64(p)
	return w != sealedWord && atomic.CompareAndSwapUint64(p, w, math.Float64bits(math.Float64frombits(w)+v)), w
}

// intSealedWord is the value a seal leaves in an integer cell (a Count's
// cells, an integer Sum's own cell): 2^62. intSealed tells it, plus or
// minus the adds that landed on it after the seal (they counted nothing,
// and record again; there are at most as many as goroutines were between
// their check of the series and their atomic add, each under 2^31), from
// a live value: a count stays below 3·2^60 (it would need that many
// records), an integer sum within ±(2^61 + those adds), since add keeps
// it within ±2^61 and an atomic add that passes 2^61 stripes the series
// (finish), sending later records to its stripes.
const (
	intSealedWord = 1 << 62
	intSealedMin  = 3 << 60
	intSumMax     = 1 << 61
)

func intSealed(w uint64) bool { return int64(w) >= intSealedMin }

// intSumFull reports whether w, an integer Sum's own cell, has reached
// ±2^61: add records no more into it.
func intSumFull(w uint64) bool { return uint64(int64(w)+intSumMax) >= 2*intSumMax }

// followUp reports whether the update tryAdd or tryAddFloat made, which
// returned w, needs finish: a float Sum whose aggregator keeps rounding
// errors (it is set only while a delta reader reads; keptErr then keeps
// the addition's rounding error, as add would have), about one add in 64
// to an integer cell (a Count's, an integer Sum's), a probe for
// contention, or an integer Sum that reached ±2^61. Each record site
// writes out the test and the call (and tries tryAdd, then tryAddFloat):
// one helper doing both would cost the inliner 110, past its budget of
// 80, and a call on every record.
func (s *Series) followUp(w uint64) bool {
	switch s.fast {
	case fastCount:
		return w&probeMask == 0
	case fastIntSum:
		return cellFollowUp(w)
	}
	return s.agg.keepErrs.Load() // a float Sum: tryAdd handles no other kind
}

// probeMask sets how often a Count's atomic add probes for contention:
// once in 64 increments of the series.
const probeMask = 63

// probeMul spreads an integer sum's bits for the probe: the top 6 bits of
// w·probeMul are 0 for about one record in 64 whatever the values added,
// even multiples of 64, whose sums never change their low bits.
const probeMul = 0x9E3779B97F4A7C15

// finish does what followUp found needed after tryAdd's update of v, which
// returned w. Not inlined: the record path stays small.
//
//go:noinline
func (s *Series) finish(w uint64, v float64) {
	switch {
	case s.fast == fastSum:
		s.keptErr(w, v)
	case intSumFull(w):
		s.inflate() // later records add to stripes (a count never gets there)
	default:
		s.probe(w)
	}
}

// probe checks, after an atomic add left a Count's own word at n, whether
// another recorder updated it since (a no-op compare-and-swap of n fails),
// as recorders on several cores at once do, and then stripes the series
// (inflate), as a failed compare-and-swap does for the other kinds. Cost:
// one compare-and-swap of a line the add just took, every 64th record.
func (s *Series) probe(n uint64) {
	if !s.word.CompareAndSwap(n, n) {
		s.inflate() // a no-op once striped or sealed
	}
}

// keptErr keeps the rounding error of the addition old+v (old: the bits
// tryAdd replaced) that tryAdd made to the series' own cell (keepErr).
func (s *Series) keptErr(oldBits uint64, v float64) {
	old := math.Float64frombits(oldBits)
	s.keepErr(nil, twoSumErr(old, v, old+v))
}

// add records v. Cost for an uncontended series: one compare-and-swap
// (Count, Sum, LastValue), or a bound search and the cell's lock and unlock
// (Distribution). When s is sealed (see evict.go) the record goes to its
// revival or its successor, which slot (a TagMap's cache, or nil) is then
// pointed at.
func (s *Series) add(v float64, slot *atomic.Pointer[Series]) {
	if s.overflow {
		s.agg.overflowed.Add(1) // never sealed
	}
	if st := s.stripes.Load(); st != nil {
		s.addStriped(st, v, slot)
		return
	}
	switch s.addTo(&s.word, nil, s.distCell(), v) {
	case addContended:
		s.inflate()
	case addSealed:
		s.agg.recordSealed(s, slot, v)
	case addFull:
		s.inflate()
		s.add(v, slot) // to the P's stripe (or the seal that came first)
	}
}

// addStriped is add for s striped (st is its stripes): v goes to the cell
// of the current P, or, sealed, where recordSealed sends it. The caller
// has counted an overflow series' record.
func (s *Series) addStriped(st *stripes, v float64, slot *atomic.Pointer[Series]) {
	r := addSealed
	count := s.agg.kind == KindCount
	if d, small := smallInt(v); st.seal == nil && (count || small && s.intWords()) {
		// A Count's stripe word, or an integer Sum's integer word
		// (addStripeInt: nothing else writes these words).
		if s.addStripeInt(count, d) {
			return
		}
		// Sealed meanwhile, a P without a stripe of its own, or an
		// integer Sum whose integer words are full. A Count's record goes
		// to the series' own word, with an atomic add (a seal seals that
		// word: the add then counted nothing); an integer Sum's to its
		// float words, below.
		if st = s.stripes.Load(); count {
			if st != nil && st.seal == nil && !intSealed(s.word.Add(1)) {
				return
			}
			st = nil
		}
	}
	if st != nil && st.seal == nil && !count {
		p := procID() & st.mask
		if st.dists != nil {
			r = st.dists[p].add(s.agg.bounds, &s.agg.keepErrs, v)
		} else if st.exps != nil {
			r = addExp(st.exps[p], v)
		} else {
			r = s.addTo(&st.words[p*wordsPerLine], &st.words[p*wordsPerLine+stripeErr], nil, v)
		}
	}
	if r == addSealed {
		s.agg.recordSealed(s, slot, v)
	}
}

// addStripeInt adds an integer record to the current P's stripe of s, a
// Count's series (count: one record, v ignored) or an integer Sum's (v),
// and reports whether it did: false when s has no live stripes (not
// striped, or sealed), when the P has no stripe of its own (addCountAt),
// or for an integer Sum when v is not within ±2^31 or its integer words
// are full; addStriped, its caller but for a handle's unstamped record,
// takes each of these cases. It pins the P around the load of the stripes
// and the add (pinnedAdd). Cost: two calls (procPin, procUnpin) and one
// plain add; not inlined (each call costs 57 of the inliner's budget of
// 80), and so written out on the two hottest paths (Bound's stamped
// RecordInt, RecordMap's striped case).
func (s *Series) addStripeInt(count bool, v int64) bool {
	ok := false
	p := procPin()
	if sp := s.stripes.Load(); sp != nil && sp.seal == nil {
		ok = count && sp.addCountAt(p) || !count && int64(int32(v)) == v && sp.addIntSumAt(p, v)
	}
	procUnpin()
	return ok
}

// addCountAt adds a Count's record to P p's stripe, and reports whether
// it did: false when p has no stripe of its own (p > mask: GOMAXPROCS set
// above the CPUs after the series striped, or past 256: wordStripeCount),
// whose records go to the series' own word (addStriped), since a stripe
// shared by two Ps could not take plain adds. The caller holds p (procPin) from before its load
// of the stripes pointer, which it found live (no seal), until after the
// add: see pinnedAdd. Cost: one plain add. Inlined.
func (sp *stripes) addCountAt(p int) bool {
	if p > sp.mask {
		return false
	}
	pinnedAdd(&sp.words[p*wordsPerLine], 1)
	return true
}

// addIntSumAt adds d, an integer within ±2^31 (smallInt), to P p's
// integer word of an integer Sum's stripes unless one integer word is
// full, and reports whether it did: false, having added nothing, once
// intFull is set, or when p has no stripe of its own (as addCountAt's);
// the caller goes on to the float words, which take compare-and-swaps
// from any P. The add that takes a word to ±2^61 counts, and sets
// intFull; each P's word is written by that P alone and checks intFull
// before each add, so no word goes past ±(2^61 + 2^31), far from
// intSealed's 3·2^60. The caller holds p as addCountAt's does. Cost: one
// plain add. Inlined.
func (sp *stripes) addIntSumAt(p int, d int64) bool {
	if p > sp.mask || sp.intFull.Load() {
		return false
	}
	if intSumFull(pinnedAdd(&sp.words[p*wordsPerLine+stripeInt], uint64(d))) {
		sp.intFull.Store(true)
	}
	return true
}

// smallInt returns v as an integer, and whether it is one within ±2^31:
// what a stripe's integer word takes (addIntSumAt). Inlined.
func smallInt(v float64) (int64, bool) {
	d := int64(v)
	return d, float64(d) == v && int64(int32(d)) == d
}

// addResult is what an update of one cell found.
type addResult uint8

const (
	addOK        addResult = iota
	addContended           // done, after losing a race to another recorder
	addSealed              // not done: the cell is sealed
	addFull                // not done: an integer Sum's own cell cannot take v (addIntSum)
)

// sealedWord is the value of a sealed float cell (a Sum's, but an integer
// Sum's own cell, and a LastValue's): a signalling NaN, which
// floating-point arithmetic never produces (it quiets NaN operands) and
// which setLast canonicalises. Integer cells seal to intSealedWord.
const sealedWord = 0x7FF0_0000_0000_0BAD

// addTo records v into one cell (w, or d for a distribution). For a Sum
// whose aggregator keeps rounding errors, an inexact addition's error goes
// to e, the stripe's error word, or with e nil to the series' own.
func (s *Series) addTo(w, e *atomic.Uint64, d distCell, v float64) addResult {
	switch s.agg.kind {
	case KindCount:
		return addInt(w, 1)
	case KindSum:
		if w == &s.word && s.agg.intSum {
			return addIntSum(w, v)
		}
		r, old := addFloat(w, v)
		if r != addSealed && s.agg.keepErrs.Load() {
			s.keepErr(e, twoSumErr(old, v, old+v))
		}
		return r
	case KindLastValue:
		return setLast(w, v)
	case KindExponential:
		return addExp(&s.expCell().h, v)
	case KindSummary:
		return addOK // not recorded into (its view is subscribed to no measure): see SetSummary
	}
	return d.add(s.agg.bounds, &s.agg.keepErrs, v)
}

// addInt, addFloat and setLast try once inline and leave the loop, taken
// on contention or a seal, to a call.
func addInt(p *atomic.Uint64, d uint64) addResult {
	if old := p.Load(); !intSealed(old) && p.CompareAndSwap(old, old+d) {
		return addOK
	}
	return addIntSlow(p, d)
}

func addIntSlow(p *atomic.Uint64, d uint64) addResult {
	for {
		old := p.Load()
		if intSealed(old) {
			return addSealed
		}
		if p.CompareAndSwap(old, old+d) {
			return addContended
		}
	}
}

// addIntSum adds v to an integer Sum's own cell p, exactly, unless v is not
// an integer, or the sum would reach ±2^61 (intSumMax): then it returns
// addFull, having added nothing, and the caller stripes the series and
// adds v to a stripe (its integer word, or for a value an integer word
// does not take, its float word). (A Float64 measure of the view's measure's
// name records into the same views, with values of its own.)
func addIntSum(p *atomic.Uint64, v float64) addResult {
	if v != math.Trunc(v) || math.Abs(v) >= intSumMax {
		return addFull // also NaN and infinities
	}
	d, r := int64(v), addOK
	for {
		old := p.Load()
		if intSealed(old) {
			return addSealed
		}
		n := int64(old) + d // no overflow: both are within about ±2^61
		if intSumFull(uint64(n)) {
			return addFull
		}
		if p.CompareAndSwap(old, uint64(n)) {
			return r
		}
		r = addContended
	}
}

// ownSum returns the value of a Sum series' own cell w, and whether the
// cell is live (not sealed).
func (s *Series) ownSum(w uint64) (float64, bool) {
	if s.agg.intSum {
		return float64(int64(w)), !intSealed(w)
	}
	return math.Float64frombits(w), w != sealedWord
}

// ownSumParts is ownSum as hi and lo, hi+lo exact (see ReadSumParts): an
// integer sum's rounding to a float64 (past 2^53) goes to lo, or a float
// sum's kept rounding errors.
func (s *Series) ownSumParts(w uint64) (hi, lo float64, live bool) {
	if s.agg.intSum {
		i := int64(w)
		hi = float64(i)
		return hi, float64(i - int64(hi)), !intSealed(w)
	}
	return math.Float64frombits(w), loadFloat(s.errWord()), w != sealedWord
}

// addFloat adds d to the sum in p and returns the sum it added to (when
// not sealed): p keeps OpenCensus's bits (the values added in order, each
// rounded), and the caller may keep the addition's rounding error apart
// (keepErr), so that a delta reader can subtract two totals without their
// rounding (ReadSumParts). The error is kept just after the sum; a reader
// between the two sees it one read later, and the deltas still add up.
// Cost of keeping an error: the TwoSum (5 additions) and a
// compare-and-swap of a word on the stripe's own cache line (or the
// series' error word).
func addFloat(p *atomic.Uint64, d float64) (addResult, float64) {
	if old := p.Load(); old != sealedWord {
		if n := math.Float64bits(math.Float64frombits(old) + d); n != sealedWord && p.CompareAndSwap(old, n) {
			return addOK, math.Float64frombits(old)
		}
	}
	return addFloatSlow(p, d)
}

func addFloatSlow(p *atomic.Uint64, d float64) (addResult, float64) {
	for {
		old := p.Load()
		if old == sealedWord {
			return addSealed, 0
		}
		n := math.Float64bits(math.Float64frombits(old) + d)
		if n == sealedWord { // not produced by IEEE arithmetic; kept out anyway
			n = qNaN
		}
		if p.CompareAndSwap(old, n) {
			return addContended, math.Float64frombits(old)
		}
	}
}

// setLast stores v unless the cell is sealed. A LastValue cell never
// stripes: a lost race is not reported as contention.
func setLast(p *atomic.Uint64, v float64) addResult {
	n := math.Float64bits(v)
	if old := p.Load(); old != sealedWord && n != sealedWord && p.CompareAndSwap(old, n) {
		return addOK
	}
	if n == sealedWord {
		n = qNaN
	}
	for {
		old := p.Load()
		if old == sealedWord {
			return addSealed
		}
		if p.CompareAndSwap(old, n) {
			return addOK
		}
	}
}

var qNaN = math.Float64bits(math.NaN())

func (s *Series) inflate() {
	if s.stripes.Load() != nil {
		return
	}
	var st *stripes
	if k := s.agg.kind; k == KindDistribution || k == KindExponential {
		n := stripeCount()
		st = &stripes{mask: n - 1}
		if k == KindDistribution {
			st.dists = newDistCells(n, len(s.agg.bounds)+1)
		} else {
			st.exps = s.agg.newExpStripes(n)
		}
	} else {
		n := wordStripeCount()
		st = &stripes{mask: n - 1}
		words := make([]atomic.Uint64, (n+1)*wordsPerLine)
		off := alignOffset(words)
		st.words = words[off : off+n*wordsPerLine]
	}
	s.stripes.CompareAndSwap(nil, st)
}

// ReadCount returns a Count series' value.
func (s *Series) ReadCount() int64 {
	for {
		n := s.word.Load()
		st := s.stripes.Load()
		if total, ok := s.sealedTotal(st); ok {
			return int64(total)
		}
		ok := !intSealed(n)
		if st != nil {
			for p := 0; ok && p <= st.mask; p++ {
				w := st.words[p*wordsPerLine].Load()
				ok = !intSealed(w)
				n += w
			}
		}
		var buf [maxBoundCells]uint64
		ws, live := s.boundCells().values(&buf)
		for _, w := range ws {
			n += w
		}
		if ok && live {
			return int64(n)
		}
		s.agg.waitSeal()
	}
}

// ReadSumParts returns a Sum series' value as ReadSum does (hi) and the
// rounding errors of the additions that made it (lo): hi+lo is the exact
// sum of what was recorded, to within lo's own rounding. A delta reader
// subtracts hi and lo apart, so that an interval's sum keeps its own
// precision after a long history of large values. lo is 0 when hi is not
// finite.
func (s *Series) ReadSumParts() (hi, lo float64) {
	for {
		w := s.word.Load()
		st := s.stripes.Load()
		if total, ok := s.sealedTotal(st); ok {
			ss := st.seal
			hi, lo, _ = s.ownSumParts(ss.words[0])
			floats, ints := ss.stripeWords()
			for i, w := range floats {
				hi, lo = addPart(hi, lo, math.Float64frombits(w), &ss.orig.words[i*wordsPerLine+stripeErr])
			}
			for _, w := range ints {
				hi, lo = addIntPart(hi, lo, int64(w))
			}
			for _, w := range ss.bound {
				hi, lo = addIntPart(hi, lo, int64(w))
			}
			return math.Float64frombits(total), finiteLo(hi, lo)
		}
		hi, lo, ok := s.ownSumParts(w)
		if st != nil {
			for p := 0; ok && p <= st.mask; p++ {
				w := st.words[p*wordsPerLine].Load()
				ok = w != sealedWord
				hi, lo = addPart(hi, lo, math.Float64frombits(w), &st.words[p*wordsPerLine+stripeErr])
			}
			if s.intWords() {
				for p := 0; ok && p <= st.mask; p++ {
					w := st.words[p*wordsPerLine+stripeInt].Load()
					ok = !intSealed(w)
					hi, lo = addIntPart(hi, lo, int64(w))
				}
			}
		}
		var buf [maxBoundCells]uint64
		ws, live := s.boundCells().values(&buf)
		for _, w := range ws {
			hi, lo = addIntPart(hi, lo, int64(w))
		}
		ok = ok && live
		if ok {
			return hi, finiteLo(hi, lo)
		}
		s.agg.waitSeal()
	}
}

// addPart adds a stripe's sum f and error word e to hi, lo, keeping the
// rounding of hi+f in lo.
func addPart(hi, lo, f float64, e *atomic.Uint64) (float64, float64) {
	n := hi + f
	return n, lo + twoSumErr(hi, f, n) + loadFloat(e)
}

// loadFloat loads a float from e; 0 for nil.
func loadFloat(e *atomic.Uint64) float64 {
	if e == nil {
		return 0
	}
	return math.Float64frombits(e.Load())
}

func finiteLo(hi, lo float64) float64 {
	if hi-hi != 0 || lo-lo != 0 {
		return 0
	}
	return lo
}

// ReadSum returns a Sum series' value.
func (s *Series) ReadSum() float64 {
	for {
		w := s.word.Load()
		st := s.stripes.Load()
		if total, ok := s.sealedTotal(st); ok {
			return math.Float64frombits(total)
		}
		f, ok := s.ownSum(w)
		if st != nil {
			for p := 0; ok && p <= st.mask; p++ {
				w := st.words[p*wordsPerLine].Load()
				ok = w != sealedWord
				f += math.Float64frombits(w)
			}
			if s.intWords() {
				for p := 0; ok && p <= st.mask; p++ {
					w := st.words[p*wordsPerLine+stripeInt].Load()
					ok = !intSealed(w)
					f += float64(int64(w))
				}
			}
		}
		var buf [maxBoundCells]uint64
		ws, live := s.boundCells().values(&buf)
		for _, w := range ws {
			f += float64(int64(w))
		}
		ok = ok && live
		if ok {
			return f
		}
		s.agg.waitSeal()
	}
}

// ReadLast returns a LastValue series' value.
func (s *Series) ReadLast() float64 {
	for {
		w := s.word.Load()
		if total, ok := s.sealedTotal(s.stripes.Load()); ok {
			return math.Float64frombits(total)
		}
		if w != sealedWord {
			return math.Float64frombits(w)
		}
		s.agg.waitSeal()
	}
}

// Striped reports whether s has grown one cell per P (see Series).
func (s *Series) Striped() bool {
	st := s.stripes.Load()
	return st != nil && (st.seal == nil || st.seal.orig != nil)
}
