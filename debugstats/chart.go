package debugstats

import (
	"math"
	"strconv"
	"strings"
	"time"

	quant "github.com/zerostat/zerostat/internal/quantile"
	"github.com/zerostat/zerostat/view"
)

// quantile estimates the q-quantile of a distribution from its buckets
// (internal/quantile: the estimate `zerostat receive` prints too).
func quantile(bounds []float64, d *view.DistributionData, q float64) float64 {
	return quant.Estimate(bounds, d.CountPerBucket, d.Min, d.Max, q)
}

// Chart geometry, in CSS pixels: each bucket is a bar of barWidth with
// barGap between bars; the plot is plotHeight high above a band of
// labelHeight for the bounds.
const (
	barWidth    = 18
	barGap      = 4
	chartPad    = 2
	plotHeight  = 56
	labelHeight = 14
	minChart    = 180
	// maxChart caps a chart's width: a distribution of many buckets (Go's
	// runtime histograms have dozens) gets narrower bars, not a page wider
	// than the screen.
	maxChart = 220
	// charWidth is about the width of a character of the 9 px label font.
	charWidth = 5.5
)

// chart is an inline SVG bar chart of a distribution's bucket counts.
type chart struct {
	W, H, PlotH int
	Bars        []bar
	Ticks       []tick
	Marks       []mark
	Caption     string // the accessible description (role="img")

	step, barW float64 // a bar's pitch and width, for marks
}

type bar struct {
	X, Y, W, H float64
	Zero       bool   // an empty bucket, drawn as a stub
	Title      string // "[10, 20): 7 (35%)"
}

type tick struct {
	X    float64
	Text string
}

type mark struct {
	X     float64
	Class string // "p50", "p99"
	Title string
}

func round1(x float64) float64 { return math.Round(x*10) / 10 }

// barChart lays out d's buckets (bounds b) as bars scaled to the fullest
// bucket, with the bounds labelled between the bars and the p50 and p99
// estimates marked.
func barChart(b []float64, d *view.DistributionData) chart {
	n := len(d.CountPerBucket)
	labels := make([]string, len(b))
	for i, x := range b {
		labels[i] = compact(x)
	}
	c := newChart(d.CountPerBucket, uint64(max(d.Count, 0)), func(i int) string { return bucketRange(b, i) }, labels)
	if d.Count > 0 {
		for _, q := range chartQuantiles {
			v := quantile(b, d, q.q)
			c.mark(position(b, d, v, c.step, c.barW), q.name, v)
		}
	}
	c.Caption = "histogram of " + strconv.Itoa(n) + " buckets, " + strconv.FormatInt(d.Count, 10) + " values"
	return c
}

// chartQuantiles are the estimates a chart marks.
var chartQuantiles = []struct {
	q    float64
	name string
}{{0.5, "p50"}, {0.99, "p99"}}

// newChart lays out bars of the given counts, scaled to the fullest, each
// titled by title(i) with its share of total; labels[i] (len(counts)-1 of
// them) labels the edge between bar i and bar i+1, thinned out so that
// labels do not overlap.
func newChart[C int64 | uint64](counts []C, total uint64, title func(i int) string, labels []string) chart {
	n := len(counts)
	step := float64(barWidth + barGap)
	if w := 2*chartPad + float64(n)*step; w > maxChart {
		step = (maxChart - 2*chartPad) / float64(n)
	}
	barW := step * barWidth / (barWidth + barGap)
	c := chart{PlotH: plotHeight, H: plotHeight + labelHeight, step: step, barW: barW}
	c.W = max(minChart, int(2*chartPad+float64(n)*step))
	var peak C
	for _, v := range counts {
		peak = max(peak, v)
	}
	c.Bars = make([]bar, n)
	for i, v := range counts {
		x := chartPad + float64(i)*step
		h := 1.0 // empty buckets: a stub on the axis
		if v > 0 {
			h = max(2, round1(float64(v)/float64(peak)*(plotHeight-2)))
		}
		pct := 0.0
		if total > 0 {
			pct = 100 * float64(v) / float64(total)
		}
		c.Bars[i] = bar{
			X: round1(x), Y: round1(plotHeight - h), W: round1(barW), H: h, Zero: v <= 0,
			Title: title(i) + ": " + strconv.FormatUint(uint64(max(v, 0)), 10) + " (" + strconv.FormatFloat(pct, 'f', 1, 64) + "%)",
		}
	}
	widest := 0
	for _, l := range labels {
		widest = max(widest, len(l))
	}
	// Label every k-th edge, k such that labels of about charWidth per
	// character, with a gap, do not overlap.
	every := max(1, int(math.Ceil((float64(widest)*charWidth+3)/step)))
	for i, l := range labels {
		if i%every == 0 {
			c.Ticks = append(c.Ticks, tick{X: round1(chartPad + float64(i+1)*step - (step-barW)/2), Text: l})
		}
	}
	return c
}

// mark adds the mark of estimate v, named name ("p50"), at x.
func (c *chart) mark(x float64, name string, v float64) {
	c.Marks = append(c.Marks, mark{X: round1(x), Class: name, Title: name + " ≈ " + formatFloat(v)})
}

// position maps a value to the chart's x: its bucket's bar, and within the
// bar in proportion to where it lies between the bucket's edges (clamped
// to min and max as in quantile).
func position(b []float64, d *view.DistributionData, v, step, barW float64) float64 {
	i := 0
	for i < len(b) && v >= b[i] {
		i++
	}
	lo, hi := d.Min, d.Max
	if i > 0 {
		lo = math.Max(lo, b[i-1])
	}
	if i < len(b) {
		hi = math.Min(hi, b[i])
	}
	frac := 0.5
	if hi > lo {
		frac = math.Min(1, math.Max(0, (v-lo)/(hi-lo)))
	}
	return chartPad + float64(i)*step + frac*barW
}

// bucketRange names bucket i of bounds b: "< b0", "[b0, b1)", "≥ bn".
func bucketRange(b []float64, i int) string {
	switch {
	case len(b) == 0:
		return "all values"
	case i == 0:
		return "< " + formatFloat(b[0])
	case i == len(b):
		return "≥ " + formatFloat(b[i-1])
	}
	return "[" + formatFloat(b[i-1]) + ", " + formatFloat(b[i]) + ")"
}

// compact formats an axis label in at most about 4 characters: 5, 0.25,
// 1k, 2.5k, 10M.
func compact(x float64) string {
	for _, s := range []struct {
		div    float64
		suffix string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if math.Abs(x) >= s.div {
			return strconv.FormatFloat(x/s.div, 'g', 3, 64) + s.suffix
		}
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// formatFloat prints integral values in full (below 1e15) and others with
// up to 4 significant digits, without an exponent between 0.001 and 1e15.
func formatFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case math.Abs(v) < 1e-3 || math.Abs(v) >= 1e15:
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	// Four significant digits in 'f' form: round, then drop the zeros.
	digits := max(0, 3-int(math.Floor(math.Log10(math.Abs(v)))))
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// formatBytes prints a byte count in binary units: 512 B, 3.2 KiB, 1.5 MiB.
func formatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatUint(n, 10) + " B"
	}
	v, i := float64(n), -1
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + "KMGTP"[i:i+1] + "iB"
}

// ago prints a duration coarsely: 850ms, 12s, 3m12s, 2h5m.
func ago(d time.Duration) string {
	switch {
	case d < 0:
		return "0s ago"
	case d < time.Second:
		return d.Round(time.Millisecond).String() + " ago"
	case d < time.Hour:
		return d.Round(time.Second).String() + " ago"
	}
	return strings.TrimSuffix(d.Round(time.Minute).String(), "0s") + " ago"
}
