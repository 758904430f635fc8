package core

import (
	"math"
	"sync/atomic"
	"time"
	"unsafe"
)

// Series is the aggregate of one tag-value combination of one view.
//
// Count, Sum and LastValue keep one 64-bit word, updated with atomics
// only. A Distribution keeps a distCell (see dist.go). A series starts with
// a single cell; the first time an update finds contention (a failed
// compare-and-swap) it grows one cell per P, each on its own cache lines,
// and recorders then update the cell of the P they run on — the shape of
// Java's LongAdder: cold series stay small, hot ones stop sharing a cache
// line. Readers combine the cells.
type Series struct {
	agg     *Aggregator
	stripes atomic.Pointer[stripes]
	word    atomic.Uint64 // Count, Sum, LastValue
	hash    uint64
	start   int64 // creation time, Unix nanoseconds
	// dist is the first word of the distribution cell (Distribution only)
	// and vids the first of the interned tag value ids in key-name order
	// (0 for an absent key): bare pointers, the aggregator knows their
	// lengths, so a counter series takes 64 bytes.
	dist     *uint64
	vids     *uint32
	id       uint32 // creation index within the aggregator
	overflow bool   // the aggregator's overflow series: counts its records
}

// stripes are the per-P cells of a contended series: words (Count, Sum)
// or distribution cells, each on cache lines of its own.
type stripes struct {
	mask  int
	words []atomic.Uint64 // Count, Sum: P cells, wordsPerLine apart
	dists []distCell      // Distribution: P cells
}

// newSeries creates the series of vals (internal key order) with v
// recorded. Called under a.mu.
func (a *Aggregator) newSeries(h uint64, vals []string, v float64) *Series {
	s := &Series{agg: a, hash: h, start: time.Now().UnixNano(), id: a.nextID}
	a.nextID++
	if len(vals) > 0 {
		vids := make([]uint32, len(vals))
		for i, p := range a.order {
			// Interned once per distinct value (Intern copies it: a value
			// may be a slice of a large request buffer).
			vids[i] = Intern(vals[p])
		}
		s.vids = &vids[0]
	}
	if a.kind == KindDistribution {
		s.dist = &newDistCells(1, len(a.bounds)+1)[0][0]
	}
	s.addTo(&s.word, s.distCell(), v)
	return s
}

func (s *Series) distCell() distCell {
	if s.dist == nil {
		return nil
	}
	return unsafe.Slice(s.dist, dBuckets+len(s.agg.bounds)+1)
}

// Start returns when the series was created.
func (s *Series) Start() time.Time { return time.Unix(0, s.start) }

// ID returns the series' creation index within its aggregator (0, 1, ...).
func (s *Series) ID() uint32 { return s.id }

// ValueIDs returns the interned ids of the tag values in key-name order (0
// for an absent key; Interned() maps them to strings). The caller must not
// modify them.
func (s *Series) ValueIDs() []uint32 {
	if s.vids == nil {
		return nil
	}
	return unsafe.Slice(s.vids, len(s.agg.keys))
}

// NextID returns the ID the next series will get: an upper bound of the
// IDs of the live series.
func (a *Aggregator) NextID() uint32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.nextID
}

// add records v. Cost for an uncontended series: one compare-and-swap
// (Count, Sum), one store (LastValue), or a bound search and the cell's
// lock and unlock (Distribution).
func (s *Series) add(v float64) {
	if s.overflow {
		s.agg.overflowed.Add(1)
	}
	if st := s.stripes.Load(); st != nil {
		p := procID() & st.mask
		if st.dists != nil {
			st.dists[p].add(s.agg.bounds, v)
			return
		}
		s.addTo(&st.words[p*wordsPerLine], nil, v)
		return
	}
	if s.addTo(&s.word, s.distCell(), v) {
		s.inflate()
	}
}

// addTo records v into one cell (w, or d for a distribution) and reports
// whether the update found contention.
func (s *Series) addTo(w *atomic.Uint64, d distCell, v float64) (contended bool) {
	switch s.agg.kind {
	case KindCount:
		return addInt(w, 1)
	case KindSum:
		return addFloat(w, v)
	case KindLastValue:
		w.Store(math.Float64bits(v))
		return false
	}
	return d.add(s.agg.bounds, v)
}

func addInt(p *atomic.Uint64, d uint64) (contended bool) {
	old := p.Load()
	if p.CompareAndSwap(old, old+d) {
		return false
	}
	p.Add(d)
	return true
}

func addFloat(p *atomic.Uint64, d float64) (contended bool) {
	for {
		old := p.Load()
		if p.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+d)) {
			return contended
		}
		contended = true
	}
}

func (s *Series) inflate() {
	if s.stripes.Load() != nil {
		return
	}
	n := stripeCount()
	st := &stripes{mask: n - 1}
	if s.agg.kind == KindDistribution {
		st.dists = newDistCells(n, len(s.agg.bounds)+1)
	} else {
		words := make([]atomic.Uint64, (n+1)*wordsPerLine)
		off := alignOffset(words)
		st.words = words[off : off+n*wordsPerLine]
	}
	s.stripes.CompareAndSwap(nil, st)
}

// ReadCount returns a Count series' value.
func (s *Series) ReadCount() int64 {
	n := s.word.Load()
	if st := s.stripes.Load(); st != nil {
		for p := 0; p <= st.mask; p++ {
			n += st.words[p*wordsPerLine].Load()
		}
	}
	return int64(n)
}

// ReadSum returns a Sum series' value.
func (s *Series) ReadSum() float64 {
	f := math.Float64frombits(s.word.Load())
	if st := s.stripes.Load(); st != nil {
		for p := 0; p <= st.mask; p++ {
			f += math.Float64frombits(st.words[p*wordsPerLine].Load())
		}
	}
	return f
}

// ReadLast returns a LastValue series' value.
func (s *Series) ReadLast() float64 {
	return math.Float64frombits(s.word.Load())
}
