// Package msgpack is zerostat's MessagePack packer and reader: append-style
// functions that write into a caller-owned []byte, always in the smallest
// valid form, and a Reader that never panics on hostile input.
//
// The format is https://github.com/msgpack/msgpack/blob/master/spec.md.
// Constant names follow the spec's type names, with the first byte's bit
// pattern in a comment.
//
// # Costs
//
// Append functions do not allocate unless dst must grow: give them a
// buffer of sufficient capacity and reuse it. Reader methods that return
// []byte alias the input; ReadString copies.
package msgpack

// Format bytes.
const (
	PosFixintMax = 0x7f // 0xxxxxxx: positive fixint 0..127
	FixmapPrefix = 0x80 // 1000xxxx: fixmap, up to 15 pairs
	FixarrPrefix = 0x90 // 1001xxxx: fixarray, up to 15 elements
	FixstrPrefix = 0xa0 // 101xxxxx: fixstr, up to 31 bytes
	Nil          = 0xc0 // 11000000
	False        = 0xc2 // 11000010
	True         = 0xc3 // 11000011
	Bin8         = 0xc4 // 11000100
	Bin16        = 0xc5 // 11000101
	Bin32        = 0xc6 // 11000110
	Ext8         = 0xc7 // 11000111
	Ext16        = 0xc8 // 11001000
	Ext32        = 0xc9 // 11001001
	Float32      = 0xca // 11001010
	Float64      = 0xcb // 11001011
	Uint8        = 0xcc // 11001100
	Uint16       = 0xcd // 11001101
	Uint32       = 0xce // 11001110
	Uint64       = 0xcf // 11001111
	Int8         = 0xd0 // 11010000
	Int16        = 0xd1 // 11010001
	Int32        = 0xd2 // 11010010
	Int64        = 0xd3 // 11010011
	Fixext1      = 0xd4 // 11010100
	Fixext2      = 0xd5 // 11010101
	Fixext4      = 0xd6 // 11010110
	Fixext8      = 0xd7 // 11010111
	Fixext16     = 0xd8 // 11011000
	Str8         = 0xd9 // 11011001
	Str16        = 0xda // 11011010
	Str32        = 0xdb // 11011011
	Array16      = 0xdc // 11011100
	Array32      = 0xdd // 11011101
	Map16        = 0xde // 11011110
	Map32        = 0xdf // 11011111
	NegFixintMin = 0xe0 // 111xxxxx: negative fixint -32..-1
)

// TimestampExt is the extension type of the standard timestamp (-1).
const TimestampExt int8 = -1

// timestampType is TimestampExt as the byte written on the wire.
const timestampType = 0xff

// Worst-case encoded sizes, for pre-sizing buffers.
const (
	NilSize         = 1
	BoolSize        = 1
	IntSize         = 9
	UintSize        = 9
	Float32Size     = 5
	Float64Size     = 9
	ArrayHeaderSize = 5
	MapHeaderSize   = 5
	StrPrefixSize   = 5
	TimeSize        = 15 // ext8 + len + type + 12 bytes
	Array32Size     = 5  // a fixed-width array32 header (AppendArray32)
)
