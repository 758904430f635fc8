// Package promnative turns a base-2 exponential histogram
// (exphist.Snapshot) into a Prometheus native histogram, and writes that
// histogram's fields as protobuf: the one conversion behind both of
// zerostat's Prometheus outputs, the protobuf exposition
// (exporter/prometheus, client_model's io.prometheus.client.Histogram)
// and remote write (exporter/remotewrite, prompb's Histogram).
//
// # Mapping
//
// The buckets are the same (OpenTelemetry's scale is Prometheus's schema,
// both upper-inclusive, base 2^(2^-scale)); three things differ:
//
//   - The index. OpenTelemetry's bucket i holds base^i < |v| <=
//     base^(i+1); Prometheus's bucket j holds base^(j-1) < |v| <= base^j
//     (client_golang's Observe: the bucket of 1 is 0). So j = i + 1.
//   - The schema range. Prometheus's exponential schemas are -4..8. A
//     scale above 8 is lowered to 8 (exphist.Snapshot.Downscale: exact,
//     buckets of a scale nest in those of the one below). A scale below
//     -4 cannot be raised (a bucket does not say which of its halves its
//     values were in), so it has no native form: Set returns ErrScale and
//     the outputs leave that series out, as Prometheus's own translation
//     of OpenTelemetry histograms does ("Scale must be >= -4"). Only a
//     histogram with fewer than about 131 buckets per sign (a view's
//     maxSize) can reach it, and only for values about 2^600 apart: at
//     -4 a bucket spans 2^16, and every float64 fits in 131.
//   - The bucket encoding. Prometheus sends the non-empty buckets as
//     spans (a gap from the previous span's end, or the first span's
//     start index, and a length) and counts as deltas from the previous
//     bucket of the same sign (the first from 0). As client_golang
//     (makeBuckets, v1.25.0) does, a gap of one or two empty buckets
//     stays inside a span (as zero counts); a longer gap starts a new
//     span. Empty buckets are never first or last in a span.
//
// The zero threshold is 0 (exphist's zero bucket holds exactly ±0), the
// zero count is the snapshot's, Count includes it (and excludes NaN and
// ±Inf, which exphist does not count), Sum is the snapshot's.
//
// # Protobuf
//
// Layout says where a message keeps the native fields and whether it is
// proto2 with explicit presence (client_model: schema, zero threshold
// and zero count always written, as client_golang writes them) or proto3
// (prompb: zero values left out, as its Marshal does; the zero count, a
// oneof, always written). Repeated deltas are packed (both parsers
// accept packed and unpacked). The wire helpers are internal/protowire's.
//
// # Costs and concurrency
//
// Set is O(buckets) and allocates nothing once the Histogram's slices
// have grown to the snapshot's bucket count (at most maxSize deltas and
// maxSize/3+1 spans per sign); Size and Append are O(spans + deltas) and
// Append allocates only to grow its destination. A Histogram is a plain
// value, not safe for concurrent use; the functions hold no state.
package promnative
