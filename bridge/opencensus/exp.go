package opencensus

import (
	"github.com/zerostat/zerostat/internal/exphist"
	"github.com/zerostat/zerostat/view"
)

// An exponential distribution (view.ExponentialDistribution) has no
// OpenCensus aggregation; it is published as an OpenCensus distribution
// whose explicit bounds are its buckets' edges (see the package doc,
// "Exponential distributions").

// snapshotOf converts a row's data to exphist's type (whose Downscale and
// Merge the layouts use).
func snapshotOf(d *view.ExponentialDistributionData) *exphist.Snapshot {
	s := &exphist.Snapshot{Scale: d.Scale, ZeroCount: uint64(d.ZeroCount), Count: uint64(d.Count),
		Sum: d.Sum, Min: d.Min, Max: d.Max}
	s.Positive = buckets(d.PositiveOffset, d.PositiveCounts)
	s.Negative = buckets(d.NegativeOffset, d.NegativeCounts)
	return s
}

func buckets(offset int32, counts []int64) exphist.Buckets {
	b := exphist.Buckets{Offset: offset, Counts: make([]uint64, len(counts))}
	for i, c := range counts {
		b.Counts[i] = uint64(c)
	}
	return b
}

// commonLayout returns the layout of every row of an exponential view of
// maxSize: the scale and ranges a histogram of maxSize buckets per sign
// holding every row's values would have (exphist.Snapshot.Merge), in which
// each row's buckets nest. snaps are the rows' data.
func commonLayout(snaps []*exphist.Snapshot, maxSize int32) *exphist.Layout {
	var acc exphist.Snapshot
	for _, s := range snaps {
		if s != nil {
			acc.Merge(s, maxSize)
		}
	}
	l := new(exphist.Layout)
	l.Reset(&acc)
	return l
}
