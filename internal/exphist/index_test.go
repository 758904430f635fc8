package exphist

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/zerostat/zerostat/internal/exphist/exphisttest"
	"github.com/zerostat/zerostat/internal/race"
)

// specialValues are the floats the issue names: powers of two, the
// extremes, subnormals, and their neighbours.
func specialValues() []float64 {
	vs := []float64{
		math.MaxFloat64, math.SmallestNonzeroFloat64, 0x1p-1022, // smallest normal
		math.Nextafter(0x1p-1022, 0), // largest subnormal
		0x1p-1073, 3 * 0x1p-1074, 0x1.8p-1050,
		1, math.Nextafter(1, 2), math.Nextafter(1, 0), 2, 3, 10, 100, 1e-9, 1e300,
		math.Sqrt2, math.Nextafter(math.Sqrt2, 0), math.Nextafter(math.Sqrt2, 2),
	}
	for e := -1074; e <= 1023; e++ {
		p := math.Ldexp(1, e)
		vs = append(vs, p, math.Nextafter(p, 0), math.Nextafter(p, math.Inf(1)))
	}
	return vs
}

// TestIndexOracle compares Index with the math/big oracle at every scale
// for the special values, random values across the whole float64 range
// (subnormals included), and their negations.
func TestIndexOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 1))
	vs := specialValues()
	n := 5000
	if testing.Short() || race.Enabled {
		n = 500
	}
	for range n {
		vs = append(vs, math.Float64frombits(r.Uint64()&^(1<<63|0x7ff<<52)|uint64(r.IntN(2047))<<52)) // any finite
		vs = append(vs, math.Float64frombits(r.Uint64()&mantMask|1))                                  // subnormal
		vs = append(vs, math.Exp(r.NormFloat64()*5))
	}
	for _, v := range vs {
		if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			continue
		}
		for scale := int32(MinScale); scale <= MaxScale; scale++ {
			want := oracleIndex(t, v, scale)
			if got := Index(v, scale); int64(got) != want || Index(-v, scale) != got {
				t.Fatalf("Index(%v (%#x), %d) = %d (negated: %d); want %d", v, math.Float64bits(v), scale, got, Index(-v, scale), want)
			}
		}
	}
}

// TestIndexExtremes pins the indexes of the extremes (worked by hand: at
// scale -10 the float64 range is buckets -2, -1 and 0).
func TestIndexExtremes(t *testing.T) {
	for _, c := range []struct {
		v     float64
		scale int32
		want  int32
	}{
		{math.MaxFloat64, -10, 0},
		{math.MaxFloat64, 0, 1023},
		{math.MaxFloat64, 20, 1023<<20 + 1<<20 - 1},
		{math.SmallestNonzeroFloat64, -10, -2},
		{math.SmallestNonzeroFloat64, 0, -1075},
		{math.SmallestNonzeroFloat64, 20, -1074<<20 - 1},
		{1, -10, -1},
		{1, 0, -1},
		{1, 20, -1},
		{math.Nextafter(1, 2), 20, 0},
		{2, 0, 0},
		{4, 0, 1},
		{4, 1, 3},
		{4, -1, 0},
		{5, -1, 1},
		{0x1p-1022, 0, -1023},
	} {
		if got := Index(c.v, c.scale); got != c.want {
			t.Errorf("Index(%v, %d) = %d; want %d", c.v, c.scale, got, c.want)
		}
	}
}

// TestIndexBoundaries checks the floats on either side of every bucket
// boundary of every positive scale (all boundaries of scale 20, which
// include every coarser scale's), in [1, 2) and shifted to other
// exponents: the float just below 2^(r/2^20) must be in bucket r-1, the
// one above in bucket r. It checks exactSub, Index's exact path, on the
// same floats directly, since Index reaches it only near a boundary.
func TestIndexBoundaries(t *testing.T) {
	top := MaxScale
	if testing.Short() || race.Enabled {
		top = 14
	}
	d, minDist := boundaryMantissas(top)
	t.Logf("scale %d: the closest float64 to a boundary is %.3g ulps from it", top, minDist)
	if minDist < 0x1p-40 {
		t.Fatalf("a boundary is %g ulps from a float64: exactSub's precision argument fails", minDist)
	}
	exps := []int32{0, -1022, 1023, -500, 7}
	for r := 1; r < len(d); r++ {
		for side := uint64(0); side < 2; side++ {
			m := d[r] + side // below (side 0) or above (side 1) the boundary
			x := math.Float64frombits(m | expBias<<mantBits)
			wantSub := int32(r) - 1 + int32(side)
			if got := exactSub(x, int32(top)); got != wantSub {
				t.Fatalf("exactSub(%v, %d) = %d; want %d", x, top, got, wantSub)
			}
			for shift := int32(0); shift <= int32(top)-1; shift++ {
				if r&(1<<shift-1) != 0 {
					break // not a boundary of scale top-shift
				}
				scale := int32(top) - shift
				ws := int32(r)>>shift - 1 + int32(side)
				for _, e := range exps {
					v := math.Float64frombits(m | uint64(e+expBias)<<mantBits)
					if got, want := Index(v, scale), e<<scale+ws; got != want {
						t.Fatalf("Index(%v, %d) = %d; want %d (boundary %d/2^%d, side %d)", v, scale, got, want, r>>shift, scale, side)
					}
				}
			}
		}
	}
}

// TestIndexNoTolerance checks the claim in Index's comment that the
// OpenTelemetry SDK's getBin (copied here) differs near boundaries, so
// that the exact path is tested where it matters: a sample of floats
// next to boundaries of scale 10 must include some getBin misplaces.
func TestIndexNoTolerance(t *testing.T) {
	const scale = 10
	d, _ := boundaryMantissas(scale)
	differ := 0
	for r := 1; r < len(d); r++ {
		for side := uint64(0); side < 2; side++ {
			v := math.Float64frombits((d[r] + side) | expBias<<mantBits)
			if exphisttest.SDKGetBin(v, scale) != Index(v, scale) {
				differ++
			}
		}
	}
	t.Logf("getBin misplaces %d of the %d floats next to a boundary of scale %d", differ, 2*(len(d)-1), scale)
	if differ == 0 {
		t.Fatal("getBin agrees everywhere: the boundary test may not reach exactSub")
	}
}

var sinkIndex int32

func BenchmarkIndex(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	vs := make([]float64, 1024)
	for i := range vs {
		vs[i] = math.Exp(r.NormFloat64() * 3)
	}
	for _, scale := range []int32{-2, 0, 3, 8, 12, 20} {
		b.Run("scale="+itoa(int(scale)), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				sinkIndex += Index(vs[i&1023], scale)
				i++
			}
		})
	}
	b.Run("scale=12/sdk", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			sinkIndex += exphisttest.SDKGetBin(vs[i&1023], 12)
			i++
		}
	})
}

func itoa(i int) string {
	if i < 0 {
		return "-" + itoa(-i)
	}
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// FuzzIndex compares Index with the math/big oracle on any float64 bits
// and scale.
func FuzzIndex(f *testing.F) {
	for _, v := range specialValues()[:20] {
		f.Add(math.Float64bits(v), int8(20))
		f.Add(math.Float64bits(v), int8(-3))
	}
	f.Fuzz(func(t *testing.T, b uint64, s int8) {
		v := math.Float64frombits(b)
		scale := int32(s)%(MaxScale-MinScale+1) + MinScale
		if scale < MinScale {
			scale += MaxScale - MinScale + 1
		}
		if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return
		}
		if got, want := Index(v, scale), oracleIndex(t, v, scale); int64(got) != want {
			t.Fatalf("Index(%v, %d) = %d; want %d", v, scale, got, want)
		}
	})
}
