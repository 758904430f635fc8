package exphist_test

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/zerostat/zerostat/internal/exphist"
	"github.com/zerostat/zerostat/internal/exphist/exphisttest"
	"github.com/zerostat/zerostat/internal/race"
)

func cases(t testing.TB) []exphisttest.Case {
	n := 3000
	if testing.Short() || race.Enabled {
		n = 400
	}
	return exphisttest.Cases(n)
}

// fromModel returns the model's state as a Snapshot (Sum the plain running
// sum, SumLo not set).
func fromModel(m *exphisttest.Model, dropped uint64) exphist.Snapshot {
	s := exphist.Snapshot{
		Scale: m.Scale, ZeroCount: m.ZeroCount, Count: m.Count(),
		Positive: exphist.Buckets{Offset: m.PosOffset, Counts: m.Pos},
		Negative: exphist.Buckets{Offset: m.NegOffset, Counts: m.Neg},
		Sum:      m.Sum(), Min: math.Inf(1), Max: math.Inf(-1), Dropped: dropped,
	}
	if len(m.Pos) == 0 {
		s.Positive.Offset = 0
	}
	if len(m.Neg) == 0 {
		s.Negative.Offset = 0
	}
	if m.MinMaxSet {
		s.Min, s.Max = m.Min, m.Max
	}
	return s
}

// diff returns the first difference between got and want, "" if none:
// every field exactly (floats by their bits), but SumLo, and Sum only
// when exact (otherwise Min and Max by value: Merge may pick -0 or 0).
func diff(got, want *exphist.Snapshot, exact bool) string {
	switch {
	case got.Scale != want.Scale:
		return fmt.Sprintf("scale %d; want %d", got.Scale, want.Scale)
	case got.ZeroCount != want.ZeroCount:
		return fmt.Sprintf("zero count %d; want %d", got.ZeroCount, want.ZeroCount)
	case got.Count != want.Count:
		return fmt.Sprintf("count %d; want %d", got.Count, want.Count)
	case got.Positive.Offset != want.Positive.Offset || !slices.Equal(got.Positive.Counts, want.Positive.Counts):
		return fmt.Sprintf("positive %d %v; want %d %v", got.Positive.Offset, got.Positive.Counts, want.Positive.Offset, want.Positive.Counts)
	case got.Negative.Offset != want.Negative.Offset || !slices.Equal(got.Negative.Counts, want.Negative.Counts):
		return fmt.Sprintf("negative %d %v; want %d %v", got.Negative.Offset, got.Negative.Counts, want.Negative.Offset, want.Negative.Counts)
	case exact && (math.Float64bits(got.Min) != math.Float64bits(want.Min) || math.Float64bits(got.Max) != math.Float64bits(want.Max)),
		!exact && (got.Min != want.Min || got.Max != want.Max): // Merge: min(0, -0) may be either
		return fmt.Sprintf("min, max %v, %v; want %v, %v", got.Min, got.Max, want.Min, want.Max)
	case got.Dropped != want.Dropped:
		return fmt.Sprintf("dropped %d; want %d", got.Dropped, want.Dropped)
	case exact && math.Float64bits(got.Sum) != math.Float64bits(want.Sum):
		return fmt.Sprintf("sum %v; want %v", got.Sum, want.Sum)
	}
	if n := uint64(len(got.Positive.Counts)); n > 0 && (got.Positive.Counts[0] == 0 || got.Positive.Counts[n-1] == 0) {
		return "positive buckets begin or end with an empty one"
	}
	if n := uint64(len(got.Negative.Counts)); n > 0 && (got.Negative.Counts[0] == 0 || got.Negative.Counts[n-1] == 0) {
		return "negative buckets begin or end with an empty one"
	}
	return ""
}

func nonFinite(vs []float64) uint64 {
	var n uint64
	for _, v := range vs {
		if v-v != 0 {
			n++
		}
	}
	return n
}

// TestModel records every case into a Histogram and into the SDK's
// algorithm (exphisttest.Model) with exphist.Index as its index, and
// compares them at every cut: every field, the sum to the bit (both add in
// record order).
func TestModel(t *testing.T) {
	for _, c := range cases(t) {
		h := exphist.MustNew(c.MaxSize, c.MaxScale)
		m := exphisttest.NewModel(c.MaxSize, c.MaxScale, exphist.Index)
		var got exphist.Snapshot
		prev := 0
		for _, cut := range c.Cuts {
			for _, v := range c.Values[prev:cut] {
				h.Record(v)
				m.Record(v)
			}
			prev = cut
			h.Snapshot(&got)
			want := fromModel(m, nonFinite(c.Values[:cut])+uint64(m.Underflows))
			if d := diff(&got, &want, true); d != "" {
				t.Fatalf("%s, after %d values: %s", c.Name, cut, d)
			}
			if len(got.Positive.Counts) > int(c.MaxSize) || len(got.Negative.Counts) > int(c.MaxSize) {
				t.Fatalf("%s: more than %d buckets", c.Name, c.MaxSize)
			}
		}
	}
}

// TestSnapshotReset: each interval's SnapshotReset equals a fresh model
// of the interval's values (the SDK's delta: each interval at its own
// scale).
func TestSnapshotReset(t *testing.T) {
	for _, c := range cases(t) {
		h := exphist.MustNew(c.MaxSize, c.MaxScale)
		var got exphist.Snapshot
		prev := 0
		for _, cut := range c.Cuts {
			m := exphisttest.NewModel(c.MaxSize, c.MaxScale, exphist.Index)
			for _, v := range c.Values[prev:cut] {
				h.Record(v)
				m.Record(v)
			}
			h.SnapshotReset(&got)
			want := fromModel(m, nonFinite(c.Values[prev:cut])+uint64(m.Underflows))
			if d := diff(&got, &want, true); d != "" {
				t.Fatalf("%s, interval %d..%d: %s", c.Name, prev, cut, d)
			}
			prev = cut
		}
	}
}

// TestMerge splits each case's values at random among 1 to 5 histograms
// and merges their snapshots in a random order: the result must be what
// one histogram of every value gives (the sum within the rounding of the
// two orders), but for maxSize 2 histograms whose merged buckets need
// scale below -10 (see Snapshot.Merge).
func TestMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 2))
	for _, c := range cases(t) {
		k := 1 + r.IntN(5)
		parts := make([]*exphist.Histogram, k)
		for i := range parts {
			parts[i] = exphist.MustNew(c.MaxSize, c.MaxScale)
		}
		whole := exphist.MustNew(c.MaxSize, c.MaxScale)
		for _, v := range c.Values {
			whole.Record(v)
			parts[r.IntN(k)].Record(v)
		}
		var want, got, part exphist.Snapshot
		whole.Snapshot(&want)
		if want.Dropped != nonFinite(c.Values) {
			continue // scale underflow: a single histogram drops what the parts hold
		}
		for i, j := range r.Perm(k) {
			if i == 0 {
				parts[j].Snapshot(&got)
				continue
			}
			parts[j].Snapshot(&part)
			got.Merge(&part, c.MaxSize)
		}
		if d := diff(&got, &want, false); d != "" {
			t.Fatalf("%s, %d parts: %s", c.Name, k, d)
		}
		checkSum(t, c.Name, got.Sum, c.Values)
	}
}

// TestMergeEmpty: an empty snapshot, zero or read from a new histogram,
// neither lowers the other's scale nor changes it.
func TestMergeEmpty(t *testing.T) {
	h := exphist.MustNew(160, 20)
	for _, v := range []float64{1, 1.5, 3} {
		h.Record(v)
	}
	var want, got, empty exphist.Snapshot
	h.Snapshot(&want)
	exphist.MustNew(160, 20).Snapshot(&empty)
	for _, e := range []exphist.Snapshot{{}, empty} {
		want.CopyTo(&got)
		got.Merge(&e, 160)
		if d := diff(&got, &want, true); d != "" {
			t.Errorf("s.Merge(empty): %s", d)
		}
		got = e
		got.Merge(&want, 160)
		if d := diff(&got, &want, true); d != "" {
			t.Errorf("empty.Merge(s): %s", d)
		}
	}
}

// checkSum checks a sum added in another order than the values': within
// (n-1)·2^-53·Σ|v| of the plain running sum's exact value (each addition's
// rounding bound, twice).
func checkSum(t *testing.T, name string, sum float64, vs []float64) {
	t.Helper()
	var want, abs float64
	n := 0
	for _, v := range vs {
		if v-v == 0 {
			want += v
			abs += math.Abs(v)
			n++
		}
	}
	if math.IsInf(abs, 0) {
		return
	}
	if tol := 2 * float64(n) * 0x1p-53 * abs; math.Abs(sum-want) > tol {
		t.Fatalf("%s: sum %v; want %v within %g", name, sum, want, tol)
	}
}

// TestSub: a cumulative read minus an earlier one is the interval's
// values at the cumulative's scale: a model of the interval alone, its
// buckets lowered to that scale and trimmed; the sum within one rounding
// of the interval's own sum.
func TestSub(t *testing.T) {
	for _, c := range cases(t) {
		h := exphist.MustNew(c.MaxSize, c.MaxScale)
		var cur, prev exphist.Snapshot
		h.Snapshot(&prev)
		last := 0
		for _, cut := range c.Cuts {
			m := exphisttest.NewModel(c.MaxSize, c.MaxScale, exphist.Index)
			for _, v := range c.Values[last:cut] {
				h.Record(v)
				m.Record(v)
			}
			h.Snapshot(&cur)
			var next exphist.Snapshot
			cur.CopyTo(&next)
			if err := cur.Sub(&prev); err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			iv := fromModel(m, nonFinite(c.Values[last:cut])+uint64(m.Underflows))
			if iv.Dropped != nonFinite(c.Values[last:cut]) || prev.Dropped != nonFinite(c.Values[:last]) {
				next.CopyTo(&prev)
				last = cut
				continue // scale underflow: the interval alone fits where the cumulative did not
			}
			lower(&iv, cur.Scale)
			iv.Min, iv.Max = next.Min, next.Max
			if d := diff(&cur, &iv, false); d != "" {
				t.Fatalf("%s, interval %d..%d: %s", c.Name, last, cut, d)
			}
			// The double-doubles' difference: the interval's exact sum to
			// a few ulps, plus the running low part's own roundings.
			exact, abs := exactSum(c.Values[last:cut]), absSum(c.Values[:cut])
			tol := 4*ulp(exact) + float64(cut)*0x1p-100*abs
			if last == 0 {
				exact, tol = iv.Sum, 0 // nothing subtracted: the running sum itself
			}
			if math.Abs(cur.Sum-exact) > tol && !math.IsInf(next.Sum, 0) {
				t.Fatalf("%s, interval %d..%d: sum %v; want %v within %g", c.Name, last, cut, cur.Sum, exact, tol)
			}
			next.CopyTo(&prev)
			last = cut
		}
		var empty exphist.Snapshot
		exphist.MustNew(c.MaxSize, c.MaxScale).Snapshot(&empty)
		if err := empty.Sub(&prev); prev.Count > 0 && !errors.Is(err, exphist.ErrNotPrefix) {
			t.Fatalf("%s: Sub of a later read: %v; want ErrNotPrefix", c.Name, err)
		}
	}
}

// lower lowers s's buckets to scale (a copy: the model's slices are its
// own).
func lower(s *exphist.Snapshot, scale int32) {
	d := s.Scale - scale
	for _, b := range []*exphist.Buckets{&s.Positive, &s.Negative} {
		if len(b.Counts) == 0 {
			continue
		}
		start, end := b.Offset>>d, (b.Offset+int32(len(b.Counts))-1)>>d
		c := make([]uint64, end-start+1)
		for i, x := range b.Counts {
			c[(b.Offset+int32(i))>>d-start] += x
		}
		b.Offset, b.Counts = start, c
	}
	s.Scale = scale
}

func TestNewErrors(t *testing.T) {
	for _, c := range []struct {
		size, scale int32
		err         error
	}{
		{1, 20, exphist.ErrMaxSize}, {0, 0, exphist.ErrMaxSize}, {-5, 0, exphist.ErrMaxSize},
		{2, 21, exphist.ErrMaxScale}, {2, -11, exphist.ErrMaxScale},
		{2, -10, nil}, {2, 20, nil}, {160, 0, nil},
	} {
		h, err := exphist.New(c.size, c.scale)
		if err != c.err || (err == nil) != (h != nil) {
			t.Errorf("New(%d, %d) = %v, %v; want error %v", c.size, c.scale, h, err, c.err)
		}
	}
}

// TestScaleUnderflow pins the one case where a finite value is not
// counted, as in the SDK: maxSize 2 and positive values from below 2^-1024
// to at least 1 need 3 buckets at scale -10.
func TestScaleUnderflow(t *testing.T) {
	h := exphist.MustNew(2, 20)
	for _, v := range []float64{math.SmallestNonzeroFloat64, 0.5, math.MaxFloat64} {
		h.Record(v)
	}
	var s exphist.Snapshot
	h.Snapshot(&s)
	if s.Scale != -10 || s.Count != 2 || s.Dropped != 1 || s.Max != math.MaxFloat64 || s.Sum != math.MaxFloat64 ||
		s.Positive.Offset != -2 || !slices.Equal(s.Positive.Counts, []uint64{1, 1}) {
		t.Fatalf("got %+v", s)
	}
}

// exactSum returns the finite values' sum, rounded once (math/big at 2,200
// bits holds any sum of float64s exactly).
func exactSum(vs []float64) float64 {
	s := new(big.Float).SetPrec(2200)
	for _, v := range vs {
		if v-v == 0 {
			s.Add(s, big.NewFloat(v))
		}
	}
	f, _ := s.Float64()
	return f
}

func absSum(vs []float64) float64 {
	var a float64
	for _, v := range vs {
		if v-v == 0 {
			a += math.Abs(v)
		}
	}
	return a
}

func ulp(x float64) float64 {
	x = math.Abs(x)
	return math.Nextafter(x, math.Inf(1)) - x
}

// TestSubNotPrefix: a prev that is not an earlier read fails and leaves s
// as it was.
func TestSubNotPrefix(t *testing.T) {
	a, b := exphist.MustNew(160, 20), exphist.MustNew(160, 20)
	for _, v := range []float64{1.5, 3, 3} {
		a.Record(v)
	}
	for _, v := range []float64{1.5, 1.5} {
		b.Record(v)
	}
	var s, prev, before exphist.Snapshot
	a.Snapshot(&s)
	b.Snapshot(&prev)
	s.CopyTo(&before)
	if err := s.Sub(&prev); !errors.Is(err, exphist.ErrNotPrefix) {
		t.Fatalf("Sub: %v; want ErrNotPrefix", err)
	}
	if d := diff(&s, &before, true); d != "" {
		t.Fatalf("s changed: %s", d)
	}
	if a.MaxScale() != 20 {
		t.Fatal("accessors")
	}
}

// TestSeal: a sealed histogram turns records away (finite or not) and
// still reads; unsealed, it records again.
func TestSeal(t *testing.T) {
	h := exphist.MustNew(160, 20)
	h.Record(1)
	h.Seal()
	for _, v := range []float64{2, 0, math.NaN()} {
		if r := h.Record(v); r != exphist.Sealed {
			t.Fatalf("Record(%v) on a sealed histogram: %v; want Sealed", v, r)
		}
	}
	var s exphist.Snapshot
	h.Snapshot(&s)
	if s.Count != 1 || s.Dropped != 0 {
		t.Fatalf("sealed read: count %d, dropped %d; want 1, 0", s.Count, s.Dropped)
	}
	h.Unseal()
	if r := h.Record(2); r != exphist.Recorded {
		t.Fatalf("Record after Unseal: %v; want Recorded", r)
	}
	h.Snapshot(&s)
	if s.Count != 2 {
		t.Fatalf("count %d; want 2", s.Count)
	}
}

// TestContended: a record that finds another recorder holding the lock
// reports it; one that finds a reader does not.
func TestContended(t *testing.T) {
	h := exphist.MustNew(160, 20)
	const goroutines = 4
	var wg sync.WaitGroup
	var contended atomic.Int64
	gate := make(chan struct{})
	for range goroutines {
		wg.Go(func() {
			<-gate
			for i := range 20000 {
				if h.Record(float64(i%100)) == exphist.Contended {
					contended.Add(1)
				}
			}
		})
	}
	close(gate)
	wg.Wait()
	var s exphist.Snapshot
	h.Snapshot(&s)
	if s.Count != goroutines*20000 {
		t.Fatalf("count %d; want %d", s.Count, goroutines*20000)
	}
	t.Logf("%d of %d records contended", contended.Load(), s.Count)
}

// TestSize pins the struct's size class, which New's comment states
// (64-bit platforms).
func TestSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("32-bit platform")
	}
	// The 128-byte size class: 113 to 128 bytes.
	if got := unsafe.Sizeof(exphist.Histogram{}); got <= 112 || got > 128 {
		t.Fatalf("Sizeof(Histogram) = %d; want the 128-byte size class (update New's comment)", got)
	}
}

// TestDownscale: a snapshot lowered to each coarser scale equals the
// model's buckets lowered there; a finer scale changes nothing.
func TestDownscale(t *testing.T) {
	for _, c := range cases(t) {
		h := exphist.MustNew(c.MaxSize, c.MaxScale)
		for _, v := range c.Values {
			h.Record(v)
		}
		var s, got exphist.Snapshot
		h.Snapshot(&s)
		for scale := int32(exphist.MinScale); scale <= s.Scale+1; scale++ {
			s.CopyTo(&got)
			got.Downscale(scale)
			want := s
			want.Positive.Counts = slices.Clone(s.Positive.Counts)
			want.Negative.Counts = slices.Clone(s.Negative.Counts)
			if scale < s.Scale {
				lower(&want, scale)
			}
			if d := diff(&got, &want, true); d != "" {
				t.Fatalf("%s, Downscale(%d) from %d: %s", c.Name, scale, s.Scale, d)
			}
		}
	}
}
