package opencensus

import (
	"time"

	"go.opencensus.io/metric/metricdata"

	"github.com/zerostat/zerostat/view"
)

// A summary view (view.Summary, metric.NewSummary) is published by the
// Producer as OpenCensus's summary metric (metricdata.TypeSummary): one
// metricdata.Summary point per row with its count and sum
// (HasCountAndSum) and a Snapshot whose Percentiles map each quantile
// q×100 to its value (OpenCensus's field is in percent; its Count and
// Sum, the window's, are 0: unknown). A quantile 0 is the key 0, which
// OpenCensus documents as outside (0, 100]: its readers take the map as
// it is (OpenCensus's Prometheus exporter divides each key by 100).
// OpenCensus's view.Data has no summary: an Exporter (an OpenCensus
// view.Exporter through the bridge) is not passed a summary view.

// summaryPoint is a summary row as OpenCensus's Summary point.
func summaryPoint(d *view.SummaryData, now time.Time) metricdata.Point {
	pcts := make(map[float64]float64, len(d.Quantiles))
	for i, q := range d.Quantiles {
		if i < len(d.Values) {
			pcts[q*100] = d.Values[i]
		}
	}
	return metricdata.NewSummaryPoint(now, &metricdata.Summary{
		Count: d.Count, Sum: d.Sum, HasCountAndSum: true,
		Snapshot: metricdata.Snapshot{Percentiles: pcts},
	})
}
