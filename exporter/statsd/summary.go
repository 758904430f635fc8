package statsd

import (
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/zerostat/zerostat/internal/delta"
)

// A summary view (view.Summary, metric.NewSummary) has no StatsD type:
// its values are gauges, as the other gauges are written (every export,
// a negative value after name:0|g, a non-finite one not sent), in both
// modes: <name>.count and <name>.sum, its totals, and one per quantile,
// <name>.<q×100>percentile (Datadog's percentile naming: 0percentile,
// 50percentile, 99percentile, 100percentile; a fraction's '.' becomes
// '_', 99_9percentile for 0.999). A summary is never read as deltas: its
// count is a total, a gauge, not a counter's change.

// quantileSuffixes caches each quantile's gauge suffix (".50percentile"),
// by the quantile's bits: built once per quantile, then read without
// allocating. Quantiles are few (those of the summaries registered).
var quantileSuffixes struct {
	mu sync.Mutex
	m  map[uint64]string
}

// quantileSuffix returns quantile q's gauge suffix.
func quantileSuffix(q float64) string {
	c := &quantileSuffixes
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.m[math.Float64bits(q)]; ok {
		return s
	}
	if c.m == nil {
		c.m = map[uint64]string{}
	}
	s := "." + strings.ReplaceAll(strconv.FormatFloat(q*100, 'f', -1, 64), ".", "_") + "percentile"
	c.m[math.Float64bits(q)] = s
	return s
}

// summaryGauges writes a summary series' gauges: count, sum, then each
// quantile's value, in the view's quantile order.
func (e *encoder) summaryGauges(qs []float64, rv *delta.Values) {
	e.gauge(".count", float64(rv.Count), -1)
	e.gauge(".sum", rv.Sum, -1)
	for i, x := range rv.Quants {
		e.gauge(quantileSuffix(qs[i]), x, -1)
	}
}
