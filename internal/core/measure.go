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

	subs atomic.Pointer[[]*Aggregator]
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
	return *p
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
	m.subs.Store(&next)
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
	if len(next) == 0 {
		m.subs.Store(nil)
		return
	}
	m.subs.Store(&next)
}
