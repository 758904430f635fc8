package delta

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"testing"

	"github.com/zerostat/zerostat/internal/core"
)

// nonFiniteIntervals are the intervals of TestNonFiniteDistDelta: the
// samples recorded in each, and the delta each must read as (sum, mean
// and M2 of the interval's own samples; buckets of bounds 2.5 and 10).
var nonFiniteIntervals = []struct {
	vs            []float64
	sum, mean, m2 float64
	buckets       string
}{
	{[]float64{1, math.Inf(1)}, math.Inf(1), math.Inf(1), math.NaN(), "[1 0 1]"},
	{[]float64{2, 3}, 5, 2.5, 0.5, "[1 1 0]"},
	{[]float64{math.NaN()}, math.NaN(), math.NaN(), 0, "[0 0 1]"},
	{[]float64{4}, 4, 4, 0, "[0 1 0]"},
	{[]float64{math.Inf(-1), math.Inf(1)}, math.NaN(), math.NaN(), math.NaN(), "[1 0 1]"},
	{[]float64{5}, 5, 5, 0, "[0 1 0]"},
	{[]float64{math.Inf(-1), 6, 7}, math.Inf(-1), math.Inf(-1), math.NaN(), "[1 2 0]"},
	{[]float64{8, 9, 10.5}, 27.5, 27.5 / 3, 19.0 / 6, "[0 2 1]"}, // Σx² - S²/n = 255.25 - 756.25/3
}

// same reports whether a and b are equal, or both NaN.
func same(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

// TestNonFiniteDistDelta: a distribution's delta reads describe each
// interval's own samples: a +Inf, -Inf or NaN makes the sum (and mean) of
// the interval that holds it non-finite, and only that one; later
// intervals of finite samples read their own finite sum, mean and sum of
// squared deviations. Counts and buckets are exact. On an unstriped
// series, a striped one, one evicted (sealed) before each interval's
// records (revived by them) and one evicted after them (read sealed).
// Before: the sums read [+Inf NaN NaN NaN NaN NaN NaN NaN] from the first

// readDistInterval reads one delta interval of a's one series (a
// Distribution) through tr, its buckets into b: the zero Values and b
// cleared when the interval has no point.
func readDistInterval(t *testing.T, tr *Tracker, a *core.Aggregator, b []int64) Values {
	t.Helper()
	tr.Begin()
	defer tr.End()
	st := tr.View(a)
	defer st.Done()
	ss := a.AppendSeries(nil)
	if len(ss) != 1 {
		t.Fatalf("%d series; want 1", len(ss))
	}
	var v Values
	if !Read(core.KindDistribution, ss[0], st, b, &v) {
		v = Values{}
		clear(b)
	}
	return v
}

// interval on.
func TestNonFiniteDistDelta(t *testing.T) {
	for _, shape := range []string{"unstriped", "striped", "revived", "sealed"} {
		t.Run(shape, func(t *testing.T) {
			a := core.NewAggregator(core.KindDistribution, nil, []float64{2.5, 10}, 0)
			tr := NewTracker(0)
			b := make([]int64, 3)
			read := func() Values { return readDistInterval(t, tr, a, b) }
			if shape == "striped" {
				stripe(t, a, func(int) float64 { return 1 })
				if d := read().Dist; math.IsNaN(d.Sum) || math.IsInf(d.Sum, 0) {
					t.Fatalf("history: sum %v", d.Sum)
				}
			}
			var sums []float64
			for i, iv := range nonFiniteIntervals {
				var sealed *core.Series
				if shape == "revived" && len(a.AppendSeries(nil)) == 1 {
					sealed = a.AppendSeries(nil)[0]
					sealed.Evict() // sealed; the next record revives it
				}
				for _, v := range iv.vs {
					a.RecordTags(nil, v)
				}
				if sealed != nil && (sealed.Sealed() || a.AppendSeries(nil)[0] != sealed) {
					t.Fatalf("interval %d: the sealed series was not revived in place", i+1)
				}
				if shape == "sealed" {
					s := a.AppendSeries(nil)[0]
					s.Evict() // read sealed, then freed; the next record makes a new one
					if !s.Sealed() {
						t.Fatalf("interval %d: not sealed", i+1)
					}
				}
				d := read().Dist
				sums = append(sums, d.Sum)
				if d.Count != int64(len(iv.vs)) || fmt.Sprint(b) != iv.buckets {
					t.Errorf("interval %d %v: count %d, buckets %v; want %d, %s", i+1, iv.vs, d.Count, b, len(iv.vs), iv.buckets)
				}
				if !same(d.Sum, iv.sum) || !same(d.Mean, iv.mean) && math.Abs(d.Mean-iv.mean) > 1e-12 ||
					!same(d.M2, iv.m2) && math.Abs(d.M2-iv.m2) > 1e-12 {
					t.Errorf("interval %d %v: sum %v, mean %v, sum_sq_dev %v; want %v, %v, %v", i+1, iv.vs, d.Sum, d.Mean, d.M2, iv.sum, iv.mean, iv.m2)
				}
			}
			t.Logf("delta sums %v", sums)
		})
	}
}

// TestNonFiniteDistCumulative: cumulative reads are the sum of every
// sample, as the running sum is: +Inf from the first +Inf on, NaN from a
// NaN (or both infinities) on; counts, buckets, Min and Max exact.
func TestNonFiniteDistCumulative(t *testing.T) {
	a := core.NewAggregator(core.KindDistribution, nil, []float64{2.5, 10}, 0)
	b := make([]int64, 3)
	var n int64
	for i, c := range []struct {
		vs       []float64
		sum      float64
		min, max float64
		buckets  string
	}{
		{[]float64{1, 2}, 3, 1, 2, "[2 0 0]"},
		{[]float64{math.Inf(1)}, math.Inf(1), 1, math.Inf(1), "[2 0 1]"},
		{[]float64{3}, math.Inf(1), 1, math.Inf(1), "[2 1 1]"},
		{[]float64{math.NaN()}, math.NaN(), 1, math.Inf(1), "[2 1 2]"},
		{[]float64{4}, math.NaN(), 1, math.Inf(1), "[2 2 2]"},
	} {
		for _, v := range c.vs {
			a.RecordTags(nil, v)
		}
		n += int64(len(c.vs))
		var v Values
		Read(core.KindDistribution, a.AppendSeries(nil)[0], nil, b, &v)
		d := v.Dist
		if d.Count != n || !same(d.Sum, c.sum) || d.Min != c.min || d.Max != c.max || fmt.Sprint(b) != c.buckets {
			t.Errorf("read %d: count %d sum %v min %v max %v buckets %v; want %d, %v, %v, %v, %s",
				i+1, d.Count, d.Sum, d.Min, d.Max, b, n, c.sum, c.min, c.max, c.buckets)
		}
		if i > 0 && (!math.IsNaN(d.M2) || d.Mean-d.Mean == 0) {
			t.Errorf("read %d: mean %v, sum_sq_dev %v; want both non-finite", i+1, d.Mean, d.M2)
		}
	}
}

// TestNonFiniteDistDeltaConcurrentSafe: recorders on every P record finite
// and non-finite values into a striped distribution (through a start
// gate); the delta reads count every sample exactly, the interval with
// +Inf and NaN samples reads NaN, and the next interval, finite samples
// only, reads their exact sum. Run under -race.
func TestNonFiniteDistDeltaConcurrentSafe(t *testing.T) {
	a := core.NewAggregator(core.KindDistribution, nil, []float64{0.5}, 0)
	stripe(t, a, func(int) float64 { return 1 })
	tr := NewTracker(0)
	b := make([]int64, 2)
	read := func() Values { return readDistInterval(t, tr, a, b) }
	read()
	const g, per = 8, 2000
	run := func(value func(g, i int) float64) {
		gate := make(chan struct{})
		var wg sync.WaitGroup
		for k := range g {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				for i := range per {
					a.RecordTags(nil, value(k, i))
					if i%64 == 0 {
						runtime.Gosched()
					}
				}
			}()
		}
		close(gate)
		wg.Wait()
	}
	run(func(k, i int) float64 {
		switch {
		case i%10 == 0:
			return math.Inf(1)
		case i%10 == 1 && k%2 == 0:
			return math.NaN()
		case i%10 == 2:
			return math.Inf(-1)
		}
		return 0 // bucket 0
	})
	// Bucket 1: the +Inf samples (a tenth) and the NaN ones (a tenth of
	// half the recorders); bucket 0 the rest (0 and -Inf).
	d := read().Dist
	if b1 := int64(g*per/10 + g/2*per/10); d.Count != g*per || b[0] != g*per-b1 || b[1] != b1 || !math.IsNaN(d.Sum) {
		t.Errorf("interval 1: count %d buckets %v sum %v; want %d, [%d %d], NaN", d.Count, b, d.Sum, g*per, g*per-b1, b1)
	}
	run(func(k, i int) float64 { return float64(i % 4) }) // 0+1+2+3 per 4 samples
	d = read().Dist
	want := float64(g * per / 4 * 6)
	if d.Count != g*per || d.Sum != want || d.Mean != 1.5 || math.Abs(d.M2-1.25*g*per) > 1e-6 || b[0] != g*per/4 {
		t.Errorf("interval 2: count %d sum %v mean %v sum_sq_dev %v buckets %v; want %d, %v, 1.5, %v, [%d %d]",
			d.Count, d.Sum, d.Mean, d.M2, b, g*per, want, 1.25*g*per, g*per/4, g*per*3/4)
	}
}

// TestNonFiniteRecordDistNDelta: n copies of a non-finite value at once
// (RecordDistN, the collectors' path) count as n records of it do.
func TestNonFiniteRecordDistNDelta(t *testing.T) {
	a := core.NewAggregator(core.KindDistribution, nil, []float64{2.5}, 0)
	tr := NewTracker(0)
	b := make([]int64, 2)
	read := func() core.DistStats { return readDistInterval(t, tr, a, b).Dist }
	a.RecordDistN(nil, 1, 2)
	a.RecordDistN(nil, math.Inf(-1), 3)
	if d := read(); d.Count != 5 || !math.IsInf(d.Sum, -1) || fmt.Sprint(b) != "[5 0]" || !math.IsInf(d.Min, -1) {
		t.Errorf("interval 1: %+v buckets %v; want count 5, sum -Inf, min -Inf, buckets [5 0]", d, b)
	}
	a.RecordDistN(nil, 3, 4)
	if d := read(); d.Count != 4 || d.Sum != 12 || d.Mean != 3 || d.M2 != 0 || fmt.Sprint(b) != "[0 4]" {
		t.Errorf("interval 2: %+v buckets %v; want count 4, sum 12, mean 3, sum_sq_dev 0, buckets [0 4]", d, b)
	}
	var v Values
	Read(core.KindDistribution, a.AppendSeries(nil)[0], nil, b, &v)
	if v.Dist.Count != 9 || !math.IsInf(v.Dist.Sum, -1) {
		t.Errorf("cumulative %+v; want count 9, sum -Inf", v.Dist)
	}
}
