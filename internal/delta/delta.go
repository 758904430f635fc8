// Package delta reads series for exporters: cumulative values as they are,
// or, for delta temporality, the change since the previous read, with the
// per-series state that takes. Every exporter reads series through it, so
// the arithmetic is written once.
package delta

import (
	"math"

	"github.com/zerostat/zerostat/internal/core"
)

// Values are one series' data for an export. Which fields are set depends
// on the aggregation: Count; Sum; Last (LastValue); Dist (Distribution,
// whose bucket counts Read writes into its buckets argument).
type Values struct {
	Count uint64
	Sum   float64
	Last  float64
	Dist  core.DistStats
	// FirstRead is true when the tracker had not read the series before:
	// in delta temporality a distribution's Min and Max (which cannot be
	// un-merged and are always the series' whole life) are then also the
	// interval's.
	FirstRead bool
}

// distFixed is the number of words a distribution's state keeps before its
// bucket counts: count, mean, m2, sum.
const distFixed = 4

// View is the delta state of one view: per series (by core.Series.ID) the
// raw values last read.
type View struct {
	seen   uint64
	stride int
	prev   []uint64
	// Last is free for the exporter: the end of the previous export of the
	// view, for instance (OTLP's start time of the next interval).
	Last int64
}

// Tracker keeps the delta state of every view an exporter reads. The zero
// value is not usable; a nil *Tracker means cumulative. Not safe for
// concurrent use (an exporter serialises its exports).
type Tracker struct {
	cycle uint64
	views map[*core.Aggregator]*View
}

// NewTracker returns a tracker for delta temporality.
func NewTracker() *Tracker { return &Tracker{views: map[*core.Aggregator]*View{}} }

// Begin starts an export cycle.
func (t *Tracker) Begin() {
	if t != nil {
		t.cycle++
	}
}

// View returns the state of the view of a, creating it, and marks the view
// seen in this cycle. It returns nil on a nil Tracker (cumulative).
func (t *Tracker) View(a *core.Aggregator) *View {
	if t == nil {
		return nil
	}
	v := t.views[a]
	if v == nil {
		v = &View{stride: 1}
		if a.Kind() == core.KindDistribution {
			v.stride = distFixed + len(a.Bounds()) + 1
		}
		t.views[a] = v
	}
	v.seen = t.cycle
	return v
}

// End forgets the views not seen in this cycle (unregistered).
func (t *Tracker) End() {
	if t == nil {
		return
	}
	for a, v := range t.views {
		if v.seen != t.cycle {
			delete(t.views, a)
		}
	}
}

// Read reads s (of an aggregation of kind; buckets has len(bounds)+1 for a
// distribution) into out, through the view state st (nil: cumulative), and
// reports whether the series has anything to say: with delta temporality,
// a series that did not change is left out (a last value always has
// something to say). It does not allocate once st has grown to the series'
// ID.
func Read(kind core.Kind, s *core.Series, st *View, buckets []int64, out *Values) bool {
	*out = Values{FirstRead: true}
	var prev []uint64
	if st != nil {
		i := int(s.ID()) * st.stride
		if need := i + st.stride; need > len(st.prev) {
			st.prev = append(st.prev, make([]uint64, need-len(st.prev))...)
		}
		prev = st.prev[i : i+st.stride]
	}
	switch kind {
	case core.KindCount:
		c := uint64(s.ReadCount())
		if prev != nil {
			c, prev[0] = c-prev[0], c
			out.Count = c
			return c != 0
		}
		out.Count = c
		return true
	case core.KindSum:
		v := s.ReadSum()
		if prev != nil {
			d := v - math.Float64frombits(prev[0])
			prev[0] = math.Float64bits(v)
			out.Sum = d
			return d != 0
		}
		out.Sum = v
		return true
	case core.KindLastValue:
		out.Last = s.ReadLast()
		return true
	}
	d := s.ReadDist(buckets)
	if prev != nil {
		before := core.DistStats{Count: int64(prev[0]), Mean: math.Float64frombits(prev[1]),
			M2: math.Float64frombits(prev[2]), Sum: math.Float64frombits(prev[3])}
		prev[0], prev[1], prev[2], prev[3] = uint64(d.Count), math.Float64bits(d.Mean), math.Float64bits(d.M2), math.Float64bits(d.Sum)
		for i := range buckets {
			c := buckets[i]
			buckets[i] -= int64(prev[distFixed+i])
			prev[distFixed+i] = uint64(c)
		}
		out.FirstRead = before.Count == 0
		d = core.Sub(d, before)
		if d.Count == 0 {
			return false
		}
	}
	out.Dist = d
	return true
}
