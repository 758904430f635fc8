// Package remotewrite pushes the registered views to Prometheus, or to
// anything that speaks its remote-write 1.0 protocol (VictoriaMetrics,
// Mimir, Thanos, Cortex), on an interval.
//
// # Use
//
//	w, err := remotewrite.New(remotewrite.Options{
//		URL:         "http://127.0.0.1:9090/api/v1/write",
//		Interval:    15 * time.Second,
//		ConstLabels: map[string]string{"job": "api", "instance": host},
//	})
//	...
//	w.Start()
//	defer w.Stop(ctx) // pushes a final time
//
// # Protocol
//
// Each push is a protobuf prometheus.WriteRequest
// (https://prometheus.io/docs/specs/remote_write_spec/): one time series
// per sample, labels sorted by name with "__name__", one sample each
// (value, timestamp in milliseconds: the time of the push), a bucket's
// exemplar when it has a new one (Exemplars, below), compressed
// with the Snappy block format, POSTed with Content-Encoding: snappy,
// Content-Type: application/x-protobuf and
// X-Prometheus-Remote-Write-Version: 0.1.0. The series are those that
// package exporter/prometheus exposes, named by the same code: counters
// "<name>_total", gauges "<name>", histograms "<name>_bucket{le=...}"
// (cumulative, "+Inf" included, "le" spelled as in every other output:
// "1.0"), "<name>_sum" and "<name>_count" (docs/metric-mapping.md).
// Options.OpenCensusNames keeps OpenCensus's Prometheus exporter's names.
//
// A summary view (view.Summary, metric.NewSummary) is sent as the series
// Prometheus stores for a scraped summary: "<name>{quantile="<q>"}" per
// quantile (spelled as the scrape handler spells it), "<name>_sum" and
// "<name>_count", with SUMMARY metadata, and a stale marker on each once
// gone (summary.go).
//
// An exponential view (view.ExponentialDistribution) is sent as native
// histograms (TimeSeries.histograms, prompb's Histogram): one time series
// per series, named "<name>" (the family's name, no suffix), carrying
// one Histogram with the push's timestamp, the conversion the protobuf
// scrape uses (internal/promnative: schema = scale, lowered to 8 above
// it; zero threshold 0; zero count; spans and deltas as client_golang
// lays them out; count_int, sum), reset_hint UNKNOWN (the histogram is
// cumulative, as a scrape's, and Prometheus detects resets itself), in
// prompb's canonical encoding (benchmarks/promnative compares the bytes
// with Prometheus's own). Its stale marker is a Histogram whose sum is
// StaleNaN, as Prometheus forwards one. A series whose scale is below -4
// has no native schema and is not sent (as Prometheus's own translation
// of OpenTelemetry histograms drops it). Prometheus stores native
// histograms when started with --enable-feature=native-histograms;
// without it Prometheus 2.42 refuses the whole request (500 "native
// histograms are disabled"), and VictoriaMetrics 1.79 skips the field:
// Options.NoNativeHistograms then sends the view as a text scrape shows
// it ("<name>_bucket{le="+Inf"}", "<name>_sum", "<name>_count").
// A view whose names collide with an earlier registered view's is left
// out of every push (Writer.Err, selfstats' zerostat/refused_views), so a
// request never carries duplicate series. Values are cumulative, as a
// scrape would see them. The protobuf writer and the
// Snappy encoder are zerostat's own (standard library only); the
// benchmarks module checks them against the official protobuf runtime and
// github.com/golang/snappy.
//
// # Exemplars
//
// A histogram's bucket series ("_bucket{le=...}") carries the bucket's
// exemplar (TimeSeries.exemplars): the latest value recorded into that
// bucket with attachments (stats.WithAttachments, or the span that
// stats.SetSpanContextFunc finds in the record's context), on the series
// OpenMetrics exposes it on, as Prometheus's own scrape assigns it.
// Its labels are span_id and trace_id in lower-case hex when it was
// recorded in a span (a stats.SpanContext, or OpenCensus's
// trace.SpanContext, under the "SpanContext" attachment), none otherwise:
// other attachments are not sent, as in OpenMetrics. Its value is the
// recorded one, its timestamp the record's time in milliseconds. A
// counter's series carries the exemplars its reservoir holds (offered by
// a bound handle: stats.Int64Handle.RecordExemplar, which the otel
// MeterProvider's counters record through; the OTel SDK's
// FixedSizeReservoir, GOMAXPROCS of them at most), oldest first, as the
// Collector's prometheusremotewrite exporter sends a monotonic Sum's.
// Buckets without an exemplar, "_sum", "_count", gauges (up-down sums and
// last values: OpenMetrics has no gauge exemplars) and stale markers
// carry none. Prometheus stores them when started with
// --enable-feature=exemplar-storage (/api/v1/query_exemplars); without
// it, and on receivers that keep no exemplars, they are ignored.
//
// An exemplar is sent once: every push carries it until one that carries
// it is delivered whole (as stale markers, below), then none carries it
// again until the bucket (or the reservoir's slot) gets a new one. A
// scrape, by contrast, exposes every bucket's exemplar each time
// (Prometheus ignores those it has). The state is a pair of pointers per
// bucket or slot of a series recorded with exemplars (none for the
// others), made on its first push and freed with the series.
//
// # Failures
//
// A push is cut into requests of about MaxSeriesPerRequest series, ended
// only between rows (a histogram's series travel together). The push
// pipeline every zerostat exporter shares (exporter/push) sends them: a
// request answered 5xx or 429, or that fails in the network (down, slow
// beyond Timeout), is retried with exponential backoff and jitter, or
// after the server's Retry-After, as long as the retry fits in the push's
// interval; a request answered with another 4xx is not retried (resending
// the same bytes cannot succeed). Requests given up on are dropped and
// counted (Stats.Dropped, Stats.DroppedPoints); the next push sends
// current values again, so a cumulative counter loses resolution, not its
// total. A request refused with a 4xx is dropped alone: the requests after
// it in the push are still sent; after a failure that may pass, the rest
// of the push is dropped. Push's error says how many samples of how many
// it dropped. Options.Logger hears once when pushes start failing and
// once when they recover, not once per failure.
//
// # Stale markers
//
// A series that goes away (evicted by a delta exporter, or its view
// unregistered) gets Prometheus's stale marker (a NaN with the bits
// StaleNaN), so that Prometheus ends it at once instead of keeping it
// live for its 5-minute lookback; not when a series with the same labels
// replaced it (a view registered again under the name). Every push
// carries the marker until one that carries it is delivered whole, so a
// push that fails loses none; AppendWriteRequest shows the pending
// markers and exemplars and consumes none.
//
// # Costs and concurrency
//
// A Writer is safe for concurrent use; pushes are serialised. A push reads
// each series with atomic loads (a distribution's cell is locked while its
// buckets are copied, tens of nanoseconds; an exponential series' cells
// likewise, for O(buckets)): recorders are never blocked, whatever the
// server does. Names and label layouts are computed once per view; the
// encoded request, the compressed request and the label scratch are
// reused, so encoding allocates nothing in steady state, exemplars and
// native histograms included (tested: a series' exemplar state is
// allocated once, on its first push with one); the HTTP client allocates
// per request. Recording is not touched: an exemplar costs what
// stats.WithAttachments costs.
package remotewrite
