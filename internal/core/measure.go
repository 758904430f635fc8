package core

import (
	"context"
	"sync"
	"sync/atomic"
)

// Measure is the descriptor shared by every stats measure of one name
// (OpenCensus semantics: the first Int64/Float64 call for a name fixes its
// description and unit; later calls with the same name share it).
//
// Its subscriber list is read by every record with one atomic load; it is
// replaced (copy on write) by view registration under regMu.
type Measure struct {
	Name, Description, Unit string

	subs atomic.Pointer[Subs]
}

// Subs is a measure's list of subscribed aggregators, replaced as a whole
// (copy on write) when a view over the measure is registered or
// unregistered: a record loads it once, and a Bound compares its pointer
// to tell whether the views changed. Immutable once published.
type Subs struct {
	Aggs []*Aggregator
	// Tagged reports whether some aggregator keys on tags: when none does,
	// RecordOne skips the context lookup and records through first and
	// rest.
	Tagged bool
	// first and rest cache the series of Aggs[0] and Aggs[1:] for
	// RecordOne: the list points at the series itself, one pointer
	// chase from the measure (through the aggregator, then its slot, it
	// was three). Filled on first use, re-pointed by Series.add when the
	// series is evicted, as a TagMap's cache is.
	first atomic.Pointer[Series]
	rest  []atomic.Pointer[Series]
	// cell is first's cell word (see cellFinish) when Aggs is one view
	// without tags whose series are Counts or integer Sums.
	cell atomic.Uint32
}

var (
	measuresMu sync.Mutex
	measures   = map[string]*Measure{}
)

// MeasureFor returns the descriptor for name, creating it with description
// and unit on first use. Safe for concurrent use; set-up cost (a mutex and a
// map lookup), not for the record path.
func MeasureFor(name, description, unit string) *Measure {
	measuresMu.Lock()
	defer measuresMu.Unlock()
	if m, ok := measures[name]; ok {
		return m
	}
	m := &Measure{Name: name, Description: description, Unit: unit}
	measures[name] = m
	return m
}

// Subscribers returns the aggregators of the views over this measure, or nil
// when none is registered. Cost: one atomic load.
func (m *Measure) Subscribers() []*Aggregator {
	p := m.subs.Load()
	if p == nil {
		return nil
	}
	return p.Aggs
}

// Subs returns the current subscriber list, or nil when no view is
// registered. Cost: one atomic load.
func (m *Measure) Subs() *Subs { return m.subs.Load() }

func newSubs(aggs []*Aggregator) *Subs {
	if len(aggs) == 0 {
		return nil
	}
	l := &Subs{Aggs: aggs, rest: make([]atomic.Pointer[Series], len(aggs)-1)}
	for _, a := range aggs {
		l.Tagged = l.Tagged || len(a.Keys()) > 0
	}
	if len(aggs) == 1 && !l.Tagged {
		l.cell.Store(aggs[0].cellKind())
	}
	return l
}

// regMu serialises changes to subscriber lists (view registration).
var regMu sync.Mutex

// Subscribe makes a record into m reach a. Set-up cost.
func (m *Measure) Subscribe(a *Aggregator) {
	regMu.Lock()
	defer regMu.Unlock()
	old := m.Subscribers()
	next := make([]*Aggregator, 0, len(old)+1)
	next = append(next, old...)
	next = append(next, a)
	m.setSubs(newSubs(next))
}

// Unsubscribe removes a; records already past their load of the list may
// still reach a, which is then detached and discards them.
func (m *Measure) Unsubscribe(a *Aggregator) {
	regMu.Lock()
	defer regMu.Unlock()
	old := m.Subscribers()
	next := make([]*Aggregator, 0, len(old))
	for _, x := range old {
		if x != a {
			next = append(next, x)
		}
	}
	m.setSubs(newSubs(next))
}

// setSubs makes l m's subscriber list, then moves the epoch on: a handle
// whose first state was current (RecordInt's fast path) checks the list
// again on its next record. In that order: a state stamped with the new
// epoch has seen the new list (see boundState.ctl).
func (m *Measure) setSubs(l *Subs) {
	m.subs.Store(l)
	nextEpoch()
}

// MeasureRef is a stats measure (an Int64Measure or a Float64Measure is
// one, its only field): what a stats.Measurement points at, so that a
// measurement is two words (the value and this pointer), not four.
type MeasureRef struct {
	Desc  *Measure
	Float bool // a Float64Measure
}

// Measure returns the descriptor; nil for a nil r.
func (r *MeasureRef) Measure() *Measure {
	if r == nil {
		return nil
	}
	return r.Desc
}

// RecordOne records v, a measurement of r (nil: none, ignored), against
// the tags of ctx: stats.Record, which is inlined, calls it once per
// measurement, so that a record is one call (one frame) down to the
// series. Cost: one atomic load when the measure has no view. For views
// without tag keys, no context lookup, and through the series the
// subscriber list caches: for one Count or Sum view over an Int64
// measure, one atomic add to the series' own cell (no load of the series
// first), for a float Sum a compare-and-swap. Otherwise one context
// lookup and RecordMap per view.
// No allocation; safe for concurrent use.
func RecordOne(ctx context.Context, r *MeasureRef, v float64) {
	if r == nil {
		return
	}
	l := r.Desc.subs.Load()
	switch {
	case l == nil:
	case !l.Tagged:
		// The one view's cell (see cellFinish), written out here: in a
		// function of its own it is a second frame on the hottest path
		// (+10.7% for a counter without tags, pinned, n=6).
		if k := l.cell.Load(); k != 0 {
			if d, ok := cellDelta(Kind(k), v); ok {
				if s := l.first.Load(); s != nil {
					if w := s.addCell(d); cellFollowUp(w) {
						s.cellFinish(&l.cell, &l.first, w, v)
					}
					return
				}
			}
		}
		l.recordUntagged(v)
	case len(l.Aggs) == 1:
		a := l.Aggs[0]
		if c, ok := ctx.(*rootCtx); ok {
			// A context built from a root context: its map's own cell,
			// when it is attached to a's series or counts records (mapcell.go);
			// one load and a compare or two otherwise.
			m := &c.TagMap
			if t := m.own.tag.Load(); t != 0 && a.cellK != 0 && (uint32(t>>32) == a.slot+1 || t&0xff < mapCellTrying) {
				m.recordOwn(a, t, v)
				return
			}
			a.RecordMap(m, v)
			return
		}
		a.RecordMap(FromContext(ctx), v)
	default:
		m := FromContext(ctx)
		for _, a := range l.Aggs {
			a.RecordMap(m, v)
		}
	}
}

// recordUntagged is RecordOne's path without tags past the cell: l.Tagged
// is false. For one unstriped view, the cached series' compare-and-swap
// (a float Sum) or atomic add (a Count or an integer Sum that is not a
// cell); otherwise every view, any series state, through the series l
// caches.
func (l *Subs) recordUntagged(v float64) {
	if s := l.first.Load(); s != nil && len(l.rest) == 0 {
		if ok, w := s.tryAdd(v); ok {
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
	}
	l.recordEach(v)
}

// recordEach records v into every aggregator of l, through its slot.
func (l *Subs) recordEach(v float64) {
	for i, a := range l.Aggs {
		slot := &l.first
		if i > 0 {
			slot = &l.rest[i-1]
		}
		a.recordIn(slot, v)
	}
}
