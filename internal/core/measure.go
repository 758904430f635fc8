package core

import (
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
	// Record skips the context lookup and records with RecordUntagged.
	Tagged bool
	// first and rest cache the series of Aggs[0] and Aggs[1:] for
	// RecordUntagged: the list points at the series itself, one pointer
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
	m.subs.Store(newSubs(next))
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
	m.subs.Store(newSubs(next))
}

// RecordUntagged records v into every aggregator of l, none of which keys
// on tags (l.Tagged is false), through the series l caches. Cost for one
// unstriped Count or Sum view: the load of the cached series and one
// atomic add to its own cell (Count, a Sum over an Int64 measure: no load
// of the series first, see cellFinish) or compare-and-swap (a float Sum).
// No allocation; safe for concurrent use.
func (l *Subs) RecordUntagged(v float64) {
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
	l.recordUntagged(v)
}

// recordUntagged is RecordUntagged's general path: every view, any series
// state.
func (l *Subs) recordUntagged(v float64) {
	for i, a := range l.Aggs {
		slot := &l.first
		if i > 0 {
			slot = &l.rest[i-1]
		}
		a.recordIn(slot, v)
	}
}
