package main

import (
	"math"
	"slices"
	"strconv"

	"github.com/zerostat/zerostat/exporter/wire"
)

// A summary view (aggregation 8) prints in a distribution's six columns
// under its own headings: its count and mean (sum / count), then its
// values of the quantiles 0, 1, 0.5 and 0.99, which its source computed
// (exact, as the source reported them: no "~"), "-" for a quantile it
// does not have or has no value of (NaN), as for an empty row's mean. A
// line after the table says so.
var summaryHeadings = []string{"count", "mean", "min", "max", "p50", "p99"}

// summaryLegend follows a table that has a summary.
const summaryLegend = "summaries: min, max, p50, p99 are the quantiles 0, 1, 0.5, 0.99 as their source reported them (-: none)"

// summaryQuantiles are the quantiles summaryHeadings' last four show.
var summaryQuantiles = [4]float64{0, 1, 0.5, 0.99}

// cellsAt returns the cells of row i of v: rowCells', or a summary's.
func cellsAt(v *wire.View, i int) []string {
	if v.Aggregation != wire.Summary {
		return rowCells(v, &v.Rows[i], expAt(v, i))
	}
	r := &v.Rows[i]
	f := statFormatter(v.Unit)
	mean := math.NaN()
	if r.Count > 0 {
		mean = r.Sum / float64(r.Count)
	}
	cells := []string{strconv.FormatUint(r.Count, 10), f(mean)}
	vals := v.RowQuantiles(i)
	for _, q := range summaryQuantiles {
		if j := slices.Index(v.Bounds, q); j >= 0 && j < len(vals) {
			cells = append(cells, f(vals[j]))
		} else {
			cells = append(cells, "-")
		}
	}
	return cells
}

// sameQuantiles compares the quantile values of row i of a and row j of
// b exactly (nil for other aggregations; a NaN is never equal, as in
// sameRow).
func sameQuantiles(a *wire.View, i int, b *wire.View, j int) bool {
	return slices.Equal(a.RowQuantiles(i), b.RowQuantiles(j))
}
