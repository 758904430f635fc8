package statsd

import (
	"math"
	"strconv"
)

// appendValue appends a finite value as JavaScript's Number.prototype.toString
// writes it (ECMA-262 Number::toString): positional from 1e-6 up to 1e21,
// with an exponent outside, the shortest digits that read back exactly.
// Every StatsD server reads both forms (Go's strconv.ParseFloat, Etsy's
// Number()); positional keeps the common values short and plain. -0 is
// written 0 (a leading '-' on a gauge would make it relative).
func appendValue(dst []byte, v float64) []byte {
	if v == 0 {
		return append(dst, '0')
	}
	if a := math.Abs(v); a >= 1e-6 && a < 1e21 {
		return strconv.AppendFloat(dst, v, 'f', -1, 64)
	}
	return strconv.AppendFloat(dst, v, 'e', -1, 64)
}

// appendDDFloat appends v as datadog-go writes a gauge
// (strconv.AppendFloat(buf, value, 'f', -1, 64), format.go
// appendFloatMetric with its default precision -1): what the OpenCensus
// Datadog exporter sends, kept byte for byte in OpenCensusDatadog mode.
// -0 is written 0.
func appendDDFloat(dst []byte, v float64) []byte {
	if v == 0 {
		return append(dst, '0')
	}
	return strconv.AppendFloat(dst, v, 'f', -1, 64)
}

// appendRate appends a sample rate positionally ('f'): Etsy statsd 0.9.0
// reads the rate with the regexp ^@([\d\.]+) and so misreads "1e-07".
func appendRate(dst []byte, r float64) []byte { return strconv.AppendFloat(dst, r, 'f', -1, 64) }

// exactRate reports the sample rate r = 1/n (as float64, correctly
// rounded) when 1/r == n exactly in float64 arithmetic: then every server
// weighs the value by exactly n (statsd_exporter repeats it int(1/r)
// times; Etsy statsd adds 1/r to the timer's count; the Datadog agent
// weighs it 1/r), and the rate written with the shortest digits reads
// back as r. It holds for about 86% of n up to 2·10⁷ (not for 49, 93,
// 98, ...): splitRate covers the others.
func exactRate(n uint64) (float64, bool) {
	if n == 0 || n > 1<<53 {
		return 0, false
	}
	f := float64(n)
	r := 1 / f
	return r, 1/r == f
}

// maxSplitSearch bounds splitRate's search. For every n up to 2·10⁷ a
// split exists with a ≤ 74 (at n = 8,241,081; TestSplitRate checks every
// n up to 10⁶); the bound only guards the loop.
const maxSplitSearch = 4096

// splitRate splits a count n that has no exact rate into a + (n-a), both
// with exact rates, a as small as possible; ok is false when none is found
// within maxSplitSearch (not seen for n ≤ 2·10⁷).
func splitRate(n uint64) (a uint64, ok bool) {
	for a = 1; a < n && a <= maxSplitSearch; a++ {
		if _, ok1 := exactRate(a); ok1 {
			if _, ok2 := exactRate(n - a); ok2 {
				return a, true
			}
		}
	}
	return 0, false
}

// floorRate returns the largest rate r with int(1/r) >= n, for a count
// splitRate cannot split: a truncating server (statsd_exporter) then
// repeats the value exactly n times, and a weighing one is off by less
// than one part in 10¹⁵.
func floorRate(n uint64) float64 {
	f := float64(n)
	r := 1 / f
	for 1/r < f {
		r = math.Nextafter(r, 0)
	}
	return r
}
