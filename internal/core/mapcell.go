package core

import (
	"sync/atomic"
	"unsafe"
)

// Map cells.
//
// A context kept and recorded through many times (a context per route,
// per tenant, per worker, built once with tag.New from
// context.Background()) reaches its series through its map's series
// cache: a record reads the context's line to learn the series' address,
// then adds to the series' line. With many live series both lines miss,
// and the second miss waits for the first: on this project's VM, at
// 100,000 live series in a scattered order, 194 ns a record against 40 ns
// for a handle, which adds to a cell in its own line.
//
// So such a map records into a cell of its own, as a handle does
// (boundcell.go, one mechanism): once the map has recorded 3 times
// through the series of one view (a Count or an integer Sum, the one view
// of its measure), its cell is attached to that series, and later records
// of that view add to the cell, whose address is an offset from the
// context's: the add no longer waits for a load. Everything that reads,
// seals or revives the series does the same to the cell, so a record into
// it counts exactly as a record into the series does. Measured
// (BenchmarkScale, pinned, this VM): at 100,000 live series 194 -> 90 ns
// a record, at 1,000,000 303 -> 160 ns, at 10,000 40 -> 19 ns.
//
// Which maps:
//   - A map of its own built from context.Background() or context.TODO()
//     (tag.New's miss path; the context is a rootCtx, which a record tells
//     by its type word). Not a map of another parent's context: an
//     attached cell keeps its map, and the map its context's parent,
//     reachable until the series is freed, and a request's context must
//     not stay alive with a series. Not a map of the map cache (shared by
//     requests on every core, whose records would contend on the cell).
//   - Recorded 3 times through the series, so that a map built per event
//     and dropped attaches nothing (a mutex, and a slot of the series'
//     maxBoundCells).
//   - Into one view only: a map that records into a second view of Count
//     or integer Sum while it counts gives its cell up for good. Its
//     records into the other views would each pay for the check of the
//     cell (a context kept for 8 counters, recorded in turn: +19% a
//     record, pinned); views of other aggregations do not count.
//
// A series takes at most maxBoundCells cells, handles' and maps'
// together; past that, maps record through the series. Recorders on
// several cores sharing a kept context give its cell up (two probes of
// ownFinish in a row, twoStrikes) for the series, whose stripes keep
// them apart.
//
// Cost: 16 bytes a map (tag.New's context with 2 tags: 240 bytes, was
// 224); on the record path of a root context one load and a compare or
// two of the map's tag word, on the line the record reads anyway; on a
// snapshot, one more line a series for each attached cell (BenchmarkScale's
// collect at 1M series: 94 -> 147 ns a series, flat from 100k).

// mapCell is a TagMap's own cell and its state.
type mapCell struct {
	// w is the cell: it holds 0 until attached, then what the records it
	// took add up to (intSealed while its series is sealed).
	w atomic.Uint64
	// tag is the cell's course. Its high 32 bits name the view it counts
	// records of, or whose series the cell is attached to (mapCellView:
	// the aggregator's slot + 1; 0 for none yet); bits 8-15 the cell's
	// kind once attached; bit 16 mapCellSuspect; its low byte the state:
	// mapCellNone (a tag of 0: a map that takes no cell, or gave it up),
	// mapCellFree plus the records counted, mapCellTrying,
	// mapCellAttached.
	tag atomic.Uint64
}

// The low byte of mapCell.tag.
const (
	mapCellNone     = 0
	mapCellFree     = 1 // + the records counted, below mapCellAttachAt
	mapCellAttachAt = 3 // the records through the series that attach the cell
	mapCellTrying   = mapCellFree + mapCellAttachAt
	mapCellAttached = mapCellTrying + 1

	mapCellSuspect = 1 << 16 // an attached cell's first strike (twoStrikes)
)

// mapCellView returns the high 32 bits of a tag naming a's view: its slot
// + 1, unique among live aggregators, never 0.
func mapCellView(a *Aggregator) uint64 { return uint64(a.slot+1) << 32 }

// mapCellTag returns the tag of a cell attached to a series of a, whose
// series are cells of kind k (fastCount, fastIntSum).
func mapCellTag(a *Aggregator, k uint32) uint64 {
	return mapCellView(a) | uint64(k)<<8 | mapCellAttached
}

// ownCellFor reports whether tag t says the cell is attached to a series
// of a, and the delta a record of v adds to it (ok false: not attached to
// a, or v is not an integer a cell of an integer Sum takes). Inlined.
func ownCellFor(t uint64, a *Aggregator, v float64) (d uint64, ok bool) {
	if t&0xff != mapCellAttached || uint32(t>>32) != a.slot+1 {
		return 0, false
	}
	return cellDelta(Kind(t>>8&0xff), v)
}

// recordOwn records v for m into a, the one view of its measure (its
// series are cells), when m's tag t (RecordOne's load) names a's view or
// counts records: into m's own cell when it is attached to a's series;
// else through the series, counting the record towards the attachment.
// A map that records into a second view while it counts gives its cell
// up, so that only a map recording into one view attaches one: the
// records into its other views would pay for the check (a context kept
// for 8 counters, each recorded in turn: +19% a record, pinned). Not
// inlined: RecordOne stays small for the maps and views with nothing
// here.
//
//go:noinline
func (m *TagMap) recordOwn(a *Aggregator, t uint64, v float64) {
	if d, ok := ownCellFor(t, a, v); ok {
		if w := m.own.w.Add(d); cellFollowUp(w) {
			m.ownFinish(a, w, v)
		}
		return
	}
	a.RecordMap(m, v)
	if c := t & 0xff; c < mapCellFree || c >= mapCellTrying {
		return // attached (v not for the cell), or being attached
	}
	switch view := t &^ (1<<32 - 1); view {
	case 0:
		m.own.tag.CompareAndSwap(t, mapCellView(a)|t+1) // the first view it records into
	case mapCellView(a):
		m.countOwn(a, t)
	default:
		m.own.tag.CompareAndSwap(t, mapCellNone) // a second view
	}
}

// countOwn counts a record of m through a's series (a's series are
// cells, t the tag RecordOne read names a's view and counts), and
// attaches m's cell to the series on the last count.
func (m *TagMap) countOwn(a *Aggregator, t uint64) {
	if t&0xff+1 < mapCellTrying {
		m.own.tag.CompareAndSwap(t, t+1)
		return
	}
	if !m.own.tag.CompareAndSwap(t, mapCellView(a)|mapCellTrying) {
		return // another recorder counted meanwhile
	}
	s := m.cache[a.slot%cacheSlots].Load()
	switch k := a.cellKind(); {
	case s == nil || s.agg != a:
		m.own.tag.Store(mapCellView(a) | mapCellFree) // not cached (overflow, slot taken): count again
	case a.attachCell(s, &m.own.w):
		m.own.tag.Store(mapCellTag(a, k))
	case s.Sealed():
		m.own.tag.Store(mapCellView(a) | mapCellFree) // evicted meanwhile: count again
	default:
		m.own.tag.Store(mapCellNone) // given up: the series takes no more cells, or a is detached
	}
}

// ownFinish does what cellFollowUp found needed after a record of v added
// to m's own cell, attached to a series of a, and left w there: as
// Bound.ownFinish does for a handle's cell. Not inlined.
//
//   - The cell is sealed (its series was evicted): the add counted
//     nothing, and v goes on through the series path, to the revived
//     series (which restored the cell: it goes on taking records) or to
//     its successor. A cell still sealed after that belongs to a freed
//     series: given up, the map records through the series from then on.
//   - An integer Sum's cell reached ±2^61: given up (it keeps its sum).
//   - The probe (one add in 64), and the one before it, found another
//     recorder updated the cell since (twoStrikes): recorders on several
//     cores share the map, and give the cell up for the series, whose
//     stripes keep them apart.
//
//go:noinline
func (m *TagMap) ownFinish(a *Aggregator, w uint64, v float64) {
	switch {
	case intSealed(w):
		a.RecordMap(m, v)
		if !intSealed(m.own.w.Load()) {
			return
		}
	case intSumFull(w):
	default:
		if !twoStrikes(&m.own.w, &m.own.tag, w, mapCellSuspect, 0xff, mapCellAttached) {
			return
		}
	}
	m.own.tag.Store(mapCellNone)
}

// takeOwnCell makes m a map that may attach a cell: its context's parent
// is a root context (or m is the map cache's). A plain store: called
// before m is shared.
func (m *TagMap) takeOwnCell() { *(*uint64)(unsafe.Pointer(&m.own.tag)) = mapCellFree }
