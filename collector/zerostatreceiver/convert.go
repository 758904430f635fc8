package zerostatreceiver

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/exporter/wire"
)

// Convert appends payload p to md as one ResourceMetrics, as zerostat's
// OTLP exporter (exporter/otlp) writes the same snapshot: the view's
// metric type, monotonicity, unit and help from wire's View.Metric (the
// one mapping every zerostat output uses, docs/metric-mapping.md); one
// data point per row, its tag values as string attributes (absent ones
// left out), the overflow row with otel.metric.overflow=true; the
// resource's attributes (process.pid as an integer) and the scope
// github.com/zerostat/zerostat (no version, as the OTLP exporter's). A
// view with no rows is left out.
//
// Times, as the OTLP exporter states them: a point ends at the payload's
// end; a cumulative point starts at its view's start, or at its row's own
// (a row re-created after eviction); a delta point at the interval's
// start, or its view's start if later (the view's first export: the
// payload's start is then the earliest first-exported view's). A Sum's or
// LastValue's point is an integer where the payload's value is
// (wire.View.IntValue: an Int64 measure's). A delta histogram point has
// min and max when its row carries a start (its series' first export: the
// payload's min and max, which cover the series' life, are then the
// interval's), the overflow row's too (version 2; version 1's overflow row
// carries none). An exponential distribution's rows (aggregation 7) are
// ExponentialHistogram points (expPoint): scale, zero count, offsets and
// counts as the row's histogram has them, min and max whenever something
// was counted (a delta's are the interval's own: the payload carries
// them so). A summary's rows (aggregation 8) are Summary points
// (summary.go): count, sum and the quantile values, always the rows'
// current values from the view's start. docs/collector.md says what
// still differs from the OTLP path.
//
// Cost: one pass over the payload; allocates the pdata. Safe for
// concurrent use with other readers of p.
func Convert(p *wire.Payload, md pmetric.Metrics) {
	rm := md.ResourceMetrics().AppendEmpty()
	attrs := rm.Resource().Attributes()
	attrs.EnsureCapacity(len(p.Resource))
	for _, a := range p.Resource {
		if n, ok := a.ResourceValue(); ok {
			attrs.PutInt(a.Key, n)
		} else {
			attrs.PutStr(a.Key, a.Value)
		}
	}
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(otlp.ScopeName)
	ms := sm.Metrics()
	ms.EnsureCapacity(len(p.Views))
	end := pcommon.NewTimestampFromTime(p.End)
	for i := range p.Views {
		v := &p.Views[i]
		n := len(v.Rows)
		if v.Overflow != nil {
			n++
		}
		if n == 0 {
			continue
		}
		// An up-down sum is its total in a delta payload too (see
		// wire.UpDownSum): a cumulative point, as OTLP sends it.
		// A summary likewise: its current values, starting at the view's.
		delta := p.Temporality == wire.Delta && v.Aggregation != wire.UpDownSum && v.Aggregation != wire.Summary
		temporality := pmetric.AggregationTemporalityCumulative
		if delta {
			temporality = pmetric.AggregationTemporalityDelta
		}
		start := pcommon.NewTimestampFromTime(v.Start)
		if delta && p.Start.After(v.Start) {
			start = pcommon.NewTimestampFromTime(p.Start)
		}
		mm := v.Metric()
		m := ms.AppendEmpty()
		m.SetName(v.Name)
		m.SetDescription(mm.Help)
		m.SetUnit(mm.Unit)
		c := rowConv{v: v, start: start, end: end, delta: delta}
		switch mm.Type {
		case wire.SumType:
			s := m.SetEmptySum()
			s.SetAggregationTemporality(temporality)
			s.SetIsMonotonic(mm.Monotonic)
			c.numbers = s.DataPoints()
		case wire.GaugeType:
			c.numbers = m.SetEmptyGauge().DataPoints()
			c.gauge = true
		case wire.HistogramType:
			h := m.SetEmptyHistogram()
			h.SetAggregationTemporality(temporality)
			c.hists = h.DataPoints()
		case wire.ExponentialHistogramType:
			h := m.SetEmptyExponentialHistogram()
			h.SetAggregationTemporality(temporality)
			c.exps = h.DataPoints()
		case wire.SummaryType:
			c.sums = m.SetEmptySummary().DataPoints() // summary.go
		}
		c.each(n)
	}
}

// rowConv writes a view's rows as data points of one kind.
type rowConv struct {
	v          *wire.View
	start, end pcommon.Timestamp
	delta      bool
	gauge      bool
	numbers    pmetric.NumberDataPointSlice // a Sum's or Gauge's
	hists      pmetric.HistogramDataPointSlice
	exps       pmetric.ExponentialHistogramDataPointSlice
	sums       pmetric.SummaryDataPointSlice
}

func (c *rowConv) each(n int) {
	switch c.v.Aggregation {
	case wire.Distribution:
		c.hists.EnsureCapacity(n)
	case wire.ExponentialDistribution:
		c.exps.EnsureCapacity(n)
	case wire.Summary:
		c.sums.EnsureCapacity(n)
	default:
		c.numbers.EnsureCapacity(n)
	}
	// Rows with a start of their own: cumulative, re-created after
	// eviction (the point starts there); delta, a distribution's first
	// export (the point has min and max).
	rs := c.v.RowStarts
	for i := range c.v.Rows {
		start, own := c.start, false
		if len(rs) > 0 && rs[0].Row == i {
			if !c.delta {
				start = pcommon.NewTimestampFromTime(rs[0].Start)
			}
			own = true
			rs = rs[1:]
		}
		c.row(i, &c.v.Rows[i], false, start, own)
	}
	if c.v.Overflow != nil { // last, as the OTLP exporter writes it
		start, own := c.start, !c.v.OverflowStart.IsZero()
		if own && !c.delta {
			start = pcommon.NewTimestampFromTime(c.v.OverflowStart)
		}
		c.row(-1, c.v.Overflow, true, start, own)
	}
}

// row appends r's data point (row i of the view; -1: the overflow row),
// starting at start; own: r carries a start.
func (c *rowConv) row(i int, r *wire.Row, overflow bool, start pcommon.Timestamp, own bool) {
	var attrs pcommon.Map
	v := c.v
	switch v.Aggregation {
	case wire.ExponentialDistribution:
		e := v.OverflowExp
		if i >= 0 {
			e = nil
			if i < len(v.Exp) { // as Decode guarantees
				e = &v.Exp[i]
			}
		}
		attrs = c.expPoint(r, e, start)
	case wire.Summary:
		attrs = c.summaryPoint(i, r, start) // never the overflow row: Decode refuses one
	case wire.Distribution:
		dp := c.hists.AppendEmpty()
		dp.SetStartTimestamp(start)
		dp.SetTimestamp(c.end)
		dp.SetCount(r.Count)
		if !(r.Min < 0) { // OTLP: no sum when negative values were recorded; min is the series' all-time one
			dp.SetSum(r.Sum)
		}
		dp.BucketCounts().FromRaw(r.Buckets)
		dp.ExplicitBounds().FromRaw(v.Bounds)
		if !c.delta || own { // a delta's min and max are the interval's on its series' first export
			dp.SetMin(r.Min)
			dp.SetMax(r.Max)
		}
		attrs = dp.Attributes()
	default:
		dp := c.numbers.AppendEmpty()
		if !c.gauge {
			dp.SetStartTimestamp(start)
		}
		dp.SetTimestamp(c.end)
		switch v.Aggregation {
		case wire.Count:
			dp.SetIntValue(int64(r.Count))
		default:
			if i, ok := v.IntValue(r); ok {
				dp.SetIntValue(i)
			} else if v.Aggregation == wire.Sum || v.Aggregation == wire.UpDownSum {
				dp.SetDoubleValue(r.Sum)
			} else {
				dp.SetDoubleValue(r.Value)
			}
		}
		attrs = dp.Attributes()
	}
	if overflow {
		attrs.PutBool(otlp.OverflowAttribute, true)
		return
	}
	attrs.EnsureCapacity(len(r.Values)) // one allocation, not a growing slice
	for i, val := range r.Values {
		switch {
		case val == "":
		case v.KeyType(i) == wire.AttrString:
			attrs.PutStr(v.Keys[i], val)
		default:
			putTyped(attrs, v.Keys[i], v.TypedValue(i, val))
		}
	}
}

// expPoint appends an ExponentialHistogram point of row r, whose
// buckets are e, as zerostat's OTLP exporter writes it (exporter/otlp,
// expo.go): count; the sum unless a negative value was recorded (Min < 0,
// as for a Histogram); scale, zero count (zero threshold 0), each sign's
// offset and counts (none: offset 0, the field absent); min and max when
// something was counted (Count > 0 and Min <= Max: the interval's own in
// a delta payload). Returns its attributes.
func (c *rowConv) expPoint(r *wire.Row, e *wire.ExpHistogram, start pcommon.Timestamp) pcommon.Map {
	dp := c.exps.AppendEmpty()
	dp.SetStartTimestamp(start)
	dp.SetTimestamp(c.end)
	dp.SetCount(r.Count)
	if !(r.Min < 0) {
		dp.SetSum(r.Sum)
	}
	if e != nil {
		dp.SetScale(e.Scale)
		dp.SetZeroCount(e.ZeroCount)
		for _, b := range [2]struct {
			dst pmetric.ExponentialHistogramDataPointBuckets
			src *wire.ExpBuckets
		}{{dp.Positive(), &e.Positive}, {dp.Negative(), &e.Negative}} {
			if len(b.src.Counts) > 0 {
				b.dst.SetOffset(b.src.Offset)
				b.dst.BucketCounts().FromRaw(b.src.Counts)
			}
		}
	}
	if r.Count > 0 && r.Min <= r.Max {
		dp.SetMin(r.Min)
		dp.SetMax(r.Max)
	}
	return dp.Attributes()
}

// putTyped puts a typed key's value (wire.View.TypedValue) with its type,
// as the OTLP receiver puts the same attribute from zerostat's OTLP
// exporter.
func putTyped(attrs pcommon.Map, k string, x any) {
	switch x := x.(type) {
	case bool:
		attrs.PutBool(k, x)
	case int64:
		attrs.PutInt(k, x)
	case float64:
		attrs.PutDouble(k, x)
	case []bool:
		s := attrs.PutEmptySlice(k)
		for _, e := range x {
			s.AppendEmpty().SetBool(e)
		}
	case []int64:
		s := attrs.PutEmptySlice(k)
		for _, e := range x {
			s.AppendEmpty().SetInt(e)
		}
	case []float64:
		s := attrs.PutEmptySlice(k)
		for _, e := range x {
			s.AppendEmpty().SetDouble(e)
		}
	case []string:
		s := attrs.PutEmptySlice(k)
		for _, e := range x {
			s.AppendEmpty().SetStr(e)
		}
	case string:
		attrs.PutStr(k, x)
	}
}

// Bytes per piece of the pdata Convert makes, upper bounds measured on
// pdata v1 (TestConvertBytesBound checks them against TotalAlloc): a
// number point (its struct, its value, its pointer in the slice), a
// histogram point, an attribute (its KeyValue and AnyValue), a metric,
// the ResourceMetrics and ScopeMetrics.
const (
	numberPointBytes = 128
	histPointBytes   = 192
	expPointBytes    = 256
	attrBytes        = 64
	metricBytes      = 1 << 10
	payloadBytes     = 4 << 10
)

// convertBytes returns an upper bound of what Convert(p, ...) allocates:
// the pdata's memory, which the receiver reserves from
// max_inflight_bytes before converting (receiver.Handler.ConsumeBytes).
// A histogram point copies its bounds and counts, an exponential one its
// bucket counts; a slice is allocated at its size class, a quarter above
// its bytes at most. Cost: one pass over the views, and over the rows'
// bucket ranges of exponential views (not their counts). Safe for
// concurrent use.
func convertBytes(p *wire.Payload) int64 {
	n := int64(payloadBytes + attrBytes*len(p.Resource))
	for i := range p.Views {
		v := &p.Views[i]
		rows := int64(len(v.Rows))
		point := int64(numberPointBytes)
		switch v.Aggregation {
		case wire.Distribution:
			point = histPointBytes + 8*int64(2*len(v.Bounds)+1)*5/4
		case wire.ExponentialDistribution:
			point = expPointBytes
			for j := range v.Exp {
				n += expCountsBytes(&v.Exp[j])
			}
			if v.OverflowExp != nil {
				n += expCountsBytes(v.OverflowExp)
			}
		case wire.Summary:
			point = 0 // summaryBytes
			n += summaryBytes(v)
		}
		n += metricBytes + rows*(point+int64(attrBytes*len(v.Keys))*5/4)
		if v.Overflow != nil {
			n += point + attrBytes
		}
	}
	return n
}

// expCountsBytes bounds what an exponential point's two copies of bucket
// counts allocate: each at its size class.
func expCountsBytes(e *wire.ExpHistogram) int64 {
	return 8 * int64(len(e.Positive.Counts)+len(e.Negative.Counts)) * 5 / 4
}
