package promnative

import (
	"encoding/binary"

	pw "github.com/zerostat/zerostat/internal/protowire"
)

// Layout places a native histogram's fields in a message.
type Layout struct {
	// Tags (field number << 3 | wire type) of schema (sint32), zero
	// threshold (double), zero count (uint64), the spans (BucketSpan
	// messages) and deltas (packed sint64) of each sign.
	Schema, ZeroThreshold, ZeroCount byte
	NegativeSpans, NegativeDeltas    byte
	PositiveSpans, PositiveDeltas    byte
	// Proto3 leaves zero schema, zero threshold and zero span fields out
	// (proto3's implicit presence, as its Marshal does); otherwise they
	// are written, as client_golang sets them.
	Proto3 bool
	// NoOpSpan gives a histogram with no bucket and no zero count one
	// positive span of offset 0 and length 0, as client_golang does "so
	// that it does not look like a classic histogram to scrapers".
	NoOpSpan bool
}

// Exposition is client_model's io.prometheus.client.Histogram (proto2):
// schema 5, zero_threshold 6, zero_count 7, negative_span 9,
// negative_delta 10, positive_span 12, positive_delta 13.
var Exposition = Layout{
	Schema: pw.Tag(5, pw.WireVarint), ZeroThreshold: pw.Tag(6, pw.WireFixed64), ZeroCount: pw.Tag(7, pw.WireVarint),
	NegativeSpans: pw.Tag(9, pw.WireBytes), NegativeDeltas: pw.Tag(10, pw.WireBytes),
	PositiveSpans: pw.Tag(12, pw.WireBytes), PositiveDeltas: pw.Tag(13, pw.WireBytes),
	NoOpSpan: true,
}

// RemoteWrite is prompb's prometheus.Histogram (proto3): schema 4,
// zero_threshold 5, zero_count_int 6 (a oneof member: always written),
// negative_spans 8, negative_deltas 9, positive_spans 11,
// positive_deltas 12.
var RemoteWrite = Layout{
	Schema: pw.Tag(4, pw.WireVarint), ZeroThreshold: pw.Tag(5, pw.WireFixed64), ZeroCount: pw.Tag(6, pw.WireVarint),
	NegativeSpans: pw.Tag(8, pw.WireBytes), NegativeDeltas: pw.Tag(9, pw.WireBytes),
	PositiveSpans: pw.Tag(11, pw.WireBytes), PositiveDeltas: pw.Tag(12, pw.WireBytes),
	Proto3: true,
}

// BucketSpan's fields: offset (sint32) 1, length (uint32) 2.
const (
	tagSpanOffset = 1<<3 | pw.WireVarint
	tagSpanLength = 2<<3 | pw.WireVarint
)

// noOp is the span of NoOpSpan.
var noOp = []Span{{}}

// spans returns h's positive spans as l writes them.
func (l *Layout) positive(h *Histogram) []Span {
	if l.NoOpSpan && h.Empty() {
		return noOp
	}
	return h.PositiveSpans
}

// Size returns the size of h's native fields in layout l (what Append
// writes).
func (l *Layout) Size(h *Histogram) int {
	n := 0
	if h.Schema != 0 || !l.Proto3 {
		n += pw.VarintFieldSize(pw.Zigzag32(h.Schema))
	}
	if !l.Proto3 {
		n += pw.FixedFieldSize // zero threshold 0
	}
	n += pw.VarintFieldSize(h.ZeroCount)
	n += l.spansSize(h.NegativeSpans) + deltasSize(h.NegativeDeltas)
	n += l.spansSize(l.positive(h)) + deltasSize(h.PositiveDeltas)
	return n
}

// Append appends h's native fields in layout l, in field-number order
// (both messages number them in the same order).
func (l *Layout) Append(b []byte, h *Histogram) []byte {
	if h.Schema != 0 || !l.Proto3 {
		b = pw.AppendVarint(b, l.Schema, pw.Zigzag32(h.Schema))
	}
	if !l.Proto3 {
		b = pw.AppendDouble(b, l.ZeroThreshold, 0)
	}
	b = pw.AppendVarint(b, l.ZeroCount, h.ZeroCount)
	b = l.appendSpans(b, l.NegativeSpans, h.NegativeSpans)
	b = appendDeltas(b, l.NegativeDeltas, h.NegativeDeltas)
	b = l.appendSpans(b, l.PositiveSpans, l.positive(h))
	return appendDeltas(b, l.PositiveDeltas, h.PositiveDeltas)
}

// spanSize is the size of a BucketSpan message's content.
func (l *Layout) spanSize(s Span) int {
	n := 0
	if s.Offset != 0 || !l.Proto3 {
		n += pw.VarintFieldSize(pw.Zigzag32(s.Offset))
	}
	if s.Length != 0 || !l.Proto3 {
		n += pw.VarintFieldSize(uint64(s.Length))
	}
	return n
}

func (l *Layout) spansSize(spans []Span) int {
	n := 0
	for _, s := range spans {
		n += pw.LenFieldSize(l.spanSize(s))
	}
	return n
}

func (l *Layout) appendSpans(b []byte, tag byte, spans []Span) []byte {
	for _, s := range spans {
		b = pw.AppendLen(b, tag, l.spanSize(s))
		if s.Offset != 0 || !l.Proto3 {
			b = pw.AppendVarint(b, tagSpanOffset, pw.Zigzag32(s.Offset))
		}
		if s.Length != 0 || !l.Proto3 {
			b = pw.AppendVarint(b, tagSpanLength, uint64(s.Length))
		}
	}
	return b
}

// packedSize is the content size of packed sint64 deltas.
func packedSize(deltas []int64) int {
	n := 0
	for _, d := range deltas {
		n += pw.VarintSize(pw.Zigzag64(d))
	}
	return n
}

func deltasSize(deltas []int64) int {
	if len(deltas) == 0 {
		return 0
	}
	return pw.LenFieldSize(packedSize(deltas))
}

func appendDeltas(b []byte, tag byte, deltas []int64) []byte {
	if len(deltas) == 0 {
		return b
	}
	b = pw.AppendLen(b, tag, packedSize(deltas))
	for _, d := range deltas {
		b = binary.AppendUvarint(b, pw.Zigzag64(d))
	}
	return b
}
