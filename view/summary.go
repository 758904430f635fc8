package view

import (
	"math"
	"slices"
	"time"

	"github.com/zerostat/zerostat/internal/core"
)

// Summary is an observed summary: each row holds a count, a sum and the
// value of each of quantiles (increasing, each in [0, 1]; none is valid,
// a summary of count and sum only), all set at once by a callback when a
// snapshot is taken: metric.NewSummary registers such a view with its
// callback. It is Prometheus's summary (client_golang's
// go_gc_duration_seconds, say), OTLP's Summary and OpenCensus's
// metricdata.Summary: the quantiles come from the source (a sketch, the
// runtime's pause history), over whatever window it keeps, and are
// exported as they are, never merged, subtracted or re-aggregated (so a
// summary is never read as deltas: its count and sum are totals).
//
// Records of the view's measure (stats.Record) do not reach a summary:
// Register does not subscribe it to its measure, so they cost it nothing
// and are ignored; only its callback sets its rows (metric.NewSummary's,
// in the default meter: registered by hand, or in a meter from NewMeter,
// a summary view has no rows). A row the callback
// stops reporting keeps its last value until the view is unregistered (a
// summary's rows are never evicted), and a new row past the view's
// cardinality limit is dropped and reported (a summary has no overflow
// row: quantiles of several rows cannot be combined). Register fails on
// a quantile that is NaN, outside 0..1, repeated or not increasing,
// naming it. Its data is *SummaryData.
//
// Every exporter writes it (docs/metric-mapping.md): Prometheus's and
// OpenMetrics's summary (name{quantile="0.5"}, name_sum, name_count)
// and the protobuf exposition's Summary, remote write's series of a
// scraped summary, OTLP's Summary, the msgpack format's aggregation 8,
// the Collector receiver's pdata Summary, OpenCensus's metricdata.Summary
// through the bridge, /debug/stats, and StatsD's gauges (one per
// quantile, and the count and sum). Not in OpenCensus.
func Summary(quantiles ...float64) *Aggregation {
	return &Aggregation{Type: AggTypeSummary, Quantiles: quantiles}
}

// SummaryData is the data of a Summary aggregation: the count and sum of
// the observations the source summarises, and Values[i], the source's
// value of quantile Quantiles[i] (NaN when it has none). Not in
// OpenCensus.
type SummaryData struct {
	Count int64
	Sum   float64
	// Quantiles are the view's quantiles, increasing; the caller must not
	// modify them.
	Quantiles []float64
	Values    []float64
	Start     time.Time
}

func (a *SummaryData) isAggregationData() bool { return true }

// StartTime returns when the row was first set.
func (a *SummaryData) StartTime() time.Time { return a.Start }

func (a *SummaryData) equal(other AggregationData) bool {
	b, ok := other.(*SummaryData)
	return ok && a.Start.Equal(b.Start) && a.Count == b.Count && math.Pow(a.Sum-b.Sum, 2) < epsilon &&
		slices.Equal(a.Quantiles, b.Quantiles) &&
		slices.EqualFunc(a.Values, b.Values, func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) })
}

// summaryData reads a summary series.
func summaryData(a *core.Aggregator, s *core.Series) *SummaryData {
	n, sum, vals := s.ReadSummary(make([]float64, 0, len(a.Quantiles())))
	return &SummaryData{Count: int64(n), Sum: sum, Quantiles: a.Quantiles(), Values: vals, Start: s.Start()}
}
