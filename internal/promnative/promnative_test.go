package promnative

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"

	"github.com/zerostat/zerostat/internal/exphist"
	"github.com/zerostat/zerostat/internal/race"
)

// snap records vals into a histogram of maxSize buckets at maxScale and
// returns its snapshot.
func snap(t testing.TB, maxSize, maxScale int32, vals ...float64) *exphist.Snapshot {
	t.Helper()
	h, err := exphist.New(maxSize, maxScale)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vals {
		h.Record(v)
	}
	s := new(exphist.Snapshot)
	h.Snapshot(s)
	return s
}

// promKey is client_golang v1.25.0's bucket key of v > 0 at schema
// (histogram.go, Observe): a transcription, with its bounds computed the
// way its nativeHistogramBounds table is.
func promKey(v float64, schema int32) int {
	frac, exp := math.Frexp(v)
	if schema > 0 {
		n := 1 << schema
		bounds := make([]float64, n)
		for i := range bounds {
			bounds[i] = math.Exp2(float64(i)/float64(n)) / 2 // 2^(i/n) / 2, in [0.5, 1)
		}
		// client_golang's table holds the exactly rounded 2^(i/n-1);
		// math.Exp2 is exact to an ulp, enough away from the values the
		// tests use.
		return sort.SearchFloat64s(bounds, frac) + (exp-1)*n
	}
	key := exp
	if frac == 0.5 {
		key--
	}
	offset := (1 << -schema) - 1
	return (key + offset) >> -schema
}

// makeBuckets is client_golang v1.25.0's makeBucketsFromMap, transcribed:
// the reference encoding of a sign's buckets.
func makeBuckets(buckets map[int]int64) ([]Span, []int64) {
	if len(buckets) == 0 {
		return nil, nil
	}
	var ii []int
	for k := range buckets {
		ii = append(ii, k)
	}
	sort.Ints(ii)
	var (
		spans     []Span
		deltas    []int64
		prevCount int64
		nextI     int
	)
	appendDelta := func(count int64) {
		spans[len(spans)-1].Length++
		deltas = append(deltas, count-prevCount)
		prevCount = count
	}
	for n, i := range ii {
		count := buckets[i]
		iDelta := int32(i - nextI)
		if n == 0 || iDelta > 2 {
			spans = append(spans, Span{Offset: iDelta})
		} else {
			for range iDelta {
				appendDelta(0)
			}
		}
		appendDelta(count)
		nextI = i + 1
	}
	return spans, deltas
}

// reference is what client_golang makes of vals at schema: the key of
// each value, counted, encoded by makeBuckets.
func reference(vals []float64, schema int32) (pos, neg map[int]int64, zero uint64) {
	pos, neg = map[int]int64{}, map[int]int64{}
	for _, v := range vals {
		switch {
		case v > 0:
			pos[promKey(v, schema)]++
		case v < 0:
			neg[promKey(-v, schema)]++
		default:
			zero++
		}
	}
	return pos, neg, zero
}

func checkAgainstReference(t *testing.T, name string, vals []float64, maxSize, maxScale int32) {
	t.Helper()
	s := snap(t, maxSize, maxScale, vals...)
	var h Histogram
	if err := h.Set(s); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	pos, neg, zero := reference(vals, h.Schema)
	ps, pd := makeBuckets(pos)
	ns, nd := makeBuckets(neg)
	if !reflect.DeepEqual(norm(h.PositiveSpans), ps) || !reflect.DeepEqual(norm64(h.PositiveDeltas), pd) {
		t.Errorf("%s: schema %d positive %v %v; client_golang %v %v", name, h.Schema, h.PositiveSpans, h.PositiveDeltas, ps, pd)
	}
	if !reflect.DeepEqual(norm(h.NegativeSpans), ns) || !reflect.DeepEqual(norm64(h.NegativeDeltas), nd) {
		t.Errorf("%s: schema %d negative %v %v; client_golang %v %v", name, h.Schema, h.NegativeSpans, h.NegativeDeltas, ns, nd)
	}
	if h.ZeroCount != zero || h.Count != uint64(len(vals)) {
		t.Errorf("%s: zero %d count %d; want %d %d", name, h.ZeroCount, h.Count, zero, len(vals))
	}
}

func norm(s []Span) []Span {
	if len(s) == 0 {
		return nil
	}
	return s
}

func norm64(s []int64) []int64 {
	if len(s) == 0 {
		return nil
	}
	return s
}

// The conversion gives client_golang's spans and deltas (its Observe's
// bucket keys, its makeBuckets encoding) for the same values, at every
// schema -4..8: the index shift (Prometheus j = OpenTelemetry i + 1),
// gaps of 1, 2 and 3 empty buckets, powers of two (on a boundary at
// every schema), negative values and zeros.
func TestSetMatchesClientGolang(t *testing.T) {
	cases := map[string][]float64{
		"one":            {1},
		"powers of two":  {0.25, 0.5, 1, 2, 4, 1024},
		"gap 1":          {1, 4},  // schema 0: keys 0 and 2
		"gap 2":          {1, 8},  // keys 0 and 3
		"gap 3":          {1, 16}, // keys 0 and 4: a new span
		"gaps mixed":     {1, 4, 32, 64, 1 << 20, 1 << 21},
		"negatives":      {-1, -3, -3, -100, -1e-3},
		"both signs":     {-2, -2, 0, 0, 0, 3, 5, 1e6},
		"tiny and large": {1e-300, 1e300},
	}
	for name, vals := range cases {
		for scale := int32(-4); scale <= 8; scale++ {
			checkAgainstReference(t, name, vals, 160, scale)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		n := 1 + r.IntN(300)
		vals := make([]float64, n)
		spread := math.Exp2(float64(r.IntN(40)))
		for j := range vals {
			vals[j] = math.Exp(r.NormFloat64()*math.Log(spread)) * float64(1-2*r.IntN(2))
			if r.IntN(20) == 0 {
				vals[j] = 0
			}
		}
		checkAgainstReference(t, fmt.Sprint("random ", i), vals, int32(140+r.IntN(100)), int32(-4+r.IntN(13)))
	}
}

// Above schema 8 the snapshot is lowered to 8: the same buckets as a
// histogram recording at most at scale 8.
func TestScale20DownscaledTo8(t *testing.T) {
	vals := []float64{1, 1.001, 1.002, 1.1, 1.2, -1.1, -1.15, 0}
	s := snap(t, 160, 20, vals...)
	if s.Scale <= 8 {
		t.Fatalf("fixture at scale %d; want above 8", s.Scale)
	}
	var got, want Histogram
	if err := got.Set(s); err != nil {
		t.Fatal(err)
	}
	if err := want.Set(snap(t, 160, 8, vals...)); err != nil {
		t.Fatal(err)
	}
	if got.Schema != 8 || !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v; want %+v", got, want)
	}
	if s.Scale != 8 {
		t.Errorf("snapshot left at scale %d; Set lowers it to 8", s.Scale)
	}
}

func TestEdgeInputs(t *testing.T) {
	var h Histogram
	// Empty: no bucket, count 0; Exposition gives it client_golang's
	// no-op span, remote write nothing.
	if err := h.Set(snap(t, 160, 20)); err != nil {
		t.Fatal(err)
	}
	if !h.Empty() || h.Count != 0 || h.Schema != 8 {
		t.Errorf("empty: %+v", h)
	}
	if got := Exposition.positive(&h); !reflect.DeepEqual(got, []Span{{}}) {
		t.Errorf("empty: exposition spans %v; want one no-op span", got)
	}
	if got := RemoteWrite.positive(&h); len(got) != 0 {
		t.Errorf("empty: remote write spans %v; want none", got)
	}
	// Only zeros: the zero count, no buckets (and no no-op span).
	if err := h.Set(snap(t, 160, 20, 0, 0, math.Copysign(0, -1))); err != nil {
		t.Fatal(err)
	}
	if h.ZeroCount != 3 || h.Count != 3 || len(h.PositiveSpans)+len(h.NegativeSpans) != 0 || Exposition.positive(&h) != nil {
		t.Errorf("zeros: %+v", h)
	}
	// Only negatives: negative buckets only.
	if err := h.Set(snap(t, 160, 0, -1, -2, -2)); err != nil {
		t.Fatal(err)
	}
	if want := []Span{{Offset: 0, Length: 2}}; !reflect.DeepEqual(h.NegativeSpans, want) ||
		!reflect.DeepEqual(h.NegativeDeltas, []int64{1, 1}) || len(h.PositiveSpans) != 0 || h.Sum != -5 {
		t.Errorf("negatives: %+v", h)
	}
	// NaN and infinities are not counted (exphist drops them).
	if err := h.Set(snap(t, 160, 0, math.NaN(), math.Inf(1), 4)); err != nil {
		t.Fatal(err)
	}
	if h.Count != 1 || !reflect.DeepEqual(h.PositiveSpans, []Span{{Offset: 2, Length: 1}}) {
		t.Errorf("non-finite: %+v", h)
	}
	// Scale -4 is a schema; every float64 fits in its 131 buckets.
	if err := h.Set(snap(t, 160, -4, math.SmallestNonzeroFloat64, math.MaxFloat64, 1)); err != nil || h.Schema != -4 {
		t.Errorf("scale -4: schema %d, %v", h.Schema, err)
	}
	// Below -4 there is no schema: at maxScale -5, or lowered to it.
	for _, s := range []*exphist.Snapshot{
		snap(t, 160, -5, 1),
		snap(t, 160, -10, 1),
		snap(t, 2, -4, 1, 1e10, 1e300), // 3 buckets at -4 do not fit in 2
	} {
		if s.Scale >= -4 {
			t.Fatalf("fixture at scale %d", s.Scale)
		}
		if err := h.Set(s); !errors.Is(err, ErrScale) || !h.Empty() || h.Count != 0 {
			t.Errorf("scale %d: %v, %+v; want ErrScale and an empty histogram", s.Scale, err, h)
		}
	}
}

// A bucket's count around an inner zero: deltas go to 0 and back.
func TestDeltasThroughEmptyBucket(t *testing.T) {
	b := exphist.Buckets{Offset: -3, Counts: []uint64{5, 0, 7, 0, 0, 0, 2, 0}}
	spans, deltas := AppendBuckets(nil, nil, &b)
	// Prometheus indexes -2, (-1 empty), 0, gap of 3, 4.
	if want := []Span{{-2, 3}, {3, 1}}; !reflect.DeepEqual(spans, want) {
		t.Errorf("spans %v; want %v", spans, want)
	}
	if want := []int64{5, -5, 7, -5}; !reflect.DeepEqual(deltas, want) {
		t.Errorf("deltas %v; want %v", deltas, want)
	}
}

func TestSetAppendAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	r := rand.New(rand.NewPCG(3, 4))
	hist := exphist.MustNew(160, 20)
	for range 10000 {
		hist.Record(r.ExpFloat64() * float64(1-2*r.IntN(2)))
	}
	var s exphist.Snapshot
	var h Histogram
	buf := make([]byte, 0, 4096)
	run := func() {
		hist.Snapshot(&s)
		if err := h.Set(&s); err != nil {
			t.Fatal(err)
		}
		buf = RemoteWrite.Append(Exposition.Append(buf[:0], &h), &h)
	}
	run()
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Errorf("%v allocs; want 0", n)
	}
}

// The bytes of a small histogram in both layouts, spelled out field by
// field (the benchmarks module decodes them with the official runtime).
func TestLayoutBytes(t *testing.T) {
	h := Histogram{Schema: -1, ZeroCount: 2, Count: 5, Sum: 9,
		PositiveSpans: []Span{{Offset: 0, Length: 2}}, PositiveDeltas: []int64{1, -1},
		NegativeSpans: []Span{{Offset: -3, Length: 1}}, NegativeDeltas: []int64{1}}
	expo := []byte{
		5<<3 | 0, 1, // schema -1: zigzag 1
		6<<3 | 1, 0, 0, 0, 0, 0, 0, 0, 0, // zero threshold 0
		7<<3 | 0, 2, // zero count
		9<<3 | 2, 4, 1<<3 | 0, 5, 2<<3 | 0, 1, // negative span {-3, 1}
		10<<3 | 2, 1, 2, // negative deltas [1]
		12<<3 | 2, 4, 1<<3 | 0, 0, 2<<3 | 0, 2, // positive span {0, 2}
		13<<3 | 2, 2, 2, 1, // positive deltas [1, -1]
	}
	rw := []byte{
		4<<3 | 0, 1,
		6<<3 | 0, 2,
		8<<3 | 2, 4, 1<<3 | 0, 5, 2<<3 | 0, 1,
		9<<3 | 2, 1, 2,
		11<<3 | 2, 2, 2<<3 | 0, 2, // offset 0 left out
		12<<3 | 2, 2, 2, 1,
	}
	for _, c := range []struct {
		l    *Layout
		want []byte
	}{{&Exposition, expo}, {&RemoteWrite, rw}} {
		got := c.l.Append(nil, &h)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("got  %v\nwant %v", got, c.want)
		}
		if n := c.l.Size(&h); n != len(got) {
			t.Errorf("Size %d; Append wrote %d", n, len(got))
		}
	}
	// Empty: the exposition's no-op span; remote write's zero count only.
	var e Histogram
	if got, want := Exposition.Append(nil, &e), []byte{5 << 3, 0, 6<<3 | 1, 0, 0, 0, 0, 0, 0, 0, 0, 7 << 3, 0,
		12<<3 | 2, 4, 1 << 3, 0, 2 << 3, 0}; !reflect.DeepEqual(got, want) || Exposition.Size(&e) != len(want) {
		t.Errorf("empty exposition %v; want %v", got, want)
	}
	if got, want := RemoteWrite.Append(nil, &e), []byte{6 << 3, 0}; !reflect.DeepEqual(got, want) || RemoteWrite.Size(&e) != len(want) {
		t.Errorf("empty remote write %v; want %v", got, want)
	}
}
