// Package prometheus serves the registered views for Prometheus to scrape,
// in the Prometheus text format 0.0.4, in OpenMetrics 1.0.0 or in the
// protobuf exposition (length-delimited io.prometheus.client.MetricFamily
// messages, the one format with native histograms), chosen by the
// request's Accept header: protobuf only for a media range that names it
// whole, "application/vnd.google.protobuf;
// proto=io.prometheus.client.MetricFamily; encoding=delimited", as
// Prometheus asks for it first when started with
// --enable-feature=native-histograms (and as client_golang serves it).
//
// # Use
//
//	http.Handle("/metrics", prometheus.NewHandler(prometheus.Options{}))
//
// # Mapping
//
// Each view is one metric family, named after the view (sanitized: see
// internal/promname and docs/metric-mapping.md), with its unit appended
// ("demo/latency" in ms → demo_latency_milliseconds). Options.OpenCensusNames
// keeps the names of OpenCensus's Prometheus exporter instead (no unit, no
// "_total"), for a migrated service's dashboards.
//
//   - Count → counter: samples "<name>_total", integral values, spelled
//     as client_golang spells a counter's float ("3", in OpenMetrics
//     "3.0"; "1e+06" from a million on);
//   - Sum → counter: "<name>_total"; in the text format the family is
//     named "<name>_total" too, as client_golang names counters, in
//     OpenMetrics "<name>";
//   - LastValue → gauge "<name>";
//   - Distribution → histogram: cumulative "<name>_bucket{le="..."}" for
//     each bound and "+Inf", "<name>_sum", "<name>_count";
//   - Summary (view.Summary, metric.NewSummary) → summary, as
//     client_golang writes one: "<name>{quantile="<q>"}" per quantile
//     (after the series' labels; "<q>" spelled as "le" values are), then
//     "<name>_sum" and "<name>_count"; in OpenMetrics also
//     "<name>_created", and no "_sum" when it is negative or NaN; in the
//     protobuf exposition a SUMMARY family of Summary messages
//     (sample_count, sample_sum, quantiles, created timestamp). A tag key
//     "quantile" is labelled "key_quantile" (summary.go);
//   - ExponentialDistribution → histogram: in the protobuf exposition a
//     native histogram per series (internal/promnative's conversion:
//     schema = scale, lowered to 8 above it; zero threshold 0; spans and
//     deltas as client_golang encodes them; count, sum, created
//     timestamp); in the text formats what client_golang writes for a
//     native histogram without classic buckets, "<name>_bucket{le="+Inf"}"
//     (the count), "<name>_sum", "<name>_count". A series whose scale is
//     below -4 has no native schema (possible only with a maxSize under
//     about 131 and values hundreds of octaves apart): the protobuf
//     exposition leaves it out, as Prometheus's own translation of
//     OpenTelemetry histograms does; the text formats keep it. A series
//     with no counted value (only NaN or infinities recorded) gets
//     client_golang's no-op span; Prometheus 2.42 reads such a series as
//     a classic histogram of count 0 (it tells native ones by their
//     buckets), newer ones as native.
//
// In the protobuf exposition the families, series, labels and values are
// the text format's (a counter's family named "<name>_total" as
// client_golang names it, a negative Sum untyped, labels sorted by
// name), with the protobuf's own fields: a family's unit when OpenMetrics
// has "# UNIT", counters' and histograms' created timestamps when
// OpenMetrics has "_created", and classic histogram buckets' exemplars
// (the OpenMetrics ones), the "+Inf" bucket written only to carry one,
// as client_golang writes them. benchmarks/promnative checks it against
// client_golang, client_model and Prometheus's own parser.
//
// Tag keys become labels; a tag absent from a recording is left out of the
// series (Prometheus treats an empty label as absent). A view past its
// cardinality limit also exposes its overflow series, labelled
// otel_metric_overflow="true" (view.OverflowKey, sanitized) instead of its
// tags; no tag key or constant label can take that name. Options add a
// namespace prefix and constant labels. Families come sorted by view name,
// series by their tag values, so the output is deterministic. Numbers are
// spelled as client_golang spells them (shortest round-trip form, "+Inf",
// "-Inf", "NaN", "0" for -0; OpenMetrics adds ".0" to integral floats, and
// writes histogram bucket counts and "_count" as integers). "le" values
// are spelled one way in both formats and in remote write, OpenMetrics's
// canonical "1.0" (with OpenCensusNames, the text format's "1").
//
// OpenMetrics output also has exemplars on histogram buckets (the latest
// value recorded with attachments, see stats.WithAttachments: " # {
// trace_id="…",span_id="…"} value timestamp", the IDs from a
// stats.SpanContext attachment, no labels without one; the labels
// Prometheus and Grafana expect, checked against a real Prometheus's
// exemplar storage), on a counter's "_total" sample the newest exemplar
// of its series' reservoir (which a bound handle fills:
// stats.Int64Handle.RecordExemplar, the otel MeterProvider's counters;
// none on gauges, which OpenMetrics does not allow, nor on a counter
// shown "unknown"; the protobuf exposition carries it as
// Counter.exemplar), and "_created"
// samples (each series' start) for counters and histograms, and "# UNIT" only on families whose name ends
// in the unit. Two views whose names collide ("a.b" and "a_b") would make
// invalid output: the one registered later is left out, reported by
// Handler.Err and counted in selfstats' zerostat/refused_views.
//
// A Sum view is a counter, as OpenCensus's Prometheus exporter has it:
// correct for sums of non-negative values (bytes, durations). A counter is
// never exposed negative: in a scrape where some series of a Sum view is
// negative (or NaN), the view is exposed untyped ("untyped" in the text
// format, "unknown" in OpenMetrics) under its sample name
// "<name>_total", so Prometheus keeps the same series and its exact
// values. A histogram whose values include negative ones has no "_sum"
// in OpenMetrics (which forbids a negative one); the text format keeps it.
//
// Buckets: view.Distribution counts a value equal to a bound in the
// bucket above it (OpenCensus's rule, bounds[i-1] <= v < bounds[i]),
// while Prometheus's "le" means v <= bound, so a bucket "le=b" of such a
// view holds the values below b, not at it. Views made with
// view.DistributionUpperInclusive count by Prometheus's rule, and
// histogram_quantile reads them exactly (tested against a real
// Prometheus).
//
// # Costs and concurrency
//
// A Handler is safe for concurrent use. A scrape reads each series with
// atomic loads (a distribution's cell is locked while its buckets are
// copied, tens of nanoseconds), so recorders are never blocked by it.
// Names, label heads and "le" values are rendered once per view; series
// are sorted once, and again only when new series appear. The text is
// built into a pooled buffer: in steady state a scrape of 10,000 series
// allocates nothing (tested, in every format, exponential series
// included; net/http itself still allocates per request), then it is
// written in one Write with a Content-Length, gzipped first (pooled
// writer, BestSpeed) when the scraper accepts gzip. A protobuf family is
// written after room for its length prefix and moved down once when the
// prefix is shorter (one memmove of the family); an exponential series
// costs its read (O(buckets), under its cells' locks) and the conversion
// (O(buckets)). Building
// the text is serialised across concurrent scrapes; writing is not.
package prometheus
