package core

import (
	"errors"
	"sync"
	"weak"

	"github.com/zerostat/zerostat/internal/exphist"
)

// KindExponential is the exponential distribution: OpenTelemetry's base-2
// exponential bucket histogram (internal/exphist), zerostat's addition to
// OpenCensus's kinds (5, after LastValue: not an OpenCensus AggType).
const KindExponential Kind = 5

// expCell is an exponential series' own cell: its histogram, kept in the
// cell so that a record loads one pointer (Series.dist) before locking it,
// and the state its delta readers need (expAcc), created by the first
// delta read.
//
// Delta reads follow the OpenTelemetry SDK's delta exponential histogram,
// whose every interval has the scale of its own values, not the coarser
// scale of the series' history: a histogram cannot be un-merged (a
// bucket of a lower scale does not say which of its two halves its values
// were in), so subtracting two cumulative reads (exphist.Snapshot.Sub)
// would give each interval the scale of everything before it. Instead a
// delta read drains the cells (SnapshotReset: a record lands either in the
// drained interval or in the cell afterwards) and keeps what it drained:
// merged into cum, the series' history, which cumulative readers add to
// the cells; and into each other delta reader's pending, the values it
// has not read yet. A reader's read is its pending plus the interval just
// drained: the values recorded since its previous read, at the scale a
// histogram of those values alone has (exphist.Snapshot.Merge gives the
// scale a single histogram of all the merged values would have). While
// the view has no delta reader nothing is drained, and a read costs
// nothing more than a copy of the cells.
type expCell struct {
	h  exphist.Histogram
	mu sync.Mutex // guards acc, and orders drains with cumulative reads
	// acc is nil until the first delta read.
	acc *expAcc
}

// expAcc is the drained history of an exponential series.
type expAcc struct {
	cum     exphist.Snapshot // every value drained so far
	readers []expPending
}

// expPending is one delta reader's values drained by other readers since
// its last read.
type expPending struct {
	r    weak.Pointer[ExpReader]
	snap exphist.Snapshot
}

// ExpReader identifies one delta reader of exponential series (see
// ReadExpDelta): a reader keeps one for its life, across closes and
// re-registrations, so that its next read holds exactly the values since
// its previous one. A dropped reader's pending values are freed with the
// next drain of each series. Create it with new(ExpReader).
type ExpReader struct {
	// Over 16 bytes: a smaller object would come from the runtime's tiny
	// allocator, which frees a block only when all its objects are dead,
	// and a dropped reader could then seem alive.
	_ [24]byte
}

// ErrNotExponential is returned by SetExponential on an aggregator of
// another kind.
var ErrNotExponential = errors.New("core: not an exponential aggregator")

// SetExponential sets the histogram size of an exponential aggregator's
// series: at most maxSize buckets per sign, scale at most maxScale (see
// exphist.New; its errors name the argument). Call it before the
// aggregator is published. The defaults, until it is called, are
// exphist.DefaultMaxSize and exphist.DefaultMaxScale.
func (a *Aggregator) SetExponential(maxSize, maxScale int32) error {
	if a.kind != KindExponential {
		return ErrNotExponential
	}
	if err := exphist.Check(maxSize, maxScale); err != nil {
		return err
	}
	a.expSize, a.expScale = maxSize, maxScale
	return nil
}

// Exponential returns an exponential aggregator's maxSize and maxScale
// (0, 0 for another kind).
func (a *Aggregator) Exponential() (maxSize, maxScale int32) {
	return a.expSize, a.expScale
}

// newExpCell returns an empty own cell for a series of a.
func (a *Aggregator) newExpCell() *expCell {
	c := new(expCell)
	if err := c.h.Init(a.expSize, a.expScale); err != nil {
		panic(err) // SetExponential validated them
	}
	return c
}

// expCell returns an exponential series' own cell.
func (s *Series) expCell() *expCell { return (*expCell)(s.dist) }

// newExpStripes returns n histograms, one per P.
func (a *Aggregator) newExpStripes(n int) []*exphist.Histogram {
	hs := make([]*exphist.Histogram, n)
	for i := range hs {
		hs[i] = exphist.MustNew(a.expSize, a.expScale)
	}
	return hs
}

// expStripes returns the stripes of s to read: those of a sealed series
// too (read sealed or, revived, live), nil if it has none.
func (s *Series) expStripes() []*exphist.Histogram {
	sp := s.stripes.Load()
	if sp != nil && sp.seal != nil {
		sp = sp.seal.orig
	}
	if sp == nil {
		return nil
	}
	return sp.exps
}

// scratch snapshots for reading stripes: one per concurrent reader.
var expScratch = sync.Pool{New: func() any { return new(exphist.Snapshot) }}

// readCells reads the cells of s into dst, merged (each cell at once:
// a downscale happens wholly before or after its copy), draining them
// when reset is set.
func (s *Series) readCells(dst *exphist.Snapshot, reset bool) {
	c := s.expCell()
	if reset {
		c.h.SnapshotReset(dst)
	} else {
		c.h.Snapshot(dst)
	}
	hs := s.expStripes()
	if len(hs) == 0 {
		return
	}
	tmp := expScratch.Get().(*exphist.Snapshot)
	for _, h := range hs {
		if reset {
			h.SnapshotReset(tmp)
		} else {
			h.Snapshot(tmp)
		}
		dst.Merge(tmp, s.agg.expSize)
	}
	expScratch.Put(tmp)
}

// ReadExp reads an exponential series' cumulative histogram into dst
// (reusing dst's Counts): everything recorded into it, its stripes merged,
// at the scale a single histogram of those values has. Safe for
// concurrent use with records, other reads and a seal. Cost: O(buckets)
// per cell; no allocation once dst's Counts have the capacity (maxSize,
// 3 if it is 2).
func (s *Series) ReadExp(dst *exphist.Snapshot) {
	c := s.expCell()
	c.mu.Lock()
	s.readCells(dst, false)
	if c.acc != nil {
		dst.Merge(&c.acc.cum, s.agg.expSize)
	}
	c.mu.Unlock()
}

// ReadExpDelta reads into dst the values recorded into an exponential
// series since r's previous read of it (its whole life at r's first,
// when first is set), at the scale a histogram of those values alone has,
// with their own min and max: the OpenTelemetry SDK's delta exponential
// histogram. See expCell for how. Safe for concurrent use with records,
// other reads and a seal. Cost: O(buckets) per cell and per other delta
// reader; no allocation once dst's and the readers' Counts have grown.
func (s *Series) ReadExpDelta(r *ExpReader, dst *exphist.Snapshot) (first bool) {
	c := s.expCell()
	size := s.agg.expSize
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.acc == nil {
		c.acc = new(expAcc)
	}
	acc := c.acc
	iv := expScratch.Get().(*exphist.Snapshot)
	s.readCells(iv, true)
	var mine *expPending
	live := acc.readers[:0]
	for i := range acc.readers {
		p := acc.readers[i]
		switch x := p.r.Value(); {
		case x == nil: // dropped: forget its values
			continue
		case x == r:
			live = append(live, p)
			mine = &live[len(live)-1]
		default:
			p.snap.Merge(iv, size)
			live = append(live, p)
		}
	}
	clear(acc.readers[len(live):]) // drop the forgotten snapshots' references
	acc.readers = live
	if mine == nil {
		first = true
		acc.cum.CopyTo(dst)
		acc.readers = append(acc.readers, expPending{r: weak.Make(r)})
	} else {
		mine.snap.CopyTo(dst)
		resetSnapshot(&mine.snap)
	}
	dst.Merge(iv, size)
	acc.cum.Merge(iv, size)
	expScratch.Put(iv)
	return first
}

// resetSnapshot empties s, keeping its Counts' capacity.
func resetSnapshot(s *exphist.Snapshot) {
	p, n := s.Positive.Counts[:0], s.Negative.Counts[:0]
	*s = exphist.Snapshot{}
	s.Positive.Counts, s.Negative.Counts = p, n
}

// addExp records v into cell h. Its result's numbering is addResult's.
func addExp(h *exphist.Histogram, v float64) addResult {
	return addResult(h.Record(v))
}

// sealExp seals the cells of an exponential series (seal, under a.mu):
// records are turned away once those in progress are done; reads go on.
func (s *Series) sealExp(orig *stripes) {
	s.expCell().h.Seal()
	if orig != nil {
		for _, h := range orig.exps {
			h.Seal()
		}
	}
}

// unsealExp undoes sealExp.
func (s *Series) unsealExp(orig *stripes) {
	s.expCell().h.Unseal()
	if orig != nil {
		for _, h := range orig.exps {
			h.Unseal()
		}
	}
}

// The numbering addExp relies on (a constant index out of range fails to
// compile).
var (
	_ = [1]struct{}{}[exphist.Recorded-exphist.Result(addOK)]
	_ = [1]struct{}{}[exphist.Contended-exphist.Result(addContended)]
	_ = [1]struct{}{}[exphist.Sealed-exphist.Result(addSealed)]
)
