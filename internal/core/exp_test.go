package core

import (
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zerostat/zerostat/internal/exphist"
)

// expCount returns an exponential series' cumulative count.
func expCount(s *Series) uint64 {
	var e exphist.Snapshot
	s.ReadExp(&e)
	return e.Count
}

// expWant formats, as readAll does, a default-size histogram of vs.
func expWant(vs ...float64) string {
	h := exphist.MustNew(exphist.DefaultMaxSize, exphist.DefaultMaxScale)
	for _, v := range vs {
		h.Record(v)
	}
	var e exphist.Snapshot
	h.Snapshot(&e)
	return fmt.Sprintf("n=%d sum=%v min=%v max=%v scale=%d zero=%d +%d%v -%d%v", e.Count, e.Sum, e.Min, e.Max,
		e.Scale, e.ZeroCount, e.Positive.Offset, e.Positive.Counts, e.Negative.Offset, e.Negative.Counts)
}

// oneHistogram is a single histogram of vs, as a series of an aggregator
// of maxSize and maxScale must read.
func oneHistogram(maxSize, maxScale int32, vs []float64) exphist.Snapshot {
	h := exphist.MustNew(maxSize, maxScale)
	for _, v := range vs {
		h.Record(v)
	}
	var e exphist.Snapshot
	h.Snapshot(&e)
	return e
}

// sameBuckets compares everything but the sum, whose rounding depends on
// the order the cells merged in; the sums must agree to a relative 1e-12.
func sameBuckets(got, want *exphist.Snapshot) error {
	if got.Count != want.Count || got.ZeroCount != want.ZeroCount || got.Scale != want.Scale ||
		got.Min != want.Min || got.Max != want.Max || got.Dropped != want.Dropped ||
		got.Positive.Offset != want.Positive.Offset || !slices.Equal(got.Positive.Counts, want.Positive.Counts) ||
		got.Negative.Offset != want.Negative.Offset || !slices.Equal(got.Negative.Counts, want.Negative.Counts) {
		return fmt.Errorf("got n=%d zero=%d scale=%d min=%v max=%v dropped=%d +%d%v -%d%v\nwant n=%d zero=%d scale=%d min=%v max=%v dropped=%d +%d%v -%d%v",
			got.Count, got.ZeroCount, got.Scale, got.Min, got.Max, got.Dropped, got.Positive.Offset, got.Positive.Counts, got.Negative.Offset, got.Negative.Counts,
			want.Count, want.ZeroCount, want.Scale, want.Min, want.Max, want.Dropped, want.Positive.Offset, want.Positive.Counts, want.Negative.Offset, want.Negative.Counts)
	}
	if d := math.Abs(got.Sum - want.Sum); d > 1e-12*math.Max(1, math.Abs(want.Sum)) {
		return fmt.Errorf("sum %v; want %v", got.Sum, want.Sum)
	}
	return nil
}

// TestExpSetExponential: the size is validated and only an exponential
// aggregator takes it.
func TestExpSetExponential(t *testing.T) {
	a := NewAggregator(KindExponential, nil, nil, 0)
	if s, c := a.Exponential(); s != exphist.DefaultMaxSize || c != exphist.DefaultMaxScale {
		t.Errorf("defaults %d %d", s, c)
	}
	if err := a.SetExponential(1, 20); err != exphist.ErrMaxSize {
		t.Errorf("maxSize 1: %v", err)
	}
	if err := a.SetExponential(4, 21); err != exphist.ErrMaxScale {
		t.Errorf("maxScale 21: %v", err)
	}
	if err := a.SetExponential(4, -10); err != nil {
		t.Errorf("4, -10: %v", err)
	}
	if err := NewAggregator(KindDistribution, nil, []float64{1}, 0).SetExponential(4, 0); err != ErrNotExponential {
		t.Errorf("a distribution took it: %v", err)
	}
}

// TestExpStripedEqualsOneHistogram: a series recorded from several
// goroutines (striped) reads as one histogram of every value, through a
// forced downscale, zeros and negatives.
func TestExpStripedEqualsOneHistogram(t *testing.T) {
	for _, striped := range []bool{false, true} {
		a := NewAggregator(KindExponential, []string{"k"}, nil, 0)
		if err := a.SetExponential(8, 20); err != nil {
			t.Fatal(err)
		}
		m := NewTagMap(tagsOf("k", "x"))
		a.RecordMap(m, 1.5)
		s := a.AppendSeries(nil)[0]
		if striped {
			s.inflate()
		}
		var mu sync.Mutex
		all := []float64{1.5}
		// Unstriped: one goroutine (several would stripe it).
		goroutines := 1
		if striped {
			goroutines = 4
		}
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewSource(int64(g)))
				mine := make([]float64, 0, 2000)
				for range 2000 {
					var v float64
					switch r.Intn(4) {
					case 0:
						v = 0
					case 1:
						v = -math.Exp(r.Float64() * 5)
					default:
						v = math.Exp(r.Float64()*float64(g+1)*3 - 4)
					}
					a.RecordMap(m, v)
					mine = append(mine, v)
				}
				mu.Lock()
				all = append(all, mine...)
				mu.Unlock()
			}()
		}
		wg.Wait()
		if striped != s.Striped() {
			t.Fatalf("striped %v; want %v", s.Striped(), striped)
		}
		var got exphist.Snapshot
		s.ReadExp(&got)
		want := oneHistogram(8, 20, all)
		if err := sameBuckets(&got, &want); err != nil {
			t.Errorf("striped=%v: %v", striped, err)
		}
	}
}

// TestExpDeltaOwnScale: each delta reader reads the values since its own
// previous read at their own scale (finer than the history's), another
// reader's drains lose it nothing, cumulative reads keep the whole, and a
// dropped reader's pending values are forgotten.
func TestExpDeltaOwnScale(t *testing.T) {
	a := NewAggregator(KindExponential, nil, nil, 0)
	if err := a.SetExponential(4, 20); err != nil {
		t.Fatal(err)
	}
	fast, slow := new(ExpReader), new(ExpReader)
	intervals := [][]float64{
		{1000, 1e6, -3},     // a wide interval: a low scale
		{1.0001, 1.0002},    // a narrow one: its own, fine scale
		{0, 2, 2.0001, 0},   // zeros
		{math.NaN(), 7},     // NaN: dropped, not counted
		{1e-300, 1e300, -1}, // the lowest scales
	}
	var all, sinceSlow []float64
	var got exphist.Snapshot
	for i, vs := range intervals {
		for _, v := range vs {
			a.RecordTags(nil, v)
		}
		all = append(all, vs...)
		sinceSlow = append(sinceSlow, vs...)
		s := a.AppendSeries(nil)[0]
		first := s.ReadExpDelta(fast, &got)
		want := oneHistogram(4, 20, vs)
		if err := sameBuckets(&got, &want); err != nil {
			t.Errorf("interval %d: %v", i, err)
		}
		if first != (i == 0) {
			t.Errorf("interval %d: first %v", i, first)
		}
		if i%2 == 1 {
			s.ReadExpDelta(slow, &got)
			want := oneHistogram(4, 20, sinceSlow)
			if err := sameBuckets(&got, &want); err != nil {
				t.Errorf("slow reader after interval %d: %v", i, err)
			}
			sinceSlow = nil
		}
		s.ReadExp(&got)
		want = oneHistogram(4, 20, all)
		if err := sameBuckets(&got, &want); err != nil {
			t.Errorf("cumulative after interval %d: %v", i, err)
		}
	}
	// A new reader's first read is the series' whole life.
	late := new(ExpReader)
	s := a.AppendSeries(nil)[0]
	if !s.ReadExpDelta(late, &got) {
		t.Error("a new reader's first read is not first")
	}
	want := oneHistogram(4, 20, all)
	if err := sameBuckets(&got, &want); err != nil {
		t.Errorf("late reader: %v", err)
	}
	// A dropped reader's pending snapshot goes with the next drain.
	n := len(s.expCell().acc.readers)
	slow, late = nil, nil
	runtime.GC()
	runtime.GC()
	a.RecordTags(nil, 3)
	s.ReadExpDelta(fast, &got)
	if m := len(s.expCell().acc.readers); n != 3 || m != 1 {
		t.Errorf("readers %d before dropping two, %d after; want 3, 1", n, m)
	}
}

// TestExpRaceExact races recorders (values forcing downscales, so that a
// downscale happens while others record and read), two delta readers, a
// cumulative reader and eviction: each delta reader's intervals add up to
// exactly what was recorded, and their merge to the cumulative read's
// buckets. Run with -race.
func TestExpRaceExact(t *testing.T) {
	a := NewAggregator(KindExponential, []string{"k"}, nil, 0)
	if err := a.SetExponential(16, 20); err != nil {
		t.Fatal(err)
	}
	maps := make([]*TagMap, 3)
	for i := range maps {
		maps[i] = NewTagMap(tagsOf("k", fmt.Sprint(i)))
	}
	const G, N = 3, 20000
	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := range G {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(g)))
			for i := range N {
				v := math.Ldexp(1+r.Float64(), r.Intn(40)-20) // 2^-20..2^20: a few downscales
				if i%7 == 0 {
					v = -v
				}
				if i%3 == 0 {
					a.RecordTags(maps[i%len(maps)].Tags(), v)
				} else {
					a.RecordMap(maps[i%len(maps)], v)
				}
			}
		}()
	}
	type reader struct {
		r     *ExpReader
		mark  *ReaderMark
		count uint64
		// per tag value, the merge of every interval read
		merged map[uint32]*exphist.Snapshot
	}
	readers := []*reader{{r: new(ExpReader), mark: a.AddReader()}, {r: new(ExpReader), mark: a.AddReader()}}
	for _, rd := range readers {
		rd.merged = map[uint32]*exphist.Snapshot{}
	}
	read := func(rd *reader, evict bool) {
		seq := a.SealSeq()
		var iv exphist.Snapshot
		for _, s := range a.AppendSeries(nil) {
			s.ReadExpDelta(rd.r, &iv)
			rd.count += iv.Count
			id := s.ValueIDs()[0]
			if rd.merged[id] == nil {
				rd.merged[id] = new(exphist.Snapshot)
			}
			rd.merged[id].Merge(&iv, 16)
			if evict {
				s.Evict()
			}
		}
		rd.mark.Ack(seq)
		a.Sweep()
	}
	var rwg sync.WaitGroup
	rwg.Add(2)
	go func() { // the second reader evicts, and a cumulative read runs beside
		defer rwg.Done()
		var c exphist.Snapshot
		for !stop.Load() {
			read(readers[1], true)
			for _, s := range a.AppendSeries(nil) {
				s.ReadExp(&c)
			}
			runtime.Gosched()
		}
	}()
	go func() {
		defer rwg.Done()
		for !stop.Load() {
			read(readers[0], false)
			runtime.Gosched()
		}
	}()
	wg.Wait()
	stop.Store(true)
	rwg.Wait()
	for range 2 { // sealed series are read once more, then freed
		read(readers[0], false)
		read(readers[1], false)
	}
	for i, rd := range readers {
		if rd.count != G*N {
			t.Errorf("reader %d read %d values; %d recorded", i, rd.count, G*N)
		}
	}
	// Both readers saw the same values per tag value: the same merge.
	for id, m0 := range readers[0].merged {
		if err := sameBuckets(m0, readers[1].merged[id]); err != nil {
			t.Errorf("tag value %d: the readers' merges differ: %v", id, err)
		}
	}
	if a.Evicted() == 0 {
		t.Log("nothing was evicted (a slow machine): the race covered reads only")
	}
}
