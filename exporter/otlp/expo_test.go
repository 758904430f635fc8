package otlp

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"testing"

	"github.com/zerostat/zerostat/internal/exphist"
)

// encodeExpPoint writes s as an ExponentialHistogramDataPoint (no
// attributes) from start to end, checking that setExp sized it right.
func encodeExpPoint(t *testing.T, s *exphist.Snapshot, start, end uint64) []byte {
	t.Helper()
	e := &Encoder{}
	p := point{start: start}
	size := 2*fixedFieldSize + e.setExp(&p, s)
	b := e.appendExpPoint(nil, &p, end)
	if len(b) != size {
		t.Fatalf("point of %d bytes; setExp sized it %d", len(b), size)
	}
	return b
}

// TestExpPointGolden checks the bytes of one data point written by hand
// from metrics.proto: the field numbers and wire types (sint32 scale and
// offset zigzag-encoded, counts as packed varints, count and zero_count
// fixed64), and the fields left out (flags, zero_threshold, an empty
// sign's Buckets, a zero offset).
func TestExpPointGolden(t *testing.T) {
	s := &exphist.Snapshot{Scale: -1, ZeroCount: 1, Count: 304, Sum: 2, Min: 0, Max: 4,
		Positive: exphist.Buckets{Offset: -2, Counts: []uint64{3, 300}}}
	f64 := func(tag byte, v uint64) []byte { return binary.LittleEndian.AppendUint64([]byte{tag}, v) }
	var want []byte
	want = append(want, f64(0x11, 5)...)                             // start_time_unix_nano = 2, fixed64
	want = append(want, f64(0x19, 9)...)                             // time_unix_nano = 3
	want = append(want, f64(0x21, 304)...)                           // count = 4, fixed64
	want = append(want, f64(0x29, math.Float64bits(2))...)           // sum = 5, double
	want = append(want, 0x30, 0x01)                                  // scale = 6, sint32 -1
	want = append(want, f64(0x39, 1)...)                             // zero_count = 7, fixed64
	want = append(want, 0x42, 7, 0x08, 0x03, 0x12, 3, 3, 0xac, 0x02) // positive = 8: offset -2, counts [3 300]
	want = append(want, f64(0x61, 0)...)                             // min = 12, present though 0
	want = append(want, f64(0x69, math.Float64bits(4))...)           // max = 13
	if got := encodeExpPoint(t, s, 5, 9); !bytes.Equal(got, want) {
		t.Errorf("bytes\n% x\nwant\n% x", got, want)
	}

	// Scale 0 and offset 0 are left out (proto3 defaults), and so is
	// zero_count 0; a negative-only point has no positive field; no sum
	// with a negative minimum.
	s = &exphist.Snapshot{Count: 2, Sum: -3, Min: -2, Max: -1,
		Negative: exphist.Buckets{Offset: 0, Counts: []uint64{1, 1}}}
	want = want[:0]
	want = append(want, f64(0x11, 5)...)
	want = append(want, f64(0x19, 9)...)
	want = append(want, f64(0x21, 2)...)
	want = append(want, 0x4a, 4, 0x12, 2, 1, 1) // negative = 9: counts [1 1]
	want = append(want, f64(0x61, math.Float64bits(-2))...)
	want = append(want, f64(0x69, math.Float64bits(-1))...)
	if got := encodeExpPoint(t, s, 5, 9); !bytes.Equal(got, want) {
		t.Errorf("bytes\n% x\nwant\n% x", got, want)
	}
}

// TestExpPointDecodes records seeded values into exphist histograms of
// several shapes (positive, negative and zero values, scales from 20 down
// to negative ones, offsets of either sign, counts above 127 and 16383,
// an empty histogram and one of NaNs only) and checks that the decoded
// point is the snapshot.
func TestExpPointDecodes(t *testing.T) {
	type tc struct {
		name              string
		maxSize, maxScale int32
		values            []float64
	}
	many := func(v float64, n int) []float64 { return slices.Repeat([]float64{v}, n) }
	cases := []tc{
		{"one", 160, 20, []float64{1.5}},
		{"narrow", 160, 20, []float64{100, 100.001, 100.002, 100.0005}},
		{"wide", 160, 20, []float64{1e-300, 1, 1e300, 5e-324, math.MaxFloat64}},
		{"negatives and zeros", 160, 20, []float64{-1, -2, 0, math.Copysign(0, -1), -1e10, 3}},
		{"negative offsets", 4, 20, []float64{1e-5, 2e-5, 0.1}},
		{"negative scale", 2, 20, []float64{1e-200, 1e200, -1e-100}},
		{"big counts", 160, 3, append(append(many(7, 200), many(9, 20000)...), many(-7, 128)...)},
		{"max scale 0", 160, 0, []float64{1, 2, 3, 4, 5, 1000}},
		{"empty", 160, 20, nil},
		{"NaN only", 160, 20, []float64{math.NaN(), math.Inf(1)}},
	}
	var negScale, negOff, posOff, bigCount bool // the cases cover these
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := exphist.MustNew(c.maxSize, c.maxScale)
			for _, v := range c.values {
				h.Record(v)
			}
			var s exphist.Snapshot
			h.Snapshot(&s)
			negScale = negScale || s.Scale < 0
			negOff = negOff || s.Positive.Offset < 0 || s.Negative.Offset < 0
			posOff = posOff || s.Positive.Offset > 0 || s.Negative.Offset > 0
			bigCount = bigCount || slices.Max(append(s.Positive.Counts, 0)) >= 1<<14
			p, err := parseMsg(encodeExpPoint(t, &s, 1, 2))
			if err != nil {
				t.Fatal(err)
			}
			var dp dpoint
			decodeExpPoint(p, &dp)
			checkExpPoint(t, &dp, &s)
			if st, _ := p.u64(2); st != 1 {
				t.Errorf("start %d; want 1", st)
			}
		})
	}
	if !negScale || !negOff || !posOff || !bigCount {
		t.Errorf("the cases miss a shape: negative scale %v, negative offset %v, positive offset %v, 3-byte count %v", negScale, negOff, posOff, bigCount)
	}
}

// checkExpPoint compares a decoded point with the snapshot it was
// written from.
func checkExpPoint(t *testing.T, dp *dpoint, s *exphist.Snapshot) {
	t.Helper()
	if dp.count != s.Count || dp.zeroCount != s.ZeroCount || dp.scale != s.Scale {
		t.Errorf("count %d, zero count %d, scale %d; want %d, %d, %d", dp.count, dp.zeroCount, dp.scale, s.Count, s.ZeroCount, s.Scale)
	}
	if dp.hasPos != (len(s.Positive.Counts) > 0) || dp.posOff != s.Positive.Offset || !slices.Equal(dp.pos, s.Positive.Counts) {
		t.Errorf("positive %v %d %v; want %d %v", dp.hasPos, dp.posOff, dp.pos, s.Positive.Offset, s.Positive.Counts)
	}
	if dp.hasNeg != (len(s.Negative.Counts) > 0) || dp.negOff != s.Negative.Offset || !slices.Equal(dp.neg, s.Negative.Counts) {
		t.Errorf("negative %v %d %v; want %d %v", dp.hasNeg, dp.negOff, dp.neg, s.Negative.Offset, s.Negative.Counts)
	}
	if wantSum := !(s.Min < 0); (dp.sum != nil) != wantSum || wantSum && math.Float64bits(*dp.sum) != math.Float64bits(s.Sum) {
		t.Errorf("sum %v; want %v (present %v)", dp.sum, s.Sum, wantSum)
	}
	if s.Count == 0 {
		if dp.min != nil || dp.max != nil {
			t.Errorf("min, max %v, %v; want none (count 0)", dp.min, dp.max)
		}
	} else if dp.min == nil || dp.max == nil || math.Float64bits(*dp.min) != math.Float64bits(s.Min) || math.Float64bits(*dp.max) != math.Float64bits(s.Max) {
		t.Errorf("min, max %v, %v; want %v, %v", dp.min, dp.max, s.Min, s.Max)
	}
	if dp.flags != 0 || dp.zeroThreshold != 0 {
		t.Errorf("flags %d, zero threshold %v; want 0, 0", dp.flags, dp.zeroThreshold)
	}
}
