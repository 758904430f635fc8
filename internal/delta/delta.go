// Package delta reads series for exporters: cumulative values as they are,
// or, for delta temporality, the change since the previous read, with the
// per-series state that takes. Every exporter reads series through it, so
// the arithmetic is written once.
package delta

import (
	"fmt"
	"math"
	"time"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/exphist"
)

// Values are one series' data for an export. Which fields are set depends
// on the aggregation: Count; Sum; Last (LastValue); Dist (Distribution,
// whose bucket counts Read writes into its buckets argument); Exp
// (core.KindExponential: a cumulative read, or an interval's values at
// their own scale with their own min and max, see
// core.Series.ReadExpDelta). Read reuses Exp's Counts: an exporter that
// reads every series into one Values allocates nothing once they have
// grown.
type Values struct {
	Count uint64
	Sum   float64
	Last  float64
	Dist  core.DistStats
	Exp   exphist.Snapshot
	// Quants are a summary's (core.KindSummary) quantile values, one per
	// quantile of its aggregator, with its Count and Sum: always the
	// series' current values (a summary is never read as deltas; Read
	// reuses the slice).
	Quants []float64
	// FirstRead is true when the tracker had not read the series before:
	// in delta temporality a distribution's Min and Max (which cannot be
	// un-merged and are always the series' whole life) are then also the
	// interval's.
	FirstRead bool
}

// distFixed is the number of words a distribution's state keeps before its
// bucket counts: count, mean, m2, sum, the rounding error of sum and the
// sum of squares as a double-double (those four of the finite samples),
// and the counts of +Inf, -Inf and NaN samples (see core.DistStats, parts).
const distFixed = 10

// A series' state starts with a meta word: the series' generation (low 16
// bits: a new series at a reused ID starts from zero) and the number of
// consecutive reads that found it unchanged (the bits above).
const (
	genMask   = 1<<16 - 1
	idleShift = 16
)

// View is the delta state of one view: per series (by core.Series.ID) a
// meta word and the raw values last read.
type View struct {
	agg    *core.Aggregator
	mark   *core.ReaderMark // this reader's acknowledgement of seals
	seq    uint64           // the aggregator's SealSeq when this read began
	evict  uint64           // evict after this many unchanged reads (0: never)
	seen   uint64
	born   uint64 // the cycle of the tracker's first read of the view
	stride int
	prev   []uint64
	// rejoined: the tracker was closed and registers again in this read;
	// meanwhile the aggregator may have kept no sums of squares, so this
	// read's deltas take M2 from the totals (core.Sub).
	rejoined bool
	leftOut  bool // see LeftOut
	// evicts: the series this cycle found idle, evicted together by Done
	// (core.Aggregator.EvictAll: one wait for pinned recorders for all).
	evicts []*core.Series
	// exp identifies the tracker to an exponential view's series, which
	// keep each delta reader's undrained values (core.ReadExpDelta): one
	// for the view's life in the tracker, across Close.
	exp *core.ExpReader
	// Last is free for the exporter: the end of the previous export of the
	// view, for instance (OTLP's start time of the next interval).
	Last int64
}

// Tracker keeps the delta state of every view an exporter reads. The zero
// value is not usable; a nil *Tracker means cumulative. Not safe for
// concurrent use (an exporter serialises its exports).
//
// A tracker is a registered delta reader of each view it reads (see
// core.ReaderMark): a series evicted by any reader is freed only once this
// one has read its final values. Close unregisters it.
type Tracker struct {
	cycle      uint64
	evictAfter int
	views      map[*core.Aggregator]*View
}

// NewTracker returns a tracker for delta temporality. With evictAfter > 0,
// a series that reads unchanged evictAfter times in a row is evicted (see
// core.Series.Evict): sealed, read once more with its final values, and
// freed once every delta reader has read it.
func NewTracker(evictAfter int) *Tracker {
	return &Tracker{evictAfter: max(evictAfter, 0), views: map[*core.Aggregator]*View{}}
}

// CheckEvictIdleAfter validates an exporter's EvictIdleAfter option.
func CheckEvictIdleAfter(n int, isDelta bool) error {
	switch {
	case n < 0:
		return fmt.Errorf("EvictIdleAfter %d is negative", n)
	case n > 0 && !isDelta:
		return fmt.Errorf("EvictIdleAfter %d needs Delta temporality: a cumulative reader must keep every series' running total", n)
	}
	return nil
}

// Close unregisters the tracker as a reader of the views it read (an
// exporter that stops): series evicted from then on are freed without
// waiting for it. It keeps its state, and registers again on its next
// read; the final changes of series freed in between are lost to it. Safe
// on nil.
func (t *Tracker) Close() {
	if t == nil {
		return
	}
	for a, v := range t.views {
		if v.mark != nil {
			a.RemoveReader(v.mark)
			v.mark = nil
		}
	}
}

// Begin starts an export cycle.
func (t *Tracker) Begin() {
	if t != nil {
		t.cycle++
	}
}

// View returns the state of the view of a, creating it (and registering
// the tracker as a reader of a), and marks the view seen in this cycle.
// Call it before reading a's series, and Done after reading them all. It
// returns nil on a nil Tracker (cumulative).
func (t *Tracker) View(a *core.Aggregator) *View {
	if t == nil {
		return nil
	}
	v := t.views[a]
	if v == nil {
		v = &View{agg: a, evict: uint64(t.evictAfter), stride: 2, born: t.cycle}
		switch a.Kind() {
		case core.KindDistribution:
			v.stride = 1 + distFixed + len(a.Bounds()) + 1
		case core.KindSum:
			v.stride = 3 // the total and its rounding errors (core.Series.ReadSumParts)
		case core.KindExponential:
			v.stride = 1 // the series keep the reader's state (core.Series.ReadExpDelta)
			v.exp = new(core.ExpReader)
		}
		t.views[a] = v
	}
	// Evictions a read found but whose cycle ended without Done (an
	// export that failed part way) are dropped: the series may have
	// changed since; they are found idle again later.
	clear(v.evicts)
	v.evicts = v.evicts[:0]
	if v.mark == nil { // new, or closed
		v.mark = a.AddReader()
		v.rejoined = v.born != t.cycle
	}
	v.seen = t.cycle
	v.seq = a.SealSeq()
	return v
}

// First reports whether this cycle is the tracker's first read of the
// view: its deltas then cover the series' whole life, from the view's
// start, rather than the interval since the previous export. False on nil
// (cumulative).
func (v *View) First() bool { return v != nil && v.born == v.seen }

// Done says every series of the view has been read since View: the series
// this read found idle are evicted, the seals before View are
// acknowledged, and the series every reader has read sealed are freed.
// Safe on nil (cumulative).
func (v *View) Done() {
	if v == nil {
		return
	}
	if len(v.evicts) > 0 {
		v.agg.EvictAll(v.evicts)
		clear(v.evicts)
		v.evicts = v.evicts[:0]
	}
	if !v.leftOut {
		v.mark.Ack(v.seq)
	}
	v.leftOut = false
	v.rejoined = false
	v.agg.Sweep()
}

// LeftOut says that this cycle's read of the view left series out
// (core.View.AppendSeries of a view whose keys have grown since the reader
// loaded it): Done then acknowledges no seal, so that no sealed series is
// freed before this reader reads it, next cycle. Safe on nil.
func (v *View) LeftOut() {
	if v != nil {
		v.leftOut = true
	}
}

// End forgets the views not seen in this cycle (unregistered).
func (t *Tracker) End() {
	if t == nil {
		return
	}
	for a, v := range t.views {
		if v.seen != t.cycle {
			if v.mark != nil {
				a.RemoveReader(v.mark)
			}
			delete(t.views, a)
		}
	}
}

// CumulativeStart returns when the cumulative values of series s of
// aggregator a began, as every exporter states it: the aggregator's start
// (the view's registration), or, for a series created after a series of
// its view was freed (core.Series.AfterFree), which may restart a freed
// series' values with the same tags, the series' own creation, so that a
// backend sees a reset rather than a decrease. own reports the latter:
// the msgpack exporter then writes the row's start, and the OTLP exporter
// writes the same start time, so both say the same (OpenTelemetry's SDK,
// too, starts a cumulative point at its aggregation's start). The overflow
// series is never freed, and starts with its view. Cost: two atomic loads.
// Safe for concurrent use.
func CumulativeStart(a *core.Aggregator, s *core.Series) (start time.Time, own bool) {
	if s.AfterFree() && s != a.Overflow() {
		return s.Start(), true
	}
	return a.Start(), false
}

// Read reads s (of an aggregation of kind; buckets has len(bounds)+1 for a
// distribution) into out, through the view state st (nil: cumulative), and
// reports whether the series has anything to say: with delta temporality,
// a series that did not change is left out (a last value always has
// something to say). With st, a series found unchanged st's eviction
// threshold times in a row is evicted; a last value, and a sum whose total
// is non-finite, are never found unchanged (a record cannot be seen in
// them), so never evicted. It does not allocate once st has
// grown to the series' ID, except to evict.
func Read(kind core.Kind, s *core.Series, st *View, buckets []int64, out *Values) bool {
	exp, quants := out.Exp, out.Quants // reused
	*out = Values{FirstRead: true, Exp: exp, Quants: quants}
	if kind == core.KindSummary {
		// A state, as a last value: always its current values, always
		// sent, never idle (a summary's series are never evicted), with
		// or without delta state.
		out.Count, out.Sum, out.Quants = s.ReadSummary(quants)
		return true
	}
	if st == nil {
		switch kind {
		case core.KindExponential:
			s.ReadExp(&out.Exp)
		case core.KindCount:
			out.Count = uint64(s.ReadCount())
		case core.KindSum:
			out.Sum = s.ReadSum()
		case core.KindLastValue:
			out.Last = s.ReadLast()
		default:
			out.Dist = s.ReadDist(buckets)
		}
		return true
	}
	i := int(s.ID()) * st.stride
	if need := i + st.stride; need > len(st.prev) {
		st.prev = append(st.prev, make([]uint64, need-len(st.prev))...)
	}
	rec := st.prev[i : i+st.stride]
	if uint16(rec[0]) != s.Gen() { // a new series at a freed one's ID
		clear(rec)
		rec[0] = uint64(s.Gen())
	}
	prev := rec[1:]
	var changed, say bool
	switch kind {
	case core.KindCount:
		c := uint64(s.ReadCount())
		out.Count, prev[0] = c-prev[0], c
		changed, say = out.Count != 0, out.Count != 0
	case core.KindSum:
		v, lo := s.ReadSumParts()
		changed = math.Float64bits(v) != prev[0] || math.Float64bits(lo) != prev[1]
		if math.IsInf(v, 0) || math.IsNaN(v) {
			// A non-finite total absorbs every later record (Inf+x = Inf),
			// so a change cannot be seen and an interval's sum cannot be
			// known: the total itself is sent when it changes (the
			// interval it became non-finite, or flipped sign or to NaN),
			// never Inf-Inf = NaN every cycle, and the series is never
			// judged idle (it may be recorded every interval).
			out.Sum, say = v, changed
			changed = true
		} else {
			// The totals' difference is exact when they are within a
			// factor of 2 (Sterbenz), and their rounding errors are
			// subtracted apart: the interval's sum is not lost in the
			// rounding of a large total.
			out.Sum = (v - math.Float64frombits(prev[0])) + (lo - math.Float64frombits(prev[1]))
			say = changed && out.Sum != 0
		}
		prev[0], prev[1] = math.Float64bits(v), math.Float64bits(lo)
	case core.KindExponential:
		// The interval's own values, drained (core.Series.ReadExpDelta):
		// a NaN or an infinity (not counted, in Dropped) is a change too.
		out.FirstRead = s.ReadExpDelta(st.exp, &out.Exp)
		changed = out.Exp.Count != 0 || out.Exp.Dropped != 0
		say = out.Exp.Count != 0
	case core.KindLastValue:
		// A last value is a state, not a change: it is always sent and
		// never idle, so a constant gauge (build_info 1) is never evicted.
		out.Last = s.ReadLast()
		prev[0] = math.Float64bits(out.Last)
		changed, say = true, true
	default:
		// The finite samples' totals and the counts of non-finite ones,
		// apart (parts): an infinity recorded once makes the sum of its
		// own interval infinite, not Inf-Inf = NaN in every later one.
		d := s.ReadDistParts(buckets)
		before := core.DistStats{Count: int64(prev[0]), Mean: math.Float64frombits(prev[1]),
			M2: math.Float64frombits(prev[2]), Sum: math.Float64frombits(prev[3]),
			SumLo: math.Float64frombits(prev[4]), Q: math.Float64frombits(prev[5]), QLo: math.Float64frombits(prev[6]),
			PosInf: int64(prev[7]), NegInf: int64(prev[8]), NaN: int64(prev[9])}
		prev[0], prev[1], prev[2], prev[3] = uint64(d.Count), math.Float64bits(d.Mean), math.Float64bits(d.M2), math.Float64bits(d.Sum)
		prev[4], prev[5], prev[6] = math.Float64bits(d.SumLo), math.Float64bits(d.Q), math.Float64bits(d.QLo)
		prev[7], prev[8], prev[9] = uint64(d.PosInf), uint64(d.NegInf), uint64(d.NaN)
		for i := range buckets {
			c := buckets[i]
			buckets[i] -= int64(prev[distFixed+i])
			prev[distFixed+i] = uint64(c)
		}
		out.FirstRead = before.Count == 0
		out.Dist = core.Sub(d, before, !st.rejoined)
		changed, say = out.Dist.Count != 0, out.Dist.Count != 0
	}
	if st.evict > 0 {
		idle := rec[0] >> idleShift
		if changed {
			idle = 0
		} else if idle++; idle >= st.evict {
			st.evicts = append(st.evicts, s) // by Done
			idle = 0
		}
		rec[0] = rec[0]&genMask | idle<<idleShift
	}
	return say
}
