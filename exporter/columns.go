package exporter

import (
	"time"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/delta"
	"github.com/zerostat/zerostat/internal/msgpack"
)

// columns holds the rows of the view being written in a version-2
// payload (docs/wire-format.md, "Version 2"): one buffer per column, the
// k tag value columns and then the data columns, and the row starts. A
// row is appended to every column; the encoder writes the view's rows
// from them when the view (or the payload) ends. The buffers are reused
// from view to view and export to export: no allocation in steady state.
// Similar values side by side (tag value refs, counts, float sums) are
// what makes the payload compress to a third of version 1's.
type columns struct {
	bufs    [][]byte // k tag value columns, then data columns
	k       int      // tag value columns of the current view
	used    int      // columns of the current view
	starts  []byte   // flat [row, start] pairs
	nStarts uint32
	n       uint32 // rows
	// A row's marks, to take it back (rollback).
	marks       []int
	startsMark  int
	nStartsMark uint32
}

// reset starts a view of k tag value columns and m data columns.
func (c *columns) reset(k, m int) {
	for len(c.bufs) < k+m {
		c.bufs = append(c.bufs, nil)
	}
	c.k, c.used = k, k+m
	for i := range c.bufs[:c.used] {
		c.bufs[i] = c.bufs[i][:0]
	}
	c.starts, c.nStarts, c.n = c.starts[:0], 0, 0
}

// dataColumns is how many data columns a view of kind has: one value per
// row, a distribution's count, sum, min, max, sum_sq_dev and its buckets
// (nb of them), or an exponential distribution's ten fields.
func dataColumns(kind core.Kind, nb int) int {
	switch kind {
	case core.KindDistribution:
		return 5 + nb
	case core.KindExponential:
		return wire.ExpDataLen
	case core.KindSummary:
		return 1 + nb // count, sum and a value per quantile (nb-1 quantiles)
	}
	return 1
}

// mark remembers the columns' lengths before a row.
func (c *columns) mark() {
	c.marks = c.marks[:0]
	for _, b := range c.bufs[:c.used] {
		c.marks = append(c.marks, len(b))
	}
	c.startsMark, c.nStartsMark = len(c.starts), c.nStarts
}

// rollback takes back the row appended since mark.
func (c *columns) rollback() {
	for i, n := range c.marks {
		c.bufs[i] = c.bufs[i][:n]
	}
	c.starts, c.nStarts = c.starts[:c.startsMark], c.nStartsMark
	c.n--
}

// size is the most the view's rows take once written: the columns, their
// array headers (array32 at worst) and the rows' header. Cost: a pass
// over the view's columns (a few dozen at most).
func (c *columns) size() int {
	n := len(c.starts) + (c.used+4)*msgpack.ArrayHeaderSize + 9
	for _, b := range c.bufs[:c.used] {
		n += len(b)
	}
	return n
}

// add appends a row (its tag values' stable ids, the data, start when
// not zero), e giving the payload ids and the buckets read.
func (c *columns) add(e *encoder, kind core.Kind, isInt bool, vids []uint32, rv *delta.Values, start time.Time) {
	for i, sid := range vids {
		c.bufs[i] = msgpack.AppendUint(c.bufs[i], uint64(e.str(sid)))
	}
	// The fields appendRow writes in a row, each to its column. Written
	// out apart from appendRow: one writer for both (a field index per
	// write) measured version 1's Encode 31% slower (benchstat n=8).
	d := c.bufs[c.k:c.used]
	switch kind {
	case core.KindCount:
		d[0] = msgpack.AppendUint(d[0], rv.Count)
	case core.KindSum:
		d[0] = appendNumber(d[0], isInt, rv.Sum)
	case core.KindLastValue:
		d[0] = appendNumber(d[0], isInt, rv.Last)
	case core.KindExponential:
		for c := range d {
			d[c] = appendExpField(d[c], &rv.Exp, c)
		}
	case core.KindSummary:
		d[0] = msgpack.AppendUint(d[0], rv.Count)
		d[1] = msgpack.AppendFloat(d[1], rv.Sum)
		for j, x := range rv.Quants {
			d[2+j] = msgpack.AppendFloat(d[2+j], x)
		}
	default:
		x := &rv.Dist
		d[0] = msgpack.AppendUint(d[0], uint64(x.Count))
		d[1] = msgpack.AppendFloat(d[1], x.Sum)
		d[2] = msgpack.AppendFloat(d[2], x.Min)
		d[3] = msgpack.AppendFloat(d[3], x.Max)
		d[4] = msgpack.AppendFloat(d[4], x.M2)
		for j, n := range e.buckets {
			d[5+j] = msgpack.AppendUint(d[5+j], uint64(n))
		}
	}
	if !start.IsZero() {
		c.starts = msgpack.AppendUint(c.starts, uint64(c.n))
		c.starts = msgpack.AppendTime(c.starts, start)
		c.nStarts++
	}
	c.n++
}

// appendTo writes the rows: [n, [values...], [data...], [row, start, ...]].
func (c *columns) appendTo(b []byte) []byte {
	b = msgpack.AppendArrayHeader(b, wire.ColumnsLen)
	b = msgpack.AppendUint(b, uint64(c.n))
	b = msgpack.AppendArrayHeader(b, uint32(c.k))
	for i, col := range c.bufs[:c.used] {
		if i == c.k {
			b = msgpack.AppendArrayHeader(b, uint32(c.used-c.k))
		}
		b = msgpack.AppendArrayHeader(b, c.n)
		b = append(b, col...)
	}
	b = msgpack.AppendArrayHeader(b, 2*c.nStarts)
	return append(b, c.starts...)
}
