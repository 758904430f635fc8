package view

import (
	"math"
	"slices"
	"time"
)

// AggregationData is the aggregated value of one row: *CountData, *SumData,
// *DistributionData, *LastValueData, *ExponentialDistributionData or
// *SummaryData.
type AggregationData interface {
	isAggregationData() bool
	equal(other AggregationData) bool
	// StartTime returns when the row started aggregating (zero for
	// LastValueData).
	StartTime() time.Time
}

// epsilon is OpenCensus's tolerance when comparing float data
// (stats/view/aggregation_data.go).
const epsilon = 1e-9

// CountData is the data of a Count aggregation.
type CountData struct {
	Start time.Time
	Value int64
}

func (a *CountData) isAggregationData() bool { return true }

// StartTime returns when the row was first recorded.
func (a *CountData) StartTime() time.Time { return a.Start }

func (a *CountData) equal(other AggregationData) bool {
	b, ok := other.(*CountData)
	return ok && a.Start.Equal(b.Start) && a.Value == b.Value
}

// SumData is the data of a Sum aggregation.
type SumData struct {
	Start time.Time
	Value float64
}

func (a *SumData) isAggregationData() bool { return true }

// StartTime returns when the row was first recorded.
func (a *SumData) StartTime() time.Time { return a.Start }

func (a *SumData) equal(other AggregationData) bool {
	b, ok := other.(*SumData)
	return ok && a.Start.Equal(b.Start) && math.Pow(a.Value-b.Value, 2) < epsilon
}

// DistributionData is the data of a Distribution aggregation, with
// OpenCensus's fields. CountPerBucket has one more element than the bounds.
type DistributionData struct {
	Count           int64   // number of values aggregated
	Min             float64 // smallest value
	Max             float64 // largest value
	Mean            float64 // mean of the values
	SumOfSquaredDev float64 // sum of squared deviations from the mean
	CountPerBucket  []int64 // number of values per bucket
	// ExemplarsPerBucket holds, per bucket, the latest value recorded with
	// attachments (stats.WithAttachments, a span context, Meter.Record),
	// nil for a bucket without one; the slice is nil when the row has none
	// at all (as in OpenCensus, where it is allocated per row).
	ExemplarsPerBucket []*Exemplar
	Start              time.Time

	bounds []float64
	sum    float64
	hasSum bool // sum is the running sum (data from RetrieveData)
}

func (a *DistributionData) isAggregationData() bool { return true }

// StartTime returns when the row was first recorded.
func (a *DistributionData) StartTime() time.Time { return a.Start }

// Sum returns the sum of the values. zerostat keeps it exactly (a running
// sum); OpenCensus returns Mean × Count, which can differ in the last bits.
// For data built by hand (no running sum), it is Mean × Count.
func (a *DistributionData) Sum() float64 {
	if !a.hasSum {
		return a.Mean * float64(a.Count)
	}
	return a.sum
}

// Bounds returns the bucket bounds. The caller must not modify them.
func (a *DistributionData) Bounds() []float64 { return a.bounds }

func (a *DistributionData) variance() float64 {
	if a.Count <= 1 {
		return 0
	}
	return a.SumOfSquaredDev / float64(a.Count-1)
}

func (a *DistributionData) equal(other AggregationData) bool {
	b, ok := other.(*DistributionData)
	if !ok || !a.Start.Equal(b.Start) || a.Count != b.Count ||
		a.Min != b.Min || a.Max != b.Max ||
		len(a.CountPerBucket) != len(b.CountPerBucket) {
		return false
	}
	for i := range a.CountPerBucket {
		if a.CountPerBucket[i] != b.CountPerBucket[i] {
			return false
		}
	}
	return math.Pow(a.Mean-b.Mean, 2) < epsilon && math.Pow(a.variance()-b.variance(), 2) < epsilon
}

// ExponentialDistributionData is the data of an ExponentialDistribution
// aggregation, in the shape of OpenTelemetry's ExponentialHistogram data
// point: PositiveCounts[i] counts the values v with base^(PositiveOffset+i)
// < v <= base^(PositiveOffset+i+1), base = 2^(2^-Scale); NegativeCounts
// likewise for -v; ZeroCount the zeros. Count is ZeroCount plus every
// bucket's count; Sum is the sum of the counted values. Min and Max are 0
// while Count is 0 (NaN and ±Inf are never counted). Not in OpenCensus.
type ExponentialDistributionData struct {
	Count          int64
	Sum            float64
	Min, Max       float64
	Scale          int32
	ZeroCount      int64
	PositiveOffset int32
	PositiveCounts []int64
	NegativeOffset int32
	NegativeCounts []int64
	Start          time.Time
}

func (a *ExponentialDistributionData) isAggregationData() bool { return true }

// StartTime returns when the row was first recorded.
func (a *ExponentialDistributionData) StartTime() time.Time { return a.Start }

// Mean returns Sum/Count, or 0 for an empty row.
func (a *ExponentialDistributionData) Mean() float64 {
	if a.Count == 0 {
		return 0
	}
	return a.Sum / float64(a.Count)
}

func (a *ExponentialDistributionData) equal(other AggregationData) bool {
	b, ok := other.(*ExponentialDistributionData)
	return ok && a.Start.Equal(b.Start) && a.Count == b.Count && a.Min == b.Min && a.Max == b.Max &&
		a.Scale == b.Scale && a.ZeroCount == b.ZeroCount &&
		a.PositiveOffset == b.PositiveOffset && slices.Equal(a.PositiveCounts, b.PositiveCounts) &&
		a.NegativeOffset == b.NegativeOffset && slices.Equal(a.NegativeCounts, b.NegativeCounts) &&
		math.Pow(a.Sum-b.Sum, 2) < epsilon
}

// Exemplar is an example of the values a bucket counts: the value, when it
// was recorded, and its attachments (OpenCensus's metricdata.Exemplar,
// whose Attachments map converts to this one's).
type Exemplar struct {
	Value       float64
	Timestamp   time.Time
	Attachments map[string]interface{}
}

// LastValueData is the data of a LastValue aggregation.
type LastValueData struct {
	Value float64
}

func (a *LastValueData) isAggregationData() bool { return true }

// StartTime returns the zero time: a last value has no start.
func (a *LastValueData) StartTime() time.Time { return time.Time{} }

func (a *LastValueData) equal(other AggregationData) bool {
	b, ok := other.(*LastValueData)
	return ok && a.Value == b.Value
}

// ClearStart sets the start time of data to the zero time, for comparisons
// in tests.
func ClearStart(data AggregationData) {
	switch d := data.(type) {
	case *CountData:
		d.Start = time.Time{}
	case *SumData:
		d.Start = time.Time{}
	case *DistributionData:
		d.Start = time.Time{}
	case *ExponentialDistributionData:
		d.Start = time.Time{}
	case *SummaryData:
		d.Start = time.Time{}
	}
}
