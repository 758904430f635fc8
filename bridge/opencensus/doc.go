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
// CumulativeDistribution (an exponential distribution too: see
// Exponential distributions), GaugeInt64 or GaugeFloat64 for a LastValue and
// for an UpDownSum (a sum that may go down, which OpenCensus has not: a
// gauge of its total, never a counter, as zerostat's exporters show it),
// Summary for a summary (view.Summary, metric.NewSummary: a
// metricdata.Summary point of its count, sum and quantiles, each
// quantile q under the percentile q×100, as OpenCensus's summaries key
// them; OpenCensus's Prometheus exporter v0.4.2 drops summaries, its
// TODO); the
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
// # Exponential distributions
//
// OpenCensus has no exponential histogram. A view of
// view.ExponentialDistribution is published as an OpenCensus distribution
// (CumulativeDistribution; an Exporter's view has Distribution) whose
// explicit bounds are the edges of its buckets, so every bucket count
// is carried exactly, as it is. At scale s (base b = 2^(2^-s)), with
// negative buckets n..N and positive buckets p..P populated, the bounds
// are
//
//	-b^(N+1), ..., -b^(n+1), -b^n, 0, b^p, b^(p+1), ..., b^(P+1)
//
// and OpenCensus's buckets hold, in order: 0 (below -b^(N+1)); the
// negative buckets' counts, most negative first; 0 ([-b^n, 0)); the zero
// count ([0, b^p)); the positive buckets' counts; 0 (from b^(P+1)). The
// count and sum are the histogram's (the Producer's Sum is the exact
// running sum; an Exporter's Mean is Sum/Count); min and max too (view
// data). SumOfSquaredDeviation is 0: an exponential histogram does not
// keep it, and OpenCensus's type cannot say it is missing. No exemplars.
// A Producer's point carries its row's own buckets, at the row's own
// scale; an Exporter's report has one view, so one list of bounds for
// every row: the scale and ranges a histogram of the view's maxSize
// buckets per sign holding every row's values would have (which
// exphist.Snapshot.Merge computes), each row's buckets lowered to it (they
// nest exactly: its counts stay exact, at that coarser resolution), so a
// report's bounds change when the rows' range grows or their scale falls.
//
// What OpenCensus's model cannot say, and how the labels differ:
//
//   - Bucket rule. OpenCensus's buckets are lower-inclusive, [b^i,
//     b^(i+1)); the data model's positive buckets are upper-inclusive,
//     (b^i, b^(i+1)]. The counts are carried bucket for bucket as the
//     histogram has them, so the bounds only label them: a value on an
//     edge, b^(i+1), is counted in the bucket labelled [b^i, b^(i+1)),
//     where OpenCensus's rule would have put it in the next one
//     (TestExpBoundsCarryTheBuckets). Negative buckets, [-b^(i+1),
//     -b^i), are the same under both rules, and 0 is in [0, b^p) under
//     both. As with DistributionUpperInclusive, OpenCensus's types cannot
//     say which rule the counts follow.
//   - Negative and zero bounds. OpenCensus's view.Register rejects
//     negative bounds and drops a zero bound (and its metricdata
//     documents the first bucket as [0, Bounds[0])); the bridge never
//     registers the view with OpenCensus, and passes them as
//     DistributionUpperInclusive's negative and zero bounds are passed.
//     OpenCensus's Prometheus exporter writes them as le="-4", le="0"
//     (TestContribPrometheusExportsExponentialView); an exporter that
//     assumes non-negative bounds sees a histogram without negative
//     values only.
//   - Edges beyond float64. The upper edge of the bucket of the largest
//     floats (2^1024) is not a float64: such a bound is left out, as is an
//     edge not above the previous one (two subnormal edges that round to
//     the same float), merging its two OpenCensus buckets; the counts stay
//     exact.
//   - Scale, the zero threshold and the bucket indexes themselves are not
//     carried: they are implied by the bounds (scale: the ratio of
//     successive positive bounds). An edge above scale 0 is 2^(i·2^-s)
//     within an ulp (Exp2), not exactly; scale 0 and below are exact
//     powers of two.
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
//     An ExponentialDistribution is a Distribution whose bounds are its
//     rows' bucket edges at one scale (see Exponential distributions).
//     A Summary is not reported: OpenCensus's view.Data has no summary
//     (the producer publishes it, as OpenCensus's metricdata.Summary).
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
