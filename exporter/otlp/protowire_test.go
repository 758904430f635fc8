package otlp

import (
	"encoding/binary"
	"math"
	"testing"
)

// TestVarintWidths checks varintSize and the varints binary.AppendUvarint writes at every width
// threshold against encoding/binary's decoder.
func TestVarintWidths(t *testing.T) {
	var vs []uint64
	for w := 1; w < 10; w++ {
		x := uint64(1) << (7 * w)
		vs = append(vs, x-1, x, x+1)
	}
	vs = append(vs, 0, math.MaxUint32, math.MaxInt64, math.MaxUint64)
	for _, v := range vs {
		b := binary.AppendUvarint([]byte{0xEE}, v)
		if len(b)-1 != varintSize(v) {
			t.Errorf("%d: %d bytes; varintSize says %d", v, len(b)-1, varintSize(v))
		}
		if len(b)-1 != len(binary.AppendUvarint(nil, v)) {
			t.Errorf("%d: %d bytes; encoding/binary writes %d", v, len(b)-1, len(binary.AppendUvarint(nil, v)))
		}
		got, n := binary.Uvarint(b[1:])
		if got != v || n != len(b)-1 {
			t.Errorf("%d: read back %d (%d bytes)", v, got, n)
		}
	}
}

// TestAppendLen checks appendLen's one-byte shortcut and its general case
// agree with lenFieldSize at the thresholds.
func TestAppendLen(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 16383, 16384, 1 << 21, 1<<28 + 3} {
		b := appendLen(nil, 0x0A, n)
		if len(b)+n != lenFieldSize(n) {
			t.Errorf("%d: head of %d bytes; lenFieldSize says %d", n, len(b), lenFieldSize(n)-n)
		}
		if b[0] != 0x0A {
			t.Errorf("%d: tag %#x", n, b[0])
		}
		if got, _ := binary.Uvarint(b[1:]); got != uint64(n) {
			t.Errorf("%d: length read back %d", n, got)
		}
	}
}

func TestNextFieldMalformed(t *testing.T) {
	for _, b := range [][]byte{
		{0x0A},             // tag without a length
		{0x0A, 0x05, 1, 2}, // length past the end
		{0x09, 1, 2, 3},    // fixed64 cut short
		{0x08, 0x80},       // varint cut short
		{0x0B},             // group (wire type 3)
		{0x80},             // tag cut short
	} {
		if _, _, err := nextField(b); err == nil {
			t.Errorf("% x: no error", b)
		}
	}
}

func TestParsePartialSuccess(t *testing.T) {
	// ExportMetricsServiceResponse{partial_success{rejected_data_points: 3, error_message: "bad"}}
	inner := binary.AppendUvarint([]byte{tagPSRejected}, 3)
	inner = appendString(inner, tagPSMessage, "bad")
	resp := append(appendLen(nil, tagResponsePartialSuccess, len(inner)), inner...)
	ps, err := parsePartialSuccess(resp)
	if err != nil || ps == nil || ps.RejectedDataPoints != 3 || ps.ErrorMessage != "bad" {
		t.Fatalf("got %+v, %v; want 3 rejected, \"bad\"", ps, err)
	}
	// An empty partial_success, or none, is a full success.
	for _, b := range [][]byte{nil, {tagResponsePartialSuccess, 0}} {
		if ps, err := parsePartialSuccess(b); ps != nil || err != nil {
			t.Errorf("% x: got %+v, %v; want nil, nil", b, ps, err)
		}
	}
}
