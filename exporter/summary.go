package exporter

import "github.com/zerostat/zerostat/internal/core"

// A summary view (view.Summary, metric.NewSummary) is aggregation 8 in
// the msgpack format (docs/wire-format.md, "Summary rows"): its bounds
// are its quantiles, a row is [values..., count, sum, quantile_values]
// (version 2: the columns counts, sums and one per quantile), always its
// current values, with a delta temporality too (delta.Read reads a
// summary as it is), and it never has an overflow row.

// wireBounds returns the bounds a view's header carries: a
// distribution's bucket bounds, a summary's quantiles, none otherwise.
func wireBounds(a *core.Aggregator) []float64 {
	if a.Kind() == core.KindSummary {
		return a.Quantiles()
	}
	return a.Bounds()
}
