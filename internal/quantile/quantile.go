// Package quantile estimates quantiles from a distribution's buckets, for
// the places that show them (the CLI's tables, the /debug/stats page).
package quantile

import "math"

// Estimate returns the q-quantile of a distribution with the given bounds
// and per-bucket counts (len(bounds)+1; bucket i holds bounds[i-1] <= v <
// bounds[i]) by linear interpolation inside the bucket that holds it, as
// Prometheus's histogram_quantile does, with the bucket's edges clamped to
// the observed min and max (so the open first and last buckets have finite
// edges, and a bucket holding one value answers that value's range). NaN
// for an empty distribution or mismatched lengths.
func Estimate[C int64 | uint64](bounds []float64, buckets []C, min, max, q float64) float64 {
	if len(buckets) != len(bounds)+1 {
		return math.NaN()
	}
	var count float64
	for _, c := range buckets {
		count += float64(c)
	}
	if count == 0 {
		return math.NaN()
	}
	rank := q * count
	var cum float64
	for i, c := range buckets {
		if c == 0 || cum+float64(c) < rank {
			cum += float64(c)
			continue
		}
		lo, hi := min, max
		if i > 0 {
			lo = math.Max(lo, bounds[i-1])
		}
		if i < len(bounds) {
			hi = math.Min(hi, bounds[i])
		}
		return lo + (hi-lo)*(rank-cum)/float64(c)
	}
	return max
}
