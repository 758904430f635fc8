package otlp

import (
	"encoding/binary"
	"math/bits"
)

// A minimal append-style protobuf writer
// (https://protobuf.dev/programming-guides/encoding/): just what the OTLP
// metrics messages need. Every field number used here is below 16, so a
// field's tag (field<<3 | wire type) is one byte; the tags are written as
// constants next to the message they belong to (proto.go).
//
// Lengths of sub-messages are computed before the messages are written
// (see Encoder.appendMetric): nothing is reserved, back-patched or moved,
// except that the request's two outermost heads are written last, into
// room reserved before the metrics (see Encoder.Encode).

// Wire types.
const (
	wireVarint  = 0 // int32, int64, uint64, bool, enum
	wireFixed64 = 1 // fixed64, sfixed64, double
	wireBytes   = 2 // string, bytes, sub-messages, packed repeated fields
)

// maxVarint32Size is the size of a varint holding any uint32.
const maxVarint32Size = 5

// varintSize returns the size of v as a varint: one byte per started group
// of 7 bits.
func varintSize(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// Varints are appended with binary.AppendUvarint (protobuf's varint is
// Go's uvarint), fixed64, sfixed64 and double (as math.Float64bits) with
// binary.LittleEndian.AppendUint64.

// fixedFieldSize is the size of a fixed64 field with a one-byte tag.
const fixedFieldSize = 1 + 8

// lenFieldSize returns the size of a length-delimited field with a one-byte
// tag and n bytes of content.
func lenFieldSize(n int) int { return 1 + varintSize(uint64(n)) + n }

// appendLen appends a one-byte tag and the length n of the content that
// follows.
func appendLen(b []byte, tag byte, n int) []byte {
	b = append(b, tag)
	if n < 0x80 { // most data points and attributes
		return append(b, byte(n))
	}
	return binary.AppendUvarint(b, uint64(n))
}

// appendString appends a string field.
func appendString(b []byte, tag byte, s string) []byte {
	b = appendLen(b, tag, len(s))
	return append(b, s...)
}

// appendFixed appends a fixed64 field.
func appendFixed(b []byte, tag byte, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(append(b, tag), v)
}
