package quantile

import (
	"math"
	"testing"
)

func TestEstimate(t *testing.T) {
	// 10 values in [10,20), 10 in [20,30); min 10, max 29.
	bounds := []float64{10, 20, 30}
	buckets := []uint64{0, 10, 10, 0}
	for _, tc := range []struct{ q, want float64 }{
		{0.25, 15},   // halfway through [10,20)
		{0.5, 20},    // the boundary
		{0.75, 24.5}, // halfway through [20, max=29]
		{1, 29},
	} {
		if got := Estimate(bounds, buckets, 10, 29, tc.q); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Estimate(%v) = %v; want %v", tc.q, got, tc.want)
		}
	}
	if got := Estimate(bounds, []int64{0, 0, 0, 0}, 0, 0, 0.5); !math.IsNaN(got) {
		t.Errorf("empty: %v; want NaN", got)
	}
	if got := Estimate(bounds, []int64{1}, 0, 0, 0.5); !math.IsNaN(got) {
		t.Errorf("mismatched: %v; want NaN", got)
	}
}
