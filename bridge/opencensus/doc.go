// Package opencensus publishes zerostat's views to OpenCensus's
// metricproducer.GlobalManager, so that unchanged OpenCensus contrib
// exporters — Prometheus (contrib.go.opencensus.io/exporter/prometheus),
// Stackdriver, Datadog, ocagent — export them, as they exported
// OpenCensus's own views:
//
//	p := opencensus.Register(opencensus.Options{}) // once, at start-up
//	defer p.Unregister()
//
// It is a module of its own (it requires go.opencensus.io v0.24.0), so
// zerostat's root module stays dependency-free.
//
// # Mapping
//
// Each view registered in zerostat's default meter becomes one
// metricdata.Metric built as OpenCensus's view package builds it
// (stats/view/view_to_metric.go): the view's name and description; the
// unit "1", "ms" or "By" (any other becomes "1", and a Count is always
// "1"); the type CumulativeInt64 for a Count and for a Sum of an Int64
// measure, CumulativeFloat64 for a Sum of a Float64 measure,
// CumulativeDistribution, GaugeInt64 or GaugeFloat64 for a LastValue and
// for an UpDownSum (a sum that may go down, which OpenCensus has not: a
// gauge of its total, never a counter, as zerostat's exporters show it);
// the
// view's tag keys, sorted, as label keys, a row's missing tag as an absent
// label value; per row one time series with the row's start time and one
// point at the read time. A distribution carries its bounds, bucket
// counts, sum (zerostat's exact sum), sum of squared deviations and
// exemplars (view.DistributionData.ExemplarsPerBucket, attachments
// unchanged). A view past its cardinality limit gets one more label key,
// otel.metric.overflow, present ("true") only on its overflow row. Views
// with no rows are left out, as in OpenCensus.
//
// A meter from view.NewMeter is published by its own producer,
// RegisterMeter(m, opts) (OpenCensus's meters add themselves to
// GlobalManager when started; zerostat's root module cannot import
// metricproducer), with the same mapping; each of its metrics carries the
// meter's resource (view.Meter.SetResource) as OpenCensus sets it,
// unless Options.Resource is set.
//
// # Costs
//
// Read is called by the exporters (on each scrape, each push); it costs
// view.RetrieveData of every view plus the conversion, and never blocks
// recorders. Safe for concurrent use.
package opencensus
