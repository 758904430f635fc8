package wire

import (
	"strconv"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/promname"
)

// MetricType is the OpenTelemetry data type a view maps to.
type MetricType uint8

// Metric types: OTLP's Sum, Gauge and Histogram.
const (
	SumType       MetricType = 1 + iota // Count and Sum views
	GaugeType                           // LastValue views
	HistogramType                       // Distribution views
	// ExponentialHistogramType is OTLP's ExponentialHistogram
	// (ExponentialDistribution views; a native histogram to Prometheus).
	ExponentialHistogramType
	// SummaryType is OTLP's Summary (Summary views; a summary to
	// Prometheus).
	SummaryType
)

func (t MetricType) String() string {
	switch t {
	case SumType:
		return "sum"
	case GaugeType:
		return "gauge"
	case HistogramType:
		return "histogram"
	case ExponentialHistogramType:
		return "exponential_histogram"
	case SummaryType:
		return "summary"
	}
	return "unknown"
}

// Metric is a payload's view as a metric: what zerostat's exporters make
// of the same view (internal/promname's mapping, the one every output
// uses; docs/metric-mapping.md), for a reader that turns payloads into
// another data model, as the OpenTelemetry Collector receiver does.
//
// A payload carries the view, not its measure. What the exporters read of
// the measure reaches it through the writer: whether the measure is an
// Int64 one, from the integer form of its values (View.Int: a view none
// of whose values was written as an integer reads as a Float64 one, which
// changes no point, see View.IntValue), and the description, which the
// msgpack exporter writes as the mapping gives it ("Count of <measure>
// recordings: ..." for a Count view that took its measure's), and whether
// a Sum may go down (aggregation UpDownSum), and a distribution's bucket
// rule (View.UpperInclusive).
type Metric struct {
	Type MetricType
	// Monotonic: a Count view's is always; a Sum view's unless one of
	// its values in this payload is negative or NaN (then, as in an OTLP
	// export, the Sum is non-monotonic for this payload only).
	Monotonic bool
	Unit      string // UCUM: "1" for a Count, the view's otherwise
	Int       bool   // integer points: a Count's, a Sum's or LastValue's with View.Int
	Help      string // the view's description, valid UTF-8
}

// Metric maps v. Cost: a few string operations, and for a Sum view one
// pass over its rows. Safe for concurrent use with other readers of v.
func (v *View) Metric() Metric {
	var kind core.Kind
	switch v.Aggregation {
	case Count:
		kind = core.KindCount
	case Sum, UpDownSum:
		kind = core.KindSum
	case LastValue:
		kind = core.KindLastValue
	case Distribution, ExponentialDistribution:
		// An exponential distribution is named as a distribution
		// (promname: a Histogram, the same rules).
		kind = core.KindDistribution
	case Summary:
		kind = core.KindSummary
	default:
		return Metric{}
	}
	up := v.Aggregation == UpDownSum
	pm := promname.Desc{Kind: kind, Unit: v.Unit, Description: v.Description, Int: v.Int, UpDown: up,
		UpperInclusive: v.UpperInclusive}.Metric()
	m := Metric{Monotonic: pm.Monotonic, Unit: pm.Unit, Int: pm.Int, Help: pm.Help}
	switch {
	case up: // a gauge to Prometheus, a non-monotonic Sum to OTLP
		m.Type = SumType
	case pm.Type == promname.Counter:
		m.Type = SumType
	case pm.Type == promname.Gauge:
		m.Type = GaugeType
	case v.Aggregation == ExponentialDistribution:
		m.Type = ExponentialHistogramType
	case pm.Type == promname.Histogram:
		m.Type = HistogramType
	case pm.Type == promname.Summary:
		m.Type = SummaryType
	}
	if v.Aggregation == Sum {
		for i := range v.Rows {
			if !promname.CounterValid(v.Rows[i].Sum) {
				m.Monotonic = false
			}
		}
		if v.Overflow != nil && !promname.CounterValid(v.Overflow.Sum) {
			m.Monotonic = false
		}
	}
	return m
}

// ResourceValue returns a resource attribute's value as OTLP exporters
// write it: process.pid as an integer (ok true), every other attribute as
// its string (ok false). Cost: a ParseInt for process.pid.
func (a Attribute) ResourceValue() (n int64, ok bool) {
	if a.Key != "process.pid" {
		return 0, false
	}
	n, err := strconv.ParseInt(a.Value, 10, 64)
	return n, err == nil
}
