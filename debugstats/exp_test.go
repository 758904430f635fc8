package debugstats

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/internal/exphist"
)

// recorded records values into a histogram of maxSize buckets and
// maxScale and returns its snapshot.
func recorded(t testing.TB, maxSize, maxScale int32, values ...float64) *exphist.Snapshot {
	t.Helper()
	h, err := exphist.New(maxSize, maxScale)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		h.Record(v)
	}
	s := new(exphist.Snapshot)
	h.Snapshot(s)
	return s
}

// TestBoundary: exphist.Boundary(i) is the upper edge of bucket i-1 as
// exphist.Index (the data model's exact index) places values: exactly at
// scales up to 0, within an ulp above.
func TestBoundary(t *testing.T) {
	for scale := int32(exphist.MinScale); scale <= exphist.MaxScale; scale++ {
		for _, i := range []int32{-1000, -37, -2, -1, 0, 1, 2, 5, 1000} {
			if scale < 0 {
				i >>= -scale // keep 2^(i·2^-scale) within float64
			}
			b := exphist.Boundary(i, scale)
			if b == 0 || math.IsInf(b, 0) {
				continue
			}
			got := exphist.Index(b, scale)
			if scale <= 0 && got != i-1 {
				t.Errorf("scale %d: Index(exphist.Boundary(%d) = %v) = %d; want %d", scale, i, b, got, i-1)
			}
			if scale > 0 && got != i-1 && got != i {
				t.Errorf("scale %d: Index(exphist.Boundary(%d) = %v) = %d; want %d or %d", scale, i, b, got, i-1, i)
			}
			for _, x := range []float64{math.Nextafter(b, 0) * (1 - 1e-15), b * (1 + 1e-15)} {
				want := i - 1
				if x > b {
					want = i
				}
				if got := exphist.Index(x, scale); got != want {
					t.Errorf("scale %d: Index(%v, near exphist.Boundary(%d) = %v) = %d; want %d", scale, x, i, b, got, want)
				}
			}
		}
	}
}

// TestExpQuantileWithinItsBucket: for seeded workloads of every sign, at
// scales from the finest to the coarsest, each estimate lies in the
// bucket that holds the true quantile (the sorted values' ceil(q·n)-th):
// the bound Prometheus's histogram_quantile gives a native histogram.
func TestExpQuantileWithinItsBucket(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 1))
	for _, maxSize := range []int32{4, 20, 160} {
		for _, maxScale := range []int32{-2, 0, 3, 20} {
			for _, gen := range []func() float64{
				func() float64 { return math.Exp(r.NormFloat64()*1.5 - 3) }, // latency
				func() float64 { return -math.Exp(r.NormFloat64()) },        // negative
				func() float64 { // mixed, with zeros
					switch r.IntN(5) {
					case 0:
						return 0
					case 1:
						return -r.ExpFloat64()
					}
					return r.ExpFloat64() * 100
				},
				func() float64 { return 100 + r.Float64() }, // narrow: a high scale
			} {
				values := make([]float64, 1+r.IntN(500))
				for i := range values {
					values[i] = gen()
				}
				s := recorded(t, maxSize, maxScale, values...)
				slices.Sort(values)
				for _, q := range []float64{0, 0.01, 0.25, 0.5, 0.9, 0.99, 1} {
					k := max(0, int(math.Ceil(q*float64(len(values))))-1)
					truth := values[k]
					got := expQuantile(s, q)
					if !sameBucket(got, truth, s.Scale) {
						t.Fatalf("size %d scale %d (at %d), %d values: q%v = %v; the truth %v is in another bucket",
							maxSize, maxScale, s.Scale, len(values), q, got, truth)
					}
					if got < s.Min || got > s.Max {
						t.Fatalf("q%v = %v outside [min %v, max %v]", q, got, s.Min, s.Max)
					}
				}
			}
		}
	}
}

// sameBucket reports whether a and b are in the same bucket at scale
// (within an ulp of a shared edge: boundary's rounding).
func sameBucket(a, b float64, scale int32) bool {
	if a == 0 || b == 0 {
		return a == b
	}
	if (a < 0) != (b < 0) {
		return false
	}
	ia, ib := exphist.Index(a, scale), exphist.Index(b, scale)
	if ia == ib {
		return true
	}
	for _, x := range []float64{math.Nextafter(a, 0), math.Nextafter(a, math.Inf(int(math.Copysign(1, a))))} {
		if exphist.Index(x, scale) == ib {
			return true
		}
	}
	return false
}

// TestExpQuantileInterpolation: within a bucket the estimate is geometric
// (Prometheus's for exponential buckets), mirrored for negative buckets;
// the zero bucket answers 0; edges are clamped to min and max.
func TestExpQuantileInterpolation(t *testing.T) {
	// Scale 0: buckets (1,2], (2,4], (4,8]. Values 3, 3, 5, 5 with min 3
	// and max 5: p25 is half-way through (2,4] clamped to [3,4]:
	// sqrt(3·4); p75 half-way through (4,8] clamped to [4,5]: sqrt(20).
	s := recorded(t, 160, 0, 3, 3, 5, 5)
	for _, c := range []struct{ q, want float64 }{
		{0, 3}, {0.25, math.Sqrt(12)}, {0.5, 4}, {0.75, math.Sqrt(20)}, {1, 5},
	} {
		if got := expQuantile(s, c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("q%v = %v; want %v", c.q, got, c.want)
		}
	}
	// The mirror image.
	n := recorded(t, 160, 0, -3, -3, -5, -5)
	for _, c := range []struct{ q, want float64 }{
		{0, -5}, {0.25, -math.Sqrt(20)}, {0.5, -4}, {0.75, -math.Sqrt(12)}, {1, -3},
	} {
		if got := expQuantile(n, c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("negative q%v = %v; want %v", c.q, got, c.want)
		}
	}
	z := recorded(t, 160, 0, -1, 0, 0, 1)
	if got := expQuantile(z, 0.5); got != 0 {
		t.Errorf("zero bucket: q0.5 = %v; want 0", got)
	}
	one := recorded(t, 160, 20, 0.3, 0.3)
	if got := expQuantile(one, 0.99); got != 0.3 {
		t.Errorf("one value: %v; want 0.3", got)
	}
	if got := expQuantile(recorded(t, 160, 20), 0.5); !math.IsNaN(got) {
		t.Errorf("empty: %v; want NaN", got)
	}
}

// TestExpChart: bars in ascending order of value (negative buckets, the
// zero bucket, positive buckets), titled with the data model's bucket
// rule; a histogram of more buckets than maxExpBars drawn at a lower
// scale with the same counts.
func TestExpChart(t *testing.T) {
	s := recorded(t, 160, 0, -3, 0, 0, 1.5, 3, 3, 5)
	c := expChart(s)
	var titles []string
	for _, b := range c.Bars {
		titles = append(titles, b.Title)
	}
	want := []string{"[-4, -2): 1 (14.3%)", "0: 2 (28.6%)", "(1, 2]: 1 (14.3%)", "(2, 4]: 2 (28.6%)", "(4, 8]: 1 (14.3%)"}
	if !slices.Equal(titles, want) {
		t.Errorf("bars %q;\nwant %q", titles, want)
	}
	var ticks []string
	for _, k := range c.Ticks {
		ticks = append(ticks, k.Text)
	}
	if !slices.Equal(ticks, []string{"-2", "1", "2", "4"}) {
		t.Errorf("ticks %q", ticks)
	}
	// p50: rank 3.5 of 7, half-way (geometrically) through (1, 2].
	if len(c.Marks) != 2 || c.Marks[0].Title != "p50 ≈ 1.414" {
		t.Errorf("marks %+v", c.Marks)
	}
	if !strings.Contains(c.Caption, "4 buckets at scale 0, 7 values") {
		t.Errorf("caption %q", c.Caption)
	}

	// 160 buckets at a fine scale: drawn with at most maxExpBars bars
	// holding every count.
	var values []float64
	for i := range 2000 {
		values = append(values, 1+float64(i)/100)
	}
	wide := recorded(t, 160, 20, values...)
	w := expChart(wide)
	if len(w.Bars) > maxExpBars || len(w.Bars) < maxExpBars/2 {
		t.Errorf("%d bars; want at most %d (and not much fewer)", len(w.Bars), maxExpBars)
	}
	if !strings.Contains(w.Caption, "drawn at scale") || w.W > maxChart {
		t.Errorf("caption %q, width %d", w.Caption, w.W)
	}
	if wide.Positive.Counts[0] == 0 || len(wide.Positive.Counts) < 100 {
		t.Fatalf("snapshot not wide: %d buckets", len(wide.Positive.Counts))
	}
	var sum uint64
	for _, b := range w.Bars {
		var n uint64
		for _, f := range strings.Fields(b.Title[strings.Index(b.Title, ": ")+2:])[:1] {
			for _, ch := range f {
				n = n*10 + uint64(ch-'0')
			}
		}
		sum += n
	}
	if sum != 2000 {
		t.Errorf("bars hold %d values; want 2000", sum)
	}
	// Fine scales: edges with the digits that tell them apart.
	fine := expChart(recorded(t, 160, 20, 0.75, 0.75))
	if got := fine.Bars[0].Title; got != "(0.749999683, 0.750000179]: 2 (100.0%)" {
		t.Errorf("fine bar %q", got)
	}
}
