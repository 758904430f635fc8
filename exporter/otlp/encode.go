package otlp

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/internal/attrval"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/delta"
	"github.com/zerostat/zerostat/internal/promname"
)

// ScopeName is the instrumentation scope name of every metric written. The
// scope has no version (see the package documentation).
const ScopeName = "github.com/zerostat/zerostat"

// OverflowAttribute is the attribute, with the value true, of the data
// point that aggregates the recordings of a view beyond its cardinality
// limit (view.CardinalityLimit), as OpenTelemetry SDKs write it
// (https://opentelemetry.io/docs/specs/otel/metrics/sdk/#overflow-attribute).
const OverflowAttribute = "otel.metric.overflow"

// overflowAttr is the encoded KeyValue otel.metric.overflow=true (a bool),
// without its tag and length.
var overflowAttr = func() []byte {
	b := appendString(nil, tagKVKey, OverflowAttribute)
	return append(b, tagKVValue, 2, tagAnyBool, 1)
}()

// point is one data point read in the first pass over a view's series:
// its values and the size of its encoded message.
type point struct {
	s          *core.Series
	start      uint64  // start_time_unix_nano: delta.CumulativeStart (cumulative) or the interval's (delta)
	overflow   bool    // s is the view's overflow series
	count      uint64  // Count; a distribution's count
	value      float64 // Sum, LastValue; a distribution's sum
	min, max   float64 // a distribution's
	hasSum     bool    // a distribution's sum is written (no negative values)
	hasMinMax  bool    // a distribution's min and max are known for the interval
	size       int     // encoded size of the data point message
	countsFrom int     // a distribution's bucket counts: Encoder.counts[countsFrom:countsFrom+len(bounds)+1]
	exFrom     int     // the point's exemplars: Encoder.exs[exFrom:exTo]
	exTo       int
	scale      int32      // an exponential distribution's (setExp)
	zero       uint64     // its zero count
	pos, neg   expBuckets // its buckets
}

// Encoder writes snapshots of every registered view as OTLP
// ExportMetricsServiceRequest messages in the protobuf binary encoding
// (the body of an OTLP/HTTP or the message of an OTLP/gRPC export).
//
// Mapping (internal/promname.MetricOf, docs/metric-mapping.md): a Count
// view becomes a monotonic Sum of integers with unit "1"; a Sum view a
// monotonic Sum (integers for an Int64 measure), non-monotonic in an
// export where one of its points is negative or NaN; a LastValue view a
// Gauge (integers for an Int64 measure); a Distribution view a Histogram
// with explicit bounds, count, sum, bucket counts, min and max, in the
// measure's unit; an ExponentialDistribution view an ExponentialHistogram
// (scale, zero count, positive and negative buckets, count, sum, min and
// max; see expo.go), in the measure's unit. Each series is one data point, with its tag values as
// string attributes (absent keys left out), starting when the view was
// registered, or for a series re-created after eviction when it was
// (cumulative: delta.CumulativeStart), or at the previous export (delta); a view's
// overflow series has the attribute otel.metric.overflow=true. A
// histogram point carries its buckets' exemplars (the latest value
// recorded with attachments per bucket, see stats.WithAttachments: value,
// time, and the trace and span IDs of a stats.SpanContext attachment;
// with Delta temporality only those recorded in the interval); a Sum's or
// a Gauge's point carries the exemplars its series' reservoir holds, when
// a bound handle offered it some (stats.Int64Handle.RecordExemplar: the
// otel MeterProvider's counters, up-down counters and gauges; see
// appendNumberExemplars). The package documentation lists what cannot be
// mapped exactly.
//
// An Encoder is not safe for concurrent use. Its buffers are reused from
// one Encode to the next: in steady state Encode allocates nothing.
type Encoder struct {
	// views returns the views to encode: the Exporter's pipeline's
	// (push.Pipeline.ExportViews: views unregistered since its last
	// export are sent once more); nil, the registered views.
	views func() []*core.View

	resource []byte // the encoded ResourceMetrics.resource field
	scope    []byte // the encoded ScopeMetrics.scope field
	headRoom int    // bytes reserved before the metrics: see Encode

	buf     []byte
	head    []byte
	strs    []string
	series  []*core.Series
	points  []point
	counts  []uint64         // bucket counts of the distribution points
	buckets []int64          // ReadDist's buffer
	exs     []*core.Exemplar // the exemplars of the current view's points
	exBuf   []*core.Exemplar // Series.Exemplars' buffer
	vals    delta.Values     // Read's output, reused: its Exp's Counts are kept
	keys    []byte           // the current view's encoded KeyValue.key fields, one per tag key
	keyOff  []int            // key i is keys[keyOff[i]:keyOff[i+1]]
	ktypes  []attrval.Type   // the current view's key types (Aggregator.KeyTypes)
	typed   bool             // a key of the current view is not a string
	bounds  []byte           // the current view's encoded explicit_bounds field
	quants  []float64        // a summary view's points' quantile values, len(quantiles) each (summary.go)
	qbuf    []float64        // ReadSummary's buffer
	delta   *delta.Tracker   // nil: cumulative
	kinds   delta.Kinds      // the kinds read through delta
	metrics map[*core.View]*viewMetric
	seq     uint64
	npoints int
}

// NewEncoder returns an encoder writing values with temporality t (Cumulative
// or Delta), for the process described by r (empty fields get the
// defaults described at Options.Resource).
func NewEncoder(t Temporality, r exporter.Resource) (*Encoder, error) {
	if t != Cumulative && t != Delta {
		return nil, fmt.Errorf("otlp: unknown Temporality %d", t)
	}
	kinds, _ := delta.NewKinds(t == Delta, exporter.PreferCumulative, "")
	return newEncoder(kinds, 0, r)
}

// newEncoder returns an encoder reading the kinds of kinds as deltas
// (through a tracker evicting series idle evictIdleAfter reads, 0: never).
func newEncoder(kinds delta.Kinds, evictIdleAfter int, r exporter.Resource) (*Encoder, error) {
	r, err := r.Normalize()
	if err != nil {
		return nil, fmt.Errorf("otlp: %w", err)
	}
	e := &Encoder{kinds: kinds, metrics: map[*core.View]*viewMetric{}}
	if kinds.Any() {
		e.delta = delta.NewTracker(evictIdleAfter)
	}

	var attrs []byte
	attrs = appendStringAttr(attrs, tagResourceAttributes, "service.name", r.ServiceName)
	attrs = appendStringAttr(attrs, tagResourceAttributes, "host.name", r.Host)
	attrs = appendIntAttr(attrs, tagResourceAttributes, "process.pid", int64(r.PID))
	for _, a := range r.Attributes {
		attrs = appendStringAttr(attrs, tagResourceAttributes, a.Key, a.Value)
	}
	for _, a := range r.SDKAttributes() { // telemetry.sdk.*, unless r sets them
		attrs = appendStringAttr(attrs, tagResourceAttributes, a.Key, a.Value)
	}
	e.resource = append(appendLen(nil, tagRMResource, len(attrs)), attrs...)

	var scope []byte
	// The name only: no version, as the msgpack payload, which carries
	// none, reaches the Collector (docs/collector.md, "Same pdata").
	scope = appendString(scope, tagScopeName, ScopeName)
	e.scope = append(appendLen(nil, tagSMScope, len(scope)), scope...)

	// The request's head: two tags with their lengths (at most 10 bytes
	// each as varints), the resource and the scope.
	e.headRoom = 2*(1+10) + len(e.resource) + len(e.scope)
	return e, nil
}

// viewMetric is a view's mapping, and the last Encode that saw the view.
type viewMetric struct {
	promname.Metric
	seq uint64
}

// stringAttrSize returns the size of a KeyValue with a string value,
// without its own tag and length.
func stringAttrSize(keyField int, value string) int {
	return keyField + lenFieldSize(lenFieldSize(len(value)))
}

func appendStringAttr(b []byte, tag byte, key, value string) []byte {
	b = appendLen(b, tag, stringAttrSize(lenFieldSize(len(key)), value))
	b = appendString(b, tagKVKey, key)
	b = appendLen(b, tagKVValue, lenFieldSize(len(value)))
	return appendString(b, tagAnyString, value)
}

func appendIntAttr(b []byte, tag byte, key string, v int64) []byte {
	anyLen := 1 + varintSize(uint64(v))
	b = appendLen(b, tag, lenFieldSize(len(key))+lenFieldSize(anyLen))
	b = appendString(b, tagKVKey, key)
	b = appendLen(b, tagKVValue, anyLen)
	return binary.AppendUvarint(append(b, tagAnyInt), uint64(v))
}

// Points returns the number of data points in the last request Encode
// returned.
func (e *Encoder) Points() int { return e.npoints }

// Encode snapshots the registered views at end and returns the request.
// The bytes are the encoder's: they are valid until the next Encode.
//
// With Delta temporality each series' data point holds what was recorded
// since the previous Encode (since the view was registered, the first
// time), and series with nothing new are left out; each Encode advances
// that state, whether or not the request is then delivered.
//
// Cost: one atomic read of each series (a distribution cell is locked
// while it is copied), and writing each byte once. Sub-message lengths are
// computed before the messages are written, view by view, except the
// lengths of the two outermost messages, which enclose every metric: the
// metrics are written after room reserved for those heads, and the heads
// are then written right-aligned against the metrics, so nothing is moved.
func (e *Encoder) Encode(end time.Time) []byte {
	e.seq++
	e.npoints = 0
	e.strs = core.Interned()
	endNs := uint64(end.UnixNano())
	b := e.buf[:0]
	if cap(b) < e.headRoom {
		b = make([]byte, 0, 2*e.headRoom)
	}
	b = b[:e.headRoom]
	views := core.Views()
	if e.views != nil {
		views = e.views()
	}
	e.delta.Begin()
	for _, v := range views {
		b = e.appendMetric(b, v, endNs)
	}
	e.delta.End() // forget the views no longer registered
	if len(e.metrics) > len(views) {
		for v, m := range e.metrics {
			if m.seq != e.seq {
				delete(e.metrics, v)
			}
		}
	}
	sm := len(e.scope) + len(b) - e.headRoom // ScopeMetrics
	rm := len(e.resource) + lenFieldSize(sm) // ResourceMetrics
	h := appendLen(e.head[:0], tagRequestResourceMetrics, rm)
	h = append(h, e.resource...)
	h = appendLen(h, tagRMScopeMetrics, sm)
	h = append(h, e.scope...)
	e.head = h
	from := e.headRoom - len(h)
	copy(b[from:], h)
	e.buf = b
	return b[from:]
}

// str returns the interned string sid.
func (e *Encoder) str(sid uint32) string {
	if int(sid) >= len(e.strs) {
		e.strs = core.Interned() // interned since the encoding began
	}
	return e.strs[sid]
}

// appendMetric appends v as a Metric, in two passes over its series: the
// first reads the values (advancing the delta state) and sizes each data
// point; the second writes. A view without data points is left out.
func (e *Encoder) appendMetric(b []byte, v *core.View, end uint64) []byte {
	a := v.Agg
	kind := a.Kind()
	if kind == core.KindSummary {
		return e.appendSummaryMetric(b, v, end) // summary.go: never read as deltas
	}
	bounds := a.Bounds()
	nb := len(bounds) + 1
	start := uint64(a.Start().UnixNano())
	var st *delta.View // nil: cumulative
	if e.kinds.Reads(v) {
		st = e.delta.View(a)
	}
	if st != nil {
		if st.Last != 0 { // the interval starts where the previous export ended
			start = uint64(st.Last)
		}
		st.Last = int64(end)
	}
	vm := e.metrics[v]
	if vm == nil { // the mapping is computed once per view
		vm = &viewMetric{Metric: promname.MetricOf(v)}
		e.metrics[v] = vm
	}
	vm.seq = e.seq
	m := &vm.Metric
	if kind == core.KindDistribution {
		if cap(e.buckets) < nb {
			e.buckets = make([]int64, nb)
		}
		e.buckets = e.buckets[:nb]
	}

	// Each key's KeyValue.key field, encoded once per view, in view
	// order (v.Keys: the order of Series.ValueIDs).
	e.keys, e.keyOff = e.keys[:0], append(e.keyOff[:0], 0)
	for _, k := range v.KeyIDs {
		e.keys = appendString(e.keys, tagKVKey, e.str(k))
		e.keyOff = append(e.keyOff, len(e.keys))
	}
	// Keys an OpenTelemetry attribute typed: their values are written
	// with that type (an int as int_value), the others as strings.
	e.ktypes, e.typed = a.KeyTypes(e.ktypes[:0], v.Keys)

	// Pass 1: read and size.
	var fixed int // size of the fields every data point of the view has
	switch kind {
	case core.KindCount, core.KindSum:
		fixed = 3 * fixedFieldSize // start, time, value
	case core.KindLastValue:
		fixed = 2 * fixedFieldSize // time, value
	case core.KindExponential:
		fixed = 2 * fixedFieldSize // start, time; the rest is setExp's
	default:
		fixed = 3*fixedFieldSize + lenFieldSize(8*nb) // start, time, count, bucket_counts
		if len(bounds) > 0 {
			fixed += lenFieldSize(8 * len(bounds))
		}
	}
	var complete bool
	e.series, complete = v.AppendSeries(e.series[:0]) // at most len(v.Keys) values each
	if !complete {
		st.LeftOut() // its keys grew since the views were loaded: next export
	}
	e.strs = core.Interned() // after the series: holds their values
	overflow := a.Overflow()
	if overflow != nil {
		e.series = append(e.series, overflow)
	}
	e.points = e.points[:0]
	e.counts = e.counts[:0]
	e.exs = e.exs[:0]
	data := 0       // the Gauge, Sum or Histogram message
	defer st.Done() // every series of the view read: acknowledge its seals
	monotonic := m.Monotonic
	for _, s := range e.series {
		p := point{s: s, overflow: s == overflow, start: start}
		if st == nil { // cumulative: the view's start, or a reset's
			cs, _ := delta.CumulativeStart(a, s)
			p.start = uint64(cs.UnixNano())
		}
		if !e.read(kind, s, st, &p) {
			continue
		}
		if kind == core.KindSum && !promname.CounterValid(p.value) {
			monotonic = false
		}
		p.size = fixed
		if kind == core.KindExponential {
			p.size += e.setExp(&p, &e.vals.Exp) // its sum, min and max included
		}
		if p.overflow {
			p.size += lenFieldSize(len(overflowAttr))
		}
		for i, sid := range s.ValueIDs() {
			switch {
			case sid == 0:
			case e.typed && e.ktypes[i] != attrval.String:
				p.size += lenFieldSize(e.keyOff[i+1] - e.keyOff[i] + lenFieldSize(anyValueSize(e.ktypes[i], e.str(sid))))
			default:
				p.size += lenFieldSize(stringAttrSize(e.keyOff[i+1]-e.keyOff[i], e.str(sid)))
			}
		}
		if p.hasSum && kind == core.KindDistribution {
			p.size += fixedFieldSize
		}
		if p.hasMinMax && kind == core.KindDistribution {
			p.size += 2 * fixedFieldSize
		}
		// Every kind: a Count's, Sum's or LastValue's series has
		// exemplars only when a bound handle offered it some (its
		// reservoir: core.Bound.KeepExemplar, the otel MeterProvider's
		// counters and gauges); reading them ends its sampling cycle.
		since := uint64(0) // cumulative: every exemplar the series has
		if st != nil {
			since = p.start
		}
		p.size += e.readExemplars(&p, since)
		data += lenFieldSize(p.size)
		e.points = append(e.points, p)
	}
	if len(e.points) == 0 {
		return b
	}
	e.npoints += len(e.points)

	var dataTag byte
	temporality := uint64(temporalityCumulative)
	if st != nil {
		temporality = temporalityDelta
	}
	switch kind {
	case core.KindCount:
		dataTag = tagMetricSum
		data += 2 + 2 // aggregation_temporality, is_monotonic
	case core.KindSum:
		dataTag = tagMetricSum
		data += 2 // aggregation_temporality; is_monotonic false is left out
		if monotonic {
			data += 2
		}
	case core.KindLastValue:
		dataTag = tagMetricGauge
	case core.KindExponential:
		dataTag = tagMetricExpHist
		data += 2 // aggregation_temporality
	default:
		dataTag = tagMetricHistogram
		data += 2 // aggregation_temporality
		e.bounds = e.bounds[:0]
		if len(bounds) > 0 {
			e.bounds = appendLen(e.bounds, tagHDPExplicitBounds, 8*len(bounds))
			for _, x := range bounds {
				e.bounds = binary.LittleEndian.AppendUint64(e.bounds, math.Float64bits(x))
			}
		}
	}
	// Pass 2: write, the fields of each message in protobuf-go's order
	// (by field number, the members of a oneof last), so that our bytes are
	// exactly proto.Marshal's for the message they decode to (tested).
	b = appendMetricHead(b, e.str(v.NameID), m.Help, m.Unit, dataTag, data)
	for i := range e.points {
		p := &e.points[i]
		b = appendLen(b, tagDataPoints, p.size)
		switch kind {
		case core.KindCount:
			b = appendFixed(b, tagNDPStart, p.start)
			b = appendFixed(b, tagNDPTime, end)
			b = e.appendNumberExemplars(b, p)
			b = e.appendAttrs(b, tagNDPAttributes, v.KeyIDs, p)
			b = appendFixed(b, tagNDPAsInt, p.count)
		case core.KindSum:
			b = appendFixed(b, tagNDPStart, p.start)
			b = appendFixed(b, tagNDPTime, end)
			b = e.appendNumberExemplars(b, p)
			b = e.appendAttrs(b, tagNDPAttributes, v.KeyIDs, p)
			b = appendNumber(b, m.Int, p.value)
		case core.KindLastValue:
			b = appendFixed(b, tagNDPTime, end)
			b = e.appendNumberExemplars(b, p)
			b = e.appendAttrs(b, tagNDPAttributes, v.KeyIDs, p)
			b = appendNumber(b, m.Int, p.value)
		case core.KindExponential:
			b = e.appendAttrs(b, tagEHDPAttributes, v.KeyIDs, p) // field 1: first
			b = e.appendExpPoint(b, p, end)
		default:
			b = appendFixed(b, tagHDPStart, p.start)
			b = appendFixed(b, tagHDPTime, end)
			b = appendFixed(b, tagHDPCount, p.count)
			if p.hasSum {
				b = appendFixed(b, tagHDPSum, math.Float64bits(p.value))
			}
			b = appendLen(b, tagHDPBucketCounts, 8*nb)
			for _, c := range e.counts[p.countsFrom : p.countsFrom+nb] {
				b = binary.LittleEndian.AppendUint64(b, c)
			}
			b = append(b, e.bounds...)
			for _, x := range e.exs[p.exFrom:p.exTo] {
				b = appendExemplar(b, x)
			}
			b = e.appendAttrs(b, tagHDPAttributes, v.KeyIDs, p)
			if p.hasMinMax {
				b = appendFixed(b, tagHDPMin, math.Float64bits(p.min))
				b = appendFixed(b, tagHDPMax, math.Float64bits(p.max))
			}
		}
	}
	if kind != core.KindLastValue { // a Gauge has no temporality
		b = append(b, tagTemporality, byte(temporality))
	}
	if kind == core.KindCount || kind == core.KindSum && monotonic {
		b = append(b, tagMonotonic, 1)
	}
	return b
}

// readExemplars collects the exemplars of p's series recorded since since
// (Unix ns: the interval's start with Delta temporality, 0 for
// cumulative), one per bucket at most, in bucket order, into e.exs, and
// returns their encoded size.
func (e *Encoder) readExemplars(p *point, since uint64) int {
	p.exFrom = len(e.exs)
	e.exBuf = p.s.Exemplars(e.exBuf[:0])
	size := 0
	for _, x := range e.exBuf {
		if x != nil && uint64(x.Time) >= since {
			e.exs = append(e.exs, x)
			size += lenFieldSize(exemplarSize(x))
		}
	}
	clear(e.exBuf)
	p.exTo = len(e.exs)
	return size
}

// exemplarSize is the size of an Exemplar message: its time and value,
// and the trace and span IDs of its span context attachment, if any
// (core.NewExemplar: stats.SpanContext, or OpenCensus's trace.SpanContext).
// Other attachments are not exported (OTLP's filtered_attributes are the
// attributes a view dropped, which zerostat does not keep).
func exemplarSize(x *core.Exemplar) int {
	n := 2 * fixedFieldSize
	if x.HasSpan() {
		n += lenFieldSize(8) + lenFieldSize(16)
	}
	return n
}

// appendExemplar appends a HistogramDataPoint's exemplars field.
func appendExemplar(b []byte, x *core.Exemplar) []byte {
	return appendExemplarField(b, tagHDPExemplars, x)
}

// appendExemplarField appends an Exemplar as field tag, in protobuf-go's
// field order (the oneof value last).
func appendExemplarField(b []byte, tag byte, x *core.Exemplar) []byte {
	b = appendLen(b, tag, exemplarSize(x))
	b = appendFixed(b, tagExTime, uint64(x.Time))
	if x.HasSpan() {
		b = appendLen(b, tagExSpanID, 8)
		b = append(b, x.SpanID[:]...)
		b = appendLen(b, tagExTraceID, 16)
		b = append(b, x.TraceID[:]...)
	}
	return appendFixed(b, tagExAsDouble, math.Float64bits(x.Value))
}

// appendNumber appends a NumberDataPoint's value: as_int when the metric
// has integer points and v is an integer an int64 holds (always, for an
// Int64 measure, unless a Float64 measure of the same name recorded into
// the view), as_double otherwise. Both are 8-byte fields.
func appendNumber(b []byte, isInt bool, v float64) []byte {
	if i, ok := promname.IntPoint(isInt, v); ok {
		return appendFixed(b, tagNDPAsInt, uint64(i))
	}
	return appendFixed(b, tagNDPAsDouble, math.Float64bits(v))
}

// appendAttrs appends the attributes of p: its series' tag values with the
// view's keys (keys, in the order of the values: View.Keys), leaving out absent
// keys (value id 0); for the overflow series, otel.metric.overflow=true.
func (e *Encoder) appendAttrs(b []byte, tag byte, keys []uint32, p *point) []byte {
	if p.overflow {
		b = appendLen(b, tag, len(overflowAttr))
		b = append(b, overflowAttr...)
	}
	for i, sid := range p.s.ValueIDs() {
		if sid == 0 {
			continue
		}
		key, v := e.keys[e.keyOff[i]:e.keyOff[i+1]], e.str(sid)
		if e.typed && e.ktypes[i] != attrval.String {
			anyLen := anyValueSize(e.ktypes[i], v)
			b = appendLen(b, tag, len(key)+lenFieldSize(anyLen))
			b = appendLen(append(b, key...), tagKVValue, anyLen)
			b = appendAnyValue(b, e.ktypes[i], v)
			continue
		}
		anyLen := lenFieldSize(len(v)) // the AnyValue
		b = appendLen(b, tag, len(key)+lenFieldSize(anyLen))
		b = append(b, key...)
		if anyLen < 0x80 { // both lengths fit in a byte
			b = append(b, tagKVValue, byte(anyLen), tagAnyString, byte(len(v)))
		} else {
			b = appendLen(b, tagKVValue, anyLen)
			b = appendLen(b, tagAnyString, len(v))
		}
		b = append(b, v...)
	}
	return b
}

// read reads s through the delta state st (nil: cumulative) into p and
// reports whether the series has a data point: with Delta temporality,
// series that did not change are left out.
func (e *Encoder) read(kind core.Kind, s *core.Series, st *delta.View, p *point) bool {
	v := &e.vals
	if !delta.Read(kind, s, st, e.buckets, v) {
		return false
	}
	switch kind {
	case core.KindExponential:
		return true // e.vals.Exp: the caller's setExp reads it
	case core.KindCount:
		p.count = v.Count
		return true
	case core.KindSum:
		p.value = v.Sum
		return true
	case core.KindLastValue:
		p.value = v.Last
		return true
	}
	d := v.Dist
	// The extremes of the interval are known only when every sample is in
	// it: min and max cannot be un-merged.
	p.hasMinMax = st == nil || v.FirstRead
	p.count = uint64(d.Count)
	p.value = d.Sum
	p.min, p.max = d.Min, d.Max
	if d.Min > d.Max {
		// Every sample was NaN (min and max leave NaN out: they are
		// still +Inf and -Inf): NaN, as the OTel SDK exports, never min
		// above max.
		p.min, p.max = math.NaN(), math.NaN()
	}
	// OTLP: "Sum should only be filled out when measuring non-negative
	// discrete events [...] Negative events *can* be recorded, but sum
	// should not be filled out when doing so" (metrics.proto). d.Min is
	// the series' all-time minimum in both temporalities.
	p.hasSum = !(d.Min < 0)
	p.countsFrom = len(e.counts)
	for _, c := range e.buckets {
		e.counts = append(e.counts, uint64(c))
	}
	return true
}

// appendMetricHead appends a ScopeMetrics' Metric field up to its data:
// the Metric's length, its name, description and unit (the last two left
// out when empty, as proto3 does), and the header of its data field
// (dataTag: Sum, Gauge, Histogram, ExponentialHistogram or Summary) of
// size data, whose points the caller appends next.
func appendMetricHead(b []byte, name, desc, unit string, dataTag byte, data int) []byte {
	metric := lenFieldSize(len(name)) + lenFieldSize(data)
	if desc != "" {
		metric += lenFieldSize(len(desc))
	}
	if unit != "" {
		metric += lenFieldSize(len(unit))
	}
	b = appendLen(b, tagSMMetrics, metric)
	b = appendString(b, tagMetricName, name)
	if desc != "" {
		b = appendString(b, tagMetricDescription, desc)
	}
	if unit != "" {
		b = appendString(b, tagMetricUnit, unit)
	}
	return appendLen(b, dataTag, data)
}
