package core

import "sync/atomic"

// Bound is a measure bound to a tag set: the series of each view over the
// measure are resolved once and kept, so a record is an atomic load or
// two and the series update, with no context lookup, no hashing and no
// shared cache slot (stats.Int64Handle and Float64Handle wrap it).
//
// Concurrency protocol: state is replaced as a whole (copy on write) when
// the measure's subscriber list changes (a view registered or unregistered,
// possibly the same view again: a new Aggregator), detected by comparing
// the list pointer on every record. Each slot caches the series of one
// aggregator for these tags; it is filled on first use, and re-pointed by
// Series.add when the series it held was evicted and freed (the record goes
// to the revived series or its successor, as through a TagMap cache).
// Racing rebinds each install a valid state; the slots are caches only, so
// a record through a discarded state still reaches the right series. Safe
// for concurrent use; records never lock unless they create a series.
//
// Layout: a record reads st, m, the state and its slot, then the series.
// The first state lives in the Bound itself and keeps the slots of up to
// two views inline, so that a handle is one 96-byte allocation whose first
// 48 bytes are all a record of one view reads of it (before: the handle, its state and
// the slots array, three allocations and as many cache misses per record
// when the handles are many and cold).
type Bound struct {
	st    atomic.Pointer[boundState]
	m     *Measure
	first boundState // st's first value
	tags  []Tag      // a private copy: the handle does not keep the caller's map
}

type boundState struct {
	// What a record of one view reads first: 41 bytes, in the Bound's
	// first cache line for its first state.
	inline [2]atomic.Pointer[Series] // slots when there are at most 2 views
	subs   *Subs
	one    bool // one view: slots is inline[:1]
	// cell is inline[0]'s cell word (see cellFinish): the one view's fast
	// code while its series is a Count or an integer Sum, unstriped.
	cell atomic.Uint32

	slots []atomic.Pointer[Series] // slots[i] belongs to subs.Aggs[i]
}

// Bind returns a Bound of m to a copy of tags (internal order, unique keys,
// as a TagMap holds them). Set-up cost: two allocations, more when views
// change.
func (m *Measure) Bind(tags []Tag) *Bound {
	b := new(Bound)
	b.Init(m, tags)
	return b
}

// Init sets up b, a zero Bound (embedded by value in a handle, saving a
// pointer hop per record), as Bind would. Not safe for concurrent use.
func (b *Bound) Init(m *Measure, tags []Tag) {
	b.m, b.tags = m, append([]Tag(nil), tags...)
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
	subs := b.m.subs.Load()
	st.subs = subs
	if subs != nil {
		if n := len(subs.Aggs); n <= len(st.inline) {
			st.slots = st.inline[:n]
		} else {
			st.slots = make([]atomic.Pointer[Series], n)
		}
		st.one = len(subs.Aggs) == 1
		if st.one {
			st.cell.Store(subs.Aggs[0].cellKind())
		}
	}
	b.st.Store(st)
	return st
}

// Record records v into every view over the measure, for the bound tags.
// Cost: two atomic loads (the state, the subscriber list) and, per view,
// the load of the kept series and its update; the first record after a view
// change resolves the series as Record does. No allocation.
func (b *Bound) Record(v float64) {
	st := b.st.Load()
	// One view over the measure, an unstriped Count or Sum series: the
	// series kept in the state itself (no slice to load first) and one
	// atomic add (Count, integer Sum) or compare-and-swap (float Sum),
	// inlined.
	if s := st.inline[0].Load(); s != nil && st.one && st.subs == b.m.subs.Load() {
		if s.fast == fastDist {
			if s.tryAddDist(v) {
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
		s.add(v, &st.inline[0])
		return
	}
	b.record(st, v)
}

// RecordInt is Record for an integer v (an Int64 measure's). Cost, for
// the one view of a Count or an integer Sum with an unstriped series: the
// loads of the state and the subscriber list, and one atomic add to the
// series' own cell (no load of the series first); otherwise Record's.
func (b *Bound) RecordInt(v int64) {
	st := b.st.Load()
	if k := st.cell.Load(); k != 0 && st.subs == b.m.subs.Load() {
		// cellDelta's rule for an integer v, without its float round
		// trip (cellDelta(k, float64(v)) here: +5.7% on the no-tags
		// handle, pinned, n=6), and without a shared helper with
		// the cell path of RecordOne (a call: +12 to +15%).
		d := uint64(1)
		if k == uint32(fastIntSum) {
			d = uint64(v)
		}
		if s := st.inline[0].Load(); s != nil && d+1<<31 < 1<<32 {
			if w := s.addCell(d); cellFollowUp(w) {
				s.cellFinish(&st.cell, &st.inline[0], w, float64(v))
			}
			return
		}
	}
	b.Record(float64(v))
}

// record is Record's general path: a view change, every view, any series
// state.
func (b *Bound) record(st *boundState, v float64) {
	if st.subs != b.m.subs.Load() {
		st = b.rebind()
	}
	if st.subs == nil {
		return
	}
	aggs := st.subs.Aggs
	for i := range st.slots {
		slot := &st.slots[i]
		if s := slot.Load(); s != nil {
			s.add(v, slot)
			continue
		}
		aggs[i].recordSlot(slot, b.tags, v)
	}
}

// Measure returns the bound measure.
func (b *Bound) Measure() *Measure { return b.m }
