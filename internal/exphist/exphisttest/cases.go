package exphisttest

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Case is one seeded workload: values recorded in order into a histogram
// of MaxSize buckets per sign and scale at most MaxScale, read after each
// of Cuts (ascending prefix lengths, the last len(Values)): cumulative
// reads see Values[:cut], delta reads Values[prev cut:cut].
type Case struct {
	Name              string
	MaxSize, MaxScale int32
	Values            []float64
	Cuts              []int
}

// Sizes and Scales are the MaxSize and MaxScale variants every generator
// runs with: the smallest MaxSize allowed, a tiny one and the default;
// the scale range's ends, 0 and a middle one.
var (
	Sizes  = []int32{2, 4, 160}
	Scales = []int32{-10, 0, 5, 20}
)

type generator struct {
	name string
	gen  func(r *rand.Rand, n int, maxScale int32) []float64
}

// generators are the workloads. n is the number of values.
var generators = []generator{
	{"narrow", func(r *rand.Rand, n int, _ int32) []float64 { // a 1% range: a high scale
		return fill(n, func() float64 { return 100 + r.Float64() })
	}},
	{"wide", func(r *rand.Rand, n int, _ int32) []float64 { // about 1e-20..1e20
		return fill(n, func() float64 { return math.Exp(r.NormFloat64() * 15) })
	}},
	{"latency", func(r *rand.Rand, n int, _ int32) []float64 { // lognormal seconds, 1 ms..100 s
		return fill(n, func() float64 { return math.Exp(r.NormFloat64()*1.5 - 3) })
	}},
	{"constant", func(r *rand.Rand, n int, _ int32) []float64 { // one value: the maximum scale throughout
		return fill(n, func() float64 { return 0.25 * 3 })
	}},
	{"zeros", func(r *rand.Rand, n int, _ int32) []float64 { // 0, -0 and small values
		return fill(n, func() float64 {
			switch r.IntN(4) {
			case 0:
				return 0
			case 1:
				return math.Copysign(0, -1)
			}
			return r.Float64() * 1e-3
		})
	}},
	{"zeros-only", func(r *rand.Rand, n int, _ int32) []float64 {
		return fill(n, func() float64 { return math.Copysign(0, float64(r.IntN(2))-0.5) })
	}},
	{"mixed-signs", func(r *rand.Rand, n int, _ int32) []float64 {
		return fill(n, func() float64 { return r.NormFloat64() * 1000 })
	}},
	{"negative-only", func(r *rand.Rand, n int, _ int32) []float64 {
		return fill(n, func() float64 { return -math.Exp(r.NormFloat64() * 4) })
	}},
	{"integers", func(r *rand.Rand, n int, _ int32) []float64 { // the SDK sums whole numbers as int64
		return fill(n, func() float64 { return float64(r.IntN(100000)) })
	}},
	{"large-sum", func(r *rand.Rand, n int, _ int32) []float64 { // big whole and fractional values
		return fill(n, func() float64 {
			if r.IntN(2) == 0 {
				return float64(r.Int64N(1 << 52))
			}
			return 1e15 + r.Float64()*1e6
		})
	}},
	{"powers-of-two", func(r *rand.Rand, n int, _ int32) []float64 { // exact boundaries at every scale
		return fill(n, func() float64 {
			p := math.Ldexp(1, r.IntN(2098)-1074)
			if r.IntN(4) == 0 {
				p = -p
			}
			return p
		})
	}},
	{"powers-of-two-narrow", func(r *rand.Rand, n int, _ int32) []float64 {
		return fill(n, func() float64 { return math.Ldexp(1, r.IntN(40)-20) })
	}},
	{"base-powers", func(r *rand.Rand, n int, maxScale int32) []float64 {
		// The floats on either side of base^i (the boundaries of the
		// maximum scale, irrational above 0) for i in a window narrow
		// enough for maxSize 160 to stay at that scale.
		s := max(maxScale, 1)
		i0 := r.IntN(1 << s)
		return fill(n, func() float64 {
			b := math.Exp2(float64(i0+r.IntN(150)) / float64(int64(1)<<s))
			switch r.IntN(3) {
			case 0:
				return math.Nextafter(b, 0)
			case 1:
				return math.Nextafter(b, 4)
			}
			return b
		})
	}},
	{"subnormals", func(r *rand.Rand, n int, _ int32) []float64 {
		return fill(n, func() float64 {
			v := math.Float64frombits(r.Uint64()&(1<<52-1) | 1)
			switch r.IntN(8) {
			case 0:
				v = math.SmallestNonzeroFloat64
			case 1:
				v = -v
			}
			return v
		})
	}},
	{"extremes", func(r *rand.Rand, n int, _ int32) []float64 {
		ext := []float64{math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64,
			0x1p-1022, math.Nextafter(0x1p-1022, 0), 1, 0x1p-1024, 0x1p1023, 0}
		return fill(n, func() float64 { return ext[r.IntN(len(ext))] })
	}},
	{"forced-downscales", func(r *rand.Rand, n int, _ int32) []float64 {
		// A contrast growing by a small factor at each value, alternately
		// upwards and downwards: a downscale of one step at a time.
		vs := make([]float64, n)
		hi, lo := 1.0, 1.0
		for i := range vs {
			if i%2 == 0 {
				hi *= 1 + r.Float64()*0.01
				vs[i] = hi
			} else {
				lo /= 1 + r.Float64()*0.01
				vs[i] = lo
			}
		}
		return vs
	}},
	{"non-finite", func(r *rand.Rand, n int, _ int32) []float64 {
		return fill(n, func() float64 {
			switch r.IntN(6) {
			case 0:
				return math.NaN()
			case 1:
				return math.Inf(1)
			case 2:
				return math.Inf(-1)
			}
			return r.NormFloat64()
		})
	}},
}

func fill(n int, f func() float64) []float64 {
	vs := make([]float64, n)
	for i := range vs {
		vs[i] = f()
	}
	return vs
}

// Cases returns every generator at every MaxSize and MaxScale variant,
// seeded by the case's position; n values each, read at 4 cuts.
func Cases(n int) []Case {
	var cs []Case
	seed := uint64(0)
	for _, g := range generators {
		for _, size := range Sizes {
			for _, scale := range Scales {
				seed++
				r := rand.New(rand.NewPCG(45, seed))
				vs := g.gen(r, n, scale)
				cs = append(cs, Case{
					Name:    fmt.Sprintf("%s/size=%d/scale=%d", g.name, size, scale),
					MaxSize: size, MaxScale: scale,
					Values: vs,
					Cuts:   []int{n / 10, n / 3, n * 2 / 3, n},
				})
			}
		}
	}
	return cs
}
