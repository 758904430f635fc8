package delta

import (
	"math"
	"testing"

	"github.com/zerostat/zerostat/internal/core"
)

func series(t *testing.T, kind core.Kind, bounds []float64, vs ...float64) (*core.Aggregator, *core.Series) {
	t.Helper()
	a := core.NewAggregator(kind, nil, bounds, 0)
	for _, v := range vs {
		a.RecordTags(nil, v)
	}
	return a, a.AppendSeries(nil)[0]
}

func TestCumulativeReadsAsIs(t *testing.T) {
	_, s := series(t, core.KindSum, nil, 1, 2)
	var v Values
	if !Read(core.KindSum, s, nil, nil, &v) || v.Sum != 3 || !v.FirstRead {
		t.Errorf("cumulative read %+v", v)
	}
	if !Read(core.KindSum, s, nil, nil, &v) || v.Sum != 3 {
		t.Errorf("a second cumulative read %+v; want the same total", v)
	}
}

func TestDeltaCountAndSum(t *testing.T) {
	tr := NewTracker(0)
	for _, kind := range []core.Kind{core.KindCount, core.KindSum} {
		a, s := series(t, kind, nil, 2, 3)
		tr.Begin()
		st := tr.View(a)
		var v Values
		if !Read(kind, s, st, nil, &v) || v.Count+uint64(v.Sum) != map[core.Kind]uint64{core.KindCount: 2, core.KindSum: 5}[kind] {
			t.Errorf("kind %d first delta %+v", kind, v)
		}
		if Read(kind, s, st, nil, &v) {
			t.Errorf("kind %d: an unchanged series has something to say: %+v", kind, v)
		}
		a.RecordTags(nil, 4)
		if !Read(kind, s, st, nil, &v) || v.Count+uint64(v.Sum) != map[core.Kind]uint64{core.KindCount: 1, core.KindSum: 4}[kind] {
			t.Errorf("kind %d next delta %+v", kind, v)
		}
		tr.End()
	}
}

func TestDeltaDistribution(t *testing.T) {
	tr := NewTracker(0)
	a, s := series(t, core.KindDistribution, []float64{10}, 1, 20)
	tr.Begin()
	st := tr.View(a)
	b := make([]int64, 2)
	var v Values
	if !Read(core.KindDistribution, s, st, b, &v) || v.Dist.Count != 2 || !v.FirstRead || b[0] != 1 || b[1] != 1 {
		t.Fatalf("first %+v %v", v, b)
	}
	a.RecordTags(nil, 5)
	a.RecordTags(nil, 7)
	if !Read(core.KindDistribution, s, st, b, &v) || v.Dist.Count != 2 || v.FirstRead || b[0] != 2 || b[1] != 0 {
		t.Fatalf("second %+v %v", v, b)
	}
	// The interval's statistics: values 5 and 7.
	if math.Abs(v.Dist.Mean-6) > 1e-12 || math.Abs(v.Dist.M2-2) > 1e-12 || v.Dist.Sum != 12 {
		t.Errorf("interval stats %+v; want mean 6, m2 2, sum 12", v.Dist)
	}
	// Min and max stay the series' whole life.
	if v.Dist.Min != 1 || v.Dist.Max != 20 {
		t.Errorf("extremes %v %v; want 1 and 20", v.Dist.Min, v.Dist.Max)
	}
}

func TestTrackerForgetsUnseenViews(t *testing.T) {
	tr := NewTracker(0)
	a1, _ := series(t, core.KindCount, nil, 1)
	a2, _ := series(t, core.KindCount, nil, 1)
	tr.Begin()
	tr.View(a1)
	tr.View(a2)
	tr.End()
	tr.Begin()
	tr.View(a1)
	tr.End()
	if _, ok := tr.views[a2]; ok || len(tr.views) != 1 {
		t.Errorf("views %d; the unseen one was not forgotten", len(tr.views))
	}
	var nilTracker *Tracker
	nilTracker.Begin()
	if nilTracker.View(a1) != nil {
		t.Error("a nil tracker returned state")
	}
	nilTracker.End()
}
