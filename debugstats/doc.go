// Package debugstats serves a live HTML page of every registered view, in
// the spirit of OpenCensus's zPages: for each view its description, unit,
// aggregation, tag keys and rows; distributions as inline SVG bar charts of
// their bucket counts with count, mean, min, max and p50, p90 and p99
// estimated from the buckets, and each bucket's latest exemplar (value,
// time, trace and span IDs, attachments); each view's live rows against its
// cardinality limit and the recordings that overflowed it; and the health
// of the exporters it is given. The page reloads itself every few seconds
// and links each view to its snapshot in JSON and in zerostat's msgpack
// wire format.
//
//	mux.Handle("/debug/stats", debugstats.NewHandler(debugstats.Options{
//		Exporters: []*exporter.Exporter{exp},
//	}))
//
// Exponential distributions (view.ExponentialDistribution) are shown as
// distributions are: count, mean, min, max, p50, p90 and p99, and a chart
// of their buckets in ascending order of value (negative buckets, the
// zero bucket, positive buckets), each bar titled with its range under
// OpenTelemetry's rule ("(1, 2]"; "[-4, -2)" for a negative one; "0"). A
// histogram of more than 48 buckets is drawn at a lower scale, pairs of
// buckets merged (they nest exactly), so the chart stays readable; the
// caption gives both scales. Each quantile is estimated within the
// bucket that holds it, at the histogram's own scale, by the geometric
// interpolation current Prometheus's histogram_quantile uses for a native
// histogram's exponential buckets (linear in the logarithm of the value;
// Prometheus 2.42 interpolated linearly), the bucket's edges clamped to
// the row's min and max as for a distribution; the zero bucket answers 0.
//
// The page is plain HTML from html/template with inline CSS and SVG: no
// script, no front-end build, nothing fetched from elsewhere. Every value,
// tag values included, is escaped for its context by html/template.
//
// # Snapshots
//
// A request to the page with a "format" query parameter ("json" or
// "msgpack", with "view=NAME" for one view) is answered with a snapshot,
// so one registration serves the page and its links. To serve snapshots
// elsewhere, register NewSnapshotHandler there and set
// Options.SnapshotURL.
//
// # Costs
//
// This is a debugging page, not a hot path. A page view reads every view
// with view.RetrieveData (atomic loads of every series, one allocation per
// row and a sort) and formats it; Options.MaxRows bounds the rows drawn per
// view, so a view at a cardinality limit of thousands of rows does not make
// a page of megabytes. The page is rendered into a pooled buffer and
// written in one piece (gzip-compressed when the client accepts it). A
// snapshot encodes every view, decodes it and re-encodes the asked one.
// Recorders are never blocked or slowed by a lock: reading a series is a
// few atomic loads, as an export's is.
//
// # Concurrency
//
// Handlers are safe for concurrent use; their state is read-only after
// construction but for a sync.Pool of buffers. The exporter statistics are
// read at each page view with exporter.Exporter.Stats (atomic loads).
package debugstats
