package remotewrite

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"slices"
	"strings"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/promname"
	"github.com/zerostat/zerostat/internal/promnative"
	"github.com/zerostat/zerostat/internal/protowire"
)

// The remote-write 1.0 messages (prometheus/prompb types.proto and
// remote.proto, https://prometheus.io/docs/specs/remote_write_spec/):
//
//	message WriteRequest { repeated TimeSeries timeseries = 1; ... }
//	message TimeSeries   { repeated Label labels = 1; repeated Sample samples = 2; repeated Exemplar exemplars = 3; repeated Histogram histograms = 4; }
//	message Label        { string name = 1; string value = 2; }
//	message Sample       { double value = 1; int64 timestamp = 2; }
//	message Exemplar     { repeated Label labels = 1; double value = 2; int64 timestamp = 3; }
//	message Histogram    { oneof count { uint64 count_int = 1; ... } double sum = 3; <native fields 4..12: promnative.RemoteWrite>;
//	                       ResetHint reset_hint = 14; int64 timestamp = 15; }
//
// Field keys are (field number << 3) | wire type; wire types 0 (varint),
// 1 (fixed64) and 2 (length-delimited).
const (
	keyWriteRequestTimeseries = 1<<3 | 2 // 0x0a
	keyWriteRequestMetadata   = 3<<3 | 2 // 0x1a
	keyMetadataType           = 1<<3 | 0 // 0x08
	keyMetadataFamilyName     = 2<<3 | 2 // 0x12
	keyMetadataHelp           = 4<<3 | 2 // 0x22
	keyMetadataUnit           = 5<<3 | 2 // 0x2a
	keyTimeSeriesLabels       = 1<<3 | 2 // 0x0a
	keyTimeSeriesSamples      = 2<<3 | 2 // 0x12
	keyTimeSeriesExemplars    = 3<<3 | 2 // 0x1a
	keyTimeSeriesHistograms   = 4<<3 | 2 // 0x22
	keyHistogramCount         = 1<<3 | 0 // 0x08, count_int
	keyHistogramSum           = 3<<3 | 1 // 0x19
	keyHistogramTimestamp     = 15<<3 | 0
	keyExemplarLabels         = 1<<3 | 2 // 0x0a
	keyExemplarValue          = 2<<3 | 1 // 0x11
	keyExemplarTimestamp      = 3<<3 | 0 // 0x18
	keyLabelName              = 1<<3 | 2 // 0x0a
	keyLabelValue             = 2<<3 | 2 // 0x12
	keySampleValue            = 1<<3 | 1 // 0x09
	keySampleTimestamp        = 2<<3 | 0 // 0x10
)

// varintSize returns the size of v as a protobuf varint.
func varintSize(v uint64) int { return protowire.VarintSize(v) }

// Varints are appended with binary.AppendUvarint (protobuf's varint is
// Go's uvarint), fixed64 with binary.LittleEndian.AppendUint64.

// labelSize is the size of a Label message (proto3: empty strings are
// left out, as proto.Marshal leaves them out).
func labelSize(name, value string) int {
	n := 0
	if name != "" {
		n += 1 + varintSize(uint64(len(name))) + len(name)
	}
	if value != "" {
		n += 1 + varintSize(uint64(len(value))) + len(value)
	}
	return n
}

func appendLabel(b []byte, name, value string) []byte {
	b = append(b, keyTimeSeriesLabels)
	b = binary.AppendUvarint(b, uint64(labelSize(name, value)))
	if name != "" {
		b = append(b, keyLabelName)
		b = binary.AppendUvarint(b, uint64(len(name)))
		b = append(b, name...)
	}
	if value != "" {
		b = append(b, keyLabelValue)
		b = binary.AppendUvarint(b, uint64(len(value)))
		b = append(b, value...)
	}
	return b
}

// sampleSize is the size of a Sample message; a +0 value and a zero
// timestamp are left out (proto3 defaults).
func sampleSize(v float64, ts int64) int {
	n := 0
	if math.Float64bits(v) != 0 {
		n += 1 + 8
	}
	if ts != 0 {
		n += 1 + varintSize(uint64(ts))
	}
	return n
}

// StaleNaN is Prometheus's stale marker: the sample value that says a
// series ended (prometheus/model/value.StaleNaN).
const StaleNaN = 0x7ff0000000000002

// The MetricMetadata.MetricType values of prompb (types.proto).
const (
	metaUnknown   = 0
	metaCounter   = 1
	metaGauge     = 2
	metaHistogram = 3
)

// appendMetadata appends one WriteRequest.metadata element (remote write
// 1.0's MetricMetadata: type, metric_family_name, help, unit).
func appendMetadata(b []byte, typ uint64, name, help, unit string) []byte {
	n := 0
	if typ != 0 {
		n += 1 + varintSize(typ)
	}
	for _, s := range [...]string{name, help, unit} {
		if s != "" {
			n += 1 + varintSize(uint64(len(s))) + len(s)
		}
	}
	b = append(b, keyWriteRequestMetadata)
	b = binary.AppendUvarint(b, uint64(n))
	if typ != 0 {
		b = append(b, keyMetadataType)
		b = binary.AppendUvarint(b, typ)
	}
	for i, s := range [...]string{name, help, unit} {
		if s == "" {
			continue
		}
		b = append(b, [...]byte{keyMetadataFamilyName, keyMetadataHelp, keyMetadataUnit}[i])
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// metaType is the metadata type of a family.
func metaType(t promname.Type) uint64 {
	switch t {
	case promname.Counter:
		return metaCounter
	case promname.Gauge:
		return metaGauge
	case promname.Histogram:
		return metaHistogram
	case promname.Summary:
		return metaSummary
	}
	return metaUnknown
}

// label is one label of a time series being written.
type label struct{ name, value string }

// appendTimeSeries appends one WriteRequest.timeseries element: the
// labels (sorted by name, as the spec requires), one sample and, when ex
// is not nil, one exemplar (appendTimeSeriesExemplars: a counter's have
// several).
func appendTimeSeries(b []byte, labels []label, v float64, ts int64, ex *core.Exemplar) []byte {
	if ex == nil {
		return appendTimeSeriesExemplars(b, labels, v, ts, nil)
	}
	one := [1]*core.Exemplar{ex}
	return appendTimeSeriesExemplars(b, labels, v, ts, one[:])
}

// appendSample appends a TimeSeries.samples field: v at ts.
func appendSample(b []byte, v float64, ts int64) []byte {
	b = append(b, keyTimeSeriesSamples)
	b = binary.AppendUvarint(b, uint64(sampleSize(v, ts)))
	if bits := math.Float64bits(v); bits != 0 {
		b = append(b, keySampleValue)
		b = binary.LittleEndian.AppendUint64(b, bits)
	}
	if ts != 0 {
		b = append(b, keySampleTimestamp)
		b = binary.AppendUvarint(b, uint64(ts))
	}
	return b
}

// histogramSize is the size of the Histogram message of h at ts (proto3:
// a zero sum left out; the count, a oneof member, always written, as
// Prometheus's own encoder writes it; reset_hint UNKNOWN, 0, left out:
// the series is cumulative, and Prometheus detects its resets itself, as
// for a scraped native histogram).
func histogramSize(h *promnative.Histogram, ts int64) int {
	n := 1 + varintSize(h.Count)
	if math.Float64bits(h.Sum) != 0 {
		n += 1 + 8
	}
	n += promnative.RemoteWrite.Size(h)
	if ts != 0 {
		n += 1 + varintSize(uint64(ts))
	}
	return n
}

// appendHistogramSeries appends one WriteRequest.timeseries element: the
// labels (sorted by name) and one native histogram, h at ts.
func appendHistogramSeries(b []byte, labels []label, h *promnative.Histogram, ts int64) []byte {
	n := 0
	for _, l := range labels {
		ls := labelSize(l.name, l.value)
		n += 1 + varintSize(uint64(ls)) + ls
	}
	hs := histogramSize(h, ts)
	n += 1 + varintSize(uint64(hs)) + hs
	b = append(b, keyWriteRequestTimeseries)
	b = binary.AppendUvarint(b, uint64(n))
	for _, l := range labels {
		b = appendLabel(b, l.name, l.value)
	}
	b = append(b, keyTimeSeriesHistograms)
	b = binary.AppendUvarint(b, uint64(hs))
	b = append(b, keyHistogramCount)
	b = binary.AppendUvarint(b, h.Count)
	if bits := math.Float64bits(h.Sum); bits != 0 {
		b = append(b, keyHistogramSum)
		b = binary.LittleEndian.AppendUint64(b, bits)
	}
	b = promnative.RemoteWrite.Append(b, h)
	if ts != 0 {
		b = append(b, keyHistogramTimestamp)
		b = binary.AppendUvarint(b, uint64(ts))
	}
	return b
}

// The labels of an exemplar recorded in a span, as OpenMetrics exemplars
// carry them (exporter/prometheus): its ids in lower-case hex.
const (
	labelSpanID  = "span_id"
	labelTraceID = "trace_id"
)

// exemplarSize is the size of the Exemplar message of x: its span's ids
// as the labels span_id and trace_id (sorted by name) when it was
// recorded in a span (core.Exemplar.HasSpan), none otherwise (other
// attachments are not labels, as in OpenMetrics); its value (+0 left out:
// -0 is sent as 0, as OpenMetrics spells it) and its time in milliseconds
// (0 left out).
func exemplarSize(x *core.Exemplar) int {
	n := 0
	if x.HasSpan() {
		for _, ls := range [...]int{hexLabelSize(labelSpanID, len(x.SpanID)), hexLabelSize(labelTraceID, len(x.TraceID))} {
			n += 1 + varintSize(uint64(ls)) + ls
		}
	}
	if math.Float64bits(x.Value+0) != 0 {
		n += 1 + 8
	}
	if ms := exemplarMillis(x); ms != 0 {
		n += 1 + varintSize(uint64(ms))
	}
	return n
}

// exemplarMillis is x's time in Unix milliseconds, remote write's unit
// (time.Time.UnixMilli's, for times after 1970).
func exemplarMillis(x *core.Exemplar) int64 { return x.Time / 1e6 }

// hexLabelSize is the size of a Label message of name and an id of idLen
// bytes in hex.
func hexLabelSize(name string, idLen int) int {
	return 1 + varintSize(uint64(len(name))) + len(name) + 1 + varintSize(uint64(2*idLen)) + 2*idLen
}

// appendExemplar appends the fields of x's Exemplar message (the size
// exemplarSize gives), in proto.Marshal's order. No allocation.
func appendExemplar(b []byte, x *core.Exemplar) []byte {
	if x.HasSpan() {
		b = appendHexLabel(b, labelSpanID, x.SpanID[:])
		b = appendHexLabel(b, labelTraceID, x.TraceID[:])
	}
	if bits := math.Float64bits(x.Value + 0); bits != 0 {
		b = append(b, keyExemplarValue)
		b = binary.LittleEndian.AppendUint64(b, bits)
	}
	if ms := exemplarMillis(x); ms != 0 {
		b = append(b, keyExemplarTimestamp)
		b = binary.AppendUvarint(b, uint64(ms))
	}
	return b
}

// appendHexLabel appends a labels field: name, and id in lower-case hex.
func appendHexLabel(b []byte, name string, id []byte) []byte {
	b = append(b, keyExemplarLabels)
	b = binary.AppendUvarint(b, uint64(hexLabelSize(name, len(id))))
	b = append(b, keyLabelName)
	b = binary.AppendUvarint(b, uint64(len(name)))
	b = append(b, name...)
	b = append(b, keyLabelValue)
	b = binary.AppendUvarint(b, uint64(2*len(id)))
	return hex.AppendEncode(b, id)
}

// Label slot kinds: what a family's label at this position holds.
const (
	slotName  = iota // __name__
	slotConst        // a constant label
	slotTag          // a tag value (absent tags are left out)
	slotLe           // a histogram bucket's bound
)

type slot struct {
	name  string
	kind  uint8
	tag   int    // slotTag: index in Series.ValueIDs
	value string // slotConst
}

// family is a view's remote-write layout, built once per view: its label
// slots sorted by name ("__name__" and "le" included) and its series
// names.
type family struct {
	fam  *promname.Family
	kind core.Kind
	seen uint64
	// sent holds the series of the last push (with the push's gen and
	// whether it is the overflow series), so that one gone by the next
	// push (evicted; its view unregistered) gets a stale marker, in every
	// push until one carrying it is delivered (Writer.delivered). Holding
	// the series keeps its interned tag values readable until then.
	sent                       map[*core.Series]sentSeries
	slots                      []slot
	overflowSlots              []slot // the overflow series: no tags, OverflowLabel="true"
	sample, sumName, countName string
	les                        []string // histogram bounds as every path spells them (promname.Family.Les)
	// classic: the family is written as classic histogram series
	// (_bucket, _sum, _count): a distribution, or an exponential view
	// under Options.NoNativeHistograms; or as a summary's (one series per
	// quantile, labelled quantile=les[i], _sum, _count: summary.go).
	classic bool
}

type sentSeries struct {
	gen      uint64
	overflow bool
	// ex holds, per bucket of a histogram series recorded with exemplars,
	// what its exemplar was sent as; nil until the series has one (a
	// series without exemplars pays nothing), freed with the entry.
	ex []sentExemplar
}

// sentExemplar is what a bucket's exemplar was sent as. An exemplar is
// immutable and a record stores a new one (core.Exemplar), so its pointer
// identifies it: a bucket's exemplar is carried by every push until one
// carrying it is delivered whole (Writer.delivered), then not again until
// the bucket has another.
type sentExemplar struct {
	delivered *core.Exemplar // carried by the last push delivered
	carried   *core.Exemplar // carried by the push encoded last; nil: none
}

// newFamily lays out pf's series; noNative is Options.NoNativeHistograms.
func newFamily(pf *promname.Family, noNative bool) *family {
	v := pf.View
	f := &family{fam: pf, kind: v.Agg.Kind(), sample: pf.Sample, sent: map[*core.Series]sentSeries{}}
	f.classic = f.kind == core.KindDistribution || f.kind == core.KindExponential && noNative || f.kind == core.KindSummary
	le := "le"
	if f.kind == core.KindSummary {
		le = "quantile" // a summary's quantile series in the le slot, its quantiles in les (summary.go)
	}
	f.slots = append(f.slots, slot{name: "__name__", kind: slotName})
	for _, l := range pf.Labels {
		if l.Tag >= 0 {
			f.slots = append(f.slots, slot{name: l.Name, kind: slotTag, tag: l.Tag})
		} else {
			f.slots = append(f.slots, slot{name: l.Name, kind: slotConst, value: l.Value})
		}
	}
	if f.classic {
		f.slots = append(f.slots, slot{name: le, kind: slotLe})
		f.sumName, f.countName = pf.Name+"_sum", pf.Name+"_count"
		f.les = pf.Les
		if f.kind == core.KindExponential {
			f.les = []string{"+Inf"} // no classic buckets: what a text scrape has
		}
		if f.kind == core.KindSummary {
			f.les = pf.Qs
		}
	} else if f.kind == core.KindExponential {
		f.sample = pf.Name // a native histogram: one series, the family's name
	}
	f.overflowSlots = append(f.overflowSlots, slot{name: "__name__", kind: slotName})
	for _, l := range pf.OverflowLabels {
		f.overflowSlots = append(f.overflowSlots, slot{name: l.Name, kind: slotConst, value: l.Value})
	}
	if f.classic {
		f.overflowSlots = append(f.overflowSlots, slot{name: le, kind: slotLe})
	}
	byName := func(a, b slot) int { return strings.Compare(a.name, b.name) }
	slices.SortFunc(f.slots, byName)
	slices.SortFunc(f.overflowSlots, byName)
	return f
}
