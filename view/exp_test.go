package view_test

import (
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/internal/exphist"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// TestExponentialDistributionData: RetrieveData of an exponential view
// is a single histogram of what was recorded, per tag set, with the
// specification's buckets.
func TestExponentialDistributionData(t *testing.T) {
	m := stats.Float64("exp/data", "", stats.UnitMilliseconds)
	register(t, &view.View{Measure: m, Aggregation: view.ExponentialDistribution(20, 10), TagKeys: []tag.Key{keyA}})
	want := map[string]*exphist.Histogram{"x": exphist.MustNew(20, 10), "y": exphist.MustNew(20, 10)}
	r := rand.New(rand.NewSource(1))
	for i := range 3000 {
		val := []string{"x", "y"}[i%2]
		v := math.Exp(r.NormFloat64() * 3)
		switch i % 11 {
		case 0:
			v = 0
		case 1:
			v = -v
		case 2:
			v = math.NaN() // ignored
		}
		stats.Record(ctxWith(t, tag.Upsert(keyA, val)), m.M(v))
		want[val].Record(v)
	}
	rs := rows(t, "exp/data")
	if len(rs) != 2 {
		t.Fatalf("%d rows", len(rs))
	}
	for _, row := range rs {
		d, ok := row.Data.(*view.ExponentialDistributionData)
		if !ok {
			t.Fatalf("data %T", row.Data)
		}
		var w exphist.Snapshot
		want[row.Tags[0].Value].Snapshot(&w)
		if d.Count != int64(w.Count) || d.ZeroCount != int64(w.ZeroCount) || d.Scale != w.Scale ||
			d.Min != w.Min || d.Max != w.Max || d.Sum != w.Sum ||
			d.PositiveOffset != w.Positive.Offset || !slices.Equal(d.PositiveCounts, int64s(w.Positive.Counts)) ||
			d.NegativeOffset != w.Negative.Offset || !slices.Equal(d.NegativeCounts, int64s(w.Negative.Counts)) {
			t.Errorf("%v: %+v\nwant %+v", row.Tags, d, w)
		}
		if d.Scale >= 10 || d.Count == 0 || len(d.NegativeCounts) == 0 || d.ZeroCount == 0 {
			t.Errorf("%v: the values were meant to downscale and reach every range: %+v", row.Tags, d)
		}
		if d.Start.IsZero() || d.StartTime() != d.Start {
			t.Errorf("start %v", d.Start)
		}
	}
}

func int64s(c []uint64) []int64 {
	out := make([]int64, len(c))
	for i, x := range c {
		out[i] = int64(x)
	}
	return out
}

// TestExponentialDistributionBadInput: sizes out of range fail Register
// naming the argument; the defaults are filled in; registering the same
// view again is a no-op, a different size an error.
func TestExponentialDistributionBadInput(t *testing.T) {
	m := stats.Float64("exp/bad", "", stats.UnitMilliseconds)
	for _, tc := range []struct {
		size, scale int32
		want        string
	}{
		{1, 20, "maxSize 1 is below 2"},
		{-5, 20, "maxSize -5 is below 2"},
		{160, 21, "maxScale 21 is outside -10..20"},
		{160, -11, "maxScale -11 is outside -10..20"},
	} {
		err := view.Register(&view.View{Name: "exp/bad", Measure: m, Aggregation: view.ExponentialDistribution(tc.size, tc.scale)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ExponentialDistribution(%d, %d): %v; want %q", tc.size, tc.scale, err, tc.want)
		}
	}
	register(t, &view.View{Name: "exp/bad", Measure: m, Aggregation: view.ExponentialDistribution(0, 0)})
	if err := view.Register(&view.View{Name: "exp/bad", Measure: m, Aggregation: view.ExponentialDistribution(160, 20)}); err != nil {
		t.Errorf("the defaults spelled out: %v", err)
	}
	if err := view.Register(&view.View{Name: "exp/bad", Measure: m, Aggregation: view.ExponentialDistribution(160, 0)}); err == nil {
		t.Error("a different maxScale under the same name was accepted")
	}
	if got := view.AggTypeExponentialDistribution.String(); got != "ExponentialDistribution" {
		t.Errorf("String %q", got)
	}
	// maxScale 0 with a size: scale 0 (not the default 20).
	m0 := stats.Float64("exp/scale0", "", stats.UnitMilliseconds)
	register(t, &view.View{Measure: m0, Aggregation: view.ExponentialDistribution(160, 0)})
	stats.Record(ctxWith(t), m0.M(3))
	if d := rows(t, "exp/scale0")[0].Data.(*view.ExponentialDistributionData); d.Scale != 0 || d.PositiveOffset != 1 {
		t.Errorf("scale %d offset %d; want 0, 1 (2 < 3 <= 4)", d.Scale, d.PositiveOffset)
	}
}
