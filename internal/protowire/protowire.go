// Package protowire is zerostat's append-style protobuf writer
// (https://protobuf.dev/programming-guides/encoding/): the helpers every
// hand-written encoder shares (exporter/otlp, internal/promnative,
// exporter/prometheus's protobuf exposition, exporter/remotewrite), for
// fields whose number is below 16, whose tag (field<<3 | wire type) is
// one byte, given by the caller with its wire type. Varints are Go's
// uvarints (binary.AppendUvarint), fixed64 and double little-endian.
//
// Costs: every function is a few instructions per byte written and
// allocates only to grow its destination; none holds state (safe for
// concurrent use).
package protowire

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// Wire types.
const (
	WireVarint  = 0 // int32, int64, uint64, bool, enum, sint32, sint64
	WireFixed64 = 1 // fixed64, sfixed64, double
	WireBytes   = 2 // string, bytes, sub-messages, packed repeated fields
)

// MaxVarint32Size is the size of a varint holding any uint32.
const MaxVarint32Size = 5

// Tag returns the one-byte tag of field n (below 16) with wire type wt.
func Tag(n, wt byte) byte { return n<<3 | wt }

// VarintSize returns the size of v as a varint: one byte per started
// group of 7 bits.
func VarintSize(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// Zigzag32 and Zigzag64 encode sint32 and sint64 values.
func Zigzag32(v int32) uint64 { return uint64(uint32(v<<1) ^ uint32(v>>31)) }
func Zigzag64(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// VarintFieldSize is the size of a varint field holding v.
func VarintFieldSize(v uint64) int { return 1 + VarintSize(v) }

// FixedFieldSize is the size of a fixed64 (double) field.
const FixedFieldSize = 1 + 8

// LenFieldSize returns the size of a length-delimited field of n bytes.
func LenFieldSize(n int) int { return 1 + VarintSize(uint64(n)) + n }

// AppendLen appends a tag and the length n of the content that follows.
func AppendLen(b []byte, tag byte, n int) []byte {
	b = append(b, tag)
	if n < 0x80 { // most data points, attributes and labels
		return append(b, byte(n))
	}
	return binary.AppendUvarint(b, uint64(n))
}

// AppendString appends a string (or bytes) field.
func AppendString(b []byte, tag byte, s string) []byte {
	return append(AppendLen(b, tag, len(s)), s...)
}

// AppendVarint appends a varint field.
func AppendVarint(b []byte, tag byte, v uint64) []byte {
	return binary.AppendUvarint(append(b, tag), v)
}

// AppendFixed appends a fixed64 field.
func AppendFixed(b []byte, tag byte, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(append(b, tag), v)
}

// AppendDouble appends a double field.
func AppendDouble(b []byte, tag byte, f float64) []byte {
	return AppendFixed(b, tag, math.Float64bits(f))
}
