package prometheus

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"strings"

	"github.com/zerostat/zerostat/internal/accept"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/delta"
	"github.com/zerostat/zerostat/internal/promname"
	"github.com/zerostat/zerostat/internal/promnative"
	pw "github.com/zerostat/zerostat/internal/protowire"
)

// The protobuf exposition: length-delimited io.prometheus.client.MetricFamily
// messages (client_model's metrics.proto, proto2), hand-written with
// internal/protowire. Every field number used is below 16, so
// each tag is one byte:
//
//	message MetricFamily { string name = 1; string help = 2; MetricType type = 3; repeated Metric metric = 4; string unit = 5; }
//	message Metric       { repeated LabelPair label = 1; Gauge gauge = 2; Counter counter = 3; Untyped untyped = 5; Histogram histogram = 7; }
//	message LabelPair    { string name = 1; string value = 2; }
//	message Gauge        { double value = 1; }   // Untyped likewise
//	message Counter      { double value = 1; Exemplar exemplar = 2; Timestamp created_timestamp = 3; }
//	message Histogram    { uint64 sample_count = 1; double sample_sum = 2; repeated Bucket bucket = 3;
//	                       <native fields 5..13: promnative.Exposition>; Timestamp created_timestamp = 15; }
//	message Bucket       { uint64 cumulative_count = 1; double upper_bound = 2; Exemplar exemplar = 3; }
//	message Exemplar     { repeated LabelPair label = 1; double value = 2; Timestamp timestamp = 3; }
//	message Timestamp    { int64 seconds = 1; int32 nanos = 2; }
const (
	tagFamilyName   = 1<<3 | pw.WireBytes
	tagFamilyHelp   = 2<<3 | pw.WireBytes
	tagFamilyType   = 3<<3 | pw.WireVarint
	tagFamilyMetric = 4<<3 | pw.WireBytes
	tagFamilyUnit   = 5<<3 | pw.WireBytes

	tagMetricLabel     = 1<<3 | pw.WireBytes
	tagMetricGauge     = 2<<3 | pw.WireBytes
	tagMetricCounter   = 3<<3 | pw.WireBytes
	tagMetricUntyped   = 5<<3 | pw.WireBytes
	tagMetricHistogram = 7<<3 | pw.WireBytes

	tagLabelName  = 1<<3 | pw.WireBytes
	tagLabelValue = 2<<3 | pw.WireBytes

	tagValue          = 1<<3 | pw.WireFixed64 // Gauge, Counter, Untyped
	tagCounterCreated = 3<<3 | pw.WireBytes

	tagHistCount   = 1<<3 | pw.WireVarint
	tagHistSum     = 2<<3 | pw.WireFixed64
	tagHistBucket  = 3<<3 | pw.WireBytes
	tagHistCreated = 15<<3 | pw.WireBytes

	tagBucketCount    = 1<<3 | pw.WireVarint
	tagBucketUpper    = 2<<3 | pw.WireFixed64
	tagBucketExemplar = 3<<3 | pw.WireBytes

	tagExemplarLabel = 1<<3 | pw.WireBytes
	tagExemplarValue = 2<<3 | pw.WireFixed64
	tagExemplarTime  = 3<<3 | pw.WireBytes

	tagTimeSeconds = 1<<3 | pw.WireVarint
	tagTimeNanos   = 2<<3 | pw.WireVarint
)

// MetricType values.
const (
	pbCounter   = 0
	pbGauge     = 1
	pbUntyped   = 3
	pbHistogram = 4
)

// maxLenPrefix is the room reserved for a family's length prefix: a
// varint of up to 35 bits.
const maxLenPrefix = 5

// protoFamily is what a family's protobuf exposition renders once.
type protoFamily struct {
	// heads[untyped] are the name, help and type fields (the family
	// named as in the text format); unit the unit field (after the
	// metrics, in field order).
	heads [2][]byte
	unit  []byte
	// labels[i] is, per label of promname.Family.Labels, a LabelPair's
	// name field (a tag) or its whole content (a constant); overflow
	// the overflow series' label fields, rendered whole.
	labels   [][]byte
	overflow []byte
	// uppers are a classic histogram's bucket bounds.
	uppers []float64
}

func newProtoFamily(pf *promname.Family, textName string, kind core.Kind) protoFamily {
	head := func(name string, typ uint64) []byte {
		b := pw.AppendString(nil, tagFamilyName, name)
		if pf.Help != "" {
			b = pw.AppendString(b, tagFamilyHelp, pf.Help)
		}
		return pw.AppendVarint(b, tagFamilyType, typ)
	}
	var p protoFamily
	switch pf.Type {
	case promname.Counter:
		p.heads[0] = head(textName, pbCounter)
	case promname.Gauge:
		p.heads[0] = head(textName, pbGauge)
	case promname.Histogram:
		p.heads[0] = head(textName, pbHistogram)
	case promname.Summary:
		p.heads[0] = head(textName, pbSummary)
	default:
		p.heads[0] = head(textName, pbUntyped)
	}
	p.heads[1] = head(pf.Sample, pbUntyped)
	if pf.Unit != "" {
		p.unit = pw.AppendString(nil, tagFamilyUnit, pf.Unit)
	}
	for _, l := range pf.Labels {
		b := pw.AppendString(nil, tagLabelName, l.Name)
		if l.Tag < 0 {
			b = pw.AppendString(b, tagLabelValue, l.Value)
		}
		p.labels = append(p.labels, b)
	}
	for _, l := range pf.OverflowLabels {
		n := pw.LenFieldSize(len(l.Name)) + pw.LenFieldSize(len(l.Value))
		p.overflow = pw.AppendLen(p.overflow, tagMetricLabel, n)
		p.overflow = pw.AppendString(pw.AppendString(p.overflow, tagLabelName, l.Name), tagLabelValue, l.Value)
	}
	if kind == core.KindDistribution {
		p.uppers = pf.View.Agg.Bounds()
	}
	return p
}

// appendFamilyProto appends fam's MetricFamily, length-delimited: the
// head, one Metric per series (and the overflow series), the unit. Its
// length is known once the metrics are written: the family is written
// after room for the longest prefix, then moved down over the room the
// prefix does not need (one memmove of the family). A family left with
// no metric (every series an exponential one with no native form) is not
// written.
func (h *Handler) appendFamilyProto(dst []byte, fam *family, overflow *core.Series, strs []string, x *exposition) []byte {
	p := &fam.pb
	start := len(dst)
	dst = append(dst, make([]byte, maxLenPrefix)...)
	dst = append(dst, p.heads[b2i(x.untyped)]...)
	n := 0
	for i, s := range fam.series {
		x.i = i
		var ok bool
		if dst, ok = h.appendMetricProto(dst, fam, s, h.labelsProto(fam, s, strs), x); ok {
			n++
		}
	}
	if overflow != nil {
		x.i = len(fam.series)
		var ok bool
		if dst, ok = h.appendMetricProto(dst, fam, overflow, p.overflow, x); ok {
			n++
		}
	}
	if n == 0 {
		return dst[:start]
	}
	dst = append(dst, p.unit...)
	size := len(dst) - start - maxLenPrefix
	k := pw.VarintSize(uint64(size))
	binary.PutUvarint(dst[start+maxLenPrefix-k:], uint64(size))
	if k < maxLenPrefix {
		copy(dst[start:], dst[start+maxLenPrefix-k:])
		dst = dst[:len(dst)-(maxLenPrefix-k)]
	}
	return dst
}

// labelsProto renders the label fields of s into h.labels: one
// LabelPair per constant label and per tag present (an absent tag is
// left out, as in the text formats), sorted by name.
func (h *Handler) labelsProto(fam *family, s *core.Series, strs []string) []byte {
	vids := s.ValueIDs()
	lb := h.labels[:0]
	for i, l := range fam.fam.Labels {
		head := fam.pb.labels[i]
		if l.Tag < 0 {
			lb = append(pw.AppendLen(lb, tagMetricLabel, len(head)), head...)
			continue
		}
		val := strs[core.ValueID(vids, l.Tag)]
		if val == "" {
			continue
		}
		lb = append(pw.AppendLen(lb, tagMetricLabel, len(head)+pw.LenFieldSize(len(val))), head...)
		lb = pw.AppendString(lb, tagLabelValue, val)
	}
	h.labels = lb
	return lb
}

// appendMetricProto appends the Metric of series s, whose label fields
// are lb. It reports false, writing nothing, for an exponential series
// with no native form (promnative.ErrScale).
func (h *Handler) appendMetricProto(dst []byte, fam *family, s *core.Series, lb []byte, x *exposition) ([]byte, bool) {
	withCreated := !x.untyped && fam.createdName != ""
	var startNs int64
	if withCreated {
		start, _ := delta.CumulativeStart(x.agg, s)
		startNs = start.UnixNano()
	}
	switch fam.kind {
	case core.KindCount, core.KindSum, core.KindLastValue:
		var v float64
		tag := byte(tagMetricCounter)
		switch fam.kind {
		case core.KindCount:
			v = float64(s.ReadCount())
		case core.KindSum:
			v = h.values[x.i]
		default:
			v = s.ReadLast()
		}
		if fam.fam.Type == promname.Gauge {
			tag = tagMetricGauge
		} else if x.untyped {
			tag = tagMetricUntyped
		}
		n := pw.FixedFieldSize
		var ex *core.Exemplar // a counter's: counterExemplarProto
		if tag == tagMetricCounter {
			ex = h.counterExemplarProto(s)
			if ex != nil {
				n += pw.LenFieldSize(exemplarSize(ex))
			}
		}
		if tag == tagMetricCounter && withCreated {
			n += pw.LenFieldSize(timestampSize(startNs))
		}
		dst = pw.AppendLen(dst, tagFamilyMetric, len(lb)+pw.LenFieldSize(n))
		dst = append(dst, lb...)
		dst = pw.AppendLen(dst, tag, n)
		dst = pw.AppendDouble(dst, tagValue, v+0) // +0: no -0, as the text formats
		if ex != nil {
			dst = pw.AppendLen(dst, tagCounterExemplar, exemplarSize(ex))
			dst = appendExemplarProto(dst, ex)
		}
		if tag == tagMetricCounter && withCreated {
			dst = appendTimestamp(dst, tagCounterCreated, startNs)
		}
		return dst, true
	case core.KindDistribution:
		return h.appendClassicProto(dst, fam, s, lb, withCreated, startNs), true
	case core.KindExponential:
		s.ReadExp(&h.exp)
		if err := h.native.Set(&h.exp); err != nil {
			return dst, false
		}
		nh := &h.native
		n := pw.VarintFieldSize(nh.Count) + pw.FixedFieldSize + promnative.Exposition.Size(nh)
		if withCreated {
			n += pw.LenFieldSize(timestampSize(startNs))
		}
		dst = pw.AppendLen(dst, tagFamilyMetric, len(lb)+pw.LenFieldSize(n))
		dst = append(dst, lb...)
		dst = pw.AppendLen(dst, tagMetricHistogram, n)
		dst = pw.AppendVarint(dst, tagHistCount, nh.Count)
		dst = pw.AppendDouble(dst, tagHistSum, nh.Sum+0)
		dst = promnative.Exposition.Append(dst, nh)
		if withCreated {
			dst = appendTimestamp(dst, tagHistCreated, startNs)
		}
		return dst, true
	case core.KindSummary:
		return h.appendSummaryProto(dst, x.agg.Quantiles(), s, lb, withCreated, startNs), true
	}
	return dst, false
}

// appendClassicProto appends the Metric of a distribution series: one
// Bucket per bound (cumulative count, upper bound, the bucket's exemplar)
// and, as client_golang writes it, a "+Inf" bucket only to carry an
// exemplar (its count is sample_count).
func (h *Handler) appendClassicProto(dst []byte, fam *family, s *core.Series, lb []byte, withCreated bool, startNs int64) []byte {
	exs := s.Exemplars(h.exs[:0]) // before the counts: each exemplar read is in them
	h.exs = exs
	st := s.ReadDist(h.buckets)
	uppers := fam.pb.uppers
	var total uint64
	for _, c := range h.buckets {
		total += uint64(c)
	}
	nb := len(uppers)
	if len(exs) > nb && exs[nb] != nil {
		nb++ // the +Inf bucket, for its exemplar
	}
	n := pw.VarintFieldSize(total) + pw.FixedFieldSize
	var cum uint64
	for i := range nb {
		cum += uint64(h.buckets[i])
		n += pw.LenFieldSize(bucketSize(cum, exemplarAt(exs, i)))
	}
	if withCreated {
		n += pw.LenFieldSize(timestampSize(startNs))
	}
	dst = pw.AppendLen(dst, tagFamilyMetric, len(lb)+pw.LenFieldSize(n))
	dst = append(dst, lb...)
	dst = pw.AppendLen(dst, tagMetricHistogram, n)
	dst = pw.AppendVarint(dst, tagHistCount, total)
	dst = pw.AppendDouble(dst, tagHistSum, st.Sum+0)
	cum = 0
	for i := range nb {
		cum += uint64(h.buckets[i])
		e := exemplarAt(exs, i)
		dst = pw.AppendLen(dst, tagHistBucket, bucketSize(cum, e))
		dst = pw.AppendVarint(dst, tagBucketCount, cum)
		upper := math.Inf(1)
		if i < len(uppers) {
			upper = uppers[i]
		}
		dst = pw.AppendDouble(dst, tagBucketUpper, upper)
		if e != nil {
			dst = pw.AppendLen(dst, tagBucketExemplar, exemplarSize(e))
			dst = appendExemplarProto(dst, e)
		}
	}
	clear(exs) // hold no exemplar past the series
	if withCreated {
		dst = appendTimestamp(dst, tagHistCreated, startNs)
	}
	return dst
}

func exemplarAt(exs []*core.Exemplar, i int) *core.Exemplar {
	if i < len(exs) {
		return exs[i]
	}
	return nil
}

func bucketSize(cum uint64, e *core.Exemplar) int {
	n := pw.VarintFieldSize(cum) + pw.FixedFieldSize
	if e != nil {
		n += pw.LenFieldSize(exemplarSize(e))
	}
	return n
}

// The labels of an exemplar recorded in a span, as in OpenMetrics.
const (
	labelTraceID = "trace_id"
	labelSpanID  = "span_id"
)

// exemplarLabelSize is the size of a LabelPair of name and an id of n
// bytes in hex.
func exemplarLabelSize(name string, n int) int {
	return pw.LenFieldSize(len(name)) + pw.LenFieldSize(2*n)
}

// exemplarSize is the size of e's Exemplar message: the labels the
// OpenMetrics exemplar has (trace_id and span_id for one recorded in a
// span, none otherwise), its value and its time.
func exemplarSize(e *core.Exemplar) int {
	n := pw.FixedFieldSize + pw.LenFieldSize(timestampSize(e.Time))
	if e.HasSpan() {
		n += pw.LenFieldSize(exemplarLabelSize(labelTraceID, len(e.TraceID)))
		n += pw.LenFieldSize(exemplarLabelSize(labelSpanID, len(e.SpanID)))
	}
	return n
}

func appendExemplarProto(dst []byte, e *core.Exemplar) []byte {
	if e.HasSpan() {
		dst = appendHexLabel(dst, labelTraceID, e.TraceID[:])
		dst = appendHexLabel(dst, labelSpanID, e.SpanID[:])
	}
	dst = pw.AppendDouble(dst, tagExemplarValue, e.Value+0)
	return appendTimestamp(dst, tagExemplarTime, e.Time)
}

func appendHexLabel(dst []byte, name string, id []byte) []byte {
	dst = pw.AppendLen(dst, tagExemplarLabel, exemplarLabelSize(name, len(id)))
	dst = pw.AppendString(dst, tagLabelName, name)
	dst = pw.AppendLen(dst, tagLabelValue, 2*len(id))
	return hex.AppendEncode(dst, id)
}

// timestampSize is the size of a google.protobuf.Timestamp of ns Unix
// nanoseconds (zero fields left out, as proto3 does).
func timestampSize(ns int64) int {
	sec, nanos := splitNanos(ns)
	n := 0
	if sec != 0 {
		n += pw.VarintFieldSize(uint64(sec))
	}
	if nanos != 0 {
		n += pw.VarintFieldSize(uint64(nanos))
	}
	return n
}

func appendTimestamp(dst []byte, tag byte, ns int64) []byte {
	dst = pw.AppendLen(dst, tag, timestampSize(ns))
	sec, nanos := splitNanos(ns)
	if sec != 0 {
		dst = pw.AppendVarint(dst, tagTimeSeconds, uint64(sec))
	}
	if nanos != 0 {
		dst = pw.AppendVarint(dst, tagTimeNanos, uint64(nanos))
	}
	return dst
}

// splitNanos splits Unix nanoseconds into a Timestamp's seconds and
// non-negative nanos.
func splitNanos(ns int64) (sec int64, nanos int32) {
	sec, r := ns/1e9, ns%1e9
	if r < 0 {
		sec, r = sec-1, r+1e9
	}
	return sec, int32(r)
}

// protoParams reports whether an Accept header has a media range for the
// delimited protobuf exposition with a non-zero quality:
// application/vnd.google.protobuf with proto=io.prometheus.client.MetricFamily
// and encoding=delimited, as Prometheus asks for it (client_golang's
// expfmt.Negotiate serves protobuf only to such a range). No allocation.
func protoParams(header string) bool {
	for mt, params := range accept.Ranges(header) {
		if !strings.EqualFold(mt, protoType) {
			continue
		}
		proto, delimited, zero := false, false, false
		for k, v := range accept.Params(params) {
			switch {
			case strings.EqualFold(k, "proto"):
				proto = v == protoMessage
			case strings.EqualFold(k, "encoding"):
				delimited = v == "delimited"
			case strings.EqualFold(k, "q"):
				zero = strings.Trim(v, "0.") == "" // 0, 0.0, 0.000
			}
		}
		if proto && delimited && !zero {
			return true
		}
	}
	return false
}
