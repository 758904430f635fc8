package otlp

import (
	"encoding/binary"
	"math"

	"github.com/zerostat/zerostat/internal/attrval"
)

// AnyValue fields beyond string, bool and int (proto.go).
const (
	tagAnyDouble   = 4<<3 | wireFixed64 // double double_value = 4
	tagAnyArray    = 5<<3 | wireBytes   // ArrayValue array_value = 5
	tagArrayValues = 1<<3 | wireBytes   // repeated AnyValue values = 1
)

// anyValueSize returns the size of the AnyValue of tag value s whose key
// has type t (package attrval): typed when s parses as t, else a string.
// A slice is parsed (allocating); scalars are not.
func anyValueSize(t attrval.Type, s string) int {
	switch t {
	case attrval.Bool:
		if _, ok := attrval.ParseBool(s); ok {
			return 2
		}
	case attrval.Int64:
		if n, ok := attrval.ParseInt(s); ok {
			return 1 + varintSize(uint64(n))
		}
	case attrval.Float64:
		if _, ok := attrval.ParseFloat(s); ok {
			return 1 + 8
		}
	case attrval.BoolSlice, attrval.Int64Slice, attrval.Float64Slice, attrval.StringSlice:
		if v, ok := attrval.ParseSlice(t, s); ok {
			return lenFieldSize(arraySize(v))
		}
	}
	return lenFieldSize(len(s))
}

// appendAnyValue appends the AnyValue anyValueSize sized (its fields,
// without its own tag and length).
func appendAnyValue(b []byte, t attrval.Type, s string) []byte {
	switch t {
	case attrval.Bool:
		if v, ok := attrval.ParseBool(s); ok {
			x := byte(0)
			if v {
				x = 1
			}
			return append(b, tagAnyBool, x)
		}
	case attrval.Int64:
		if n, ok := attrval.ParseInt(s); ok {
			return binary.AppendUvarint(append(b, tagAnyInt), uint64(n))
		}
	case attrval.Float64:
		if f, ok := attrval.ParseFloat(s); ok {
			return appendFixed(b, tagAnyDouble, math.Float64bits(f))
		}
	case attrval.BoolSlice, attrval.Int64Slice, attrval.Float64Slice, attrval.StringSlice:
		if v, ok := attrval.ParseSlice(t, s); ok {
			b = appendLen(b, tagAnyArray, arraySize(v))
			return appendArray(b, v)
		}
	}
	return appendString(b, tagAnyString, s)
}

// arraySize returns the size of an ArrayValue of v's elements.
func arraySize(v any) int {
	n := 0
	switch v := v.(type) {
	case []bool:
		n = len(v) * lenFieldSize(2)
	case []int64:
		for _, x := range v {
			n += lenFieldSize(1 + varintSize(uint64(x)))
		}
	case []float64:
		n = len(v) * lenFieldSize(9)
	case []string:
		for _, x := range v {
			n += lenFieldSize(lenFieldSize(len(x)))
		}
	}
	return n
}

// appendArray appends an ArrayValue's values (each an AnyValue).
func appendArray(b []byte, v any) []byte {
	switch v := v.(type) {
	case []bool:
		for _, x := range v {
			c := byte(0)
			if x {
				c = 1
			}
			b = append(appendLen(b, tagArrayValues, 2), tagAnyBool, c)
		}
	case []int64:
		for _, x := range v {
			b = appendLen(b, tagArrayValues, 1+varintSize(uint64(x)))
			b = binary.AppendUvarint(append(b, tagAnyInt), uint64(x))
		}
	case []float64:
		for _, x := range v {
			b = appendFixed(appendLen(b, tagArrayValues, 9), tagAnyDouble, math.Float64bits(x))
		}
	case []string:
		for _, x := range v {
			b = appendString(appendLen(b, tagArrayValues, lenFieldSize(len(x))), tagAnyString, x)
		}
	}
	return b
}
