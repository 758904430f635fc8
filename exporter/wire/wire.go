// Package wire defines zerostat's snapshot format, versions 1 and 2
// (rows as arrays, or as columns), and decodes them. docs/wire-format.md is the specification; this package is its Go
// reader, used by the receiver, the CLI and tests. Payloads are MessagePack
// and any stock MessagePack library reads them.
//
// # Limits
//
// Decode never panics. It checks every length against the bytes present
// before allocating for it, and caps the memory of the decoded form at
// DecodeBudget(len(b)), 96 times the payload's size plus 64 KiB: the most
// a well-formed payload can need (a count row of no keys becomes a
// 96-byte Row from 2 bytes in version 1, from 1 byte, its count, in
// version 2's columns), so a hostile length prefix, or a payload of many
// tiny elements,
// is answered with ErrTooLarge before anything large is allocated.
// DecodeLimit takes a tighter cap (the receiver's MaxDecodedBytes).
//
// Decode also refuses, with ErrMalformed and the field named: a string
// that is not valid UTF-8, a string table whose strings[0] is not "", a
// distribution whose bucket counts overflow a uint64 or do not add up to
// its count, an exponential distribution whose zero count and bucket
// counts do not (or overflow), whose scale is outside -10..20 or whose
// bucket indices leave the int32 range, a summary whose quantiles are not
// increasing within 0..1, whose row has a values count other than its
// quantiles' or which has an overflow row, and every structural fault
// (lengths, types, indices).
package wire

import (
	"errors"
	"math"
	"slices"
	"time"

	"github.com/zerostat/zerostat/internal/attrval"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/promname"
)

// Version is the format version zerostat's encoders write by default:
// 1, rows as arrays. Version2 lays a view's rows out as columns (see
// docs/wire-format.md, "Version 2"), for payloads that compress to a
// fraction (exporter.Options.WireVersion). Decode reads both.
const (
	Version  = 1
	Version2 = 2
)

// Versions are the versions Decode reads (and the encoders write).
var Versions = []int{Version, Version2}

// ContentType is the media type of a payload over HTTP.
const ContentType = "application/msgpack"

// Temporality says what a payload's values cover.
type Temporality uint8

const (
	// Cumulative values cover the time since the view's start.
	Cumulative Temporality = 0
	// Delta values cover the interval since the previous export (the
	// payload's Start to End); distribution min and max still cover the
	// whole life of the series.
	Delta Temporality = 1
)

func (t Temporality) String() string {
	switch t {
	case Cumulative:
		return "cumulative"
	case Delta:
		return "delta"
	}
	return "unknown"
}

// Aggregation is a view's aggregation, numbered as OpenCensus's AggType.
type Aggregation uint8

// Aggregations.
const (
	Count        Aggregation = 1
	Sum          Aggregation = 2
	Distribution Aggregation = 3
	LastValue    Aggregation = 4
	// UpDownSum is a Sum that may go down (view.UpDownSum): its row is a
	// sum's, always its total since the view's start (or the row's own),
	// in a delta payload too, as a last value is.
	UpDownSum Aggregation = 5
	// DistributionUpperInclusive is a distribution whose buckets count by
	// Prometheus's and OpenTelemetry's rule, b[i-1] < v <= b[i]
	// (view.DistributionUpperInclusive); its row is a distribution's. It
	// exists on the wire only: Decode reports such a view as a
	// Distribution with View.UpperInclusive set.
	DistributionUpperInclusive Aggregation = 6
	// ExponentialDistribution is a base-2 exponential histogram
	// (view.ExponentialDistribution; OpenTelemetry's ExponentialHistogram,
	// Prometheus's native histogram): each row has a count, sum, min and
	// max (Row) and its scale, zero count and two bucket ranges
	// (View.Exp).
	ExponentialDistribution Aggregation = 7
	// Summary is an observed summary (view.Summary, metric.NewSummary;
	// Prometheus's summary, OTLP's Summary): each row has a count and a
	// sum (Row) and a value per quantile (View.RowQuantiles); the
	// view's Bounds are its quantiles. Always its current values, in a
	// delta payload too; never an overflow row.
	Summary Aggregation = 8
)

// AggregationOf returns the wire aggregation of a view of kind k: up (its
// Aggregation.UpDown) for a Sum that may go down, upper for a
// distribution whose buckets are upper-inclusive.
func AggregationOf(k core.Kind, up, upper bool) Aggregation {
	switch {
	case up && k == core.KindSum:
		return UpDownSum
	case upper && k == core.KindDistribution:
		return DistributionUpperInclusive
	case k == core.KindExponential: // core's 5 is the wire's up-down sum
		return ExponentialDistribution
	case k == core.KindSummary: // core's 6 is the wire's upper-inclusive distribution
		return Summary
	}
	return Aggregation(k) // core's numbering is OpenCensus's, as the wire's
}

func (a Aggregation) String() string {
	switch a {
	case Count:
		return "count"
	case Sum:
		return "sum"
	case Distribution:
		return "distribution"
	case LastValue:
		return "last_value"
	case UpDownSum:
		return "up_down_sum"
	case DistributionUpperInclusive:
		return "distribution_upper_inclusive"
	case ExponentialDistribution:
		return "exponential_distribution"
	case Summary:
		return "summary"
	}
	return "unknown"
}

// Payload is one decoded snapshot (or one part of a snapshot split by a
// size cap; each part is self-contained).
type Payload struct {
	Version     int
	Start, End  time.Time // the interval (Start: the first view start for cumulative payloads)
	Temporality Temporality
	Sequence    uint64 // export cycle, from 1
	Part        uint64 // index of this payload within its cycle, from 0
	Last        bool   // the cycle's last part
	Resource    []Attribute
	Views       []View

	memSize int // set by Decode
}

// MemSize returns the bytes of memory the decoded payload's slices and
// strings take, as DecodeLimit counts them (0 for a Payload not made by
// Decode). Cost: a field read.
func (p *Payload) MemSize() int { return p.memSize }

// Attribute is a resource attribute (service.name, host.name, ...).
type Attribute struct {
	Key, Value string
}

// View is a view's metadata and its rows in a payload.
type View struct {
	Name, Description, Unit string
	Aggregation             Aggregation
	Keys                    []string  // tag keys, in the order of Row.Values: by name, then any added to the view later
	Bounds                  []float64 // distribution bucket bounds; a Summary's quantiles
	// KeyTypes, when not nil, types the values of Keys (one per key):
	// a key an OpenTelemetry attribute typed (an int, a double, a bool, a
	// slice) keeps its type where a format has types (OTLP, pdata). The
	// row values stay strings, the attribute's text; TypedValue reads
	// one as its key's type. Nil: every key's values are strings.
	KeyTypes []AttrType
	// UpperInclusive reports a distribution whose buckets count a value
	// equal to a bound in the bucket below it, b[i-1] < v <= b[i]
	// (aggregation 6 on the wire, view.DistributionUpperInclusive);
	// otherwise in the bucket above it (aggregation 3, OpenCensus's
	// rule, view.Distribution).
	UpperInclusive bool
	Start          time.Time // when aggregation started
	Rows           []Row
	// Overflow aggregates the recordings of tag combinations beyond the
	// view's cardinality limit (no tag values), or is nil. A split
	// snapshot carries it in one part only.
	Overflow *Row
	// RowStarts are the rows that carry a start of their own, by
	// increasing Row index (see RowStart). Usually empty.
	RowStarts []RowStart
	// OverflowStart is the overflow row's own start, or the zero time
	// when it carries none (see RowStart; OverflowRowStart).
	OverflowStart time.Time
	// Exp holds the exponential histograms of an ExponentialDistribution
	// view's rows: Exp[i] is Rows[i]'s (its Count, Sum, Min and Max are
	// in the Row), len(Exp) == len(Rows). Nil for other aggregations.
	// (Kept beside Rows, not in Row, so that a Row stays 96 bytes for
	// the views that are most of a payload, see DecodeBudget.)
	Exp []ExpHistogram
	// OverflowExp is the overflow row's exponential histogram, when an
	// ExponentialDistribution view has an overflow row; else nil.
	OverflowExp *ExpHistogram
	// QuantileValues holds a Summary view's rows' values of its
	// quantiles (Bounds), len(Bounds) per row in row order (RowQuantiles
	// slices it); nil for other aggregations. (Beside Rows, as Exp.)
	QuantileValues []float64
	// Int reports that a value of the view (a Sum's or LastValue's, of a
	// row or the overflow row) was written as an integer: the view's
	// measure is an Int64 one, and the writer (zerostat's msgpack
	// exporter) writes an integer exactly where zerostat's OTLP exporter
	// writes an as_int point. See IntValue.
	Int bool
}

// IntValue returns row r's value (a Sum's or LastValue's) as an integer,
// and true, when it is an integer point: the view is an Int one and the
// value an integer an int64 holds, the rule by which zerostat's OTLP
// exporter writes as_int (a value the writer wrote as a float, in a view
// that has integers, is not integral). Cost: a few comparisons.
func (v *View) IntValue(r *Row) (int64, bool) {
	switch v.Aggregation {
	case Sum, UpDownSum:
		return promname.IntPoint(v.Int, r.Sum)
	case LastValue:
		return promname.IntPoint(v.Int, r.Value)
	}
	return 0, false
}

// RowStart is the start of a row whose values began after its view's: in
// a cumulative payload, a row of a series created after a series of its
// view was evicted, which may restart the values of a freed row with the
// same tags; in a delta payload, a distribution row exported for the first
// time (its series' creation: its values, min and max included, cover the
// series' whole life, so its min and max are the interval's).
type RowStart struct {
	Row   int // index in View.Rows
	Start time.Time
}

// RowStart returns when the values of row i began: its own start if it
// carries one, else the view's. Cost: a binary search of RowStarts.
func (v *View) RowStart(i int) time.Time {
	j, ok := slices.BinarySearchFunc(v.RowStarts, i, func(s RowStart, i int) int { return s.Row - i })
	if ok {
		return v.RowStarts[j].Start
	}
	return v.Start
}

// OverflowRowStart returns when the overflow row's values began: its own
// start if it carries one (a delta payload's first read of a distribution
// view's overflow series), else the view's.
func (v *View) OverflowRowStart() time.Time {
	if !v.OverflowStart.IsZero() {
		return v.OverflowStart
	}
	return v.Start
}

// Row is one tag-value combination's data. Which fields are set depends on
// the view's aggregation: Count sets Count; Sum sets Sum; LastValue sets
// Value; Distribution sets Count, Sum, Min, Max, SumOfSquaredDev and
// Buckets; ExponentialDistribution sets Count, Sum, Min and Max, and its
// buckets are in View.Exp (OverflowExp for the overflow row). Min and
// Max are +Inf and -Inf (min above max) when no value moved them.
type Row struct {
	Values          []string // one per key; "" for an absent key
	Count           uint64
	Sum             float64
	Value           float64
	Min, Max        float64
	SumOfSquaredDev float64
	Buckets         []uint64 // len(Bounds)+1 counts
}

// Mean returns Sum/Count, or 0 for an empty row.
func (r *Row) Mean() float64 {
	if r.Count == 0 {
		return 0
	}
	return r.Sum / float64(r.Count)
}

// ExpHistogram is the exponential part of a row of an
// ExponentialDistribution view, in the shape of OpenTelemetry's
// ExponentialHistogramDataPoint: at scale s the base is 2^(2^-s); bucket
// index i of Positive counts the values v with base^i < v <= base^(i+1),
// of Negative the values with base^i < -v <= base^(i+1); ZeroCount the
// values equal to 0 (either sign). The row's Count is ZeroCount plus
// every bucket count (Decode checks it). Decode guarantees Scale in
// -10..20 and every index of both ranges within an int32.
type ExpHistogram struct {
	Scale     int32
	ZeroCount uint64
	Positive  ExpBuckets
	Negative  ExpBuckets
}

// ExpBuckets is one sign's consecutive buckets: Counts[j] counts bucket
// index Offset+j. Empty when Counts is (zerostat then writes Offset 0;
// a reader ignores the offset of an empty range).
type ExpBuckets struct {
	Offset int32
	Counts []uint64
}

// Base returns the histogram's base, 2^(2^-Scale). Cost: an Exp2.
func (h *ExpHistogram) Base() float64 { return math.Exp2(math.Exp2(-float64(h.Scale))) }

// Bounds returns the absolute values bucket index i holds at h's scale:
// lower < |v| <= upper, lower = base^i and upper = base^(i+1), computed
// as 2^(i·2^-Scale) (exact at scale 0 and below; within an ulp or so
// above, for people and estimates). A bound beyond float64's range is 0
// or +Inf. Cost: two Exp2.
func (h *ExpHistogram) Bounds(i int32) (lower, upper float64) {
	f := math.Exp2(-float64(h.Scale))
	return math.Exp2(float64(i) * f), math.Exp2(float64(int64(i)+1) * f)
}

// Field counts of the positional arrays.
const (
	EnvelopeLen = 5 // [version, header, resource, views, strings]
	HeaderLen   = 6 // [start, end, temporality, sequence, part, last]
	ViewLen     = 9 // [name, description, unit, aggregation, keys, bounds, start, rows, overflow]
	AttrLen     = 2 // [key, value]
	// ColumnsLen is a version-2 view's rows: [n, values, data, starts].
	ColumnsLen = 4
	// ExpDataLen is the data of an ExponentialDistribution row: count,
	// sum, min, max, scale, zero_count, positive_offset, positive_counts,
	// negative_offset, negative_counts (version 2: as many columns).
	ExpDataLen = 10
)

// RowLen returns the length of a row array for an aggregation over nKeys
// tag keys: the values, one per key, then the data. A row may have one
// more element, its start (View.RowStarts, View.OverflowStart).
func RowLen(a Aggregation, nKeys int) int {
	switch a {
	case Distribution, DistributionUpperInclusive:
		return nKeys + 6 // values..., count, sum, min, max, sum_sq_dev, buckets
	case ExponentialDistribution:
		// values..., count, sum, min, max, scale, zero_count,
		// positive_offset, positive_counts, negative_offset, negative_counts
		return nKeys + ExpDataLen
	case Summary:
		return nKeys + 3 // values..., count, sum, quantile_values
	}
	return nKeys + 1 // values..., count | sum | value
}

// ErrMalformed is wrapped by every decoding error; ErrVersion by the error
// for a payload of another version.
var (
	ErrMalformed = errors.New("wire: malformed payload")
	ErrVersion   = errors.New("wire: unsupported version")
)

// AttrType is a key's value type (View.KeyTypes), numbered as
// OpenTelemetry's attribute.Type but for AttrString, 0.
type AttrType = attrval.Type

// Key value types.
const (
	AttrString       = attrval.String
	AttrBool         = attrval.Bool
	AttrInt64        = attrval.Int64
	AttrFloat64      = attrval.Float64
	AttrBoolSlice    = attrval.BoolSlice
	AttrInt64Slice   = attrval.Int64Slice
	AttrFloat64Slice = attrval.Float64Slice
	AttrStringSlice  = attrval.StringSlice
)

// KeyType returns the type of key i's values (AttrString without
// KeyTypes).
func (v *View) KeyType(i int) AttrType {
	if i < len(v.KeyTypes) {
		return v.KeyTypes[i]
	}
	return AttrString
}

// TypedValue returns s, a value of key i, as its key's type: a bool, an
// int64, a float64, or a []bool, []int64, []float64 or []string; s
// itself when the key is a string's or s does not parse as its type
// (the rule of every zerostat output). A slice allocates.
func (v *View) TypedValue(i int, s string) any {
	switch t := v.KeyType(i); t {
	case AttrBool:
		if x, ok := attrval.ParseBool(s); ok {
			return x
		}
	case AttrInt64:
		if x, ok := attrval.ParseInt(s); ok {
			return x
		}
	case AttrFloat64:
		if x, ok := attrval.ParseFloat(s); ok {
			return x
		}
	case AttrBoolSlice, AttrInt64Slice, AttrFloat64Slice, AttrStringSlice:
		if x, ok := attrval.ParseSlice(t, s); ok {
			return x
		}
	}
	return s
}
