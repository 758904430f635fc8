// Package exphist is the base-2 exponential histogram that zerostat's
// exponential distribution aggregation records into: the data structure
// of OpenTelemetry's "Base2 Exponential Bucket Histogram Aggregation"
// (https://opentelemetry.io/docs/specs/otel/metrics/sdk/#base2-exponential-bucket-histogram-aggregation),
// whose reads are the data model's ExponentialHistogram data points
// (https://opentelemetry.io/docs/specs/otel/metrics/data-model/#exponentialhistogram)
// and, with the scale clamped, Prometheus's native histograms (the same
// buckets: schema = scale, upper-inclusive).
//
// # Buckets and scale
//
// At scale s the base is 2^(2^-s) and bucket i holds base^i < |v| <=
// base^(i+1). A histogram keeps at most MaxSize buckets per sign
// (default 160), a zero bucket (values exactly 0, of either sign: the
// zero threshold is 0) and the count, sum, min and max. It starts at
// MaxScale (default 20, at most 20, at least -10) and stays at the
// largest scale at which every value recorded so far fits: a value that
// does not fit lowers the scale, merging each pair of buckets per step
// (buckets of one scale nest exactly in those of the next lower one).
// The scale is therefore a function of the set of values, not of their
// order, which is why Merge of stripes equals one histogram of all.
//
// # Exactness
//
// Index places every float64, subnormals, the extremes and the floats
// next to an irrational boundary included, in the bucket the data model
// defines, with no tolerance (see Index for how; the tests check every
// boundary of every scale against math/big). The OpenTelemetry Go SDK
// (v1.47.0) takes a logarithm at face value above scale 0, and so
// misplaces some floats within a few ulps of a boundary at scales 5 and
// above: the one difference from it that benchmarks/exphist's
// differential test finds, and explains value by value.
//
// Otherwise a Histogram behaves as the SDK's: NaN and ±Inf are ignored
// (not counted, not in the sum, min or max; counted in Dropped); with
// MaxSize 2 a value whose sign would need 3 buckets at scale -10 is not
// counted but is in the sum, min and max (the SDK's "scale underflow").
// The sum is a plain running sum in the order the lock admits values
// (for one goroutine, record order); the SDK's adds whole values in an
// int64 and the others in a float64, so the two differ by the rounding
// of those orders (and where the SDK's int64 overflows).
//
// # Concurrency
//
// Record, Snapshot and SnapshotReset are safe for concurrent use: one
// lock word per histogram, taken by compare-and-swap (see Histogram).
// Record reports contention, for a caller that stripes a hot series.
// Snapshot values are plain, owned by their caller.
//
// # Costs
//
// Record: the index (two table loads at scale 8 and below, plus a
// division and a short series above), one compare-and-swap, a few adds,
// one store; no allocation once each sign's ring of counters has grown
// to its range (at most 5 doublings per sign in a histogram's life at the
// default MaxSize: see Histogram). A histogram holds the 128-byte struct
// and 8 bytes per bucket of its range, rounded up to the ring (at most
// 2,560 bytes at the default MaxSize). Snapshot, Merge and Sub are
// O(buckets) and allocate nothing into a Snapshot whose Counts have the
// capacity.
//
// # Delta reads
//
// Two ways: SnapshotReset empties the histogram as it reads it, so each
// interval has its own scale (the SDK's delta temporality); Sub subtracts
// an earlier cumulative read from a later one, giving the interval's
// values at the cumulative's scale (coarser or equal), with the
// cumulative's min and max.
package exphist
