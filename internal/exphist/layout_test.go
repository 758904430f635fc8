package exphist

import (
	"math"
	"slices"
	"testing"
)

// TestLayout: the explicit-bounds layout of exponential histograms
// (bridge/opencensus's rule): bounds, counts, a row at a finer scale
// lowered into a coarser layout, and edges beyond float64's range left
// out.
func TestLayout(t *testing.T) {
	snap := func(maxSize, maxScale int32, vs ...float64) *Snapshot {
		h := MustNew(maxSize, maxScale)
		for _, v := range vs {
			h.Record(v)
		}
		s := new(Snapshot)
		h.Snapshot(s)
		return s
	}
	var l Layout
	s := snap(160, 0, -3, 0, 1.5, 3, 3, 5)
	l.Reset(s)
	if want := []float64{-4, -2, 0, 1, 2, 4, 8}; !slices.Equal(l.Bounds, want) {
		t.Errorf("bounds %v; want %v", l.Bounds, want)
	}
	if got, want := l.Counts(nil, s), []int64{0, 1, 0, 1, 1, 2, 1, 0}; !slices.Equal(got, want) {
		t.Errorf("counts %v; want %v", got, want)
	}
	// Positive only: from 0.
	p := snap(160, 0, 0.75, 3)
	l.Reset(p)
	if want := []float64{0, 0.5, 1, 2, 4}; !slices.Equal(l.Bounds, want) {
		t.Errorf("bounds %v; want %v", l.Bounds, want)
	}
	// A finer row lowered: scale 1's buckets nest in scale 0's.
	fine := snap(160, 1, 0.75, 3)
	if got, want := l.Counts(nil, fine), []int64{0, 0, 1, 0, 1, 0}; !slices.Equal(got, want) {
		t.Errorf("lowered counts %v; want %v", got, want)
	}
	// The largest float: its bucket's upper edge, 2^1024, is left out and
	// the last bucket [2^1023, +Inf) holds it.
	big := snap(160, 0, math.MaxFloat64)
	l.Reset(big)
	if n := len(l.Bounds); l.Bounds[n-1] != 0x1p1023 {
		t.Errorf("bounds end %v; want 2^1023", l.Bounds[n-1:])
	}
	if got := l.Counts(nil, big); got[len(got)-1] != 1 || len(got) != len(l.Bounds)+1 {
		t.Errorf("counts %v", got)
	}
	for i := 1; i < len(l.Bounds); i++ {
		if !(l.Bounds[i] > l.Bounds[i-1]) {
			t.Errorf("bounds not increasing: %v", l.Bounds)
		}
	}
}
