package core

import "testing"

// recordVia records v as stats.Record does (RecordOne, no tags), with l
// as the subscriber list of a measure of its own.
func recordVia(l *Subs, v float64) {
	m := &Measure{Name: "via"}
	m.setSubs(l)
	RecordOne(nil, &MeasureRef{Desc: m}, v)
}

// cellBound returns a Bound of a measure whose one view is an aggregator
// of kind (testIntSum: an integer Sum), after a first record of 1 has
// resolved its series.
func cellBound(t *testing.T, kind Kind) (*Bound, *Aggregator, *Series) {
	t.Helper()
	m := &Measure{Name: "cell"}
	a := newTestAgg(kind, []string{"k"}, nil, 0)
	m.Subscribe(a)
	b := m.Bind(tagsOf("k", "x"))
	b.RecordInt(1)
	return b, a, a.AppendSeries(nil)[0]
}

// Only the one view of a Count or an integer Sum is a cell: a float Sum, a
// distribution, a last value, and two views take Record's paths, and
// every record still counts.
func TestCellOnlyForIntegerCells(t *testing.T) {
	for _, c := range []struct {
		kind Kind
		cell uint32
	}{{KindCount, uint32(fastCount)}, {testIntSum, uint32(fastIntSum)}, {KindSum, 0}, {KindDistribution, 0}, {KindLastValue, 0}} {
		b, _, _ := cellBound(t, c.kind)
		if got := b.st.Load().kind(); got != c.cell {
			t.Errorf("kind %d: cell %d; want %d", c.kind, got, c.cell)
		}
	}
	m := &Measure{Name: "cell/two"}
	a1, a2 := NewAggregator(KindCount, nil, nil, 0), NewAggregator(KindCount, nil, nil, 0)
	m.Subscribe(a1)
	m.Subscribe(a2)
	b := m.Bind(nil)
	for range 3 {
		b.RecordInt(1)
	}
	if got := b.st.Load().kind(); got != 0 {
		t.Errorf("two views: cell %d; want 0", got)
	}
	if c1, c2 := countOf(t, a1), countOf(t, a2); c1 != 3 || c2 != 3 {
		t.Errorf("two views: counts %d and %d; want 3 and 3", c1, c2)
	}
	if l := newSubs([]*Aggregator{a1, a2}); l.cell.Load() != 0 {
		t.Error("a list of two views has a cell")
	}
	if l := newSubs([]*Aggregator{NewAggregator(KindCount, []string{"k"}, nil, 0)}); l.cell.Load() != 0 {
		t.Error("a list whose view has tag keys has a cell (RecordOne does not record it through the cell)")
	}
}

// A handle's own cell does not follow its series' stripes: the series
// striped (records through other paths on several cores), the handle goes
// on adding to its cell, and a read counts both. Its probe gives the cell
// up when two probes in a row find another recorder updated the cell
// since their add (the handle shared by several cores), and records then
// go to the series; one such probe alone only makes the cell suspect, and
// a clean probe clears that. None is lost.
func TestBoundCellStripesAndContention(t *testing.T) {
	for _, kind := range []Kind{KindCount, testIntSum} {
		b, _, s := cellBound(t, kind)
		s.inflate()
		for range 2000 { // about one probe in 64 adds
			b.RecordInt(2)
		}
		st := b.st.Load()
		if got := st.kind(); got == 0 {
			t.Errorf("kind %d: cell given up after 2,000 uncontended records", kind)
		}
		d := uint64(2)
		if kind == KindCount {
			d = 1
		}
		// A probe that finds another recorder's update: own's add left
		// w, and the other add came before the probe. Two adds.
		contended := func() {
			w := st.own.Add(d)
			st.own.Add(d)
			b.ownFinish(st, w, 2)
		}
		suspect := func() bool { return st.ctl.Load()&ctlSuspect != 0 }
		contended()
		if st.kind() == 0 || !suspect() {
			t.Errorf("kind %d: after one contended probe: cell %d, suspect %v; want attached, suspect", kind, st.kind(), suspect())
		}
		b.ownFinish(st, st.own.Add(d), 2) // a clean probe; one add
		if st.kind() == 0 || suspect() {
			t.Errorf("kind %d: after a clean probe: cell %d, suspect %v; want attached, not suspect", kind, st.kind(), suspect())
		}
		contended()
		contended()
		if got := st.kind(); got != 0 || st.course() != ownDone {
			t.Errorf("kind %d: cell %d after two contended probes in a row; want 0, given up", kind, got)
		}
		b.RecordInt(2) // through the series' stripes
		var got, want int64
		if kind == KindCount {
			got, want = s.ReadCount(), 1+2000+7+1
		} else {
			got, want = int64(s.ReadSum()), 1+2*(2000+7+1)
		}
		if got != want {
			t.Errorf("kind %d: read %d; want %d", kind, got, want)
		}
	}
}

// Goroutines recording through one handle and one untagged list at once
// stripe the series and lose nothing.
func TestCellContendedConcurrentSafe(t *testing.T) {
	for _, kind := range []Kind{KindCount, testIntSum} {
		b, a, s := cellBound(t, kind)
		l := newSubs([]*Aggregator{newTestAgg(kind, nil, nil, 0)})
		const G, N = 4, 20000
		onGoroutines(G, func(g int) {
			for i := range N {
				v := int64(g + i%3)
				b.RecordInt(v)
				recordVia(l, float64(v))
			}
		})
		var want int64 = 1
		if kind == KindCount {
			want += G * N
		} else {
			for g := range G {
				for i := range N {
					want += int64(g + i%3)
				}
			}
		}
		read := func(s *Series) int64 {
			if kind == KindCount {
				return s.ReadCount()
			}
			return int64(s.ReadSum())
		}
		if got := read(s); got != want {
			t.Errorf("kind %d: handle's series %d; want %d", kind, got, want)
		}
		if got := read(l.Aggs[0].AppendSeries(nil)[0]); got != want-1 {
			t.Errorf("kind %d: untagged series %d; want %d", kind, got, want-1)
		}
		if n := a.Len(); n != 1 {
			t.Errorf("kind %d: %d series; want 1", kind, n)
		}
	}
}

// An add through a cell that takes an integer Sum to 2^61 counts: a
// handle's own cell is then given up (later records go to the series),
// and the untagged list's, the series' word, stripes the series and is
// cleared: later records go to float stripes, far from a seal's value. A
// value of 2^31 or more takes add's exact path.
func TestCellIntegerSumPastLimit(t *testing.T) {
	b, _, s := cellBound(t, testIntSum)
	st := b.st.Load()
	st.own.Store(uint64(intSumMax - 5))
	b.RecordInt(10)
	if st.kind() != 0 || st.course() != ownDone {
		t.Fatalf("after an add past 2^61: cell %d; want 0, given up", st.kind())
	}
	b.RecordInt(1 << 40)
	b.RecordInt(3)
	if got, want := s.ReadSum(), float64(intSumMax+5)+1+1<<40+3; got != want {
		t.Errorf("sum = %v; want %v", got, want)
	}
	if hi, lo := s.ReadSumParts(); hi+lo != float64(intSumMax+5)+1+1<<40+3 || hi != s.ReadSum() {
		t.Errorf("sum parts = %v, %v; want their sum %v", hi, lo, s.ReadSum())
	}
	l := newSubs([]*Aggregator{newTestAgg(testIntSum, nil, nil, 0)})
	recordVia(l, 1)
	u := l.Aggs[0].AppendSeries(nil)[0]
	neg := int64(-intSumMax + 3)
	u.word.Store(uint64(neg))
	recordVia(l, -7)
	recordVia(l, 0.5) // not an integer: add's path
	if !u.Striped() || l.cell.Load() != 0 {
		t.Fatalf("untagged, after an add past -2^61: striped %v, cell %d", u.Striped(), l.cell.Load())
	}
	if got, want := u.ReadSum(), float64(-intSumMax-4)+0.5; got != want {
		t.Errorf("untagged sum = %v; want %v", got, want)
	}
}
