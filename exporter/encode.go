package exporter

import (
	"slices"
	"strings"
	"time"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/attrval"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/delta"
	"github.com/zerostat/zerostat/internal/exphist"
	"github.com/zerostat/zerostat/internal/msgpack"
	"github.com/zerostat/zerostat/internal/promname"
)

// stringTable maps stable string ids (core.Intern) to the ids of one
// payload's string table, in order of first use. A lookup is one array
// read (an entry's generation and id share 8 bytes: one cache miss, not
// two, when a million tag values make the array larger than the caches):
// export never hashes a string. Entries belong to the current payload when
// their generation is the table's.
type stringTable struct {
	gen     uint32
	entries []tableEntry // by stable id
	order   []uint32     // stable ids in payload order
	bytes   int          // encoded size of the strings in order
}

// tableEntry is a stable id's payload id, valid in generation gen.
type tableEntry struct{ gen, id uint32 }

func (t *stringTable) reset() {
	t.gen++
	if t.gen == 0 { // wrapped: forget every generation
		clear(t.entries)
		t.gen = 1
	}
	t.order = t.order[:0]
	t.bytes = 0
}

// id returns the payload id of stable id sid, adding it to the payload.
func (t *stringTable) id(sid uint32, strs []string) uint32 {
	if int(sid) >= len(t.entries) {
		n := max(len(strs), int(sid)+1)
		t.entries = append(t.entries, make([]tableEntry, n-len(t.entries))...)
	}
	e := &t.entries[sid]
	if e.gen == t.gen {
		return e.id
	}
	pid := uint32(len(t.order))
	*e = tableEntry{t.gen, pid}
	t.order = append(t.order, sid)
	t.bytes += msgpack.StringSize(len(strs[sid]))
	return pid
}

// rollback forgets the strings added after the first n.
func (t *stringTable) rollback(n int, strs []string) {
	for _, sid := range t.order[n:] {
		t.entries[sid].gen = 0
		t.bytes -= msgpack.StringSize(len(strs[sid]))
	}
	t.order = t.order[:n]
}

// encoder snapshots the registered views into payloads. Its buffers are
// reused from one export to the next, so a steady-state export does not
// allocate. Not safe for concurrent use (the Exporter serialises exports).
type encoder struct {
	vids        []uint32       // a row's value ids padded to its view's keys (core.PadValueIDs)
	ktypes      []attrval.Type // the current view's key types (Aggregator.KeyTypes)
	maxBytes    int
	version     int // wire format version written: wire.Version or wire.Version2
	temporality wire.Temporality
	// allViews keeps the header of a view with nothing to send: a
	// snapshot served on request lists every registered view, while a
	// pushed payload carries only the views it has rows of.
	allViews bool
	// views returns the views to encode: the Exporter's pipeline's
	// (push.Pipeline.ExportViews: views unregistered since its last
	// export are sent once more); nil, as for a snapshot served on
	// request, the registered views.
	views func() []*core.View
	// only, if set, is the one view to encode; sortRows orders each
	// view's rows by their tag values (for people: a sort per snapshot).
	// Both serve the snapshot handler.
	only     string
	sortRows bool
	resource [][2]uint32 // stable ids of resource attribute keys and values

	buf     []byte
	tab     stringTable
	strs    []string
	series  []*core.Series
	buckets []int64
	// rv holds each series read: kept from export to export so that an
	// exponential histogram's bucket counts (rv.Exp) are reused.
	rv    delta.Values
	delta *delta.Tracker // nil: cumulative
	kinds delta.Kinds    // the kinds read through delta

	// The payload being written.
	seq       uint64
	part      uint64
	start     time.Time // delta: the interval's start (the previous export's end)
	end       time.Time
	payStart  time.Time // the payload's header.start (see beginView)
	startOff  int       // offset of the header's start, patched by endPayload
	lastOff   int       // offset of the header's "last" bool
	viewsOff  int       // offset of the views array32 header
	nViews    uint32
	points    int // rows in the payload being written
	oversized int // payloads that exceeded maxBytes (a single row too large)
	// Version 2: the rows of the view being written, as columns, while
	// colsOpen (written into buf by endRows).
	cols     columns
	colsOpen bool
}

// newEncoder returns an encoder reading the kinds of kinds as deltas (a
// payload with any is a Delta one: a view of another kind is cumulative,
// and is a LastValue, whose row is its last value in either temporality).
func newEncoder(maxBytes int, kinds delta.Kinds, evictIdleAfter int, resource []wire.Attribute) *encoder {
	e := &encoder{maxBytes: maxBytes, kinds: kinds, version: wire.Version}
	if kinds.Any() {
		e.temporality = wire.Delta
		e.delta = delta.NewTracker(evictIdleAfter)
	}
	for _, a := range resource {
		e.resource = append(e.resource, [2]uint32{core.Intern(a.Key), core.Intern(a.Value)})
	}
	return e
}

// tableOverhead is the worst-case size of the string table's array header.
const tableOverhead = msgpack.ArrayHeaderSize

func (e *encoder) size() int {
	n := len(e.buf) + tableOverhead + e.tab.bytes
	if e.colsOpen {
		n += e.cols.size()
	}
	return n
}

// str returns the payload id of stable id sid.
func (e *encoder) str(sid uint32) uint32 {
	if int(sid) >= len(e.strs) {
		e.strs = core.Interned() // interned since the snapshot began
	}
	return e.tab.id(sid, e.strs)
}

func (e *encoder) beginPayload() {
	e.buf = e.buf[:0]
	e.tab.reset()
	e.str(0) // "" is always id 0
	e.nViews = 0
	e.points = 0
	b := msgpack.AppendArrayHeader(e.buf, wire.EnvelopeLen)
	b = msgpack.AppendUint(b, uint64(e.version))
	b = msgpack.AppendArrayHeader(b, wire.HeaderLen)
	// header.start depends on the payload's views: written in the fixed
	// 96-bit form and patched when the payload ends.
	e.startOff = len(b)
	e.payStart = e.start
	b = msgpack.AppendTime96(b, e.start)
	b = msgpack.AppendTime(b, e.end)
	b = msgpack.AppendUint(b, uint64(e.temporality))
	b = msgpack.AppendUint(b, e.seq)
	b = msgpack.AppendUint(b, e.part)
	e.lastOff = len(b)
	b = msgpack.AppendBool(b, false)
	b = msgpack.AppendArrayHeader(b, uint32(len(e.resource)))
	e.buf = b
	for _, kv := range e.resource {
		e.buf = msgpack.AppendArrayHeader(e.buf, wire.AttrLen)
		e.buf = msgpack.AppendUint(e.buf, uint64(e.str(kv[0])))
		e.buf = msgpack.AppendUint(e.buf, uint64(e.str(kv[1])))
	}
	e.buf, e.viewsOff = msgpack.AppendArray32(e.buf)
}

// endPayload finishes the payload and returns it; it is valid until the
// next beginPayload.
func (e *encoder) endPayload(last bool) []byte {
	msgpack.PatchArray32(e.buf, e.viewsOff, e.nViews)
	msgpack.PatchTime96(e.buf, e.startOff, e.payStart)
	if last {
		e.buf[e.lastOff] = msgpack.True
	}
	e.buf = msgpack.AppendArrayHeader(e.buf, uint32(len(e.tab.order)))
	for _, sid := range e.tab.order {
		e.buf = msgpack.AppendString(e.buf, e.strs[sid])
	}
	if len(e.buf) > e.maxBytes {
		e.oversized++
	}
	e.part++
	return e.buf
}

// beginView writes v's header and returns the offset of its rows header.
// It moves the payload's header.start back to v's start when v's values
// began before it: in a cumulative payload, header.start is the earliest
// start of its views; in a delta one, the interval's start, or the view's
// start if this is the first read of the view (its values then cover its
// whole life). A caller that drops the view again restores payStart.
func (e *encoder) beginView(v *core.View, st *delta.View) int {
	a := v.Agg
	if s := a.Start(); (e.delta == nil || st.First()) && s.Before(e.payStart) {
		e.payStart = s
	}
	b := msgpack.AppendArrayHeader(e.buf, wire.ViewLen)
	b = msgpack.AppendUint(b, uint64(e.str(v.NameID)))
	b = msgpack.AppendUint(b, uint64(e.str(v.HelpID))) // the mapping's description (core.View.Help)
	b = msgpack.AppendUint(b, uint64(e.str(v.UnitID)))
	b = msgpack.AppendUint(b, uint64(wire.AggregationOf(a.Kind(), v.UpDown, a.UpperInclusive())))
	b = msgpack.AppendArrayHeader(b, uint32(len(v.KeyIDs)))
	var typed bool
	e.ktypes, typed = a.KeyTypes(e.ktypes[:0], v.Keys)
	for i, k := range v.KeyIDs {
		if typed && e.ktypes[i] != attrval.String { // an OpenTelemetry attribute's type: [ref, type]
			b = msgpack.AppendArrayHeader(b, 2)
			b = msgpack.AppendUint(msgpack.AppendUint(b, uint64(e.str(k))), uint64(e.ktypes[i]))
			continue
		}
		b = msgpack.AppendUint(b, uint64(e.str(k)))
	}
	bounds := wireBounds(a) // a summary's quantiles (summary.go)
	b = msgpack.AppendArrayHeader(b, uint32(len(bounds)))
	for _, x := range bounds {
		b = msgpack.AppendFloat(b, x)
	}
	b = msgpack.AppendTime(b, a.Start())
	if e.version == wire.Version2 {
		// The rows go to columns, written by endRows.
		e.buf = b
		e.cols.reset(len(v.KeyIDs), dataColumns(a.Kind(), len(bounds)+1))
		e.colsOpen = true
		e.nViews++
		return -1
	}
	b, rowsOff := msgpack.AppendArray32(b)
	e.buf = b
	e.nViews++
	return rowsOff
}

// addRow adds a row of the view being written: to the columns in a
// version-2 payload, else as appendRow writes it.
func (e *encoder) addRow(kind core.Kind, isInt bool, vids []uint32, rv *delta.Values, start time.Time) {
	if !e.colsOpen {
		e.appendRow(kind, isInt, vids, rv, start)
		return
	}
	e.points++
	e.cols.add(e, kind, isInt, vids, rv, start)
}

// markRow and rollbackRow take back the last row added (addRow), when
// it does not fit in the payload; the string table is rolled back apart.
func (e *encoder) markRow() int {
	if e.colsOpen {
		e.cols.mark()
	}
	return len(e.buf)
}

func (e *encoder) rollbackRow(mark int) {
	e.points--
	if e.colsOpen {
		e.cols.rollback()
		return
	}
	e.buf = e.buf[:mark]
}

// endRows ends the rows of the view being written, n of them: patches
// the rows header at rowsOff (version 1) or writes the columns.
func (e *encoder) endRows(rowsOff int, n uint32) {
	if e.colsOpen {
		e.buf = e.cols.appendTo(e.buf)
		e.colsOpen = false
		return
	}
	msgpack.PatchArray32(e.buf, rowsOff, n)
}

// appendRow writes a row: vids (the tag values; none for the overflow
// row), then the data, then start when it is not zero (see rowStart). A
// Sum's or LastValue's value is an integer when the view's measure is an
// Int64 one (isInt) and the value is an integer an int64 holds: the rule
// of OTLP's as_int (promname.IntPoint); otherwise, and always for a Float64
// measure, a float (msgpack.AppendFloat never writes an integer form).
func (e *encoder) appendRow(kind core.Kind, isInt bool, vids []uint32, rv *delta.Values, start time.Time) {
	e.points++
	n := wire.RowLen(wire.AggregationOf(kind, false, false), len(vids))
	if !start.IsZero() {
		n++
	}
	e.buf = msgpack.AppendArrayHeader(e.buf, uint32(n))
	for _, sid := range vids {
		e.buf = msgpack.AppendUint(e.buf, uint64(e.str(sid)))
	}
	b := e.buf
	switch kind {
	case core.KindCount:
		b = msgpack.AppendUint(b, rv.Count)
	case core.KindSum:
		b = appendNumber(b, isInt, rv.Sum)
	case core.KindLastValue:
		b = appendNumber(b, isInt, rv.Last)
	case core.KindExponential:
		for c := range wire.ExpDataLen {
			b = appendExpField(b, &rv.Exp, c)
		}
	case core.KindSummary:
		b = msgpack.AppendUint(b, rv.Count)
		b = msgpack.AppendFloat(b, rv.Sum)
		b = msgpack.AppendArrayHeader(b, uint32(len(rv.Quants)))
		for _, x := range rv.Quants {
			b = msgpack.AppendFloat(b, x)
		}
	default:
		d := &rv.Dist
		b = msgpack.AppendUint(b, uint64(d.Count))
		b = msgpack.AppendFloat(b, d.Sum)
		b = msgpack.AppendFloat(b, d.Min)
		b = msgpack.AppendFloat(b, d.Max)
		b = msgpack.AppendFloat(b, d.M2)
		b = msgpack.AppendArrayHeader(b, uint32(len(e.buckets)))
		for _, c := range e.buckets {
			b = msgpack.AppendUint(b, uint64(c))
		}
	}
	if !start.IsZero() {
		b = msgpack.AppendTime(b, start)
	}
	e.buf = b
}

// appendExpField appends field c of an exponential distribution's row
// (wire.ExpDataLen of them, in docs/wire-format.md's order): count, sum,
// min, max, scale, zero count, then each sign's offset and counts. One
// writer for version 1's rows and version 2's columns. An empty range is
// written with offset 0, whatever s holds.
func appendExpField(b []byte, s *exphist.Snapshot, c int) []byte {
	switch c {
	case 0:
		return msgpack.AppendUint(b, s.Count)
	case 1:
		return msgpack.AppendFloat(b, s.Sum)
	case 2:
		return msgpack.AppendFloat(b, s.Min)
	case 3:
		return msgpack.AppendFloat(b, s.Max)
	case 4:
		return msgpack.AppendInt(b, int64(s.Scale))
	case 5:
		return msgpack.AppendUint(b, s.ZeroCount)
	}
	r := &s.Positive
	if c >= 8 {
		r = &s.Negative
	}
	if c%2 == 0 { // 6, 8: the offset
		if len(r.Counts) == 0 {
			return msgpack.AppendUint(b, 0)
		}
		return msgpack.AppendInt(b, int64(r.Offset))
	}
	b = msgpack.AppendArrayHeader(b, uint32(len(r.Counts)))
	for _, n := range r.Counts {
		b = msgpack.AppendUint(b, n)
	}
	return b
}

// appendNumber appends a Sum's or LastValue's value: an integer when
// promname.IntPoint says an integer point, a float otherwise.
func appendNumber(b []byte, isInt bool, v float64) []byte {
	if i, ok := promname.IntPoint(isInt, v); ok {
		return msgpack.AppendInt(b, i)
	}
	return msgpack.AppendFloat(b, v)
}

// rowStart returns the start a row of series s of aggregator a carries,
// or the zero time for none. In a cumulative payload, the series' own
// start when delta.CumulativeStart says its values began then (a series
// re-created after eviction), as the OTLP exporter starts its point. In a
// delta payload (st is the view's delta state, rv what was read), a
// distribution row read for the first time carries its series' creation:
// its values, min and max included (which cover the series' whole life),
// are then the interval's, so a reader may use them as OTLP does.
func rowStart(a *core.Aggregator, s *core.Series, cumulative bool, st *delta.View, rv *delta.Values) time.Time {
	switch {
	case cumulative:
		if t, own := delta.CumulativeStart(a, s); own {
			return t
		}
	case st != nil && a.Kind() == core.KindDistribution && rv.FirstRead:
		return s.Start()
	}
	return time.Time{}
}

// encode snapshots the registered views at end and calls emit with each
// payload (one unless maxBytes splits it). The payload passed to emit is
// valid only during the call. start is the interval start for delta
// payloads (ignored for cumulative ones).
func (e *encoder) encode(start, end time.Time, emit func(p []byte, last bool) error) error {
	views := core.Views()
	if e.views != nil {
		views = e.views()
	}
	e.seq++
	e.part = 0
	e.strs = core.Interned()
	e.end = end
	e.start = start
	if e.temporality == wire.Cumulative {
		e.start = end // moved back by each view written (beginView)
	}
	e.beginPayload()
	e.delta.Begin()
	e.series = e.series[:0]
	defer func() { clear(e.series) }() // nor keep series alive after the snapshot
	rv := &e.rv
	for _, v := range views {
		if e.only != "" && v.Name != e.only {
			continue
		}
		a := v.Agg
		kind := a.Kind()
		var st *delta.View // nil: read cumulatively
		if e.kinds.Reads(v) {
			st = e.delta.View(a)
		}
		if n := len(a.Bounds()) + 1; cap(e.buckets) < n {
			e.buckets = make([]int64, n)
		}
		e.buckets = e.buckets[:len(a.Bounds())+1]
		// The series of every view stay in e.series until the snapshot
		// is encoded: an id of the string table is trusted only while a
		// series using it is held (see core.Interned), and a payload's
		// strings are written when it ends.
		base := len(e.series)
		var complete bool
		e.series, complete = v.AppendSeries(e.series) // at most len(v.Keys) values each
		if !complete {
			st.LeftOut() // its keys grew since views was loaded: next snapshot
		}
		rows := e.series[base:]
		e.strs = core.Interned() // after the series: holds their values
		if e.sortRows {
			strs := e.strs
			slices.SortFunc(rows, func(x, y *core.Series) int {
				return slices.CompareFunc(x.ValueIDs(), y.ValueIDs(), func(a, b uint32) int { return strings.Compare(strs[a], strs[b]) })
			})
		}

		viewMark, tabMark, startMark := len(e.buf), len(e.tab.order), e.payStart
		rowsOff := e.beginView(v, st)
		var nRows uint32
		// The rows, then the overflow row (written as the view's last
		// element; nil when there is none or in a part that ends early).
		rowsDone := false
		for i := 0; i <= len(rows); i++ {
			var vids []uint32
			var start time.Time
			if i < len(rows) {
				s := rows[i]
				if !delta.Read(kind, s, st, e.buckets, rv) {
					continue
				}
				// A row has a value for each of the view's keys: a
				// series older than keys added to its view has fewer.
				vids = core.PadValueIDs(&e.vids, s.ValueIDs(), len(v.KeyIDs))
				start = rowStart(a, s, e.delta == nil || v.UpDown, st, rv)
			} else {
				e.endRows(rowsOff, nRows)
				rowsDone = true
				o := a.Overflow()
				if o != nil && delta.Read(kind, o, st, e.buckets, rv) {
					// Version 1's overflow row has no start: readers
					// written for it refuse one.
					if e.version == wire.Version2 {
						start = rowStart(a, o, e.delta == nil || v.UpDown, st, rv)
					}
				} else {
					if nRows == 0 && !e.allViews {
						// Nothing to send for this view in this part:
						// drop its header, which would otherwise cost
						// bytes the size cap does not account for.
						e.buf = e.buf[:viewMark]
						e.tab.rollback(tabMark, e.strs)
						e.nViews--
						e.payStart = startMark
						break
					}
					e.buf = msgpack.AppendNil(e.buf)
					break
				}
			}
			rowMark, rowTab := e.markRow(), len(e.tab.order)
			e.addRow(kind, v.Int, vids, rv, start) // the overflow row: after endRows, as a row
			// A row must leave room for the view's overflow slot (a nil
			// when it has none), which follows the rows.
			need := e.size()
			if !rowsDone {
				need += msgpack.NilSize
			}
			if need <= e.maxBytes || (nRows == 0 && e.nViews == 1) {
				if !rowsDone {
					nRows++
				}
				continue // fits, or alone in its payload: sent oversized
			}
			// Over the cap: undo the row (and the view header if the row
			// was its first), send what fits, and start a new payload.
			e.rollbackRow(rowMark)
			if nRows == 0 {
				e.buf = e.buf[:viewMark]
				e.colsOpen = false
				e.tab.rollback(tabMark, e.strs)
				e.nViews--
				e.payStart = startMark
			} else {
				e.tab.rollback(rowTab, e.strs)
				if !rowsDone {
					e.endRows(rowsOff, nRows)
				}
				e.buf = msgpack.AppendNil(e.buf) // no overflow row in this part
			}
			if err := emit(e.endPayload(false), false); err != nil {
				return err
			}
			e.beginPayload()
			viewMark, tabMark, startMark = len(e.buf), len(e.tab.order), e.payStart
			rowsOff = e.beginView(v, st)
			if rowsDone { // the overflow row alone in its part
				e.endRows(rowsOff, 0)
				e.appendRow(kind, v.Int, vids, rv, start)
				break
			}
			e.addRow(kind, v.Int, vids, rv, start)
			nRows = 1
		}
		st.Done() // every series of the view read: acknowledge its seals
	}
	e.delta.End() // forget the views no longer registered
	return emit(e.endPayload(true), true)
}
