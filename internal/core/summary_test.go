package core

import (
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestSummaryQuantilesChecked: every bad quantile list is an error naming
// the bad quantile, never a panic, and only a summary takes quantiles.
func TestSummaryQuantilesChecked(t *testing.T) {
	for _, c := range []struct {
		q    []float64
		want string // "" valid
	}{
		{nil, ""},
		{[]float64{0, 0.25, 0.5, 0.75, 1}, ""},
		{[]float64{0.5, math.NaN()}, "quantile 2 of 2 is NaN"},
		{[]float64{-0.1}, "quantile -0.1 is outside 0..1"},
		{[]float64{0.5, 1.5}, "quantile 1.5 is outside 0..1"},
		{[]float64{math.Inf(1)}, "quantile +Inf is outside 0..1"},
		{[]float64{0.5, 0.5}, "quantile 0.5 is repeated"},
		{[]float64{0.9, 0.5}, "quantiles are not increasing: 0.5 after 0.9"},
	} {
		a := NewAggregator(KindSummary, nil, nil, 0)
		err := a.SetQuantiles(c.q)
		if c.want == "" {
			if err != nil || !slices.Equal(a.Quantiles(), c.q) {
				t.Errorf("%v: %v, quantiles %v", c.q, err, a.Quantiles())
			}
			continue
		}
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: error %v; want %q", c.q, err, c.want)
		}
		if len(a.Quantiles()) != 0 {
			t.Errorf("%v: kept %v", c.q, a.Quantiles())
		}
	}
	d := NewAggregator(KindDistribution, nil, []float64{1}, 0)
	if err := d.SetQuantiles([]float64{0.5}); err != ErrNotSummary {
		t.Errorf("a distribution took quantiles: %v", err)
	}
	if err := d.SetSummary(nil, 1, 1, nil); err != ErrNotSummary {
		t.Errorf("a distribution took a summary: %v", err)
	}
	if d.Quantiles() != nil {
		t.Errorf("a distribution's quantiles: %v", d.Quantiles())
	}
}

// TestSummarySetRead: SetSummary creates a row per tag set holding its
// value, replaces it whole on the next call, copies values, refuses a
// values count other than the quantiles' and a row past the limit, and
// does nothing once detached; Evict leaves a summary's series alone.
func TestSummarySetRead(t *testing.T) {
	a := NewAggregator(KindSummary, []string{"k"}, nil, 2)
	if err := a.SetQuantiles([]float64{0, 0.5, 1}); err != nil {
		t.Fatal(err)
	}
	vals := []float64{1, 2, 3}
	if err := a.SetSummary(tagsOf("k", "a"), 3, 6, vals); err != nil {
		t.Fatal(err)
	}
	vals[0] = 99 // copied: no effect
	if err := a.SetSummary(tagsOf("k", "b"), 0, 0, []float64{math.NaN(), math.NaN(), math.NaN()}); err != nil {
		t.Fatal(err)
	}
	err := a.SetSummary(tagsOf("k", "a"), 4, 10, []float64{1, 2})
	if err == nil || !strings.Contains(err.Error(), "2 quantile values for 3 quantiles") {
		t.Errorf("short values: %v", err)
	}
	if err := a.SetSummary(tagsOf("k", "c"), 1, 1, []float64{1, 1, 1}); !errors.Is(err, ErrSummaryLimit) {
		t.Errorf("a third row past the limit of 2: %v", err)
	}
	ss := a.AppendSeries(nil)
	if len(ss) != 2 || a.Overflow() != nil {
		t.Fatalf("%d series, overflow %v; want 2 and none", len(ss), a.Overflow())
	}
	var buf []float64
	n, sum, got := ss[0].ReadSummary(buf)
	if n != 3 || sum != 6 || !slices.Equal(got, []float64{1, 2, 3}) {
		t.Errorf("a: %d %v %v", n, sum, got)
	}
	n, sum, got = ss[1].ReadSummary(got)
	if n != 0 || sum != 0 || len(got) != 3 || !math.IsNaN(got[0]) {
		t.Errorf("b: %d %v %v", n, sum, got)
	}
	if err := a.SetSummary(tagsOf("k", "a"), 5, 11, []float64{0.5, 1, 9}); err != nil {
		t.Fatal(err)
	}
	if n, sum, got := ss[0].ReadSummary(nil); n != 5 || sum != 11 || !slices.Equal(got, []float64{0.5, 1, 9}) {
		t.Errorf("a replaced: %d %v %v", n, sum, got)
	}
	ss[0].Evict()
	if ss[0].Sealed() {
		t.Error("Evict sealed a summary's series")
	}
	a.Detach()
	if err := a.SetSummary(tagsOf("k", "d"), 1, 1, []float64{1, 1, 1}); err != nil {
		t.Errorf("after Detach: %v", err)
	}
	if a.Len() != 0 {
		t.Errorf("after Detach: %d series", a.Len())
	}
}

// TestSummaryNoQuantiles: a summary of count and sum only.
func TestSummaryNoQuantiles(t *testing.T) {
	a := NewAggregator(KindSummary, nil, nil, 0)
	if err := a.SetSummary(nil, 7, 0.5, nil); err != nil {
		t.Fatal(err)
	}
	if n, sum, got := a.AppendSeries(nil)[0].ReadSummary(nil); n != 7 || sum != 0.5 || len(got) != 0 {
		t.Errorf("%d %v %v", n, sum, got)
	}
}

// TestSummaryConcurrentSetRead: setters on several goroutines (several
// rows, one shared) and readers at the same time; every read is one
// SetSummary's whole value (count k, sum 2k, value i k+i), never a mix,
// and the last read after the setters is the last value each set. Run
// under -race.
func TestSummaryConcurrentSetRead(t *testing.T) {
	a := NewAggregator(KindSummary, []string{"k"}, nil, 0)
	if err := a.SetQuantiles([]float64{0.25, 0.5, 0.75, 1}); err != nil {
		t.Fatal(err)
	}
	const setters, sets = 4, 2000
	var stop atomic.Bool
	var bad atomic.Int64
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			var buf []float64
			for !stop.Load() {
				for _, s := range a.AppendSeries(nil) {
					var n uint64
					var sum float64
					n, sum, buf = s.ReadSummary(buf)
					ok := sum == 2*float64(n) && len(buf) == 4
					for i, v := range buf {
						ok = ok && v == float64(n)+float64(i)
					}
					if !ok {
						bad.Add(1)
					}
				}
			}
		})
	}
	var wg sync.WaitGroup
	for g := range setters {
		wg.Go(func() {
			vals := make([]float64, 4)
			row := []string{"shared", string(rune('a' + g))}
			for k := 1; k <= sets; k++ {
				for i := range vals {
					vals[i] = float64(k) + float64(i)
				}
				for _, r := range row {
					if err := a.SetSummary(tagsOf("k", r), uint64(k), 2*float64(k), vals); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	stop.Store(true)
	readers.Wait()
	if n := bad.Load(); n != 0 {
		t.Errorf("%d reads mixed two values", n)
	}
	ss := a.AppendSeries(nil)
	if len(ss) != setters+1 {
		t.Fatalf("%d series; want %d", len(ss), setters+1)
	}
	strs := Interned()
	for _, s := range ss {
		n, sum, vals := s.ReadSummary(nil)
		if n != sets || sum != 2*sets || !slices.Equal(vals, []float64{sets, sets + 1, sets + 2, sets + 3}) {
			t.Errorf("%s: %d %v %v; want the last value set", strs[s.ValueIDs()[0]], n, sum, vals)
		}
	}
}
