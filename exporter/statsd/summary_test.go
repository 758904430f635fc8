package statsd

import (
	"math"
	"slices"
	"testing"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/race"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// TestSummaryGauges: a summary view is gauges in every dialect and mode:
// <name>.count and .sum (its totals, every export, unchanged too: a
// summary is not read as deltas), one per quantile named
// .<q×100>percentile (a fraction's '.' as '_'), a negative value after
// :0|g, a non-finite one not sent.
func TestSummaryGauges(t *testing.T) {
	m := stats.Float64("sd/pause", "", stats.UnitSeconds)
	k := tag.MustNewKey("route")
	v := &view.View{Name: "sd/pause", Measure: m, Aggregation: view.Summary(0, 0.5, 0.999, 1), TagKeys: []tag.Key{k}}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(v) })
	agg := core.FindView(v.Name).Agg
	mu := tag.Upsert(k, "/a")
	set := func() {
		if err := agg.SetSummary((*core.Mutator)(&mu).Apply(nil), 3, 1.5, []float64{-0.25, 0.5, 0.75, math.NaN()}); err != nil {
			t.Fatal(err)
		}
	}
	dog := []string{
		"sd_pause.count:3|g|#route:/a",
		"sd_pause.sum:1.5|g|#route:/a",
		"sd_pause.0percentile:0|g|#route:/a",
		"sd_pause.0percentile:-0.25|g|#route:/a",
		"sd_pause.50percentile:0.5|g|#route:/a",
		"sd_pause.99_9percentile:0.75|g|#route:/a",
	}
	plain := []string{
		"sd_pause.count.route._a:3|g",
		"sd_pause.sum.route._a:1.5|g",
		"sd_pause.0percentile.route._a:0|g",
		"sd_pause.0percentile.route._a:-0.25|g",
		"sd_pause.50percentile.route._a:0.5|g",
		"sd_pause.99_9percentile.route._a:0.75|g",
	}
	for _, c := range []struct {
		name string
		o    Options
		want []string
	}{
		{"dogstatsd", Options{}, dog},
		{"plain", Options{Dialect: Plain}, plain},
		{"opencensus", Options{OpenCensusDatadog: true}, dog},
	} {
		exports := encodeViews(t, c.o, []string{v.Name}, set, func() {})
		for i, got := range exports {
			got = slices.DeleteFunc(got, func(s string) bool { return s == "" })
			if !slices.Equal(got, c.want) {
				t.Errorf("%s, export %d:\n%q\nwant\n%q", c.name, i, got, c.want)
			}
		}
	}
	if race.Enabled {
		return // the race detector allocates
	}
	// An export of the summary allocates nothing once its buffers have
	// grown (the quantiles' suffixes are built once).
	o := Options{DistributionType: "d"}
	e := newEncoder(&o, true, 1432)
	t.Cleanup(e.tracker.Close)
	views := []*core.View{core.FindView(v.Name)}
	e.views = func() []*core.View { return views }
	e.send = func([]byte, int) error { return nil }
	e.encode()
	if got := testing.AllocsPerRun(20, func() { e.encode() }); got != 0 {
		t.Errorf("%v allocs per export of a summary; want 0", got)
	}
}
