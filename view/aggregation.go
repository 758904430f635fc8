package view

import (
	"strconv"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/exphist"
)

// AggType is the kind of an aggregation.
type AggType int

// Aggregation types, numbered as in OpenCensus.
const (
	AggTypeNone         AggType = iota // no aggregation; not registrable
	AggTypeCount                       // the count aggregation, see Count
	AggTypeSum                         // the sum aggregation, see Sum
	AggTypeDistribution                // the distribution aggregation, see Distribution
	AggTypeLastValue                   // the last value aggregation, see LastValue
	// AggTypeExponentialDistribution is the base-2 exponential histogram,
	// see ExponentialDistribution. Not in OpenCensus.
	AggTypeExponentialDistribution
	// AggTypeSummary is an observed summary (count, sum and quantile
	// values set by a callback), see Summary. Not in OpenCensus.
	AggTypeSummary
)

var aggTypeName = [...]string{"None", "Count", "Sum", "Distribution", "LastValue", "ExponentialDistribution", "Summary"}

// String returns the type's name ("Count", "Distribution").
func (t AggType) String() string {
	if t < 0 || int(t) >= len(aggTypeName) {
		return "AggType(" + strconv.Itoa(int(t)) + ")"
	}
	return aggTypeName[t]
}

func (t AggType) kind() core.Kind {
	switch t {
	case AggTypeCount:
		return core.KindCount
	case AggTypeSum:
		return core.KindSum
	case AggTypeDistribution:
		return core.KindDistribution
	case AggTypeLastValue:
		return core.KindLastValue
	case AggTypeExponentialDistribution:
		return core.KindExponential
	case AggTypeSummary:
		return core.KindSummary
	}
	return 0
}

// Aggregation says how a view combines the values recorded for one tag
// combination.
type Aggregation struct {
	Type    AggType   // Type is the kind of aggregation.
	Buckets []float64 // Buckets are a distribution's bucket bounds.
	// UpperInclusive, for a distribution, counts a value equal to a bound
	// in the bucket that bound closes (b[i-1] < v <= b[i], Prometheus's
	// "le" and OpenTelemetry's rule) instead of the bucket above it
	// (OpenCensus's rule, the default). See DistributionUpperInclusive.
	// Not in OpenCensus.
	UpperInclusive bool
	// UpDown, for a sum, says the sum may go down (OpenTelemetry's
	// UpDownCounter): exporters show it as a gauge (Prometheus) or a
	// non-monotonic sum (OTLP) instead of a counter. See UpDownSum. Not in
	// OpenCensus.
	UpDown bool
	// Observed, for a sum, says a callback reports its total
	// (OpenTelemetry's asynchronous counter: an observable counter, or a
	// metric.NewCounter): under the lowmemory temporality preference it
	// is read cumulatively, as the OpenTelemetry specification's table
	// says, where a sum recorded by the program is read as deltas. See
	// ObservedSum. Not in OpenCensus.
	Observed bool
	// MaxSize and MaxScale, for an exponential distribution, are the most
	// buckets it keeps per sign and its highest scale; 0 means the
	// default (DefaultExponentialMaxSize, DefaultExponentialMaxScale).
	// See ExponentialDistribution. Not in OpenCensus.
	MaxSize, MaxScale int32
	// Quantiles, for a summary, are the quantiles its rows give a value
	// of, increasing, in [0, 1]. See Summary. Not in OpenCensus.
	Quantiles []float64
}

var (
	aggCount = &Aggregation{Type: AggTypeCount}
	aggSum   = &Aggregation{Type: AggTypeSum}
)

// Count counts the recorded values (whatever they are). Its data is
// *CountData.
func Count() *Aggregation { return aggCount }

// Sum adds the recorded values. Its data is *SumData.
func Sum() *Aggregation { return aggSum }

// Distribution keeps a histogram of the recorded values and their count,
// min, max, mean and sum of squared deviation. Its data is
// *DistributionData.
//
// With bounds b0 < b1 < ... < bn the buckets are (-Inf, b0), [b0, b1), ...,
// [bn, +Inf): a value equal to a bound counts in the bucket above it, as in
// OpenCensus. As in OpenCensus, Register sorts the bounds and drops zero
// bounds; it rejects negative, non-finite and repeated bounds.
//
// Recording into a distribution costs a bound search (linear up to 16
// bounds, binary above) and four atomic updates.
//
// Exporters label bucket i with its upper bound (Prometheus's le="b[i]",
// OTLP's explicit_bounds), which under this rule counts values below the
// bound only: with bounds 1, 5, 10 a value of 5 is counted as "> 5".
// Prefer DistributionUpperInclusive for views read mainly through
// Prometheus or OpenTelemetry (docs/metric-mapping.md).
func Distribution(bounds ...float64) *Aggregation {
	return &Aggregation{Type: AggTypeDistribution, Buckets: bounds}
}

// DistributionUpperInclusive is Distribution with Prometheus's and
// OpenTelemetry's bucket rule: with bounds b0 < b1 < ... < bn the buckets
// are (-Inf, b0], (b0, b1], ..., (bn, +Inf), so a value equal to a bound
// counts in the bucket labelled le="bound", and Prometheus's
// histogram_quantile and OTLP's bucket_counts mean what they say. Count,
// sum, min, max, mean and sum of squared deviation are the same as
// Distribution's; only the bucket counts of values equal to a bound
// differ. Recording costs exactly what Distribution's does (the bound
// search compares against the next float above each bound). Unlike
// Distribution, Register keeps a zero bound (it closes the bucket
// (-Inf, 0], OpenTelemetry's first default bucket) and accepts negative
// bounds. Not in OpenCensus.
func DistributionUpperInclusive(bounds ...float64) *Aggregation {
	return &Aggregation{Type: AggTypeDistribution, Buckets: bounds, UpperInclusive: true}
}

// The defaults of ExponentialDistribution, the OpenTelemetry
// specification's: 160 buckets per sign, which at the scale they settle
// at cover a range of values of about 2^(160·2^-scale) (1 ms to 100 s at
// scale 3, with under 5% relative error), and scale 20, the finest.
const (
	DefaultExponentialMaxSize  = exphist.DefaultMaxSize
	DefaultExponentialMaxScale = exphist.DefaultMaxScale
)

// ExponentialDistribution is a histogram whose buckets need no choosing:
// OpenTelemetry's base-2 exponential bucket histogram (and, with the scale
// at most 8, Prometheus's native histogram). At scale s the base is
// 2^(2^-s) and bucket i counts the values v with base^i < |v| <=
// base^(i+1), each sign in its own range of at most maxSize buckets; a
// zero bucket counts the zeros. The scale starts at maxScale and stays the
// largest at which every value recorded so far fits in maxSize buckets:
// a value that does not fit lowers it, merging pairs of buckets. NaN and
// ±Inf are ignored (not counted, not in the sum, min or max), as
// OpenTelemetry's SDK ignores them. A maxSize of 0 means the default,
// 160; maxSize and maxScale both 0 mean both defaults (160 and 20), so a
// view of maxScale 0 gives its maxSize. Register fails on a maxSize below
// 2 or a maxScale outside -10..20, naming the argument. Its data is
// *ExponentialDistributionData.
//
// Recording costs the bucket index (two table loads at scale 8 and
// below), the series' lock (one compare-and-swap and a store) and a few
// adds, and no allocation once its range has settled (its counters
// double as its range grows, at most 5 times per sign at the default
// size); a series holds about 8 bytes per bucket in its range (at most
// 2,560 at the default size) and 144 more. Read by every exporter: as OTLP's ExponentialHistogram,
// Prometheus's native histogram, remote write's histograms, and the
// msgpack format's aggregation 7 (docs/wire-format.md). With a delta
// exporter, each interval's histogram has the scale of its own values,
// as the OpenTelemetry SDK's delta temporality has. Not in OpenCensus.
func ExponentialDistribution(maxSize, maxScale int32) *Aggregation {
	return &Aggregation{Type: AggTypeExponentialDistribution, MaxSize: maxSize, MaxScale: maxScale}
}

// expConfig returns an exponential aggregation's size and scale, the
// defaults filled in.
func (a *Aggregation) expConfig() (maxSize, maxScale int32) {
	maxSize, maxScale = a.MaxSize, a.MaxScale
	if maxSize == 0 {
		maxSize = DefaultExponentialMaxSize
	}
	if maxScale == 0 && a.MaxSize == 0 {
		maxScale = DefaultExponentialMaxScale
	}
	return maxSize, maxScale
}

// UpDownSum is Sum for a total that may go down (a queue length, active
// requests: OpenTelemetry's UpDownCounter). Its data is *SumData and its
// record path is Sum's; exporters show it as a gauge (Prometheus, remote
// write) or a non-monotonic sum (OTLP), never as a counter. Not in
// OpenCensus.
func UpDownSum() *Aggregation { return &Aggregation{Type: AggTypeSum, UpDown: true} }

// ObservedSum is Sum for a monotonic total a callback reports
// (OpenTelemetry's asynchronous counter; zerostat's metric.NewCounter and
// the otel module's observable counters use it). Its data is *SumData,
// as Sum's; only the lowmemory temporality preference tells it apart
// (it keeps it cumulative). Not in OpenCensus.
func ObservedSum() *Aggregation { return &Aggregation{Type: AggTypeSum, Observed: true} }

// LastValue keeps the last recorded value. Its data is *LastValueData.
// Under concurrent records of one series, "last" is the last store to reach
// memory.
func LastValue() *Aggregation {
	return &Aggregation{Type: AggTypeLastValue}
}
