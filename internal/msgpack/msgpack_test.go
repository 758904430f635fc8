package msgpack

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/zerostat/zerostat/internal/race"
)

func TestUintWidths(t *testing.T) {
	for _, tc := range []struct {
		v    uint64
		size int
		lead byte
	}{
		{0, 1, 0x00}, {127, 1, 0x7f}, {128, 2, Uint8}, {255, 2, Uint8},
		{256, 3, Uint16}, {65535, 3, Uint16}, {65536, 5, Uint32},
		{math.MaxUint32, 5, Uint32}, {math.MaxUint32 + 1, 9, Uint64}, {math.MaxUint64, 9, Uint64},
	} {
		b := AppendUint(nil, tc.v)
		if len(b) != tc.size || b[0] != tc.lead {
			t.Errorf("AppendUint(%d) = % x; want %d bytes led by %#x", tc.v, b, tc.size, tc.lead)
		}
		got, err := NewReader(b).ReadUint()
		if err != nil || got != tc.v {
			t.Errorf("ReadUint(% x) = %d, %v; want %d", b, got, err, tc.v)
		}
	}
}

func TestIntWidths(t *testing.T) {
	for _, tc := range []struct {
		v    int64
		size int
		lead byte
	}{
		{0, 1, 0x00}, {127, 1, 0x7f}, {128, 2, Uint8}, {-1, 1, 0xff}, {-32, 1, 0xe0},
		{-33, 2, Int8}, {-128, 2, Int8}, {-129, 3, Int16}, {-32768, 3, Int16},
		{-32769, 5, Int32}, {math.MinInt32, 5, Int32}, {math.MinInt32 - 1, 9, Int64},
		{math.MinInt64, 9, Int64}, {math.MaxInt64, 9, Uint64}, {65536, 5, Uint32},
	} {
		b := AppendInt(nil, tc.v)
		if len(b) != tc.size || b[0] != tc.lead {
			t.Errorf("AppendInt(%d) = % x; want %d bytes led by %#x", tc.v, b, tc.size, tc.lead)
		}
		got, err := NewReader(b).ReadInt()
		if err != nil || got != tc.v {
			t.Errorf("ReadInt(% x) = %d, %v; want %d", b, got, err, tc.v)
		}
	}
	if _, err := NewReader(AppendUint(nil, math.MaxUint64)).ReadInt(); err == nil {
		t.Error("ReadInt accepted a uint64 above MaxInt64")
	}
	if _, err := NewReader(AppendInt(nil, -5)).ReadUint(); err == nil {
		t.Error("ReadUint accepted -5")
	}
}

func TestStringWidths(t *testing.T) {
	for _, tc := range []struct {
		n    int
		hdr  int
		lead byte
	}{
		{0, 1, 0xa0}, {31, 1, 0xbf}, {32, 2, Str8}, {255, 2, Str8},
		{256, 3, Str16}, {65535, 3, Str16}, {65536, 5, Str32},
	} {
		s := strings.Repeat("x", tc.n)
		b := AppendString(nil, s)
		if len(b) != tc.hdr+tc.n || b[0] != tc.lead || StringSize(tc.n) != len(b) {
			t.Errorf("AppendString(%d bytes): %d bytes led by %#x; want %d led by %#x", tc.n, len(b), b[0], tc.hdr+tc.n, tc.lead)
		}
		got, err := NewReader(b).ReadString()
		if err != nil || got != s {
			t.Errorf("ReadString of %d bytes: %v", tc.n, err)
		}
		if bb := AppendStringBytes(nil, []byte(s)); !bytes.Equal(bb, b) {
			t.Errorf("AppendStringBytes differs from AppendString at %d bytes", tc.n)
		}
	}
}

func TestArrayAndMapWidths(t *testing.T) {
	for _, tc := range []struct {
		n    uint32
		size int
		lead byte
	}{{0, 1, 0x90}, {15, 1, 0x9f}, {16, 3, Array16}, {65535, 3, Array16}, {65536, 5, Array32}} {
		b := AppendArrayHeader(nil, tc.n)
		if len(b) != tc.size || b[0] != tc.lead {
			t.Errorf("AppendArrayHeader(%d) = % x", tc.n, b)
		}
		b = append(b, make([]byte, tc.n)...) // n fixint zeros
		got, err := NewReader(b).ReadArrayHeader()
		if err != nil || got != int(tc.n) {
			t.Errorf("ReadArrayHeader(%d) = %d, %v", tc.n, got, err)
		}
		m := AppendMapHeader(nil, tc.n)
		wantLead := byte(FixmapPrefix) | byte(tc.n)
		switch {
		case tc.n > 65535:
			wantLead = Map32
		case tc.n > 15:
			wantLead = Map16
		}
		if len(m) != tc.size || m[0] != wantLead {
			t.Errorf("AppendMapHeader(%d) = % x; want %d bytes led by %#x", tc.n, m, tc.size, wantLead)
		}
		m = append(m, make([]byte, 2*tc.n)...)
		if got, err := NewReader(m).ReadMapHeader(); err != nil || got != int(tc.n) {
			t.Errorf("ReadMapHeader(%d) = %d, %v", tc.n, got, err)
		}
	}
}

func TestArray32Patch(t *testing.T) {
	b, off := AppendArray32([]byte{0x01})
	b = AppendInt(b, 1)
	b = AppendInt(b, 2)
	PatchArray32(b, off, 2)
	r := NewReader(b[1:])
	if n, err := r.ReadArrayHeader(); err != nil || n != 2 {
		t.Fatalf("patched header: %d, %v", n, err)
	}
}

func TestFloats(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		size int
	}{
		{0, 5}, {1.5, 5}, {-2, 5}, {0.1, 9}, {math.MaxFloat64, 9}, {math.SmallestNonzeroFloat64, 9},
		{math.Inf(1), 5}, {math.Inf(-1), 5}, {math.NaN(), 5}, {1e300, 9}, {16777217, 9},
	} {
		b := AppendFloat(nil, tc.v)
		if len(b) != tc.size {
			t.Errorf("AppendFloat(%v) = %d bytes; want %d", tc.v, len(b), tc.size)
		}
		got, err := NewReader(b).ReadFloat()
		if err != nil || !(got == tc.v || (got != got && tc.v != tc.v)) {
			t.Errorf("ReadFloat(AppendFloat(%v)) = %v, %v", tc.v, got, err)
		}
		b64 := AppendFloat64(nil, tc.v)
		if len(b64) != 9 || b64[0] != Float64 {
			t.Errorf("AppendFloat64(%v) = % x", tc.v, b64)
		}
	}
	// Integers read as floats (some encoders write integral floats so).
	if f, err := NewReader(AppendInt(nil, -7)).ReadFloat(); err != nil || f != -7 {
		t.Errorf("ReadFloat(int -7) = %v, %v", f, err)
	}
}

func TestTimeForms(t *testing.T) {
	for _, tc := range []struct {
		t    time.Time
		size int
	}{
		{time.Unix(0, 0), 6},
		{time.Unix(1<<32-1, 0), 6},
		{time.Unix(1<<32, 0), 10},
		{time.Unix(1700000000, 1), 10},
		{time.Unix(1<<34-1, 999999999), 10},
		{time.Unix(1<<34, 0), 15},
		{time.Unix(-1, 5), 15},
		{time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), 15},
	} {
		b := AppendTime(nil, tc.t)
		if len(b) != tc.size {
			t.Errorf("AppendTime(%v) = %d bytes; want %d", tc.t, len(b), tc.size)
		}
		got, err := NewReader(b).ReadTime()
		if err != nil || !got.Equal(tc.t) {
			t.Errorf("ReadTime(AppendTime(%v)) = %v, %v", tc.t, got, err)
		}
	}
}

func TestExtForms(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 8, 16, 17, 255, 256, 65535, 65536} {
		data := bytes.Repeat([]byte{7}, n)
		b := AppendExt(nil, 5, data)
		typ, got, err := NewReader(b).ReadExt()
		if err != nil || typ != 5 || !bytes.Equal(got, data) {
			t.Errorf("ext of %d bytes: type %d, %d bytes, %v", n, typ, len(got), err)
		}
	}
	b := AppendBytes(nil, []byte("hi"))
	if v, err := NewReader(b).ReadBytes(); err != nil || string(v) != "hi" {
		t.Errorf("bin: %q %v", v, err)
	}
}

func TestReaderErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    []byte
		read  func(*Reader) error
		short bool
		want  string
	}{
		{"empty", nil, func(r *Reader) error { _, err := r.ReadInt(); return err }, true, "need 1"},
		{"uint16 cut", []byte{Uint16, 1}, func(r *Reader) error { _, err := r.ReadUint(); return err }, true, ""},
		{"str past end", []byte{Str8, 10, 'a'}, func(r *Reader) error { _, err := r.ReadString(); return err }, true, ""},
		{"str32 huge", []byte{Str32, 0xff, 0xff, 0xff, 0xff}, func(r *Reader) error { _, err := r.ReadString(); return err }, true, ""},
		{"array32 huge", []byte{Array32, 0xff, 0xff, 0xff, 0xff}, func(r *Reader) error { _, err := r.ReadArrayHeader(); return err }, false, "more than"},
		{"map32 huge", []byte{Map32, 0xff, 0xff, 0xff, 0xff}, func(r *Reader) error { _, err := r.ReadMapHeader(); return err }, false, "more than"},
		{"type mismatch", []byte{0xa1, 'x'}, func(r *Reader) error { _, err := r.ReadInt(); return err }, false, "want integer, got str"},
		{"never used", []byte{0xc1}, func(r *Reader) error { return r.Skip() }, false, "invalid format byte"},
		{"bad ts type", []byte{Fixext4, 3, 0, 0, 0, 0}, func(r *Reader) error { _, err := r.ReadTime(); return err }, false, "ext type 3"},
		{"bad ts nsec", []byte{Fixext8, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, func(r *Reader) error { _, err := r.ReadTime(); return err }, false, "out of range"},
		{"ext32 huge", []byte{Ext32, 0x7f, 0xff, 0xff, 0xff, 1}, func(r *Reader) error { _, _, err := r.ReadExt(); return err }, true, ""},
		{"skip nested cut", []byte{0x92, 0x91, Str8}, func(r *Reader) error { return r.Skip() }, true, ""},
	} {
		r := NewReader(tc.in)
		err := tc.read(r)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if errors.Is(err, ErrShort) != tc.short || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %q (short=%v); want short=%v containing %q", tc.name, err, errors.Is(err, ErrShort), tc.short, tc.want)
		}
		if r.Offset() != 0 {
			t.Errorf("%s: a failed read consumed %d bytes", tc.name, r.Offset())
		}
	}
}

func TestSkipNested(t *testing.T) {
	var b []byte
	b = AppendArrayHeader(b, 3)
	b = AppendMapHeader(b, 1)
	b = AppendString(b, "k")
	b = AppendArrayHeader(b, 2)
	b = AppendFloat(b, 0.1)
	b = AppendTime(b, time.Unix(1, 2))
	b = AppendBytes(b, []byte{1, 2})
	b = AppendNil(b)
	b = AppendBool(b, true)
	r := NewReader(b)
	if err := r.Skip(); err != nil || r.Len() != 1 {
		t.Fatalf("Skip: %v, %d left", err, r.Len())
	}
	if v, err := r.ReadBool(); err != nil || !v {
		t.Errorf("ReadBool after Skip: %v %v", v, err)
	}
}

func TestAppendAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	buf := make([]byte, 0, 4096)
	now := time.Now()
	allocs := testing.AllocsPerRun(100, func() {
		b := buf[:0]
		b = AppendArrayHeader(b, 20)
		b = AppendInt(b, -123456)
		b = AppendUint(b, 1<<40)
		b = AppendFloat(b, 0.1)
		b = AppendString(b, "http.route")
		b = AppendTime(b, now)
		b, off := AppendArray32(b)
		PatchArray32(b, off, 0)
		_ = b
	})
	if allocs != 0 {
		t.Errorf("got %v allocs; want 0", allocs)
	}
}

func FuzzReader(f *testing.F) {
	var seed []byte
	seed = AppendArrayHeader(seed, 4)
	seed = AppendString(seed, "x")
	seed = AppendFloat(seed, 1.5)
	seed = AppendTime(seed, time.Unix(1700000000, 5))
	seed = AppendMapHeader(seed, 1)
	seed = AppendInt(seed, -1)
	seed = AppendBytes(seed, []byte{1})
	f.Add(seed)
	f.Add([]byte{Array32, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{Ext8, 12, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReader(b)
		if err := r.Skip(); err == nil {
			// A value that skips reads again the same way, value by value.
			end := r.Offset()
			r2 := NewReader(b[:end])
			if err := r2.Skip(); err != nil || r2.Len() != 0 {
				t.Fatalf("re-skip of % x: %v, %d left", b[:end], err, r2.Len())
			}
		}
		// Every typed read either fails cleanly or advances.
		r.Reset(b)
		for r.Len() > 0 {
			before := r.Offset()
			t, _ := r.NextType()
			var err error
			switch t {
			case IntType:
				_, err = r.ReadInt()
				if err != nil {
					_, err = r.ReadUint()
				}
			case FloatType:
				_, err = r.ReadFloat()
			case StrType:
				_, err = r.ReadString()
			case ExtType:
				if _, err = r.ReadTime(); err != nil {
					_, _, err = r.ReadExt()
				}
			case ArrayType:
				_, err = r.ReadArrayHeader()
			case MapType:
				_, err = r.ReadMapHeader()
			default:
				err = r.Skip()
			}
			if err != nil {
				return
			}
			if r.Offset() <= before {
				panic("a successful read did not advance")
			}
		}
	})
}
