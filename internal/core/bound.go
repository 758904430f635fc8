package core

import (
	"sync/atomic"
	"unsafe"
)

// Bound is a measure bound to a tag set: the series of each view over the
// measure are resolved once and kept, so a record is an atomic load or
// two and the series update, with no context lookup, no hashing and no
// shared cache slot (stats.Int64Handle and Float64Handle wrap it).
//
// Concurrency protocol: state is replaced as a whole (copy on write) when
// the measure's subscriber list changes (a view registered or unregistered,
// possibly the same view again: a new Aggregator), detected by comparing
// the list pointer on every record but RecordInt's fast path, which
// compares the first state's ctl word with the epoch instead: every
// change of any subscriber list moves the epoch on (Measure.setSubs), and
// the next record checks the list again (recordInt). Each slot caches the
// series of one aggregator for these tags; it is filled on first use, and
// re-pointed by Series.add when the series it held was evicted and freed
// (the record goes to the revived series or its successor, as through a
// TagMap cache).
// Racing rebinds each install a valid state; the slots are caches only, so
// a record through a discarded state still reaches the right series. Safe
// for concurrent use; records never lock unless they create a series.
//
// Layout: a Bound is 64 bytes, and fills one cache line of its own (the
// runtime aligns a 64-byte size class to 64, and stats handles come 8 to
// a 512-byte block, internal/block, which keeps that alignment and lays
// handles bound one at a time side by side), and the first state lives
// in it: an integer record of one view reads the first state's ctl word
// and adds to its own cell, both in that line (see boundcell.go), and
// reads the epoch, shared by every handle and so kept in cache. Before, a
// 96-byte
// Bound whose record added to its series (a second, dependent cache
// miss) cost 72 ns a record at 100,000 live handles recorded in a
// scattered order (BenchmarkScale); this layout 43 to 45 ns (two make
// bench runs).
type Bound struct {
	st    atomic.Pointer[boundState]
	m     *Measure
	first boundState // st's first value
	tags  *[]Tag     // a private copy: the handle does not keep the caller's map
}

type boundState struct {
	// own is the state's own cell: while ctl says attached, it is attached
	// to the series in slot0 (see boundcell.go), and an integer record adds
	// to it and nothing else.
	own   atomic.Uint64
	subs  *Subs
	slot0 atomic.Pointer[Series]    // the slot of a single view
	more  *[]atomic.Pointer[Series] // two views or more: every slot (slots[i] belongs to subs.Aggs[i])
	// ctl is own's course (bits 0-1: ownFree, ownTrying, ownAttached,
	// ownDone, given up: see ownFinish), the one view's kind while
	// attached (ctlCount: a Count, else an integer Sum), ctlSuspect, and
	// the subscriber epoch (epochs) at which subs was last seen current,
	// 0 for none (bits 4-63). A Bound's first state takes RecordInt's
	// fast path while its ctl is attached at the current epoch: one word,
	// so a record reads one field of the handle before its add (see
	// RecordInt).
	ctl atomic.Uint64
}

// own's course (the low 2 bits of boundState.ctl); ownFree is ctl 0.
const (
	ownFree uint64 = iota
	ownTrying
	ownAttached
	ownDone
)

const (
	ctlCourse  = 3  // ctl's course bits
	ctlCount   = 4  // ctl's kind bit: the attached view is a Count
	ctlSuspect = 8  // a probe saw another recorder: the next decides (ownFinish)
	ctlLow     = 15 // ctl's bits below the epoch
)

// epochs is the subscriber epoch, which moves on (by epochStep, keeping
// ctl's low bits free) after every change of any measure's subscriber
// list (Measure.setSubs), as the ctl word of a state attached at it: sum
// for an integer Sum's cell (the epoch | ownAttached), count for a
// Count's (sum | ctlCount). A handle state stamped at an epoch is current
// while the epoch stays; RecordInt compares its first state's ctl with
// both words, one compare each and no arithmetic. The epoch starts at
// epochStep, so that ctl's epoch 0 (a state never stamped) never matches.
// Read once per handle record, written once per view registration: its
// line stays in every core's cache, a line of its own (the padding): the
// linker put the two words beside net's DNS wait group and the runtime's
// poll cache, whose writes would take the line from every core.
//
// striped is the ctl word of a first state given up (ownDone) at the
// epoch, stamped (stamp) for its one view's series: RecordInt or
// Record then records into it after one compare, without the checks of
// the state, the subscriber list and the series' kind that the stamp
// stands for. Bits 2 and 3 (ctlCount and ctlSuspect, which mean nothing
// once a state is given up) say the series' kind: stampIntSum,
// stampCount (the P's stripe, RecordInt), stampExp, stampDist (the
// series' cell, Record).
var epochs struct {
	_                   [64]byte
	sum, count, striped atomic.Uint64
	_                   [40]byte
}

const epochStep = 16

// The kinds of a striped stamp (see epochs).
const (
	stampIntSum = 0
	stampCount  = ctlCount
	stampExp    = ctlSuspect
	stampDist   = ctlCount | ctlSuspect
)

func init() {
	epochs.sum.Store(epochStep | ownAttached)
	epochs.count.Store(epochStep | ownAttached | ctlCount)
	epochs.striped.Store(epochStep | ownDone)
}

// nextEpoch moves the subscriber epoch on (under regMu).
func nextEpoch() {
	epochs.sum.Add(epochStep)
	epochs.count.Add(epochStep)
	epochs.striped.Add(epochStep)
}

// course returns st's own cell's course.
func (st *boundState) course() uint64 { return st.ctl.Load() & ctlCourse }

// kind returns the fast code of the view st's own cell is attached to
// (fastCount, fastIntSum) while it is attached and takes records, else 0.
func (st *boundState) kind() uint32 {
	f := st.ctl.Load()
	switch {
	case f&ctlCourse != ownAttached:
		return 0
	case f&ctlCount != 0:
		return uint32(fastCount)
	}
	return uint32(fastIntSum)
}

// slots returns st's slots, one per subscribed aggregator.
func (st *boundState) slots() []atomic.Pointer[Series] {
	if st.more != nil {
		return *st.more
	}
	if st.subs != nil && len(st.subs.Aggs) == 1 {
		return unsafe.Slice(&st.slot0, 1)
	}
	return nil
}

// Bind returns a Bound of m to a copy of tags (internal order, unique keys,
// as a TagMap holds them). Set-up cost: three allocations, more when views
// change.
func (m *Measure) Bind(tags []Tag) *Bound {
	b := new(Bound)
	b.Init(m, tags)
	return b
}

// Init sets up b, a zero Bound (embedded by value in a handle, saving a
// pointer hop per record), as Bind would. Not safe for concurrent use.
func (b *Bound) Init(m *Measure, tags []Tag) {
	t := append([]Tag(nil), tags...)
	b.m, b.tags = m, &t
	b.install(&b.first)
}

// rebind installs a new state for the current subscriber list and returns
// it. (Never b.first again: a racing record may still be reading it.) Not
// inlined: Record stays small, its slow path a call.
//
//go:noinline
func (b *Bound) rebind() *boundState { return b.install(new(boundState)) }

// install sets up st, an unpublished state, for the current subscriber
// list, publishes it and returns it.
func (b *Bound) install(st *boundState) *boundState {
	b.prepare(st)
	b.st.Store(st)
	return st
}

// prepare sets up st, an unpublished state, for the current subscriber
// list, and returns it.
func (b *Bound) prepare(st *boundState) *boundState {
	st.subs = b.m.subs.Load()
	if st.subs != nil && len(st.subs.Aggs) > 1 {
		more := make([]atomic.Pointer[Series], len(st.subs.Aggs))
		st.more = &more
	}
	return st
}

// Record records v into every view over the measure, for the bound tags.
// Cost, for the one view of a Count, or of an integer Sum and an integer
// v: the loads of the state, its cell word and the subscriber list, and
// one atomic add to the state's own cell; for one view of another kind,
// the series' update instead of the add; for several, each series' update.
// The first record after a view change resolves the series as Record
// does. No allocation.
func (b *Bound) Record(v float64) {
	// The first state stamped for its one view's histogram: its series'
	// cell after one compare, unless the series was striped, sealed or
	// freed meanwhile (make bench: a 15-bound histogram's handle 15.0 ->
	// 13.8 ns a record, an exponential one's 14.9 -> 12.8). First, before a cell's
	// checks: below them, or through a call for the exponential cell's
	// result, it saved nothing measurable. An exponential series (no
	// ctlCount) is tryAddDist's without the load of the aggregator's kind
	// (a dependent load, about 1 ns).
	if f := b.first.ctl.Load(); f&^ctlCount == epochs.striped.Load()|stampExp {
		if s := b.first.slot0.Load(); s != nil && s.fast == fastDist {
			if sp := s.stripes.Load(); sp != nil {
				// Striped (recorders on several cores): the P's cell, as
				// add would find it (or the seal, which addStriped
				// follows).
				s.addStriped(sp, v, &b.first.slot0)
				return
			}
			if f&ctlCount != 0 {
				if s.tryAddDist(v) {
					return
				}
			} else {
				switch addExp(&s.expCell().h, v) {
				case addOK:
					return
				case addContended:
					s.inflate()
					return
				}
			}
		}
	}
	st := b.st.Load()
	if k := st.kind(); k != 0 && st.subs == b.m.subs.Load() {
		if d, ok := cellDelta(Kind(k), v); ok {
			if w := b.ownAdd(st, d); cellFollowUp(w) {
				b.ownFinish(st, w, v)
			}
			return
		}
	}
	// One view over the measure, an unstriped series: the series kept in
	// the state itself and its update, inlined.
	if s := st.slot0.Load(); s != nil && st.more == nil && st.subs == b.m.subs.Load() {
		if s.fast == fastDist {
			if s.tryAddDist(v) {
				if st == &b.first {
					// The epoch, then the list again (see ctl): only a
					// histogram's unstamped record pays for them.
					e := epochs.striped.Load()
					if st.subs == b.m.subs.Load() {
						if s.agg.kind == KindExponential {
							st.stamp(e | stampExp)
						} else {
							st.stamp(e | stampDist)
						}
					}
				}
				return
			}
		} else if ok, w := s.tryAdd(v); ok {
			if s.followUp(w) {
				s.finish(w, v)
			}
			return
		} else if ok, w := s.tryAddFloat(v); ok {
			if s.followUp(w) {
				s.finish(w, v)
			}
			return
		}
		// Striped (recorders on several cores), sealed or contended:
		// what record's loop would do for the one slot, without it.
		s.add(v, &st.slot0)
		return
	}
	b.record(st, v)
}

// RecordInt is Record for an integer v (an Int64 measure's). Cost, for
// the one view of a Count or an integer Sum: the load of the first
// state's ctl (in the handle's line), its compare with the epoch's words
// (shared by every handle, kept in cache), and one atomic add to the
// handle's own cell, in the handle's line; otherwise recordInt's. The
// add's address, and what decides whether it is taken, need no other
// field of the handle: at 10,000 live handles recorded in a scattered
// order, where the handle's line comes from L3, each instruction before
// the add counted (scratch benchmarks, 10,000 handles, medians of 6 in
// two layouts: an add and the test of its result alone 9.5 and 11.1 ns;
// with one word of the line read and compared before it 10.9, in the
// first; two words 12.1 and the old RecordInt's checks of the state, the
// subscriber list and the kind 13.7, in the second). Not inlined (a call
// costs 57 of the inliner's budget of 80).
func (b *Bound) RecordInt(v int64) {
	var d uint64
	f := b.first.ctl.Load()
	switch f {
	case epochs.sum.Load():
		if int64(int32(v)) != v { // cellDelta's bound
			b.recordInt(v)
			return
		}
		d = uint64(v)
	case epochs.count.Load():
		d = 1
	default:
		if f&^ctlCount == epochs.striped.Load() {
			// The first state given up for its series' stripes, a
			// Count's (ctlCount) or an integer Sum's, at the current
			// epoch (stamp): the P's stripe of the series in its
			// slot, unless the series was freed meanwhile.
			if s := b.first.slot0.Load(); s != nil && !s.overflow {
				// Pinned from before the load of the stripes until
				// after the add (pinnedAdd).
				p := procPin()
				if sp := s.stripes.Load(); sp != nil && sp.seal == nil {
					if f&ctlCount != 0 && sp.addCountAt(p) || f&ctlCount == 0 && int64(int32(v)) == v && sp.addIntSumAt(p, v) {
						procUnpin()
						return
					}
				}
				procUnpin()
			}
			b.recordInt(v)
			return
		}
		// A handle given up for its series' stripes (recorders on several
		// cores share it), not stamped yet: the current P's stripe,
		// without recordInt's call, and the stamp.
		if st := b.st.Load(); st.course() != ownAttached {
			e := epochs.striped.Load() // before the check of the list: see ctl
			if s := st.slot0.Load(); s != nil && !s.overflow && st.more == nil && st.subs == b.m.subs.Load() {
				if count := s.fast == fastCount; count || s.fast == fastIntSum {
					if s.addStripeInt(count, v) {
						if st == &b.first {
							if count {
								e |= stampCount
							}
							st.stamp(e)
						}
						return
					}
				} else if s.fast == fastDist && s.tryAddDist(float64(v)) {
					// A distribution's or exponential histogram's series,
					// without recordInt's and Record's calls (an Int64
					// measure's histogram handle).
					return
				}
			}
		}
		b.recordInt(v)
		return
	}
	if w := b.first.own.Add(d); cellFollowUp(w) {
		b.ownFinish(&b.first, w, float64(v))
	}
}

// stamp stamps st, a Bound's first state given up (ownDone), with
// e: the striped word of the epoch read before the state was found
// current, and the kind of its one view's series (stampCount...). For
// the stripes of a Count or an integer Sum, RecordInt's next records then
// take its striped case (issue 41, item 13: two goroutines sharing a
// handle on 2 cores); for a histogram's series, Record's next records go
// to its cell (issue 45: the exponential histogram's handle). The stamp
// stands for what the unstamped paths check on each record: the state is
// current (any change of a subscriber list moves the epoch on), it has one
// slot, and its series are of that kind (a slot is re-pointed only to a
// successor in the same view). A view
// registered or unregistered anywhere makes the stamp stale: the next
// record takes the unstamped case and stamps the state again, unless a
// view over this measure changed (the handle then has a new state, and
// the first is never current again). Inlined.
func (st *boundState) stamp(e uint64) {
	if f := st.ctl.Load(); f != e && f&ctlCourse == ownDone { // ownDone is final: a stale stamp is stamped again
		st.ctl.CompareAndSwap(f, e)
	}
}

// intDelta returns what an integer record of v adds to st's own cell, and
// whether it goes there: st's cell is attached, st is current for m's
// subscriber list, and the delta fits the cell's 32-bit count field.
// It is cellDelta's rule for an integer v, without its float round trip
// (cellDelta(k, float64(v)) in RecordInt: +5.7% on the no-tags handle,
// pinned, n=6). Inlined.
func (st *boundState) intDelta(m *Measure, v int64) (uint64, bool) {
	k := st.kind()
	if k == 0 || st.subs != m.subs.Load() {
		return 0, false
	}
	d := uint64(1)
	if k == uint32(fastIntSum) {
		d = uint64(v)
	}
	return d, d+1<<31 < 1<<32
}

// ownAdd adds d to st's own cell and returns the cell's new word. When st
// is b's first state (it is, until a view over the measure changes), the
// add addresses b.first.own, an offset from b, rather than st.own: the
// same memory, but the locked add's address no longer depends on a load
// from the handle's line (the compare of st with &b.first is predicted).
// Measured, on a handle line not in cache: pinned A/B (BenchmarkScale,
// handle, n=6) 101 -> 72 ns a record at 100,000 live handles, 206 -> 151
// ns at 1,000,000, 15.6 -> 14.9 ns at 10,000; 1,000 unchanged. Why it
// saves that much (perhaps the line is then fetched for writing at once,
// not read and then upgraded) is not verified by a hardware counter.
// Inlined.
func (b *Bound) ownAdd(st *boundState, d uint64) uint64 {
	if st == &b.first {
		return b.first.own.Add(d)
	}
	return st.own.Add(d)
}

// recordInt is RecordInt's slow path: any state's own cell, checked
// against the measure's subscriber list (a state attached at an older
// epoch, still current, is stamped with the current one, so that the next
// record takes the fast path again); the current P's stripe of the one
// view's series when the handle gave its cell up for them (recorders on
// several cores share the handle: Record's path to them, without its
// tries of the unstriped cells and two calls; two goroutines on 2 cores,
// 8.1 -> 7.4 ns a record); else Record.
//
//go:noinline
func (b *Bound) recordInt(v int64) {
	st := b.st.Load()
	if st.course() == ownAttached {
		e := epochs.sum.Load() // before intDelta's check of the list: see ctl
		if d, ok := st.intDelta(b.m, v); ok {
			if w := b.ownAdd(st, d); cellFollowUp(w) {
				b.ownFinish(st, w, float64(v))
				return
			}
			if f := st.ctl.Load(); st == &b.first && f&^ctlLow != e&^ctlLow && f&ctlCourse == ownAttached {
				st.ctl.CompareAndSwap(f, e|f&(ctlCount|ctlSuspect))
			}
			return
		}
	}
	if s := st.slot0.Load(); s != nil && !s.overflow && st.more == nil && st.subs == b.m.subs.Load() {
		if sp := s.stripes.Load(); sp != nil {
			s.addStriped(sp, float64(v), &st.slot0)
			return
		}
	}
	b.Record(float64(v))
}

// ownFinish does what cellFollowUp found needed after a record of v added
// to st's own cell and left w there. Not inlined: the record path stays
// small.
//
//   - The cell is sealed (its series was evicted): the add counted
//     nothing, and v goes on as the series' own add takes it, to the
//     revived series (which restored the cell: it goes on taking records)
//     or to its successor (slot0 is pointed at it). A cell still sealed
//     after that belongs to a freed series: the handle installs a new
//     state, whose own cell its next record attaches to the successor.
//   - An integer Sum's cell reached ±2^61: given up (it keeps its sum;
//     later records go to the series, which stripes).
//   - The probe (one add in 64): when it and the probe before it found
//     another recorder updated the cell since (twoStrikes), recorders on
//     several cores share the handle, and give the cell up for the
//     series, whose stripes keep them apart.
//
//go:noinline
func (b *Bound) ownFinish(st *boundState, w uint64, v float64) {
	switch {
	case intSealed(w):
		if s := st.slot0.Load(); s != nil {
			s.add(v, &st.slot0)
		} else {
			b.record(st, v)
		}
		if intSealed(st.own.Load()) && st.ctl.Swap(ownDone)&ctlCourse == ownAttached {
			b.st.CompareAndSwap(st, b.prepare(new(boundState)))
		}
		return
	case intSumFull(w):
	default:
		if !twoStrikes(&st.own, &st.ctl, w, ctlSuspect, ctlCourse, ownAttached) {
			return
		}
	}
	st.ctl.Store(ownDone)
}

// twoStrikes is the probe of an attached cell (a handle's or a map's)
// after an add left w in it, every 64th record. It reports whether the
// cell is shared by recorders on several cores: two probes in a row found
// another recorder updated the cell since (a no-op compare-and-swap of w
// failed). One is not enough: a cell recorded by several goroutines, each
// at times far apart, meets another recorder in a probe's window now and
// then, and a cell given up is given up for good (2 goroutines recording
// 1,000 handles in a scattered order, 5 million records each: 8 to 39
// handles gave their cells up at one strike, 41 to 95 after five such
// rounds; at two, 0 to 1 and 2), and so is a striped series, whose
// stripes cost a line a P. ctl is the cell's state word: suspect is its bit set at the
// first strike and cleared by a probe that finds no other recorder; the
// cell is attached while ctl&mask == attached (given up or revived
// meanwhile: false). Cost: one compare-and-swap of the line the add just
// took.
func twoStrikes(cell, ctl *atomic.Uint64, w, suspect, mask, attached uint64) bool {
	clean := cell.CompareAndSwap(w, w)
	for {
		f := ctl.Load()
		switch {
		case f&mask != attached:
			return false
		case clean && f&suspect == 0:
			return false
		case clean:
			if ctl.CompareAndSwap(f, f&^suspect) {
				return false
			}
		case f&suspect != 0:
			return true
		case ctl.CompareAndSwap(f, f|suspect):
			return false
		}
	}
}

// record is Record's general path: a view change, every view, any series
// state, and the attachment of the own cell.
func (b *Bound) record(st *boundState, v float64) {
	if st.subs != b.m.subs.Load() {
		st = b.rebind()
	}
	if st.subs == nil {
		return
	}
	aggs := st.subs.Aggs
	slots := st.slots()
	for i := range slots {
		slot := &slots[i]
		if s := slot.Load(); s != nil {
			s.add(v, slot)
			continue
		}
		aggs[i].recordSlot(slot, *b.tags, v)
	}
	if st.more == nil && st.ctl.Load() == ownFree {
		b.attachOwn(st)
	}
}

// attachOwn attaches st's own cell to the series in slot0 (set-up cost,
// once per state), unless the view's series are not cells (a float Sum, a
// Distribution, a LastValue) or the series takes no more bound cells
// (then never), or is sealed (then on a later record).
func (b *Bound) attachOwn(st *boundState) {
	e := epochs.sum.Load() // before the check of the list: see ctl
	s := st.slot0.Load()
	if s == nil || !st.ctl.CompareAndSwap(ownFree, ownTrying) {
		return
	}
	a := st.subs.Aggs[0]
	k := a.cellKind()
	switch {
	case k == 0:
		st.ctl.Store(ownDone)
	case a.attachCell(s, &st.own):
		f := ownAttached // at no epoch: recordInt stamps it
		if st.subs == b.m.subs.Load() {
			f = e
		}
		if k == uint32(fastCount) {
			f |= ctlCount
		}
		st.ctl.Store(f)
	case s.Sealed():
		st.ctl.Store(ownFree)
	default:
		st.ctl.Store(ownDone)
	}
}

// Measure returns the bound measure.
func (b *Bound) Measure() *Measure { return b.m }
