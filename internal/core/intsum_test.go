package core

import (
	"math"
	"sync"
	"testing"
)

// intSumSeries returns an integer Sum aggregator and its series of one
// tag set, created with v recorded.
func intSumSeries(t *testing.T, v float64) (*Aggregator, *Series) {
	t.Helper()
	a := newTestAgg(testIntSum, []string{"k"}, nil, 0)
	a.RecordTags(tagsOf("k", "v"), v)
	return a, a.AppendSeries(nil)[0]
}

// TestIntegerSumIsExact: an integer Sum keeps the exact sum where a float64
// would round (past 2^53), in its own cell, and ReadSumParts gives its
// rounding to a float64 as lo.
func TestIntegerSumIsExact(t *testing.T) {
	a, s := intSumSeries(t, 1<<53)
	for range 3 {
		a.RecordTags(tagsOf("k", "v"), 1) // each lost in float64: 2^53+1 rounds to 2^53
	}
	if s.Striped() {
		t.Fatal("an integer sum within ±2^61 striped")
	}
	if got := int64(s.word.Load()); got != 1<<53+3 {
		t.Fatalf("own cell holds %d; want %d", got, int64(1<<53+3))
	}
	hi, lo := s.ReadSumParts()
	if hi != float64(1<<53+4) || lo != -1 { // 2^53+3 rounds to even: 2^53+4
		t.Errorf("ReadSumParts = %v, %v; want %v, -1", hi, lo, float64(1<<53+4))
	}
	if got := s.ReadSum(); got != hi {
		t.Errorf("ReadSum = %v; want %v", got, hi)
	}
}

// TestIntegerSumTakesAnyValue: what the own cell cannot take exactly (a
// fraction, a NaN or an infinity, a value or a sum at ±2^61) goes to the
// series' float stripes, and a read adds them to the integer.
func TestIntegerSumTakesAnyValue(t *testing.T) {
	for _, tc := range []struct {
		name string
		vals []float64
		want float64
	}{
		{"fraction", []float64{3, 0.5, 4}, 7.5},
		{"negative fraction", []float64{-3, -0.25}, -3.25},
		{"infinity", []float64{1, math.Inf(1), 2}, math.Inf(1)},
		{"NaN", []float64{1, math.NaN()}, math.NaN()},
		{"huge value", []float64{5, 1 << 62}, 1<<62 + 5},
		{"sum reaching 2^61", []float64{1 << 60, 1 << 60, 1 << 60, -7}, 3<<60 - 7},
		{"negative sum reaching -2^61", []float64{-(1 << 60), -(1 << 60), -3}, -(1 << 61) - 3},
		{"huge first value", []float64{-(1 << 63)}, -(1 << 63)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, s := intSumSeries(t, tc.vals[0])
			for _, v := range tc.vals[1:] {
				a.RecordTags(tagsOf("k", "v"), v)
			}
			got := s.ReadSum()
			if got != tc.want && !(math.IsNaN(got) && math.IsNaN(tc.want)) {
				t.Errorf("sum of %v = %v; want %v", tc.vals, got, tc.want)
			}
			if w := int64(s.word.Load()); intSumFull(uint64(w)) || intSealed(uint64(w)) {
				t.Errorf("own cell %d is past ±2^61", w)
			}
		})
	}
}

// TestIntegerSumAtomicAddPastLimit: an atomic add (tryAdd) that takes the
// own cell to 2^61 or past it is kept (it counted), and its follow-up
// stripes the series, so later records go to float stripes and the cell
// stays far from a seal's value.
func TestIntegerSumAtomicAddPastLimit(t *testing.T) {
	_, s := intSumSeries(t, 0)
	s.word.Store(uint64(intSumMax - 5))
	ok, w := s.tryAdd(10)
	if !ok {
		t.Fatal("tryAdd past 2^61 reported no add")
	}
	if !s.followUp(w) {
		t.Fatal("an add past 2^61 needs no follow-up")
	}
	s.finish(w, 10)
	if !s.Striped() {
		t.Fatal("an add past 2^61 left the series unstriped")
	}
	s.add(1e6, nil)
	if got, want := s.ReadSum(), float64(intSumMax+5)+1e6; got != want {
		t.Errorf("sum = %v; want %v", got, want)
	}
}

// TestIntegerSumProbeStripes: the contention probe samples an integer
// sum's adds whatever their values, even multiples of 64 (whose sums keep
// their low bits), and recorders on several goroutines lose nothing.
func TestIntegerSumProbeStripes(t *testing.T) {
	_, s := intSumSeries(t, 0)
	probes := 0
	for i := range 6400 {
		ok, w := s.tryAdd(64)
		if !ok {
			t.Fatalf("add %d: tryAdd failed on an unstriped series", i)
		}
		if s.followUp(w) {
			probes++
		}
	}
	if probes < 50 || probes > 150 {
		t.Errorf("%d probes in 6,400 adds of 64; want about 100", probes)
	}
	a, s := intSumSeries(t, 0)
	const G, N = 4, 20000
	onGoroutines(G, func(g int) {
		m := NewTagMap(tagsOf("k", "v"))
		for i := range N {
			a.RecordMap(m, float64(g*3+i%5))
		}
	})
	want := 0
	for g := range G {
		for i := range N {
			want += g*3 + i%5
		}
	}
	if got := s.ReadSum(); got != float64(want) {
		t.Errorf("sum %v; want %d (striped %v)", got, want, s.Striped())
	}
}

// onGoroutines runs f(0) to f(n-1) on n goroutines at once and waits for
// them.
func onGoroutines(n int, f func(g int)) {
	var wg sync.WaitGroup
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(g)
		}()
	}
	wg.Wait()
}
