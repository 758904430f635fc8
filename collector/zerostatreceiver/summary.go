package zerostatreceiver

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/zerostat/zerostat/exporter/wire"
)

// A summary view's rows (aggregation 8) are Summary points, as zerostat's
// OTLP exporter writes them (exporter/otlp, summary.go): start (the
// view's, or the row's own) and time, count, sum, and a ValueAtQuantile
// per quantile in the view's order. A Summary has no temporality: its
// points are the rows' current values in a delta payload too (the
// payload carries them so), starting at the view's start.

// Bytes per Summary point (its struct and pointer) and per quantile of
// it (its ValueAtQuantile and pointer, the slice at its size class),
// upper bounds measured on pdata v1 (TestConvertBytesBoundSummary).
const (
	summaryPointBytes = 160
	quantileBytes     = 48
)

// summaryPoint appends the Summary point of row i, r, starting at
// start; returns its attributes.
func (c *rowConv) summaryPoint(i int, r *wire.Row, start pcommon.Timestamp) pcommon.Map {
	dp := c.sums.AppendEmpty()
	dp.SetStartTimestamp(start)
	dp.SetTimestamp(c.end)
	dp.SetCount(r.Count)
	dp.SetSum(r.Sum)
	qs := c.v.RowQuantiles(i)
	qv := dp.QuantileValues()
	qv.EnsureCapacity(len(qs))
	for j, x := range qs {
		q := qv.AppendEmpty()
		q.SetQuantile(c.v.Bounds[j])
		q.SetValue(x)
	}
	return dp.Attributes()
}

// summaryBytes bounds what a Summary view's rows allocate as points (their
// attributes apart).
func summaryBytes(v *wire.View) int64 {
	return int64(len(v.Rows)) * (summaryPointBytes + quantileBytes*int64(len(v.Bounds)))
}
