package core

import (
	"math"
	"testing"
)

// TestStripedIntegerSumWords: a striped integer Sum takes integers within
// ±2^31 into its stripes' integer words and anything else into their float
// words; a read, live or sealed, adds both exactly, and a seal and a
// revival keep every word.
func TestStripedIntegerSumWords(t *testing.T) {
	a, s := intSumSeries(t, 5)
	s.inflate()
	sp := s.stripes.Load()
	var want int64 = 5
	for _, v := range []float64{7, -3, 1 << 30, -(1 << 31), 2} {
		s.add(v, nil)
		want += int64(v)
	}
	var ints int64
	for p := 0; p <= sp.mask; p++ {
		ints += int64(sp.words[p*wordsPerLine+stripeInt].Load())
	}
	if ints != want-5 {
		t.Fatalf("integer words hold %d; want %d (every small integer)", ints, want-5)
	}
	s.add(0.5, nil)     // a fraction: a float word
	s.add(1<<40, nil)   // past 2^31: a float word
	s.add(1<<53+1, nil) // rounds to 2^53 as a float64, as any record of it does
	exact := float64(want) + 0.5 + (1 << 40) + (1 << 53)
	hi, lo := s.ReadSumParts()
	if hi+lo != exact && hi != exact {
		t.Errorf("ReadSumParts = %v + %v; want %v", hi, lo, exact)
	}
	live := s.ReadSum()
	s.Evict()
	if !s.Sealed() {
		t.Fatal("not sealed")
	}
	if got := s.ReadSum(); got != live {
		t.Errorf("sealed read %v; live read %v", got, live)
	}
	if h2, l2 := s.ReadSumParts(); h2 != live || l2 != lo {
		t.Errorf("sealed ReadSumParts = %v, %v; live %v, %v", h2, l2, hi, lo)
	}
	a.RecordTags(tagsOf("k", "v"), 4) // revives s
	if s.Sealed() || !s.Striped() {
		t.Fatalf("after a record: sealed %v, striped %v; want live and striped", s.Sealed(), s.Striped())
	}
	if got := s.ReadSum(); got != live+4 {
		t.Errorf("revived read %v; want %v", got, live+4)
	}
}

// TestStripedIntegerSumFull: the add that takes an integer word to 2^61
// counts and sends later records to the float words, so no word comes
// near a seal's value, and the total stays exact.
func TestStripedIntegerSumFull(t *testing.T) {
	_, s := intSumSeries(t, 0)
	s.inflate()
	sp := s.stripes.Load()
	for p := 0; p <= sp.mask; p++ {
		sp.words[p*wordsPerLine+stripeInt].Store(uint64(intSumMax - 5))
	}
	s.add(10, nil)
	if !sp.intFull.Load() {
		t.Fatal("an add to 2^61+5 did not mark the integer words full")
	}
	before := make([]uint64, sp.mask+1)
	for p := range before {
		before[p] = sp.words[p*wordsPerLine+stripeInt].Load()
	}
	for range 100 {
		s.add(1<<30, nil)
	}
	for p := range before {
		if w := sp.words[p*wordsPerLine+stripeInt].Load(); w != before[p] {
			t.Errorf("stripe %d: integer word moved from %d to %d after it was full", p, before[p], w)
		}
	}
	want := float64(sp.mask+1)*float64(intSumMax-5) + 10 + 100*(1<<30)
	if got := s.ReadSum(); got != want {
		t.Errorf("sum %v; want %v", got, want)
	}
}

// TestStripedIntegerSumHandleStamp: a handle given up for its integer
// Sum's stripes is stamped by its next record, then records with one
// compare into the P's integer word; a view registered elsewhere makes
// the stamp stale (the next record stamps it again), and a second view
// over the measure ends it (a new state). Every record counts once in
// every view.
func TestStripedIntegerSumHandleStamp(t *testing.T) {
	for _, kind := range []Kind{KindCount, testIntSum} {
		m := &Measure{Name: "bound/striped/stamp"}
		a := newTestAgg(kind, []string{"k"}, nil, 0)
		m.Subscribe(a)
		b := m.Bind(tagsOf("k", "x"))
		b.RecordInt(3)
		s := a.AppendSeries(nil)[0]
		b.st.Load().ctl.Store(ownDone) // given up, as twoStrikes leaves it
		s.inflate()
		// Stamped at the current epoch, with ctlCount for a Count.
		stamped := func() bool {
			want := epochs.striped.Load()
			if kind == KindCount {
				want |= ctlCount
			}
			return b.first.ctl.Load() == want
		}
		b.RecordInt(3)
		if !stamped() {
			t.Fatalf("kind %d: ctl %#x after a striped record; want the stamp of epoch %#x", kind, b.first.ctl.Load(), epochs.striped.Load())
		}
		for range 10 {
			b.RecordInt(3)
		}
		b.RecordInt(1 << 40) // past ±2^31: through recordInt, to a float word
		restampAfterViewChange(t, kind, stamped, func() { b.RecordInt(3) })
		a2 := secondView(t, kind, m, b, func() { b.RecordInt(3) })
		var sum2 float64
		if ss := a2.AppendSeries(nil); len(ss) == 1 {
			sum2 = ss[0].ReadSum()
		}
		if sum2 != 6 {
			t.Errorf("kind %d: second view's sum %v; want 6", kind, sum2)
		}
		if kind == KindCount {
			if got := s.ReadCount(); got != 16 {
				t.Errorf("count %d; want 16", got)
			}
			continue
		}
		if got, want := s.ReadSum(), float64(15*3+1<<40); got != want {
			t.Errorf("sum %v; want %v", got, want)
		}
	}
}

// TestStripedIntegerSumEvictRaceConcurrentSafe: goroutines record into
// a striped integer Sum through a stamped handle and through a kept map
// (their integer words) while a reader seals, revives and frees the
// series: every record is read exactly once.
func TestStripedIntegerSumEvictRaceConcurrentSafe(t *testing.T) {
	for _, via := range []string{"handle", "map"} {
		t.Run(via, func(t *testing.T) {
			m := &Measure{Name: "bound/striped/race/" + via}
			a := newTestAgg(testIntSum, []string{"k"}, nil, 0)
			m.Subscribe(a)
			b := m.Bind(tagsOf("k", "x"))
			b.RecordInt(0)
			a.AppendSeries(nil)[0].inflate()
			b.st.Load().ctl.Store(ownDone)
			tm := NewTagMap(tagsOf("k", "x"))
			record := func() { b.RecordInt(1) }
			if via == "map" {
				record = func() { a.RecordMap(tm, 1) }
			}
			evictRace(t, m, a, testIntSum, 4, 1, record)
		})
	}
}

// TestSmallInt: what a stripe's integer word takes.
func TestSmallInt(t *testing.T) {
	for _, tc := range []struct {
		v  float64
		ok bool
	}{
		{0, true}, {-1, true}, {1<<31 - 1, true}, {-(1 << 31), true},
		{1 << 31, false}, {-(1 << 31) - 1, false}, {0.5, false}, {1 << 62, false},
		{math.NaN(), false}, {math.Inf(1), false}, {math.Inf(-1), false},
	} {
		if d, ok := smallInt(tc.v); ok != tc.ok || ok && float64(d) != tc.v {
			t.Errorf("smallInt(%v) = %d, %v; want ok %v", tc.v, d, ok, tc.ok)
		}
	}
}

// TestHistogramHandleStamp: a handle of one histogram view (classic or
// exponential) is stamped by its first records through its series' cell,
// then records after one compare; a view registered elsewhere makes the
// stamp stale (the next record stamps it again), a second view over the
// measure ends it, and an evicted series is revived or succeeded as
// through the unstamped path. Every record counts once in every view.
func TestHistogramHandleStamp(t *testing.T) {
	for _, kind := range []Kind{KindDistribution, KindExponential} {
		m := &Measure{Name: "bound/hist/stamp"}
		a := NewAggregator(kind, []string{"k"}, []float64{1}, 0)
		m.Subscribe(a)
		r := a.AddReader()
		buf := make([]int64, 2)
		b := m.Bind(tagsOf("k", "x"))
		stamped := func() bool {
			want := epochs.striped.Load() | stampExp
			if kind == KindDistribution {
				want = epochs.striped.Load() | stampDist
			}
			return b.first.ctl.Load() == want
		}
		b.Record(0.5)
		b.Record(2)
		if !stamped() {
			t.Fatalf("kind %d: ctl %#x after two records; want stamped at epoch %#x", kind, b.first.ctl.Load(), epochs.striped.Load())
		}
		for i := range 10 {
			b.Record(float64(i))
		}
		s := a.AppendSeries(nil)[0]
		if got := readValue(s, buf); got != 12 {
			t.Fatalf("kind %d: count %d; want 12", kind, got)
		}
		restampAfterViewChange(t, kind, stamped, func() { b.Record(3) })
		s.Evict()
		b.Record(3) // meets the seal: revives s
		if s.Sealed() || readValue(s, buf) != 14 {
			t.Fatalf("kind %d: revived: sealed %v, count %d; want live, 14", kind, s.Sealed(), readValue(s, buf))
		}
		s.Evict()
		r.Ack(a.SealSeq())
		a.Sweep()
		if a.Len() != 0 {
			t.Fatalf("kind %d: not freed", kind)
		}
		b.Record(3) // to a successor
		ns := a.AppendSeries(nil)
		if len(ns) != 1 || ns[0] == s || readValue(ns[0], buf) != 1 {
			t.Fatalf("kind %d: successor %v; want one new series of 1", kind, ns)
		}
		a2 := secondView(t, kind, m, b, func() { b.Record(3) })
		if got := readValue(ns[0], buf); got != 3 {
			t.Errorf("kind %d: successor's count %d; want 3", kind, got)
		}
		if ss := a2.AppendSeries(nil); len(ss) != 1 || ss[0].ReadSum() != 6 {
			t.Errorf("kind %d: second view %v; want one series of sum 6", kind, ss)
		}
	}
}

// TestHistogramHandleEvictRaceConcurrentSafe: goroutines record through
// one stamped histogram handle while a reader seals, revives and frees its
// series and a view comes and goes beside: every record is read once.
func TestHistogramHandleEvictRaceConcurrentSafe(t *testing.T) {
	for _, kind := range []Kind{KindDistribution, KindExponential} {
		t.Run(map[Kind]string{KindDistribution: "distribution", KindExponential: "exponential"}[kind], func(t *testing.T) {
			m := &Measure{Name: "bound/hist/race"}
			a := NewAggregator(kind, []string{"k"}, []float64{1}, 0)
			m.Subscribe(a)
			b := m.Bind(tagsOf("k", "x"))
			evictRace(t, m, a, kind, 4, 1, func() { b.Record(2) })
		})
	}
}

// restampAfterViewChange registers a view over another measure and checks
// that the handle's stamp (stamped) is stale after it and current again
// after one record (record, of 3).
func restampAfterViewChange(t *testing.T, kind Kind, stamped func() bool, record func()) {
	t.Helper()
	other := &Measure{Name: "bound/stamp/other"}
	other.Subscribe(NewAggregator(KindCount, nil, nil, 0))
	if stamped() {
		t.Fatalf("kind %d: stamp still current after a view registration", kind)
	}
	record()
	if !stamped() {
		t.Fatalf("kind %d: not stamped again at the new epoch", kind)
	}
}

// secondView subscribes a Sum view to m, records twice through b (record,
// of 3) and checks that b left its first state (its stamp ends with it);
// it returns the Sum's aggregator.
func secondView(t *testing.T, kind Kind, m *Measure, b *Bound, record func()) *Aggregator {
	t.Helper()
	a2 := NewAggregator(KindSum, nil, nil, 0)
	m.Subscribe(a2)
	record()
	record()
	if b.st.Load() == &b.first {
		t.Fatalf("kind %d: a second view kept the first state", kind)
	}
	return a2
}
