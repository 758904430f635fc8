package promname

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/zerostat/zerostat/internal/core"
)

// Metric is what a view is as a metric, whatever the output: the one
// mapping every exporter uses (exporter/prometheus, exporter/remotewrite,
// exporter/otlp, the snapshot handler's text forms, debugstats). The table
// in docs/metric-mapping.md is this function in prose.
//
//	aggregation    Type       Monotonic  Unit             Int
//	Count          Counter    yes        "1"              yes
//	Sum            Counter    yes        the measure's    an Int64 measure
//	UpDownSum      Gauge      no         the measure's    an Int64 measure
//	LastValue      Gauge      -          the measure's    an Int64 measure
//	Distribution   Histogram  -          the measure's    -
//	Summary        Summary    -          the measure's    -
//
// A Sum is a monotonic counter (as OpenCensus's Prometheus exporter and
// OpenTelemetry's OpenCensus bridge treat it). A Sum of negative values is
// not one: an export in which some series of a Sum view is negative (or
// NaN) exposes that view as an untyped metric (Prometheus) or a
// non-monotonic sum (OTLP) with the same name and values, for that export
// only (see CounterValid). No value is changed or dropped.
type Metric struct {
	Type      Type
	Monotonic bool
	// Unit is the metric's UCUM unit: "1" for a Count (it counts
	// recordings, whatever the measure's unit), the measure's otherwise.
	Unit string
	// Int reports integer points: a Count's, and a Sum's or LastValue's
	// over an Int64 measure (whose values are integers unless a Float64
	// measure of the same name records into it: IntValue then says no).
	Int bool
	// Help is the metric's description: the view's, except for a Count
	// view that took its measure's description (OpenCensus's default),
	// which would describe the measured values rather than the count.
	Help string
	// UpperInclusive reports a histogram whose buckets count
	// b[i-1] < v <= b[i] (view.DistributionUpperInclusive); otherwise a
	// value equal to a bound is counted in the bucket above it.
	UpperInclusive bool
	// Exponential reports an exponential histogram
	// (view.ExponentialDistribution): OTLP's ExponentialHistogram,
	// Prometheus's native histogram (docs/metric-mapping.md).
	Exponential bool
}

// MetricOf maps view v. Set-up cost: a few string operations.
func MetricOf(v *core.View) Metric {
	d := Desc{Kind: v.Agg.Kind(), Unit: v.Unit, Description: v.Description, Int: v.Int,
		UpperInclusive: v.Agg.UpperInclusive(), UpDown: v.UpDown}
	if ms := v.Measure; ms != nil {
		d.MeasureName, d.MeasureDescription = ms.Name, ms.Description
	}
	return d.Metric()
}

// Desc is what the mapping reads of a view: MetricOf fills it from a
// registered view, exporter/wire from a decoded payload's view (which
// carries no measure, and says whether its measure is an Int64 one only
// by the integer form of its values).
type Desc struct {
	Kind                            core.Kind
	Unit, Description               string
	Int                             bool   // the view's measure is an Int64 one
	MeasureName, MeasureDescription string // "" when unknown
	UpperInclusive                  bool
	UpDown                          bool // a Sum that may go down (view.UpDownSum)
}

// Metric maps d: the rules of MetricOf. Cost: a few string operations.
func (d Desc) Metric() Metric {
	m := Metric{Type: TypeOf(d.Kind), Unit: d.Unit, Help: validUTF8(d.Description), Int: d.Int}
	switch d.Kind {
	case core.KindCount:
		m.Monotonic, m.Unit, m.Int = true, "1", true
		if d.MeasureName != "" && d.Description != "" && d.Description == d.MeasureDescription {
			m.Help = validUTF8("Count of " + d.MeasureName + " recordings: " + d.Description)
		}
	case core.KindSum:
		m.Monotonic = true
		if d.UpDown { // view.UpDownSum: a non-monotonic sum, a gauge to Prometheus
			m.Type, m.Monotonic = Gauge, false
		}
	case core.KindDistribution:
		m.Int = false
		m.UpperInclusive = d.UpperInclusive
	case core.KindExponential:
		// Its buckets count base^i < |v| <= base^(i+1): upper-inclusive.
		m.Int, m.UpperInclusive, m.Exponential = false, true, true
	case core.KindSummary:
		// Its quantile values and sum are floats whatever its measure.
		m.Int = false
	}
	return m
}

// CounterValid reports whether v may be a counter's value: not negative,
// not NaN (OpenMetrics 1.0: a counter's total is a non-negative,
// non-decreasing number).
func CounterValid(v float64) bool { return v >= 0 }

// IntValue returns f as an int64 and true when f is an integer that an
// int64 holds exactly, which every value of an Int64 measure's Sum or
// LastValue is unless a Float64 measure of the same name recorded into it.
func IntValue(f float64) (int64, bool) {
	if f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}

// IntPoint returns v as an integer, and true, when a point of a metric
// with integer points (Metric.Int) has the value v and an exporter writes
// it as an integer: when v is an integer an int64 holds (IntValue). Every
// exporter that distinguishes integer from float points decides with it:
// OTLP's as_int, the msgpack payload's integer form of a Sum's or a
// LastValue's value (docs/wire-format.md), and the Collector receiver
// reading that form back. Cost: a few float comparisons.
func IntPoint(isInt bool, v float64) (int64, bool) {
	if !isInt {
		return 0, false
	}
	return IntValue(v)
}

func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
