package promnative

import (
	"errors"

	"github.com/zerostat/zerostat/internal/exphist"
)

// The schemas of Prometheus's exponential native histograms.
const (
	MinSchema = -4
	MaxSchema = 8
)

// ErrScale is returned by Set for a snapshot whose scale is below
// MinSchema: it has no native histogram form (see the package doc).
var ErrScale = errors.New("promnative: scale below -4 has no native histogram schema")

// Span is a run of consecutive buckets (client_model's and prompb's
// BucketSpan): Offset is the gap from the end of the previous span, or
// the index of the first bucket for the first span; Length the number of
// buckets.
type Span struct {
	Offset int32
	Length uint32
}

// Histogram is a native histogram with integer counts.
type Histogram struct {
	Schema    int32
	ZeroCount uint64
	Count     uint64
	Sum       float64
	// Spans and deltas of each sign (Negative: the buckets of -v).
	PositiveSpans, NegativeSpans   []Span
	PositiveDeltas, NegativeDeltas []int64
}

// Empty reports whether h has no buckets and no zero count (nothing
// counted).
func (h *Histogram) Empty() bool {
	return h.ZeroCount == 0 && len(h.PositiveSpans) == 0 && len(h.NegativeSpans) == 0
}

// Set makes h the native histogram of s, reusing h's slices. It lowers s
// to MaxSchema in place when its scale is above (s is the caller's
// scratch copy: a read). For a scale below MinSchema it returns ErrScale
// and leaves h empty. Cost: O(buckets); no allocation once h's slices
// have grown.
func (h *Histogram) Set(s *exphist.Snapshot) error {
	h.PositiveSpans, h.PositiveDeltas = h.PositiveSpans[:0], h.PositiveDeltas[:0]
	h.NegativeSpans, h.NegativeDeltas = h.NegativeSpans[:0], h.NegativeDeltas[:0]
	h.Schema, h.ZeroCount, h.Count, h.Sum = 0, 0, 0, 0
	if s.Scale < MinSchema {
		return ErrScale
	}
	s.Downscale(MaxSchema)
	h.Schema, h.ZeroCount, h.Count, h.Sum = s.Scale, s.ZeroCount, s.Count, s.Sum
	h.PositiveSpans, h.PositiveDeltas = AppendBuckets(h.PositiveSpans, h.PositiveDeltas, &s.Positive)
	h.NegativeSpans, h.NegativeDeltas = AppendBuckets(h.NegativeSpans, h.NegativeDeltas, &s.Negative)
	return nil
}

// maxGap is the longest run of empty buckets kept inside a span
// (client_golang's makeBuckets: "gaps of one or two buckets should not
// create a new span").
const maxGap = 2

// AppendBuckets appends the spans and deltas of b's non-empty buckets
// (OpenTelemetry indexes, converted to Prometheus's: +1) to spans and
// deltas, as client_golang's makeBuckets encodes them: a new span at the
// first bucket and after a gap of more than two empty buckets, shorter
// gaps filled with zero counts. No allocation beyond growing spans and
// deltas.
func AppendBuckets(spans []Span, deltas []int64, b *exphist.Buckets) ([]Span, []int64) {
	var prev int64
	var next int32 // index after the last bucket appended
	first := len(spans)
	for i, c := range b.Counts {
		if c == 0 {
			continue // as client_golang, which has no empty buckets
		}
		idx := b.Offset + int32(i) + 1
		gap := idx - next
		if len(spans) == first || gap > maxGap {
			spans = append(spans, Span{Offset: gap})
		} else {
			for ; gap > 0; gap-- {
				deltas = append(deltas, -prev)
				prev = 0
			}
			spans[len(spans)-1].Length += uint32(idx - next)
		}
		spans[len(spans)-1].Length++
		deltas = append(deltas, int64(c)-prev)
		prev = int64(c)
		next = idx + 1
	}
	return spans, deltas
}
