package debugstats

import (
	"math"
	"testing"
	"time"

	"github.com/zerostat/zerostat/view"
)

func TestQuantile(t *testing.T) {
	bounds := []float64{10, 20, 30}
	for _, c := range []struct {
		name     string
		buckets  []int64
		min, max float64
		q, want  float64
	}{
		// 5, 15×8, 25: ranks 5, 9 and 9.9 of 10.
		{"p50 mid bucket", []int64{1, 8, 1, 0}, 5, 25, 0.5, 15},
		{"p90 top of bucket", []int64{1, 8, 1, 0}, 5, 25, 0.9, 20},
		{"p99 clamped to max", []int64{1, 8, 1, 0}, 5, 25, 0.99, 24.5},
		// First bucket (-Inf, 10): its lower edge is the min.
		{"first bucket from min", []int64{4, 0, 0, 0}, 2, 8, 0.5, 5},
		// Last bucket [30, +Inf): its upper edge is the max.
		{"last bucket to max", []int64{0, 0, 0, 2}, 40, 50, 1, 50},
		{"one value", []int64{0, 1, 0, 0}, 12, 12, 0.99, 12},
		{"skips empty buckets", []int64{1, 0, 0, 1}, 1, 100, 0.75, 65},
	} {
		var n int64
		for _, b := range c.buckets {
			n += b
		}
		d := &view.DistributionData{Count: n, Min: c.min, Max: c.max, CountPerBucket: c.buckets}
		if got := quantile(bounds, d, c.q); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: quantile(%v) = %v; want %v", c.name, c.q, got, c.want)
		}
	}
	if got := quantile(bounds, &view.DistributionData{CountPerBucket: make([]int64, 4)}, 0.5); !math.IsNaN(got) {
		t.Errorf("empty: got %v; want NaN", got)
	}
}

func TestBarChart(t *testing.T) {
	b := []float64{10, 20, 30}
	d := &view.DistributionData{Count: 10, Min: 5, Max: 25, CountPerBucket: []int64{1, 8, 1, 0}}
	c := barChart(b, d)
	if len(c.Bars) != 4 {
		t.Fatalf("%d bars; want 4", len(c.Bars))
	}
	// The fullest bucket fills the plot (less 2 px); the empty one is a stub.
	if h := c.Bars[1].H; h != plotHeight-2 {
		t.Errorf("fullest bar %v high; want %v", h, plotHeight-2)
	}
	if !c.Bars[3].Zero || c.Bars[3].H != 1 {
		t.Errorf("empty bucket: %+v; want a 1 px stub", c.Bars[3])
	}
	if c.Bars[0].H != 6.8 { // 1/8 of 54
		t.Errorf("bar 0 %v high; want 6.8", c.Bars[0].H)
	}
	for i, want := range []string{"< 10: 1 (10.0%)", "[10, 20): 8 (80.0%)", "[20, 30): 1 (10.0%)", "≥ 30: 0 (0.0%)"} {
		if c.Bars[i].Title != want {
			t.Errorf("bar %d: %q; want %q", i, c.Bars[i].Title, want)
		}
	}
	if len(c.Ticks) != 3 || c.Ticks[2].Text != "30" {
		t.Errorf("ticks %+v; want the 3 bounds", c.Ticks)
	}
	// p50 = 15: half-way through bar 1; p99 = 24.5: 45% through bar 2.
	if len(c.Marks) != 2 || c.Marks[0].X != round1(chartPad+22+9) || c.Marks[1].X != round1(chartPad+44+0.9*barWidth) {
		t.Errorf("marks %+v", c.Marks)
	}
	// Wide labels are thinned out.
	wide := barChart([]float64{1000, 2500, 5000, 7500}, &view.DistributionData{CountPerBucket: make([]int64, 5)})
	if len(wide.Ticks) != 2 || wide.Ticks[0].Text != "1k" || wide.Ticks[1].Text != "5k" {
		t.Errorf("wide ticks %+v; want 1k and 5k", wide.Ticks)
	}
	if len(wide.Marks) != 0 {
		t.Errorf("empty distribution has marks %+v", wide.Marks)
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {3, "3"}, {-42, "-42"}, {1234567, "1234567"},
		{12.3456, "12.35"}, {0.5, "0.5"}, {0.012345, "0.01235"}, {1234.56, "1235"},
		{0.0001234, "0.0001234"}, {2e20, "2e+20"}, {1.5e15, "1.5e+15"},
		{math.NaN(), "NaN"}, {math.Inf(1), "+Inf"}, {math.Inf(-1), "-Inf"},
	} {
		if got := formatFloat(c.v); got != c.want {
			t.Errorf("formatFloat(%v) = %q; want %q", c.v, got, c.want)
		}
	}
	for _, c := range []struct {
		v    float64
		want string
	}{{5, "5"}, {0.25, "0.25"}, {1000, "1k"}, {2500, "2.5k"}, {1 << 20, "1.05M"}, {1e10, "10G"}} {
		if got := compact(c.v); got != c.want {
			t.Errorf("compact(%v) = %q; want %q", c.v, got, c.want)
		}
	}
	for _, c := range []struct {
		n    uint64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1536, "1.5 KiB"}, {5 << 20, "5.0 MiB"}} {
		if got := formatBytes(c.n); got != c.want {
			t.Errorf("formatBytes(%d) = %q; want %q", c.n, got, c.want)
		}
	}
	for _, c := range []struct {
		d    time.Duration
		want string
	}{{-time.Second, "0s ago"}, {1500 * time.Microsecond, "2ms ago"}, {12400 * time.Millisecond, "12s ago"},
		{192 * time.Second, "3m12s ago"}, {2*time.Hour + 5*time.Minute + 10*time.Second, "2h5m ago"}} {
		if got := ago(c.d); got != c.want {
			t.Errorf("ago(%v) = %q; want %q", c.d, got, c.want)
		}
	}
}

// TestChartOfManyBucketsFits: a distribution of many buckets (Go's runtime
// histograms have dozens) gets narrower bars within maxChart, not a chart
// wider than the page (the demo's /debug/stats was 1,339 px wide at a
// 1,200 px viewport).
func TestChartOfManyBucketsFits(t *testing.T) {
	bounds := make([]float64, 159)
	counts := make([]int64, 160)
	for i := range bounds {
		bounds[i] = float64(i + 1)
		counts[i] = int64(i % 7)
	}
	d := &view.DistributionData{Count: 1, Min: 1, Max: 100, CountPerBucket: counts}
	c := barChart(bounds, d)
	if c.W > maxChart {
		t.Errorf("chart %d px wide; want at most %d", c.W, maxChart)
	}
	last := c.Bars[len(c.Bars)-1]
	if last.X+last.W > float64(c.W) || last.W <= 0 {
		t.Errorf("last bar at %v+%v in a chart of %d px", last.X, last.W, c.W)
	}
}
