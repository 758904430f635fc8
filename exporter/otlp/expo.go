package otlp

import (
	"encoding/binary"
	"math"

	"github.com/zerostat/zerostat/internal/exphist"
)

// The ExponentialHistogram data points of exponential views
// (view.ExponentialDistribution), written from an exphist.Snapshot: the
// fields of ExponentialHistogramDataPoint in protobuf-go's order (by field
// number), each left out when protobuf-go leaves it out (a proto3 scalar at
// its zero value: count 0, scale 0, zero_count 0, flags, zero_threshold 0;
// an optional one when unset), so that the bytes are exactly proto.Marshal's
// for the message they decode to (benchmarks/otelexp checks it).
//
//	attributes = 1       the series' tags
//	start_time_unix_nano = 2, time_unix_nano = 3
//	count = 4            Snapshot.Count (the zero bucket included; 0 only in a
//	                     cumulative point of a series that recorded nothing
//	                     but NaN or ±Inf)
//	sum = 5              Snapshot.Sum, left out when Min < 0 (metrics.proto: no
//	                     sum when negative values were recorded), as for a
//	                     Histogram
//	scale = 6            sint32
//	zero_count = 7       values exactly 0 (zero_threshold is 0: left out)
//	positive = 8, negative = 9
//	                     Buckets{offset = 1 (sint32), bucket_counts = 2
//	                     (packed uint64 varints)}, left out when the sign has
//	                     no bucket (a receiver reads an absent Buckets as
//	                     empty)
//	exemplars = 11       the series' exemplars, as a Histogram's
//	min = 12, max = 13   left out when Count is 0 (nothing was counted: the
//	                     data model's min and max are then undefined)

// expBuckets is one sign's buckets of a point: Encoder.counts[from:from+n],
// the first at index off, and the size of their packed encoding.
type expBuckets struct {
	off     int32
	from, n int
	bytes   int // the packed bucket_counts' content: one varint per count
}

// size is the size of the Buckets message (without its own tag and
// length); 0 when there is no bucket (the field is then left out).
func (b *expBuckets) size() int {
	if b.n == 0 {
		return 0
	}
	n := lenFieldSize(b.bytes)
	if b.off != 0 {
		n += 1 + varintSize(uint64(zigzag32(b.off)))
	}
	return n
}

// zigzag32 is protobuf's sint32 encoding of v.
func zigzag32(v int32) uint32 { return uint32(v<<1) ^ uint32(v>>31) }

// setExp sets p's exponential fields from s, appending its bucket counts
// to e.counts, and returns the size of those fields (count, sum, scale,
// zero_count, positive, negative, min, max; not start, time, attributes
// or exemplars).
func (e *Encoder) setExp(p *point, s *exphist.Snapshot) int {
	p.count = s.Count
	p.value = s.Sum
	p.min, p.max = s.Min, s.Max
	p.hasSum = !(s.Min < 0)
	p.hasMinMax = s.Count > 0 && s.Min <= s.Max
	p.scale = s.Scale
	p.zero = s.ZeroCount
	p.pos = e.appendBuckets(&s.Positive)
	p.neg = e.appendBuckets(&s.Negative)
	n := 0
	if p.count != 0 { // a proto3 default, left out
		n += fixedFieldSize
	}
	if p.hasSum {
		n += fixedFieldSize
	}
	if p.scale != 0 {
		n += 1 + varintSize(uint64(zigzag32(p.scale)))
	}
	if p.zero != 0 {
		n += fixedFieldSize
	}
	if m := p.pos.size(); p.pos.n > 0 {
		n += lenFieldSize(m)
	}
	if m := p.neg.size(); p.neg.n > 0 {
		n += lenFieldSize(m)
	}
	if p.hasMinMax {
		n += 2 * fixedFieldSize
	}
	return n
}

// appendBuckets appends b's counts to e.counts.
func (e *Encoder) appendBuckets(b *exphist.Buckets) expBuckets {
	eb := expBuckets{off: b.Offset, from: len(e.counts), n: len(b.Counts)}
	for _, c := range b.Counts {
		eb.bytes += varintSize(c)
	}
	e.counts = append(e.counts, b.Counts...)
	return eb
}

// appendExpPoint appends p's fields after its attributes (written first:
// field 1), in field order: the times, setExp's fields and the exemplars.
func (e *Encoder) appendExpPoint(b []byte, p *point, end uint64) []byte {
	b = appendFixed(b, tagHDPStart, p.start) // 2 and 3, as in every data point
	b = appendFixed(b, tagHDPTime, end)
	if p.count != 0 {
		b = appendFixed(b, tagEHDPCount, p.count)
	}
	if p.hasSum {
		b = appendFixed(b, tagEHDPSum, math.Float64bits(p.value))
	}
	if p.scale != 0 {
		b = binary.AppendUvarint(append(b, tagEHDPScale), uint64(zigzag32(p.scale)))
	}
	if p.zero != 0 {
		b = appendFixed(b, tagEHDPZeroCount, p.zero)
	}
	b = e.appendBucketsField(b, tagEHDPPositive, &p.pos)
	b = e.appendBucketsField(b, tagEHDPNegative, &p.neg)
	for _, x := range e.exs[p.exFrom:p.exTo] {
		b = appendExemplarField(b, tagEHDPExemplars, x)
	}
	if p.hasMinMax {
		b = appendFixed(b, tagEHDPMin, math.Float64bits(p.min))
		b = appendFixed(b, tagEHDPMax, math.Float64bits(p.max))
	}
	return b
}

// appendBucketsField appends a Buckets field, unless it has no bucket.
func (e *Encoder) appendBucketsField(b []byte, tag byte, eb *expBuckets) []byte {
	if eb.n == 0 {
		return b
	}
	b = appendLen(b, tag, eb.size())
	if eb.off != 0 {
		b = binary.AppendUvarint(append(b, tagBucketsOffset), uint64(zigzag32(eb.off)))
	}
	b = appendLen(b, tagBucketsCounts, eb.bytes)
	for _, c := range e.counts[eb.from : eb.from+eb.n] {
		b = binary.AppendUvarint(b, c)
	}
	return b
}
