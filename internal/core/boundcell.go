package core

import (
	"sync/atomic"
	"unsafe"
)

// Bound cells.
//
// A Bound (a handle) of a measure with one view, a Count or an integer
// Sum, records into a cell of its own, in the handle's own cache line,
// rather than into its series' word: a record then touches one line, the
// handle's, where through the series it touched two, the handle's and
// then the series' (whose address it learnt from the first). With many
// live series that second line is a dependent cache miss: at 100,000
// handles, recorded in a scattered order, an add through the series
// cost 75 ns where an add to the handle's own line cost 7 (the same
// order, this project's VM).
//
// The cell is attached to the series: the series lists it (boundCells),
// and everything that reads or freezes the series' cells does the same to
// it: a read (ReadCount, ReadSum, ReadSumParts) adds it to the word and
// the stripes, a seal seals it, a revival restores it. So a record into a
// bound cell is counted exactly as a record into the series' word is,
// whichever path a later record takes. An attached cell stays attached
// (and keeps its handle reachable) until the series is freed; it never
// moves to another series. A series takes at most maxBoundCells of them
// (handles bound to the same tags beyond that record through the series:
// handles created per request cannot grow a series without bound).

// maxBoundCells is the most bound cells a series takes.
const maxBoundCells = 4

// boundCells are the cells attached to one series, in attachment order
// (nil past the last). Copied on write, under the aggregator's mutex.
type boundCells [maxBoundCells]*atomic.Uint64

// boundCells returns the cells attached to s, nil when there are none (or
// s is not a Count's or an integer Sum's).
func (s *Series) boundCells() *boundCells {
	if s.fast != fastCount && s.fast != fastIntSum {
		return nil // and the overflow series, never cached, never attached
	}
	return (*boundCells)(atomic.LoadPointer(&s.dist))
}

// attachCell attaches c, a Bound's own cell holding 0, to s, a series of
// a (a Count's or an integer Sum's). It reports false, attaching nothing,
// when s is sealed or freed, a is detached, or s has maxBoundCells already.
// Set-up cost, once per handle and series: a's mutex and a 32-byte copy of
// the list.
func (a *Aggregator) attachCell(s *Series, c *atomic.Uint64) bool {
	if s.fast != fastCount && s.fast != fastIntSum {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.detached.Load() || s.Sealed() {
		return false
	}
	var n boundCells
	if old := s.boundCells(); old != nil {
		n = *old
	}
	for i := range n {
		if n[i] == nil {
			n[i] = c
			atomic.StorePointer(&s.dist, unsafe.Pointer(&n))
			return true
		}
	}
	return false
}

// sumCells adds the values of bc's cells to n, a Count's, and reports
// whether none was sealed.
func (bc *boundCells) sumCells(n uint64) (uint64, bool) {
	if bc == nil {
		return n, true
	}
	ok := true
	for _, c := range bc {
		if c == nil {
			break
		}
		w := c.Load()
		ok = ok && !intSealed(w)
		n += w
	}
	return n, ok
}

// addIntPart adds the integer i (an integer Sum's cell, within about
// ±2^61) to hi, lo, keeping what float64(i) and the addition round off in
// lo.
func addIntPart(hi, lo float64, i int64) (float64, float64) {
	x := float64(i)
	n := hi + x
	return n, lo + float64(i-int64(x)) + twoSumErr(hi, x, n)
}

// seal seals bc's cells as Series.seal seals the word (under the
// aggregator's mutex, so no cell is attached meanwhile) and returns the
// values they held.
func (bc *boundCells) seal() []uint64 {
	if bc == nil {
		return nil
	}
	var ws []uint64
	for _, c := range bc {
		if c == nil {
			break
		}
		for {
			old := c.Load()
			if c.CompareAndSwap(old, intSealedWord) {
				ws = append(ws, old)
				break
			}
		}
	}
	return ws
}

// unseal restores bc's cells to ws, the values seal returned.
func (bc *boundCells) unseal(ws []uint64) {
	for i, w := range ws {
		bc[i].Store(w)
	}
}

// Map cells.
//
// A TagMap has cellSlots cells of its own (TagMap.cells), each of which
// works as a Bound's does: cell a.slot%cellSlots, once attached to the
// series of aggregator a that the map's cache holds, takes the map's
// records into a: a record adds to the map's cell
// (in the map's own memory: the context's, for a map tag.New built)
// without loading the series. A kept context records with one dependent
// cache miss fewer, which is most of a record's cost when the live series
// are many.
//
// A map's cell is attached after the map has recorded into a through the
// series mapCellAfter times: a context built per request and dropped
// rarely gets there, so its map (and, for a context that embeds it, the
// context and its parent) is not kept reachable by the series, which
// holds at most maxBoundCells cells anyway. cellOwner[i] tells whose the
// cell is and how far it went: 0 free; then, in the top 29 bits the
// aggregator's slot+1 and in the low 3 a state: 1 to mapCellAfter the
// records counted, mapCellTrying, mapCellAttached (the record path's
// test: cellOwner[i] == a.cellID), mapCellDead (given up for good:
// contention, a full integer sum, a freed series, or no room on it). Of
// two aggregators on one cell (a.slot equal modulo cellSlots), the first
// to count keeps it; the other records through the series, as before.
// Four cells, not one per cache slot: a context's size is most of a
// record's cost with many live series (a map of 8 cells, a 208-byte
// context: 112 to 213 ns at 100,000 series; 4 cells, 160 bytes: 83 to
// 99 ns; the scale benchmark, 3 runs each).
// A cell word names an aggregator by its slot modulo 2^29: a map would
// need to outlive 2^29 views registered after its own to mistake one.

// States of a map cell (the low 3 bits of TagMap.cellOwner).
const (
	mapCellAfter    = 3
	mapCellTrying   = 4
	mapCellAttached = 5
	mapCellDead     = 6
)

// mapCellWord returns the cellOwner word of a in state st.
func mapCellWord(a *Aggregator, st uint32) uint32 { return (a.slot+1)<<3 | st }

// mayAttach reports whether a map's cell whose owner word is w may still
// be attached for a (whose series are cells): free, or a's and counting.
func (a *Aggregator) mayAttach(w uint32) bool {
	return w == 0 || w>>3 == a.cellID>>3 && w&7 < mapCellTrying
}

// countRecord counts a record of m into s, a's series in m's cache, whose
// cell word was w (mayAttach), and attaches m's cell once there were
// mapCellAfter of them before this one. Called only while the cell is not
// attached: at most mapCellAfter+1 times per map and view.
func (m *TagMap) countRecord(a *Aggregator, w uint32, s *Series) {
	i := a.slot % cellSlots
	o := &m.cellOwner[i]
	if w&7 < mapCellAfter {
		o.CompareAndSwap(w, mapCellWord(a, w&7+1))
		return
	}
	if !o.CompareAndSwap(w, mapCellWord(a, mapCellTrying)) {
		return
	}
	switch {
	case !s.overflow && a.attachCell(s, &m.cells[i]):
		o.Store(a.cellID)
	case s.Sealed():
		o.Store(w) // again on the next record
	default:
		o.Store(mapCellWord(a, mapCellDead))
	}
}

// cellFinish is ownFinish for cell i of m, attached for a, after a record
// of v left w in it. Not inlined.
//
//go:noinline
func (m *TagMap) cellFinish(a *Aggregator, i uint32, w uint64, v float64) {
	c := &m.cells[i]
	switch {
	case intSealed(w):
		// The add counted nothing: v goes through the series, revived or
		// succeeded.
		slot := &m.cache[a.slot%cacheSlots]
		if s := slot.Load(); s != nil && s.agg == a {
			s.add(v, slot)
		} else {
			a.recordSlot(slot, m.tags, v)
		}
		if !intSealed(c.Load()) {
			return // revived: the cell with it
		}
	case intSumFull(w):
	default:
		if c.CompareAndSwap(w, w) {
			return
		}
	}
	m.cellOwner[i].Store(mapCellWord(a, mapCellDead))
}
