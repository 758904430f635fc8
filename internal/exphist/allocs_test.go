package exphist_test

import (
	"math"
	"testing"

	"github.com/zerostat/zerostat/internal/exphist"
	"github.com/zerostat/zerostat/internal/race"
)

var (
	sinkBool   bool
	sinkResult exphist.Result
)

// TestRecordAllocs: no call allocates in steady state, downscales,
// resets and the exact index's slow path included; reads into a reused
// Snapshot with capacity maxSize neither.
func TestRecordAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	h := exphist.MustNew(exphist.DefaultMaxSize, exphist.DefaultMaxScale)
	o := exphist.MustNew(exphist.DefaultMaxSize, exphist.DefaultMaxScale)
	o.Record(-3)
	o.Record(1e-9)
	full := func() exphist.Snapshot {
		return exphist.Snapshot{
			Positive: exphist.Buckets{Counts: make([]uint64, 0, exphist.DefaultMaxSize)},
			Negative: exphist.Buckets{Counts: make([]uint64, 0, exphist.DefaultMaxSize)},
		}
	}
	s, prev, other := full(), full(), full()
	// Within an ulp or two of 2^(2^-20), at scale 20: Index's exact path.
	boundary := math.Exp2(0x1p-20)
	fine := exphist.MustNew(exphist.DefaultMaxSize, exphist.DefaultMaxScale)
	v := 1.0
	for _, c := range []struct {
		name string
		want float64
		f    func()
	}{
		{"Record", 0, func() { v *= 1.1; sinkResult = h.Record(v) }}, // widening: downscales
		{"RecordNegative", 0, func() { sinkResult = h.Record(-v) }},
		{"RecordZero", 0, func() { sinkResult = h.Record(0) }},
		{"RecordNaN", 0, func() { sinkResult = h.Record(math.NaN()) }},
		{"RecordExactPath", 0, func() { sinkResult = fine.Record(boundary) }},
		{"Snapshot", 0, func() { h.Snapshot(&s) }},
		{"SnapshotReset", 0, func() { h.Record(v); h.SnapshotReset(&s) }},
		{"Merge", 0, func() { h.Record(v); h.Snapshot(&s); o.Snapshot(&other); s.Merge(&other, h.MaxSize()) }},
		{"Downscale", 0, func() { h.Snapshot(&s); s.Downscale(s.Scale - 3) }},
		{"Sub", 0, func() { h.Snapshot(&prev); h.Record(2 * v); h.Snapshot(&s); sinkBool = s.Sub(&prev) == nil }},
	} {
		if got := testing.AllocsPerRun(1000, c.f); got != c.want {
			t.Errorf("%s: %v allocs; want %v", c.name, got, c.want)
		}
	}
}
