package protowire

import (
	"encoding/binary"
	"math"
	"testing"
)

// VarintSize and AppendLen agree with encoding/binary at every width.
func TestWidths(t *testing.T) {
	var vs []uint64
	for w := 1; w < 10; w++ {
		x := uint64(1) << (7 * w)
		vs = append(vs, x-1, x, x+1)
	}
	vs = append(vs, 0, math.MaxUint32, math.MaxInt64, math.MaxUint64)
	for _, v := range vs {
		if n := len(binary.AppendUvarint(nil, v)); n != VarintSize(v) {
			t.Errorf("%d: %d bytes; VarintSize says %d", v, n, VarintSize(v))
		}
	}
	for _, n := range []int{0, 1, 127, 128, 16383, 16384, 1 << 21} {
		b := AppendLen(nil, 0x0A, n)
		if got, _ := binary.Uvarint(b[1:]); got != uint64(n) || len(b)+n != LenFieldSize(n) {
			t.Errorf("%d: head % x; LenFieldSize %d", n, b, LenFieldSize(n))
		}
	}
	for _, v := range []int64{0, -1, 1, math.MinInt64, math.MaxInt64} {
		if got := Zigzag64(v); got != uint64(v<<1)^uint64(v>>63) || (v >= math.MinInt32 && v <= math.MaxInt32 && Zigzag32(int32(v)) != got) {
			t.Errorf("zigzag %d: %d", v, got)
		}
	}
}
