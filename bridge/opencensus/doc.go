// Package opencensus publishes zerostat's views to OpenCensus's
// exporters, unchanged, as they exported OpenCensus's own views. It
// publishes them two ways, because OpenCensus's exporters read them two
// ways.
//
// Exporters that read OpenCensus's metricproducer.GlobalManager —
// Prometheus (contrib.go.opencensus.io/exporter/prometheus), Stackdriver,
// ocagent — need a Producer there:
//
//	p := opencensus.Register(opencensus.Options{}) // once, at start-up
//	defer p.Unregister()
//
// Exporters that implement OpenCensus's view.Exporter (ExportView) —
// Datadog's (github.com/DataDog/opencensus-go-exporter-datadog), and any
// a team wrote for itself — are called by OpenCensus's worker with
// OpenCensus's own views only, so registered with OpenCensus's
// view.RegisterExporter they get nothing from zerostat. Register them
// with the bridge instead (see OpenCensus view exporters below):
//
//	dd, err := datadog.NewExporter(datadog.Options{})
//	...
//	opencensus.RegisterExporter(dd) // not view.RegisterExporter(dd)
//	defer opencensus.UnregisterExporter(dd)
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
// # OpenCensus view exporters
//
// RegisterExporter adds an OpenCensus view.Exporter to zerostat's
// default meter through an Exporter, a zerostat view.Exporter that
// converts each report (NewExporter, for a meter from view.NewMeter:
// m.RegisterExporter(opencensus.NewExporter(e))). Each reporting period
// (zerostat's view.SetReportingPeriod, 10 s by default as in OpenCensus;
// OpenCensus's SetReportingPeriod does not change it) the exporter is
// called once per registered view with an OpenCensus view.Data built as
// OpenCensus's worker builds it (stats/view/worker.go, reportView):
//
//   - View: the view's name, description and tag keys (sorted), over an
//     OpenCensus measure of the same type (Int64 or Float64), name,
//     description and unit (OpenCensus's stats.Int64 or stats.Float64 of
//     them: the program's own OpenCensus measure of that name, if it has
//     one), with the aggregation of the same type and bounds — but an
//     UpDownSum, which OpenCensus has not, is a LastValue of its total
//     (a gauge, as the producer publishes it: OpenCensus's exporters show
//     a Sum as a counter, which a total that goes down would break). A
//     DistributionUpperInclusive is a Distribution of the same bounds whose
//     counts keep its own bucket rule: OpenCensus's types cannot say so.
//   - Start: when the view was registered, the same every period; End:
//     the report's time.
//   - Rows: cumulative since the view was registered; a view without rows
//     is reported with none. Tags sorted by key, a missing or empty value
//     left out; CountData, SumData and DistributionData with the row's
//     start time; LastValueData. A DistributionData has the count, min,
//     max, mean, sum of squared deviations, bucket counts and one
//     exemplar slot per bucket (OpenCensus's type, attachments unchanged);
//     its Sum() is OpenCensus's, Mean × Count (not zerostat's exact
//     running sum, which OpenCensus's type cannot carry).
//
// What differs from OpenCensus's worker is what differs between the
// SDKs' view.Exporter: zerostat reports views in name order (OpenCensus
// in map order), reports a view one last time when it is unregistered
// (OpenCensus does not), and gives the overflow row of a view past its
// cardinality limit every key of the view, set to view.OverflowValue (see
// zerostat's view package). TestExporterMatchesOpenCensus records one
// workload into both SDKs and checks that OpenCensus's own example
// exporter (go.opencensus.io/examples/exporter.PrintExporter) prints the
// same through RegisterExporter as through OpenCensus, and that the
// reports are equal field by field.
//
// # Costs
//
// Read is called by the exporters (on each scrape, each push); it costs
// view.RetrieveData of every view plus the conversion, and never blocks
// recorders. An Exporter's ExportView converts one view's report per call
// (a few allocations for the view, one per row, tag and exemplar) on the
// meter's reporting goroutine, which a slow OpenCensus exporter delays,
// as OpenCensus's worker, but never a recorder. Safe for concurrent use.
//
// Importing this package links OpenCensus's stats/view package, whose
// init starts OpenCensus's own worker goroutine (as the contrib exporters,
// which import it, do anyway).
package opencensus
