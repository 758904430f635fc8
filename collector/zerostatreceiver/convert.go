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
// github.com/zerostat/zerostat. A view with no rows is left out.
//
// What the payload cannot say, and so differs from the OTLP exporter's
// output for the same views: a cumulative point starts at its view's
// start, not its series' creation (but for a row re-created after
// eviction, which carries its own start); a Sum or LastValue of an Int64
// measure has double points; a Count view whose description is its
// measure's keeps it as is; a delta histogram point has no min and max
// (the payload's cover the series' life, OTLP's the interval); the scope
// has no version. docs/collector.md lists them.
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
	delta := p.Temporality == wire.Delta
	temporality := pmetric.AggregationTemporalityCumulative
	if delta {
		temporality = pmetric.AggregationTemporalityDelta
	}
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
		start := pcommon.NewTimestampFromTime(v.Start)
		if delta {
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
}

func (c *rowConv) each(n int) {
	if c.v.Aggregation == wire.Distribution {
		c.hists.EnsureCapacity(n)
	} else {
		c.numbers.EnsureCapacity(n)
	}
	rs := c.v.RowStarts // rows re-created after eviction start on their own
	for i := range c.v.Rows {
		start := c.start
		if len(rs) > 0 && rs[0].Row == i {
			if !c.delta {
				start = pcommon.NewTimestampFromTime(rs[0].Start)
			}
			rs = rs[1:]
		}
		c.row(&c.v.Rows[i], false, start)
	}
	if c.v.Overflow != nil { // last, as the OTLP exporter writes it
		c.row(c.v.Overflow, true, c.start)
	}
}

// row appends r's data point, starting at start.
func (c *rowConv) row(r *wire.Row, overflow bool, start pcommon.Timestamp) {
	var attrs pcommon.Map
	v := c.v
	if v.Aggregation == wire.Distribution {
		dp := c.hists.AppendEmpty()
		dp.SetStartTimestamp(start)
		dp.SetTimestamp(c.end)
		dp.SetCount(r.Count)
		if !(r.Min < 0) { // OTLP: no sum when negative values were recorded; min is the series' all-time one
			dp.SetSum(r.Sum)
		}
		dp.BucketCounts().FromRaw(r.Buckets)
		dp.ExplicitBounds().FromRaw(v.Bounds)
		if !c.delta {
			dp.SetMin(r.Min)
			dp.SetMax(r.Max)
		}
		attrs = dp.Attributes()
	} else {
		dp := c.numbers.AppendEmpty()
		if !c.gauge {
			dp.SetStartTimestamp(start)
		}
		dp.SetTimestamp(c.end)
		switch v.Aggregation {
		case wire.Count:
			dp.SetIntValue(int64(r.Count))
		case wire.Sum:
			dp.SetDoubleValue(r.Sum)
		default:
			dp.SetDoubleValue(r.Value)
		}
		attrs = dp.Attributes()
	}
	if overflow {
		attrs.PutBool(otlp.OverflowAttribute, true)
		return
	}
	attrs.EnsureCapacity(len(r.Values)) // one allocation, not a growing slice
	for i, val := range r.Values {
		if val != "" {
			attrs.PutStr(v.Keys[i], val)
		}
	}
}
