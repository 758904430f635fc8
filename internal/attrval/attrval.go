// Package attrval types the values of tag keys that OpenTelemetry
// attributes fill: a tag value is a string (OpenCensus's model, and what
// Prometheus labels are), and an attribute recorded as an int, a double,
// a bool or a slice keeps its type on the way out where the format has
// types (OTLP's AnyValue, the msgpack payload's key types, pdata). The
// tag value holds the attribute's string form (attribute.Value.Emit:
// strconv's for scalars, JSON for slices); Parse reads it back.
//
// One rule for every exporter: a key's type is declared once (the first
// attribute seen for it, or a plug-in's semantic conventions), and a
// value that does not parse as its key's type is exported as a string.
package attrval

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Type is a tag key's value type. The numbers are OpenTelemetry's
// attribute.Type, but for String, which is 0 (the zero value: a tag
// value is a string unless its key is typed).
type Type uint8

// Types.
const (
	String       Type = 0
	Bool         Type = 1
	Int64        Type = 2
	Float64      Type = 3
	BoolSlice    Type = 5
	Int64Slice   Type = 6
	Float64Slice Type = 7
	StringSlice  Type = 8
)

// Valid reports whether t is one of the types.
func (t Type) Valid() bool { return t <= Float64 || t >= BoolSlice && t <= StringSlice }

func (t Type) String() string {
	switch t {
	case String:
		return "string"
	case Bool:
		return "bool"
	case Int64:
		return "int64"
	case Float64:
		return "float64"
	case BoolSlice:
		return "bool_slice"
	case Int64Slice:
		return "int64_slice"
	case Float64Slice:
		return "float64_slice"
	case StringSlice:
		return "string_slice"
	}
	return "unknown"
}

// ParseBool reads a Bool value ("true", "false").
func ParseBool(s string) (bool, bool) {
	switch s {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// ParseInt reads an Int64 value. No allocation.
func ParseInt(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// ParseFloat reads a Float64 value (fmt's %v of a float64: "0.5",
// "1e+21", "+Inf", "NaN"). No allocation.
func ParseFloat(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// ParseSlice reads a slice value of type t as a []bool, []int64,
// []float64 or []string: its form in attribute.Value.Emit, JSON but for
// a bool slice's, fmt's ("[true false]"). Allocates the slice.
func ParseSlice(t Type, s string) (any, bool) {
	var err error
	var out any
	switch t {
	case BoolSlice: // fmt's form, "[true false]", as attribute.Value.Emit writes it
		inner, ok := strings.CutPrefix(s, "[")
		if inner, ok = strings.CutSuffix(inner, "]"); !ok {
			return nil, false
		}
		v := []bool{}
		for _, f := range strings.Fields(inner) {
			b, ok := ParseBool(f)
			if !ok {
				return nil, false
			}
			v = append(v, b)
		}
		out = v
	case Int64Slice:
		var v []int64
		err = json.Unmarshal([]byte(s), &v)
		out = v
	case Float64Slice:
		var v []float64
		err = json.Unmarshal([]byte(s), &v)
		out = v
	case StringSlice:
		var v []string
		err = json.Unmarshal([]byte(s), &v)
		out = v
	default:
		return nil, false
	}
	return out, err == nil
}
