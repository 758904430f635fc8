package otlp

import (
	"math"

	"github.com/zerostat/zerostat/internal/attrval"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/delta"
	"github.com/zerostat/zerostat/internal/promname"
)

// A summary view (view.Summary, metric.NewSummary) is an OTLP Summary:
// one SummaryDataPoint per series with its start (delta.CumulativeStart)
// and time, count, sum, and a ValueAtQuantile per quantile, in the
// view's (increasing) order, with the series' attributes. A Summary has
// no temporality: its points are always the series' current values,
// with Delta temporality too (a summary is never read as deltas: its
// quantiles cannot be subtracted). Fields are written in protobuf-go's
// order with proto3's zero values left out (a count, sum, quantile or
// value of 0), so the bytes are proto.Marshal's.
const (
	tagMetricSummary = 11<<3 | wireBytes // Summary summary = 11 (Metric's data oneof)

	// SummaryDataPoint (start and time as tagHDPStart and tagHDPTime)
	tagSDPCount          = 4<<3 | wireFixed64 // fixed64 count = 4
	tagSDPSum            = 5<<3 | wireFixed64 // double sum = 5
	tagSDPQuantileValues = 6<<3 | wireBytes   // repeated ValueAtQuantile quantile_values = 6
	tagSDPAttributes     = 7<<3 | wireBytes   // repeated KeyValue attributes = 7

	// SummaryDataPoint.ValueAtQuantile
	tagVAQQuantile = 1<<3 | wireFixed64 // double quantile = 1
	tagVAQValue    = 2<<3 | wireFixed64 // double value = 2
)

// appendSummaryMetric appends summary view v as a Metric whose data is a
// Summary, one data point per series; a view without series is left out.
// It reads each series once (no delta state) and, in steady state,
// allocates nothing.
func (e *Encoder) appendSummaryMetric(b []byte, v *core.View, end uint64) []byte {
	a := v.Agg
	qs := a.Quantiles()
	vm := e.metrics[v]
	if vm == nil {
		vm = &viewMetric{Metric: promname.MetricOf(v)}
		e.metrics[v] = vm
	}
	vm.seq = e.seq
	e.keys, e.keyOff = e.keys[:0], append(e.keyOff[:0], 0)
	for _, k := range v.KeyIDs {
		e.keys = appendString(e.keys, tagKVKey, e.str(k))
		e.keyOff = append(e.keyOff, len(e.keys))
	}
	e.ktypes, e.typed = a.KeyTypes(e.ktypes[:0], v.Keys)

	e.series, _ = v.AppendSeries(e.series[:0]) // a summary's keys never grow
	e.strs = core.Interned()
	e.points = e.points[:0]
	e.quants = e.quants[:0]
	data := 0
	for _, s := range e.series {
		cs, _ := delta.CumulativeStart(a, s)
		p := point{s: s, start: uint64(cs.UnixNano())}
		var vals []float64
		p.count, p.value, vals = s.ReadSummary(e.qbuf)
		e.qbuf = vals
		e.quants = append(e.quants, vals...)
		p.size = 2 * fixedFieldSize // start, time
		if p.count != 0 {
			p.size += fixedFieldSize
		}
		if math.Float64bits(p.value) != 0 {
			p.size += fixedFieldSize
		}
		for i, x := range vals {
			p.size += lenFieldSize(valueAtQuantileSize(qs[i], x))
		}
		p.size += e.attrsSize(s)
		data += lenFieldSize(p.size)
		e.points = append(e.points, p)
	}
	if len(e.points) == 0 {
		return b
	}
	e.npoints += len(e.points)
	m := &vm.Metric
	b = appendMetricHead(b, e.str(v.NameID), m.Help, m.Unit, tagMetricSummary, data)
	n := len(qs)
	for i := range e.points {
		p := &e.points[i]
		b = appendLen(b, tagDataPoints, p.size)
		b = appendFixed(b, tagHDPStart, p.start)
		b = appendFixed(b, tagHDPTime, end)
		if p.count != 0 {
			b = appendFixed(b, tagSDPCount, p.count)
		}
		if bits := math.Float64bits(p.value); bits != 0 {
			b = appendFixed(b, tagSDPSum, bits)
		}
		for j, x := range e.quants[i*n : (i+1)*n] {
			b = appendLen(b, tagSDPQuantileValues, valueAtQuantileSize(qs[j], x))
			if bits := math.Float64bits(qs[j]); bits != 0 {
				b = appendFixed(b, tagVAQQuantile, bits)
			}
			if bits := math.Float64bits(x); bits != 0 {
				b = appendFixed(b, tagVAQValue, bits)
			}
		}
		b = e.appendAttrs(b, tagSDPAttributes, v.KeyIDs, p)
	}
	return b
}

// valueAtQuantileSize is the size of a ValueAtQuantile message: its
// non-zero fields.
func valueAtQuantileSize(q, v float64) int {
	n := 0
	if math.Float64bits(q) != 0 {
		n += fixedFieldSize
	}
	if math.Float64bits(v) != 0 {
		n += fixedFieldSize
	}
	return n
}

// attrsSize is the size of the attributes appendAttrs writes for series
// s (not an overflow series: a summary has none), e.keys and e.ktypes
// set for its view.
func (e *Encoder) attrsSize(s *core.Series) int {
	n := 0
	for i, sid := range s.ValueIDs() {
		switch {
		case sid == 0:
		case e.typed && e.ktypes[i] != attrval.String:
			n += lenFieldSize(e.keyOff[i+1] - e.keyOff[i] + lenFieldSize(anyValueSize(e.ktypes[i], e.str(sid))))
		default:
			n += lenFieldSize(stringAttrSize(e.keyOff[i+1]-e.keyOff[i], e.str(sid)))
		}
	}
	return n
}
