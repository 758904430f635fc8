package exphist

import (
	"math"
	"testing"
)

// TestRingGrowsWithRange: a sign's ring is allocated by its first value
// and doubles only as far as its range needs; a sign never recorded holds
// none; a reset keeps the ring.
func TestRingGrowsWithRange(t *testing.T) {
	h := MustNew(DefaultMaxSize, 0) // scale 0: bucket i is (2^i, 2^(i+1)]
	if h.pos.size != 0 || h.neg.size != 0 {
		t.Fatalf("a new histogram holds rings of %d and %d", h.pos.size, h.neg.size)
	}
	// From the top down, so that every new bucket is below the lowest
	// (the ring's head wraps) and the range grows one bucket at a time.
	for i := 100; i >= 1; i-- {
		h.Record(math.Ldexp(1.5, i))
	}
	if h.pos.size != 128 || h.neg.size != 0 || h.scale.Load() != 0 {
		t.Errorf("100 buckets: rings %d and %d at scale %d; want 128, 0, 0", h.pos.size, h.neg.size, h.scale.Load())
	}
	var s Snapshot
	h.Snapshot(&s)
	if s.Positive.Offset != 1 || len(s.Positive.Counts) != 100 {
		t.Fatalf("offset %d, %d buckets", s.Positive.Offset, len(s.Positive.Counts))
	}
	for i, c := range s.Positive.Counts {
		if c != 1 {
			t.Fatalf("bucket %d counts %d", i+1, c)
		}
	}
	h.Record(-3)
	if h.neg.size != minRing {
		t.Errorf("one negative value: ring %d; want %d", h.neg.size, minRing)
	}
	h.SnapshotReset(&s)
	if h.pos.size != 128 || h.pos.n != 0 {
		t.Errorf("after a reset: ring %d, %d in use; want the ring kept, empty", h.pos.size, h.pos.n)
	}
	if n := testing.AllocsPerRun(100, func() {
		for i := 1; i <= 100; i++ {
			h.Record(math.Ldexp(1.5, i))
		}
		h.SnapshotReset(&s)
	}); n != 0 {
		t.Errorf("%v allocations per cycle once the ring has grown", n)
	}
}
