// Package prometheus serves the registered views for Prometheus to scrape,
// in the Prometheus text format 0.0.4 or in OpenMetrics 1.0.0, chosen by
// the request's Accept header.
//
// # Use
//
//	http.Handle("/metrics", prometheus.NewHandler(prometheus.Options{}))
//
// # Mapping
//
// Each view is one metric family, named after the view (sanitized: see
// internal/promname), with its unit appended ("demo/latency" in ms →
// demo_latency_milliseconds):
//
//   - Count → counter: samples "<name>_total", integer values;
//   - Sum → counter: "<name>_total"; in the text format the family is
//     named "<name>_total" too, as client_golang names counters, in
//     OpenMetrics "<name>";
//   - LastValue → gauge "<name>";
//   - Distribution → histogram: cumulative "<name>_bucket{le="..."}" for
//     each bound and "+Inf", "<name>_sum", "<name>_count".
//
// Tag keys become labels; a tag absent from a recording is left out of the
// series (Prometheus treats an empty label as absent). A view past its
// cardinality limit also exposes its overflow series, labelled
// otel_metric_overflow="true" (view.OverflowKey, sanitized) instead of its
// tags. Options add a namespace prefix and constant labels. Families come sorted by view name,
// series by their tag values, so the output is deterministic. Numbers are
// spelled as client_golang spells them (shortest round-trip form, "+Inf",
// "-Inf", "NaN"; OpenMetrics adds ".0" to integral floats and bounds).
//
// A Sum view is a counter, as OpenCensus's Prometheus exporter has it:
// correct for sums of non-negative values (bytes, durations); a sum that
// can decrease is better served as a LastValue view of its own running
// total, since Prometheus's rate() reads any decrease of a counter as a
// reset.
//
// One difference in meaning: zerostat counts a value equal to a bound in
// the bucket above it (OpenCensus's rule, bounds[i-1] <= v < bounds[i]),
// while Prometheus's "le" means v <= bound. A bucket "le=b" therefore
// holds the values below b, not at it; values exactly on a bound are rare
// for measured quantities but not for small integers.
//
// # Costs and concurrency
//
// A Handler is safe for concurrent use. A scrape reads each series with
// atomic loads (a distribution's cell is locked while its buckets are
// copied, tens of nanoseconds), so recorders are never blocked by it.
// Names, label heads and "le" values are rendered once per view; series
// are sorted once, and again only when new series appear. The text is
// built into a pooled buffer: in steady state a scrape of 10,000 series
// allocates nothing (tested; net/http itself still allocates per
// request), then it is written in one Write with a Content-Length, gzipped
// first (pooled writer, BestSpeed) when the scraper accepts gzip. Building
// the text is serialised across concurrent scrapes; writing is not.
package prometheus
