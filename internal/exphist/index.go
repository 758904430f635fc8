package exphist

import (
	"math"
	"math/bits"
)

// Scale limits (the OpenTelemetry SDK's expoMinScale and expoMaxScale,
// go.opentelemetry.io/otel/sdk/metric/internal/aggregate): at scale 20 a
// bucket index of the largest float64 still fits an int32 (1023<<20 + 2^20
// - 1), and at scale -10 the whole float64 range is 3 buckets per sign
// (indexes -2, -1 and 0).
const (
	MinScale = -10
	MaxScale = 20
)

const (
	mantBits = 52
	mantMask = 1<<mantBits - 1
	expBias  = 1023

	// tableScale is the finest scale of the lookup tables (tables.go):
	// below it, and at it, an index costs two table loads and a compare;
	// above it, a short polynomial too (see polySub). 8 is Prometheus's finest
	// native-histogram schema; tables of 2^8 boundaries and 2^9 segments
	// are 2.5 KB.
	tableScale = 8

	// logTolerance: polySub's estimate is within 2^-30 of the true
	// 2^scale·log2 of the mantissa; when it lies closer than this to an
	// integer, the estimate cannot tell on which side of a bucket boundary
	// the value is, and exactSub decides. The margin of 2^4 over the
	// error costs the slow path for about one value in 2^25.
	logTolerance = 0x1p-26
)

// Index returns the bucket index of |v| at the given scale, exactly as
// the OpenTelemetry data model defines it: the i with base^i < |v| <=
// base^(i+1), base = 2^(2^-scale)
// (https://opentelemetry.io/docs/specs/otel/metrics/data-model/#exponentialhistogram).
// v must be finite and non-zero and scale within MinScale..MaxScale.
//
// Exact for every float64, subnormals included (no rounding to the
// nearest normal value, which the specification would allow), with no
// tolerance near a boundary: powers of two from the exponent, scales up
// to 8 from two table lookups, finer scales from those and a series for
// the logarithm within the scale-8 bucket, checked against the boundary
// (exactSub) for values within about 2^-26 of a bucket of one. This differs from the OpenTelemetry Go SDK's getBin,
// which takes the logarithm at face value and so puts about 3% of the
// floats within 2 ulps of an irrational boundary (scale 5 and finer) in
// the neighbouring bucket; the specification allows that ("producers are
// not required to perform an exact computation").
//
// Safe for concurrent use; no allocation. Cost (BenchmarkIndex, one
// core of a shared 2-core VM): about 2.5 ns at scales up to 8, 8 ns above
// (the SDK's getBin: 16 ns).
func Index(v float64, scale int32) int32 {
	b := math.Float64bits(v)
	e := int32(b>>mantBits) & 0x7ff
	m := b & mantMask
	if e == 0 {
		e, m = subnormal(m)
	}
	e -= expBias // |v| = 1.m × 2^e
	if m == 0 {
		// A power of two is the upper boundary of its bucket.
		if scale <= 0 {
			return (e - 1) >> -scale
		}
		return e<<scale - 1
	}
	if scale <= 0 {
		return e >> -scale
	}
	if scale <= tableScale {
		return e<<scale + int32(tableSub(m))>>(tableScale-scale)
	}
	return e<<scale + polySub(m, scale)
}

// subnormal normalises the mantissa m (not 0) of a subnormal float:
// returns the biased exponent (1 - shift, at most 0) and the mantissa
// without its leading bit.
func subnormal(m uint64) (int32, uint64) {
	shift := bits.LeadingZeros64(m) - (63 - mantBits)
	return int32(1 - shift), (m << shift) & mantMask
}

// tableSub returns the sub-index at tableScale of the mantissa 1.m (m not
// 0): the largest r with 2^(r/2^tableScale) < 1.m. The segment of the top
// tableScale+1 bits of m gives r or r-1: the segments are half a bucket's
// narrowest width (2^-(tableScale+1) against ln(2)·2^-tableScale), so at
// most one boundary falls in a segment.
func tableSub(m uint64) uint8 {
	r := subSegment[(m>>(mantBits-tableScale-1))&uint64(len(subSegment)-1)]
	// r+1 if m > subBound[r+1], without a branch (it would be taken
	// at random): both are below 2^53, so the difference's top bit is
	// the comparison.
	return r + uint8((subBound[int(r)+1]-m)>>63)
}

// polySub returns the sub-index at scale (tableScale < scale <= MaxScale)
// of the mantissa x = 1.m (m not 0): floor(2^scale·log2(x)), the spec's
// ceil(...)-1 since x is not a power of two. The tables give the bucket r
// of x at tableScale and the float b just below its lower boundary (2^-52
// under it at most); within that bucket, 2^scale·log2(x/b) =
// 2·atanh(t)·2^scale/ln(2) with t = (x-b)/(x+b) < 0.0014, from atanh's
// series to t^5 (the rest is under 2^-68). The estimate z is within 2^-31
// of 2^scale·log2(x/B), B the true boundary (b's error, 2^-52·2^20/ln(2),
// dominates; roundings add under 2^-39, and a fused multiply-add only
// lowers them); where z lies closer than logTolerance to an integer, it
// cannot tell on which side of a boundary x is, and exactSub decides. No
// logarithm call: the table path plus one division and six multiplies.
func polySub(m uint64, scale int32) int32 {
	r := tableSub(m)
	x := math.Float64frombits(m | expBias<<mantBits)
	b := math.Float64frombits(subBound[r] | expBias<<mantBits)
	t := (x - b) / (x + b) // x-b is exact (Sterbenz)
	t2 := t * t
	z := t * atanhFactors[scale&31] * (1 + t2*(1.0/3+t2*(1.0/5)))
	k := int32(z) // z >= 0: truncation is floor
	if f := z - float64(k); f < logTolerance || f > 1-logTolerance {
		return exactSub(x, scale)
	}
	return int32(r)<<(scale-tableScale) + k
}

// atanhFactors[s] = 2·2^s/ln(2) (the spec's math.Ldexp(math.Log2E, s),
// doubled for polySub's 2·atanh; 32 entries so that a masked index needs
// no bounds check).
var atanhFactors = [32]float64{
	2 * math.Log2E * (1 << 0), 2 * math.Log2E * (1 << 1), 2 * math.Log2E * (1 << 2),
	2 * math.Log2E * (1 << 3), 2 * math.Log2E * (1 << 4), 2 * math.Log2E * (1 << 5),
	2 * math.Log2E * (1 << 6), 2 * math.Log2E * (1 << 7), 2 * math.Log2E * (1 << 8),
	2 * math.Log2E * (1 << 9), 2 * math.Log2E * (1 << 10), 2 * math.Log2E * (1 << 11),
	2 * math.Log2E * (1 << 12), 2 * math.Log2E * (1 << 13), 2 * math.Log2E * (1 << 14),
	2 * math.Log2E * (1 << 15), 2 * math.Log2E * (1 << 16), 2 * math.Log2E * (1 << 17),
	2 * math.Log2E * (1 << 18), 2 * math.Log2E * (1 << 19), 2 * math.Log2E * (1 << 20),
}

// exactSub returns floor(2^scale·log2(x)) for x in (1, 2), scale >= 1,
// without a logarithm: x^(2^scale) by scale squarings in double-double
// arithmetic, halved back into [1, 2) whenever it reaches 2, counting the
// halvings. After squaring i the count is floor(2^i·log2(x)). Squaring
// doubles both the relative error (a double-double's 2^-104 to start
// with) and x's relative distance to a boundary; the closest float64 to
// a boundary of scale 20 or coarser is 2^-77.5 from it (TestIndexBoundaries
// measures it, and checks every such boundary's neighbouring floats), so
// the error stays 2^26 times smaller than the distance at every step.
// Cost: about 100 ns; taken for about one value in 2^25.
//
//go:noinline
func exactSub(x float64, scale int32) int32 {
	hi, lo := x, 0.0
	var k int32
	for range scale {
		p := hi * hi
		e := math.FMA(hi, hi, -p) + 2*hi*lo
		hi = p + e
		lo = e - (hi - p)
		k <<= 1
		if hi > 2 || hi == 2 && lo >= 0 {
			hi *= 0.5
			lo *= 0.5
			k++
		}
	}
	return k
}
