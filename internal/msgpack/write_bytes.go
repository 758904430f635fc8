package msgpack

import (
	"math"
	"time"
)

// AppendNil appends nil.
func AppendNil(b []byte) []byte { return append(b, Nil) }

// AppendBool appends a boolean.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, True)
	}
	return append(b, False)
}

// AppendUint appends v as the smallest of positive fixint, uint8, uint16,
// uint32 and uint64. The fixint case (0..127, most counts and string
// indices) is inlined into the caller.
func AppendUint(b []byte, v uint64) []byte {
	if v <= PosFixintMax {
		return append(b, byte(v))
	}
	return appendUintWide(b, v)
}

func appendUintWide(b []byte, v uint64) []byte {
	switch {
	case v <= math.MaxUint8:
		return append(b, Uint8, byte(v))
	case v <= math.MaxUint16:
		b, o := grow(b, 3)
		o[0] = Uint16
		put16(o[1:], uint16(v))
		return b
	case v <= math.MaxUint32:
		b, o := grow(b, 5)
		o[0] = Uint32
		put32(o[1:], uint32(v))
		return b
	}
	b, o := grow(b, 9)
	o[0] = Uint64
	put64(o[1:], v)
	return b
}

// AppendInt appends v in the smallest form: non-negative values as
// AppendUint does (the spec's preferred form), negative ones as negative
// fixint, int8, int16, int32 or int64.
func AppendInt(b []byte, v int64) []byte {
	if v >= 0 {
		return AppendUint(b, uint64(v))
	}
	return appendNegInt(b, v)
}

func appendNegInt(b []byte, v int64) []byte {
	switch {
	case v >= -32:
		return append(b, byte(v))
	case v >= math.MinInt8:
		return append(b, Int8, byte(v))
	case v >= math.MinInt16:
		b, o := grow(b, 3)
		o[0] = Int16
		put16(o[1:], uint16(v))
		return b
	case v >= math.MinInt32:
		b, o := grow(b, 5)
		o[0] = Int32
		put32(o[1:], uint32(v))
		return b
	}
	b, o := grow(b, 9)
	o[0] = Int64
	put64(o[1:], uint64(v))
	return b
}

// AppendFloat64 appends v as a float64 (9 bytes).
func AppendFloat64(b []byte, v float64) []byte {
	u := math.Float64bits(v)
	return append(b, Float64, byte(u>>56), byte(u>>48), byte(u>>40), byte(u>>32),
		byte(u>>24), byte(u>>16), byte(u>>8), byte(u))
}

// AppendFloat32 appends v as a float32 (5 bytes).
func AppendFloat32(b []byte, v float32) []byte {
	u := math.Float32bits(v)
	return append(b, Float32, byte(u>>24), byte(u>>16), byte(u>>8), byte(u))
}

// AppendFloat appends v as a float32 when that is exact (NaN and ±Inf
// included), otherwise as a float64: the smallest float form that loses
// nothing. It never writes an integer: msgpack keeps floats and integers
// apart, and so do decoders.
func AppendFloat(b []byte, v float64) []byte {
	if f := float32(v); float64(f) == v || v != v {
		u := math.Float32bits(f)
		return append(b, Float32, byte(u>>24), byte(u>>16), byte(u>>8), byte(u))
	}
	u := math.Float64bits(v)
	return append(b, Float64, byte(u>>56), byte(u>>48), byte(u>>40), byte(u>>32),
		byte(u>>24), byte(u>>16), byte(u>>8), byte(u))
}

// AppendString appends s as the smallest of fixstr, str8, str16 and str32.
// Strings longer than 4 GiB cannot be encoded; callers cap lengths well
// below.
func AppendString(b []byte, s string) []byte {
	b = appendStrPrefix(b, len(s))
	return append(b, s...)
}

// AppendStringBytes is AppendString for a []byte.
func AppendStringBytes(b []byte, s []byte) []byte {
	b = appendStrPrefix(b, len(s))
	return append(b, s...)
}

func appendStrPrefix(b []byte, n int) []byte {
	switch {
	case n <= 31:
		return append(b, FixstrPrefix|byte(n))
	case n <= math.MaxUint8:
		return append(b, Str8, byte(n))
	case n <= math.MaxUint16:
		b, o := grow(b, 3)
		o[0] = Str16
		put16(o[1:], uint16(n))
		return b
	}
	b, o := grow(b, 5)
	o[0] = Str32
	put32(o[1:], uint32(n))
	return b
}

// StringSize returns the encoded size of a string of n bytes.
func StringSize(n int) int {
	switch {
	case n <= 31:
		return 1 + n
	case n <= math.MaxUint8:
		return 2 + n
	case n <= math.MaxUint16:
		return 3 + n
	}
	return 5 + n
}

// AppendBytes appends v as the smallest of bin8, bin16 and bin32.
func AppendBytes(b []byte, v []byte) []byte {
	n := len(v)
	switch {
	case n <= math.MaxUint8:
		b = append(b, Bin8, byte(n))
	case n <= math.MaxUint16:
		var o []byte
		b, o = grow(b, 3)
		o[0] = Bin16
		put16(o[1:], uint16(n))
	default:
		var o []byte
		b, o = grow(b, 5)
		o[0] = Bin32
		put32(o[1:], uint32(n))
	}
	return append(b, v...)
}

// AppendArrayHeader appends the header of an array of n elements as the
// smallest of fixarray, array16 and array32.
func AppendArrayHeader(b []byte, n uint32) []byte {
	switch {
	case n <= 15:
		return append(b, FixarrPrefix|byte(n))
	case n <= math.MaxUint16:
		b, o := grow(b, 3)
		o[0] = Array16
		put16(o[1:], uint16(n))
		return b
	}
	b, o := grow(b, 5)
	o[0] = Array32
	put32(o[1:], n)
	return b
}

// AppendArray32 appends an array32 header with a count of 0 to patch later
// with PatchArray32, for an array whose length is known only after its
// elements are written (5 bytes, a valid if not minimal form). It returns
// the header's offset.
func AppendArray32(b []byte) ([]byte, int) {
	off := len(b)
	b, o := grow(b, 5)
	o[0] = Array32
	put32(o[1:], 0)
	return b, off
}

// PatchArray32 sets the count of the array32 header at off.
func PatchArray32(b []byte, off int, n uint32) {
	put32(b[off+1:off+5], n)
}

// AppendMapHeader appends the header of a map of n pairs as the smallest of
// fixmap, map16 and map32.
func AppendMapHeader(b []byte, n uint32) []byte {
	switch {
	case n <= 15:
		return append(b, FixmapPrefix|byte(n))
	case n <= math.MaxUint16:
		b, o := grow(b, 3)
		o[0] = Map16
		put16(o[1:], uint16(n))
		return b
	}
	b, o := grow(b, 5)
	o[0] = Map32
	put32(o[1:], n)
	return b
}

// AppendExt appends an extension value of type typ as the smallest of
// fixext1/2/4/8/16, ext8, ext16 and ext32.
func AppendExt(b []byte, typ int8, data []byte) []byte {
	n := len(data)
	switch n {
	case 1:
		b = append(b, Fixext1, byte(typ))
	case 2:
		b = append(b, Fixext2, byte(typ))
	case 4:
		b = append(b, Fixext4, byte(typ))
	case 8:
		b = append(b, Fixext8, byte(typ))
	case 16:
		b = append(b, Fixext16, byte(typ))
	default:
		switch {
		case n <= math.MaxUint8:
			b = append(b, Ext8, byte(n), byte(typ))
		case n <= math.MaxUint16:
			var o []byte
			b, o = grow(b, 4)
			o[0] = Ext16
			put16(o[1:], uint16(n))
			o[3] = byte(typ)
		default:
			var o []byte
			b, o = grow(b, 6)
			o[0] = Ext32
			put32(o[1:], uint32(n))
			o[5] = byte(typ)
		}
	}
	return append(b, data...)
}

// AppendTime appends t as the standard timestamp extension (type -1) in the
// smallest of its three forms: timestamp 32 (whole seconds in [0, 2^32)),
// timestamp 64 (seconds in [0, 2^34) with nanoseconds), timestamp 96.
func AppendTime(b []byte, t time.Time) []byte {
	return AppendUnixNano(b, t.Unix(), int64(t.Nanosecond()))
}

// AppendUnixNano is AppendTime for seconds and nanoseconds (0..999999999)
// since the Unix epoch.
func AppendUnixNano(b []byte, sec, nsec int64) []byte {
	if sec>>34 == 0 {
		data := uint64(nsec)<<34 | uint64(sec)
		if data&0xffffffff00000000 == 0 {
			b, o := grow(b, 6)
			o[0], o[1] = Fixext4, timestampType
			put32(o[2:], uint32(data))
			return b
		}
		b, o := grow(b, 10)
		o[0], o[1] = Fixext8, timestampType
		put64(o[2:], data)
		return b
	}
	b, o := grow(b, 15)
	o[0], o[1], o[2] = Ext8, 12, timestampType
	put32(o[3:], uint32(nsec))
	put64(o[7:], uint64(sec))
	return b
}

// Time96Size is the size of a timestamp written by AppendTime96.
const Time96Size = 15

// AppendTime96 appends t as the 96-bit timestamp form whatever its value,
// so that PatchTime96 can later overwrite it in place (a header field
// known only once the payload is written). Readers accept every form.
func AppendTime96(b []byte, t time.Time) []byte {
	b, o := grow(b, Time96Size)
	putTime96(o, t)
	return b
}

// PatchTime96 overwrites the timestamp AppendTime96 wrote at b[off:].
func PatchTime96(b []byte, off int, t time.Time) { putTime96(b[off:off+Time96Size], t) }

func putTime96(o []byte, t time.Time) {
	o[0], o[1], o[2] = Ext8, 12, timestampType
	put32(o[3:], uint32(t.Nanosecond()))
	put64(o[7:], uint64(t.Unix()))
}
