// Package msgpackcmp checks zerostat's MessagePack packer
// (internal/msgpack) byte for byte against two independent
// implementations, github.com/tinylib/msgp v1.6.5 and
// github.com/vmihailenco/msgpack/v5 v5.4.1, at every width threshold of
// every format, and decodes each of our encodings with vmihailenco's
// Decoder to check the value round-trips.
//
// Which reference each of our functions is held to:
//
//	ours                 reference                        note
//	AppendUint           msgp.AppendUint64                also vmihailenco EncodeUint
//	AppendInt            vmihailenco Encoder.EncodeInt    msgp.AppendInt64 differs for v > 127 (see TestInt)
//	AppendFloat64        msgp.AppendFloat64
//	AppendFloat32        msgp.AppendFloat32
//	AppendFloat          msgp.AppendFloat                 differs for NaN only (see TestFloat)
//	AppendString(Bytes)  msgp.AppendString(FromBytes)     also vmihailenco EncodeString
//	AppendBytes          msgp.AppendBytes                 also vmihailenco EncodeBytes
//	AppendArrayHeader    msgp.AppendArrayHeader           also vmihailenco EncodeArrayLen
//	AppendMapHeader      msgp.AppendMapHeader             also vmihailenco EncodeMapLen
//	AppendExt            vmihailenco EncodeExtHeader      msgp.AppendExtension differs at lengths 255 and 65535 (see TestExt)
//	AppendTime           vmihailenco Encoder.EncodeTime   msgp.AppendTime is msgp's own ext 5; msgp.AppendTimeExt differs at the epoch (see TestTime)
//	AppendNil, AppendBool msgp.AppendNil, msgp.AppendBool
package msgpackcmp

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tinylib/msgp/msgp"
	vm "github.com/vmihailenco/msgpack/v5"

	zs "github.com/zerostat/zerostat/internal/msgpack"
)

// same fails unless ours and ref are the same bytes.
func same(t *testing.T, what string, ours, ref []byte) {
	t.Helper()
	if !bytes.Equal(ours, ref) {
		t.Errorf("%s:\n ours % x\n  ref % x", what, head(ours), head(ref))
	}
}

// head shortens long encodings for error messages.
func head(b []byte) []byte {
	if len(b) > 24 {
		return b[:24]
	}
	return b
}

// vmEnc returns the bytes written by fn on a fresh vmihailenco Encoder.
func vmEnc(t *testing.T, fn func(e *vm.Encoder) error) []byte {
	t.Helper()
	var buf bytes.Buffer
	e := vm.NewEncoder(&buf)
	if err := fn(e); err != nil {
		t.Fatalf("vmihailenco encode: %v", err)
	}
	return buf.Bytes()
}

// vmDec decodes b with fn on a vmihailenco Decoder and fails unless fn
// succeeds and consumes every byte.
func vmDec(t *testing.T, what string, b []byte, fn func(d *vm.Decoder) error) {
	t.Helper()
	r := bytes.NewReader(b)
	d := vm.NewDecoder(r)
	if err := fn(d); err != nil {
		t.Errorf("%s: vmihailenco decoding % x: %v", what, head(b), err)
		return
	}
	if r.Len() != 0 {
		t.Errorf("%s: vmihailenco left %d of %d bytes unread", what, r.Len(), len(b))
	}
}

// Width thresholds.
var (
	uints = []uint64{
		0, 1, 126, 127, // positive fixint
		128, 254, 255, // uint8
		256, 65534, 65535, // uint16
		65536, math.MaxUint32 - 1, math.MaxUint32, // uint32
		math.MaxUint32 + 1, math.MaxInt64, math.MaxInt64 + 1, math.MaxUint64 - 1, math.MaxUint64, // uint64
	}
	ints = []int64{
		-1, -31, -32, // negative fixint
		-33, -127, -128, // int8
		-129, -32767, -32768, // int16
		-32769, math.MinInt32 + 1, math.MinInt32, // int32
		math.MinInt32 - 1, math.MinInt64 + 1, math.MinInt64, // int64
		// non-negative: written as AppendUint would
		0, 1, 127, 128, 255, 256, 32767, 32768, 65535, 65536,
		math.MaxInt32, math.MaxInt32 + 1, math.MaxUint32, math.MaxUint32 + 1, math.MaxInt64,
	}
	// lengths for str (fixstr/str8/16/32) and bin (bin8/16/32)
	lengths = []int{0, 1, 30, 31, 32, 254, 255, 256, 65534, 65535, 65536, 70000}
	// counts for array and map headers (fix/16/32)
	counts = []uint32{0, 1, 14, 15, 16, 17, 65534, 65535, 65536, math.MaxUint32 - 1, math.MaxUint32}
	// lengths for ext (fixext 1/2/4/8/16, ext8/16/32)
	extLengths = []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 254, 255, 256, 65534, 65535, 65536, 70000}
	extTypes   = []int8{math.MinInt8, -2, -1, 0, 1, 5, math.MaxInt8}
)

func TestNilBool(t *testing.T) {
	same(t, "AppendNil", zs.AppendNil(nil), msgp.AppendNil(nil))
	vmDec(t, "nil", zs.AppendNil(nil), func(d *vm.Decoder) error { return d.DecodeNil() })
	for _, v := range []bool{false, true} {
		b := zs.AppendBool(nil, v)
		same(t, fmt.Sprint("AppendBool ", v), b, msgp.AppendBool(nil, v))
		vmDec(t, fmt.Sprint("bool ", v), b, func(d *vm.Decoder) error {
			got, err := d.DecodeBool()
			if err == nil && got != v {
				err = fmt.Errorf("got %v", got)
			}
			return err
		})
	}
}

func TestUint(t *testing.T) {
	for _, v := range uints {
		b := zs.AppendUint(nil, v)
		same(t, fmt.Sprintf("AppendUint(%d) vs msgp.AppendUint64", v), b, msgp.AppendUint64(nil, v))
		same(t, fmt.Sprintf("AppendUint(%d) vs vmihailenco EncodeUint", v), b,
			vmEnc(t, func(e *vm.Encoder) error { return e.EncodeUint(v) }))
		vmDec(t, fmt.Sprintf("uint %d", v), b, func(d *vm.Decoder) error {
			got, err := d.DecodeUint64()
			if err == nil && got != v {
				err = fmt.Errorf("got %d", got)
			}
			return err
		})
	}
}

// TestInt: ours writes a non-negative int64 as AppendUint does (positive
// fixint, uint8/16/32/64), which the spec prefers and vmihailenco's
// EncodeInt also does. msgp.AppendInt64 writes non-negative values above
// 127 in the SIGNED formats (int16 for 128..32767, int32, int64; never
// int8/uint8): equally valid, sometimes a byte longer (128..255 take 3
// bytes there, 2 here). So AppendInt is compared byte for byte with
// vmihailenco's EncodeInt for every value, with msgp.AppendInt64 for the
// negative values and 0..127, and with msgp.AppendUint64 for the other
// non-negative ones.
func TestInt(t *testing.T) {
	for _, v := range ints {
		b := zs.AppendInt(nil, v)
		same(t, fmt.Sprintf("AppendInt(%d) vs vmihailenco EncodeInt", v), b,
			vmEnc(t, func(e *vm.Encoder) error { return e.EncodeInt(v) }))
		if v < 0 || v <= math.MaxInt8 {
			same(t, fmt.Sprintf("AppendInt(%d) vs msgp.AppendInt64", v), b, msgp.AppendInt64(nil, v))
		} else {
			same(t, fmt.Sprintf("AppendInt(%d) vs msgp.AppendUint64", v), b, msgp.AppendUint64(nil, uint64(v)))
			if m := msgp.AppendInt64(nil, v); bytes.Equal(b, m) {
				t.Errorf("AppendInt(%d) = msgp.AppendInt64 = % x: the documented difference is gone", v, b)
			}
		}
		vmDec(t, fmt.Sprintf("int %d", v), b, func(d *vm.Decoder) error {
			got, err := d.DecodeInt64()
			if err == nil && got != v {
				err = fmt.Errorf("got %d", got)
			}
			return err
		})
	}
}

var floats = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.5, 0.1, -0.1, 1.5, 3.25, 100, 12.345,
	16777216, 16777217, // 2^24 is exact in float32, 2^24+1 is not
	math.MaxFloat32, -math.MaxFloat32, math.MaxFloat32 * 2,
	math.SmallestNonzeroFloat32, math.SmallestNonzeroFloat32 / 2, // float32 subnormal; half of it is not representable
	1.1754943508222875e-38, // smallest normal float32
	math.MaxFloat64, math.SmallestNonzeroFloat64, 1e300, -1e-300,
	math.Inf(1), math.Inf(-1), math.NaN(),
	math.Float64frombits(0x7ff8000000000001), // a NaN with a payload
	float64(math.MaxInt64), float64(math.MaxUint64),
}

// eqFloat reports whether got is want, telling -0 from 0 and NaN alike.
func eqFloat(got, want float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return got == want && math.Signbit(got) == math.Signbit(want)
}

// TestFloat: AppendFloat64 and AppendFloat32 agree with msgp's byte for
// byte (NaN payloads included). AppendFloat (float32 when exact, else
// float64) agrees with msgp.AppendFloat except for NaN: ours writes any NaN
// as a float32 NaN (5 bytes; a NaN payload is not kept, only its NaN-ness),
// msgp as float64 because NaN != NaN fails its exactness test.
func TestFloat(t *testing.T) {
	for _, v := range floats {
		b := zs.AppendFloat64(nil, v)
		same(t, fmt.Sprintf("AppendFloat64(%v)", v), b, msgp.AppendFloat64(nil, v))
		vmDec(t, fmt.Sprintf("float64 %v", v), b, func(d *vm.Decoder) error {
			got, err := d.DecodeFloat64()
			if err == nil && math.Float64bits(got) != math.Float64bits(v) {
				err = fmt.Errorf("got %v (%#x)", got, math.Float64bits(got))
			}
			return err
		})

		f := float32(v)
		b = zs.AppendFloat32(nil, f)
		same(t, fmt.Sprintf("AppendFloat32(%v)", f), b, msgp.AppendFloat32(nil, f))
		vmDec(t, fmt.Sprintf("float32 %v", f), b, func(d *vm.Decoder) error {
			got, err := d.DecodeFloat32()
			if err == nil && math.Float32bits(got) != math.Float32bits(f) {
				err = fmt.Errorf("got %v", got)
			}
			return err
		})

		b = zs.AppendFloat(nil, v)
		if math.IsNaN(v) {
			same(t, fmt.Sprintf("AppendFloat(%v) vs AppendFloat32", v), b, msgp.AppendFloat32(nil, float32(v)))
			if len(msgp.AppendFloat(nil, v)) != zs.Float64Size {
				t.Errorf("msgp.AppendFloat(NaN) is no longer a float64: the documented difference is gone")
			}
		} else {
			same(t, fmt.Sprintf("AppendFloat(%v) vs msgp.AppendFloat", v), b, msgp.AppendFloat(nil, v))
		}
		wantLen := zs.Float64Size
		if float64(float32(v)) == v || math.IsNaN(v) {
			wantLen = zs.Float32Size
		}
		if len(b) != wantLen {
			t.Errorf("AppendFloat(%v): %d bytes; want %d", v, len(b), wantLen)
		}
		vmDec(t, fmt.Sprintf("float %v", v), b, func(d *vm.Decoder) error {
			got, err := d.DecodeFloat64()
			if err == nil && !eqFloat(got, v) {
				err = fmt.Errorf("got %v", got)
			}
			return err
		})
	}
}

func TestString(t *testing.T) {
	for _, n := range lengths {
		// Multi-byte UTF-8 where it fits, so lengths are bytes, not runes.
		s := strings.Repeat("é", n/2) + strings.Repeat("x", n%2)
		b := zs.AppendString(nil, s)
		same(t, fmt.Sprintf("AppendString(%d bytes)", n), b, msgp.AppendString(nil, s))
		same(t, fmt.Sprintf("AppendString(%d bytes) vs vmihailenco", n), b,
			vmEnc(t, func(e *vm.Encoder) error { return e.EncodeString(s) }))
		same(t, fmt.Sprintf("AppendStringBytes(%d bytes)", n), zs.AppendStringBytes(nil, []byte(s)), msgp.AppendStringFromBytes(nil, []byte(s)))
		if zs.StringSize(n) != len(b) {
			t.Errorf("StringSize(%d) = %d; encoded %d", n, zs.StringSize(n), len(b))
		}
		vmDec(t, fmt.Sprintf("str %d", n), b, func(d *vm.Decoder) error {
			got, err := d.DecodeString()
			if err == nil && got != s {
				err = fmt.Errorf("got %d bytes", len(got))
			}
			return err
		})
	}
}

func TestBytes(t *testing.T) {
	for _, n := range lengths {
		v := make([]byte, n)
		for i := range v {
			v[i] = byte(i * 7)
		}
		b := zs.AppendBytes(nil, v)
		same(t, fmt.Sprintf("AppendBytes(%d)", n), b, msgp.AppendBytes(nil, v))
		same(t, fmt.Sprintf("AppendBytes(%d) vs vmihailenco", n), b,
			vmEnc(t, func(e *vm.Encoder) error { return e.EncodeBytes(v) }))
		vmDec(t, fmt.Sprintf("bin %d", n), b, func(d *vm.Decoder) error {
			got, err := d.DecodeBytes()
			if err == nil && !bytes.Equal(got, v) {
				err = fmt.Errorf("got %d bytes", len(got))
			}
			return err
		})
	}
}

func TestArrayMapHeaders(t *testing.T) {
	for _, n := range counts {
		b := zs.AppendArrayHeader(nil, n)
		same(t, fmt.Sprintf("AppendArrayHeader(%d)", n), b, msgp.AppendArrayHeader(nil, n))
		same(t, fmt.Sprintf("AppendArrayHeader(%d) vs vmihailenco", n), b,
			vmEnc(t, func(e *vm.Encoder) error { return e.EncodeArrayLen(int(n)) }))
		vmDec(t, fmt.Sprintf("array header %d", n), b, func(d *vm.Decoder) error {
			got, err := d.DecodeArrayLen()
			if err == nil && got != int(n) {
				err = fmt.Errorf("got %d", got)
			}
			return err
		})

		b = zs.AppendMapHeader(nil, n)
		same(t, fmt.Sprintf("AppendMapHeader(%d)", n), b, msgp.AppendMapHeader(nil, n))
		same(t, fmt.Sprintf("AppendMapHeader(%d) vs vmihailenco", n), b,
			vmEnc(t, func(e *vm.Encoder) error { return e.EncodeMapLen(int(n)) }))
		vmDec(t, fmt.Sprintf("map header %d", n), b, func(d *vm.Decoder) error {
			got, err := d.DecodeMapLen()
			if err == nil && got != int(n) {
				err = fmt.Errorf("got %d", got)
			}
			return err
		})
	}
	// AppendArray32 is deliberately not minimal: always array32, patched.
	b, off := zs.AppendArray32([]byte{0x01})
	zs.PatchArray32(b, off, 3)
	same(t, "AppendArray32+PatchArray32(3)", b, []byte{0x01, 0xdd, 0, 0, 0, 3})
	vmDec(t, "array32 header 3", b[1:], func(d *vm.Decoder) error {
		got, err := d.DecodeArrayLen()
		if err == nil && got != 3 {
			err = fmt.Errorf("got %d", got)
		}
		return err
	})
}

// TestExt: AppendExt agrees byte for byte with vmihailenco's
// EncodeExtHeader plus the data for every length and type, and with
// msgp.AppendExtension except at lengths 255 and 65535: msgp tests
// `l < math.MaxUint8` and `l < math.MaxUint16`, so it writes a 255-byte
// extension as ext16 and a 65535-byte one as ext32, one or two bytes
// longer than needed. Ours (and vmihailenco's) use ext8 and ext16, the
// smallest forms the spec allows (ext8 holds lengths up to 2^8-1).
func TestExt(t *testing.T) {
	for _, n := range extLengths {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i*13 + 1)
		}
		for _, typ := range extTypes {
			b := zs.AppendExt(nil, typ, data)
			what := fmt.Sprintf("AppendExt(type %d, %d bytes)", typ, n)
			same(t, what+" vs vmihailenco", b, vmEnc(t, func(e *vm.Encoder) error {
				if err := e.EncodeExtHeader(typ, n); err != nil {
					return err
				}
				_, err := e.Writer().Write(data)
				return err
			}))
			m, err := msgp.AppendExtension(nil, &msgp.RawExtension{Type: typ, Data: data})
			if err != nil {
				t.Fatalf("msgp.AppendExtension: %v", err)
			}
			if n == math.MaxUint8 || n == math.MaxUint16 {
				if len(m) != len(b)+1 && len(m) != len(b)+2 {
					t.Errorf("%s: msgp %d bytes, ours %d: the documented difference changed", what, len(m), len(b))
				}
			} else {
				same(t, what+" vs msgp.AppendExtension", b, m)
			}
			vmDec(t, what, b, func(d *vm.Decoder) error {
				gotTyp, gotLen, err := d.DecodeExtHeader()
				if err != nil {
					return err
				}
				if gotTyp != typ || gotLen != n {
					return fmt.Errorf("got type %d, %d bytes", gotTyp, gotLen)
				}
				got := make([]byte, gotLen)
				if err := d.ReadFull(got); err != nil {
					return err
				}
				if !bytes.Equal(got, data) {
					return fmt.Errorf("data differs")
				}
				return nil
			})
		}
	}
}

// Timestamp thresholds: timestamp 32 holds whole seconds in [0, 2^32);
// timestamp 64 seconds in [0, 2^34) with nanoseconds; timestamp 96
// everything else (negative seconds, i.e. before 1970, included).
var times = []time.Time{
	time.Unix(0, 0), // the epoch
	time.Unix(1, 0),
	time.Unix(1_700_000_000, 0),
	time.Unix(math.MaxUint32, 0), // last timestamp 32
	time.Unix(math.MaxUint32+1, 0),
	time.Unix(0, 1), // nanoseconds force timestamp 64
	time.Unix(1_700_000_000, 123_456_789),
	time.Unix(math.MaxUint32, 999_999_999),
	time.Unix(1<<34-1, 0), // last timestamp 64
	time.Unix(1<<34-1, 999_999_999),
	time.Unix(1<<34, 0), // first timestamp 96 from above
	time.Unix(1<<34, 1),
	time.Unix(-1, 0), // pre-1970: timestamp 96
	time.Unix(-1, 999_999_999),
	time.Unix(0, -1), // = time.Unix(-1, 999999999)
	time.Unix(-1_000_000_000, 5),
	time.Date(1969, 12, 31, 23, 59, 59, 500_000_000, time.UTC),
	time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC),
	{}, // year 1
	time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
	time.Date(2024, 2, 29, 12, 0, 0, 0, time.FixedZone("UTC+5:30", 5*3600+1800)),
	time.Date(2024, 2, 29, 12, 0, 0, 1, time.FixedZone("UTC-8", -8*3600)),
}

// TestTime: msgp.AppendTime is NOT the standard timestamp: it writes msgp's
// own extension type 5 (ext8, 12 bytes, always). msgp.AppendTimeExt writes
// the standard type -1 and agrees with ours except at the epoch itself:
// its timestamp-32 test is `asSecs > 0`, so 1970-01-01T00:00:00Z takes
// timestamp 64 (10 bytes) there, timestamp 32 (6 bytes) here and in
// vmihailenco (the spec's timestamp 32 holds seconds in [0, 2^32)).
// vmihailenco's EncodeTime implements the standard's algorithm and is the
// byte-for-byte reference.
func TestTime(t *testing.T) {
	for _, tm := range times {
		b := zs.AppendTime(nil, tm)
		what := fmt.Sprintf("AppendTime(%v)", tm)
		same(t, what+" vs vmihailenco EncodeTime", b,
			vmEnc(t, func(e *vm.Encoder) error { return e.EncodeTime(tm) }))
		same(t, what+" = AppendUnixNano", b, zs.AppendUnixNano(nil, tm.Unix(), int64(tm.Nanosecond())))
		if tm.Unix() == 0 && tm.Nanosecond() == 0 {
			if m := msgp.AppendTimeExt(nil, tm); len(m) != 10 || len(b) != 6 {
				t.Errorf("%s: msgp.AppendTimeExt % x, ours % x: the documented difference changed", what, m, b)
			}
		} else {
			same(t, what+" vs msgp.AppendTimeExt", b, msgp.AppendTimeExt(nil, tm))
		}
		if m := msgp.AppendTime(nil, tm); len(m) < 3 || m[2] != msgp.TimeExtension {
			t.Errorf("msgp.AppendTime(%v) = % x: no longer msgp's extension type 5", tm, m)
		}
		// The form follows the thresholds.
		sec, nsec := tm.Unix(), tm.Nanosecond()
		var want int
		switch {
		case sec >= 0 && sec < 1<<32 && nsec == 0:
			want = 6 // fixext4
		case sec >= 0 && sec < 1<<34:
			want = 10 // fixext8
		default:
			want = 15 // ext8 12
		}
		if len(b) != want {
			t.Errorf("%s: %d bytes (% x); want %d", what, len(b), b, want)
		}
		vmDec(t, what, b, func(d *vm.Decoder) error {
			got, err := d.DecodeTime()
			if err == nil && !got.Equal(tm) {
				err = fmt.Errorf("got %v", got)
			}
			return err
		})
		// And our own reader.
		got, err := zs.NewReader(b).ReadTime()
		if err != nil || !got.Equal(tm) {
			t.Errorf("%s: ReadTime = %v, %v", what, got, err)
		}
	}
}

// TestSequence decodes a buffer of many of our values written back to back
// with vmihailenco's DecodeInterface: each value starts where the previous
// ended, so a wrong length anywhere shows.
func TestSequence(t *testing.T) {
	var b []byte
	var want []any
	for _, v := range uints {
		b = zs.AppendUint(b, v)
		want = append(want, v)
	}
	for _, v := range ints {
		b = zs.AppendInt(b, v)
		want = append(want, v)
	}
	for _, n := range lengths {
		s := strings.Repeat("s", n)
		b = zs.AppendString(b, s)
		want = append(want, s)
		b = zs.AppendBytes(b, []byte(s))
		want = append(want, []byte(s))
	}
	for _, v := range floats {
		b = zs.AppendFloat(b, v)
		want = append(want, v)
	}
	for _, tm := range times {
		b = zs.AppendTime(b, tm)
		want = append(want, tm)
	}
	b = zs.AppendNil(b)
	want = append(want, nil)
	b = zs.AppendBool(b, true)
	want = append(want, true)

	r := bytes.NewReader(b)
	d := vm.NewDecoder(r)
	for i, w := range want {
		got, err := d.DecodeInterface()
		if err != nil {
			t.Fatalf("value %d (%v): %v", i, w, err)
		}
		if !equalAny(got, w) {
			t.Fatalf("value %d: got %v (%T); want %v (%T)", i, got, got, w, w)
		}
	}
	if r.Len() != 0 {
		t.Fatalf("%d bytes left", r.Len())
	}
}

// equalAny compares what vmihailenco's DecodeInterface returned (the
// narrowest Go type of the wire format) with the value written.
func equalAny(got, want any) bool {
	switch w := want.(type) {
	case uint64:
		switch g := got.(type) {
		case int8:
			return g >= 0 && uint64(g) == w
		case uint8:
			return uint64(g) == w
		case uint16:
			return uint64(g) == w
		case uint32:
			return uint64(g) == w
		case uint64:
			return g == w
		}
	case int64:
		switch g := got.(type) {
		case int8:
			return int64(g) == w
		case int16:
			return int64(g) == w
		case int32:
			return int64(g) == w
		case int64:
			return g == w
		case uint8, uint16, uint32, uint64:
			return w >= 0 && equalAny(got, uint64(w))
		}
	case float64:
		switch g := got.(type) {
		case float32:
			return eqFloat(float64(g), w)
		case float64:
			return eqFloat(g, w)
		}
	case string:
		g, ok := got.(string)
		return ok && g == w
	case []byte:
		g, ok := got.([]byte)
		return ok && bytes.Equal(g, w)
	case time.Time:
		g, ok := got.(time.Time)
		return ok && g.Equal(w)
	case bool:
		g, ok := got.(bool)
		return ok && g == w
	case nil:
		return got == nil
	}
	return false
}
