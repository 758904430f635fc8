package promnative

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// Protobuf wire helpers (https://protobuf.dev/programming-guides/encoding/)
// for fields whose number is below 16 (a one-byte tag, given with its
// wire type). They are exporter/otlp's protowire.go helpers, which are
// unexported in package otlp; the patch /tmp/exp/prom/protowire.patch
// proposes one internal/protowire package for all three encoders.

// Wire types.
const (
	WireVarint  = 0
	WireFixed64 = 1
	WireBytes   = 2
)

// Tag returns the one-byte tag of field n (below 16) with wire type wt.
func Tag(n, wt byte) byte { return n<<3 | wt }

// VarintSize returns the size of v as a varint.
func VarintSize(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// Zigzag32 and Zigzag64 encode sint32 and sint64 values.
func Zigzag32(v int32) uint64 { return uint64(uint32(v<<1) ^ uint32(v>>31)) }
func Zigzag64(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// VarintFieldSize is the size of a varint field holding v.
func VarintFieldSize(v uint64) int { return 1 + VarintSize(v) }

// LenFieldSize is the size of a length-delimited field of n bytes.
func LenFieldSize(n int) int { return 1 + VarintSize(uint64(n)) + n }

// FixedFieldSize is the size of a fixed64 (double) field.
const FixedFieldSize = 1 + 8

// AppendVarint appends a varint field.
func AppendVarint(b []byte, tag byte, v uint64) []byte {
	return binary.AppendUvarint(append(b, tag), v)
}

// AppendDouble appends a double field.
func AppendDouble(b []byte, tag byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(append(b, tag), math.Float64bits(f))
}

// AppendLen appends the tag and length of a length-delimited field whose
// n bytes follow.
func AppendLen(b []byte, tag byte, n int) []byte {
	return binary.AppendUvarint(append(b, tag), uint64(n))
}

// AppendString appends a string (or bytes) field.
func AppendString(b []byte, tag byte, s string) []byte {
	return append(AppendLen(b, tag, len(s)), s...)
}

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
	Schema: Tag(5, WireVarint), ZeroThreshold: Tag(6, WireFixed64), ZeroCount: Tag(7, WireVarint),
	NegativeSpans: Tag(9, WireBytes), NegativeDeltas: Tag(10, WireBytes),
	PositiveSpans: Tag(12, WireBytes), PositiveDeltas: Tag(13, WireBytes),
	NoOpSpan: true,
}

// RemoteWrite is prompb's prometheus.Histogram (proto3): schema 4,
// zero_threshold 5, zero_count_int 6 (a oneof member: always written),
// negative_spans 8, negative_deltas 9, positive_spans 11,
// positive_deltas 12.
var RemoteWrite = Layout{
	Schema: Tag(4, WireVarint), ZeroThreshold: Tag(5, WireFixed64), ZeroCount: Tag(6, WireVarint),
	NegativeSpans: Tag(8, WireBytes), NegativeDeltas: Tag(9, WireBytes),
	PositiveSpans: Tag(11, WireBytes), PositiveDeltas: Tag(12, WireBytes),
	Proto3: true,
}

// BucketSpan's fields: offset (sint32) 1, length (uint32) 2.
const (
	tagSpanOffset = 1<<3 | WireVarint
	tagSpanLength = 2<<3 | WireVarint
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
		n += VarintFieldSize(Zigzag32(h.Schema))
	}
	if !l.Proto3 {
		n += FixedFieldSize // zero threshold 0
	}
	n += VarintFieldSize(h.ZeroCount)
	n += l.spansSize(h.NegativeSpans) + deltasSize(h.NegativeDeltas)
	n += l.spansSize(l.positive(h)) + deltasSize(h.PositiveDeltas)
	return n
}

// Append appends h's native fields in layout l, in field-number order
// (both messages number them in the same order).
func (l *Layout) Append(b []byte, h *Histogram) []byte {
	if h.Schema != 0 || !l.Proto3 {
		b = AppendVarint(b, l.Schema, Zigzag32(h.Schema))
	}
	if !l.Proto3 {
		b = AppendDouble(b, l.ZeroThreshold, 0)
	}
	b = AppendVarint(b, l.ZeroCount, h.ZeroCount)
	b = l.appendSpans(b, l.NegativeSpans, h.NegativeSpans)
	b = appendDeltas(b, l.NegativeDeltas, h.NegativeDeltas)
	b = l.appendSpans(b, l.PositiveSpans, l.positive(h))
	return appendDeltas(b, l.PositiveDeltas, h.PositiveDeltas)
}

// spanSize is the size of a BucketSpan message's content.
func (l *Layout) spanSize(s Span) int {
	n := 0
	if s.Offset != 0 || !l.Proto3 {
		n += VarintFieldSize(Zigzag32(s.Offset))
	}
	if s.Length != 0 || !l.Proto3 {
		n += VarintFieldSize(uint64(s.Length))
	}
	return n
}

func (l *Layout) spansSize(spans []Span) int {
	n := 0
	for _, s := range spans {
		n += LenFieldSize(l.spanSize(s))
	}
	return n
}

func (l *Layout) appendSpans(b []byte, tag byte, spans []Span) []byte {
	for _, s := range spans {
		b = AppendLen(b, tag, l.spanSize(s))
		if s.Offset != 0 || !l.Proto3 {
			b = AppendVarint(b, tagSpanOffset, Zigzag32(s.Offset))
		}
		if s.Length != 0 || !l.Proto3 {
			b = AppendVarint(b, tagSpanLength, uint64(s.Length))
		}
	}
	return b
}

// packedSize is the content size of packed sint64 deltas.
func packedSize(deltas []int64) int {
	n := 0
	for _, d := range deltas {
		n += VarintSize(Zigzag64(d))
	}
	return n
}

func deltasSize(deltas []int64) int {
	if len(deltas) == 0 {
		return 0
	}
	return LenFieldSize(packedSize(deltas))
}

func appendDeltas(b []byte, tag byte, deltas []int64) []byte {
	if len(deltas) == 0 {
		return b
	}
	b = AppendLen(b, tag, packedSize(deltas))
	for _, d := range deltas {
		b = binary.AppendUvarint(b, Zigzag64(d))
	}
	return b
}
