package core

import (
	"context"
	"fmt"
	"testing"

	"github.com/zerostat/zerostat/internal/race"
)

// mapCellSetup returns a measure whose one view is an aggregator of kind
// (testIntSum: an integer Sum) keyed by k, and a context of parent
// carrying k=x (tag.New's miss path: a map of its own).
func mapCellSetup(t *testing.T, kind Kind, parent context.Context) (*MeasureRef, *Aggregator, context.Context, *TagMap) {
	t.Helper()
	m := &Measure{Name: "mapcell"}
	a := newTestAgg(kind, []string{"k"}, nil, 0)
	m.Subscribe(a)
	mapCellN++ // a tag set of its own: a cache hit is a map of the cache's
	ctx := NewTagContext(parent, tagsOf("k", fmt.Sprint(t.Name(), mapCellN)))
	tm := FromContext(ctx)
	if _, own := ownMap(ctx); !own {
		t.Fatalf("context %T; want a map of its own", ctx)
	}
	return &MeasureRef{Desc: m}, a, ctx, tm
}

var mapCellN int

// ownMap returns the map of a context with a map of its own (tag.New's
// miss path), whatever its parent.
func ownMap(ctx context.Context) (*TagMap, bool) {
	switch c := ctx.(type) {
	case *ownCtx:
		return &c.TagMap, true
	case *rootCtx:
		return &c.TagMap, true
	}
	return nil, false
}

func readInt(kind Kind, s *Series) int64 {
	if kind == KindCount {
		return s.ReadCount()
	}
	return int64(s.ReadSum())
}

// A map of its own built from context.Background() attaches its cell on
// its third record through the series; later records add to the cell, and
// every read of the series counts them. Eviction seals the cell, a record
// revives the series with it, and once the series is freed the map gives
// its cell up and records through the successor.
func TestMapCellAttachesAndFollowsEviction(t *testing.T) {
	for _, kind := range []Kind{KindCount, testIntSum} {
		ref, a, ctx, tm := mapCellSetup(t, kind, context.Background())
		r := a.AddReader()
		for i := range 3 {
			if tm.own.w.Load() != 0 || tm.own.tag.Load()&0xff != mapCellFree+uint64(i) {
				t.Fatalf("kind %d: before record %d: cell %d, tag %#x; want 0, free+%d", kind, i+1, tm.own.w.Load(), tm.own.tag.Load(), i)
			}
			RecordOne(ctx, ref, 1)
		}
		if want := mapCellTag(a, a.cellKind()); tm.own.tag.Load() != want {
			t.Fatalf("kind %d: after 3 records: tag %#x; want attached %#x", kind, tm.own.tag.Load(), want)
		}
		s := a.AppendSeries(nil)[0]
		RecordOne(ctx, ref, 2)
		RecordOne(ctx, ref, 2)
		if got := readInt(kind, s); tm.own.w.Load() == 0 || got != 3+2*int64(ifInt(kind, 2, 1)) {
			t.Fatalf("kind %d: cell %d, series %d; want the cell taking records, counted in the series", kind, tm.own.w.Load(), got)
		}
		before := readInt(kind, s)
		s.Evict()
		if !intSealed(tm.own.w.Load()) || readInt(kind, s) != before {
			t.Fatalf("kind %d: sealed: cell %#x, series %d; want sealed, %d", kind, tm.own.w.Load(), readInt(kind, s), before)
		}
		RecordOne(ctx, ref, 1) // revives s, restoring the cell
		if s.Sealed() || intSealed(tm.own.w.Load()) || readInt(kind, s) != before+1 {
			t.Fatalf("kind %d: revived: sealed %v, cell %#x, series %d; want live, %d", kind, s.Sealed(), tm.own.w.Load(), readInt(kind, s), before+1)
		}
		RecordOne(ctx, ref, 1) // into the restored cell
		if tm.own.tag.Load()&0xff != mapCellAttached || readInt(kind, s) != before+2 {
			t.Fatalf("kind %d: after the revival: tag %#x, series %d; want attached, %d", kind, tm.own.tag.Load(), readInt(kind, s), before+2)
		}
		s.Evict()
		r.Ack(a.SealSeq())
		a.Sweep()
		if a.Len() != 0 {
			t.Fatalf("kind %d: not freed", kind)
		}
		RecordOne(ctx, ref, 1) // sealed cell of a freed series: to the successor, cell given up
		RecordOne(ctx, ref, 1)
		ns := a.AppendSeries(nil)
		if len(ns) != 1 || ns[0] == s || readInt(kind, ns[0]) != 2 {
			t.Fatalf("kind %d: successor %v; want one new series of 2", kind, ns)
		}
		if tm.own.tag.Load() != mapCellNone {
			t.Errorf("kind %d: tag %#x after the series was freed; want none", kind, tm.own.tag.Load())
		}
	}
}

func ifInt(kind Kind, intSum, count int) int {
	if kind == testIntSum {
		return intSum
	}
	return count
}

// A map whose context has another parent (a request's) never attaches a
// cell: the cell would keep the parent reachable through the series.
// Neither does a map recording into a view whose series are not cells.
func TestMapCellOnlyForRootContextsAndCells(t *testing.T) {
	type key struct{}
	req := context.WithValue(context.Background(), key{}, "request")
	ref, a, ctx, tm := mapCellSetup(t, KindCount, req)
	for range 10 {
		RecordOne(ctx, ref, 1)
	}
	if tm.own.tag.Load() != mapCellNone || tm.own.w.Load() != 0 || countOf(t, a) != 10 {
		t.Errorf("request parent: tag %#x, cell %d, count %d; want none, 0, 10", tm.own.tag.Load(), tm.own.w.Load(), countOf(t, a))
	}
	for _, kind := range []Kind{KindSum, KindDistribution, KindLastValue, KindExponential} {
		m := &Measure{Name: "mapcell/float"}
		a := NewAggregator(kind, []string{"k"}, []float64{1, 2}, 0)
		m.Subscribe(a)
		mapCellN++
		ctx := NewTagContext(context.Background(), tagsOf("k", fmt.Sprint("f", mapCellN)))
		tm := FromContext(ctx)
		for range 10 {
			RecordOne(ctx, &MeasureRef{Desc: m}, 1)
		}
		if tm.own.tag.Load() != mapCellFree {
			t.Errorf("kind %d: tag %#x; want free, not counted", kind, tm.own.tag.Load())
		}
	}
}

// Goroutines recording through one kept context at once: the probe finds
// them sharing the cell, the map gives it up for the series' stripes, and
// every record counts (run under -race).
func TestMapCellContendedConcurrentSafe(t *testing.T) {
	for _, kind := range []Kind{KindCount, testIntSum} {
		ref, a, ctx, _ := mapCellSetup(t, kind, context.Background())
		const G, N = 4, 20000
		onGoroutines(G, func(g int) {
			for i := range N {
				RecordOne(ctx, ref, float64(g+i%3))
			}
		})
		var want int64
		for g := range G {
			for i := range N {
				want += int64(ifInt(kind, g+i%3, 1))
			}
		}
		if got := readInt(kind, a.AppendSeries(nil)[0]); got != want {
			t.Errorf("kind %d: series %d; want %d", kind, got, want)
		}
	}
}

// A kept context's cell is given up for contention as a handle's is
// (twoStrikes): one probe that finds another recorder's update makes it
// suspect, a clean probe clears that, two in a row give it up; every add
// counts.
func TestMapCellTwoStrikes(t *testing.T) {
	ref, a, ctx, tm := mapCellSetup(t, KindCount, context.Background())
	for range 4 {
		RecordOne(ctx, ref, 1) // the third attaches, the fourth adds to the cell
	}
	if tm.own.tag.Load()&0xff != mapCellAttached || tm.own.w.Load() != 1 {
		t.Fatalf("tag %#x, cell %d; want attached, 1", tm.own.tag.Load(), tm.own.w.Load())
	}
	contended := func() { // two adds; the other comes before the probe
		w := tm.own.w.Add(1)
		tm.own.w.Add(1)
		tm.ownFinish(a, w, 1)
	}
	suspect := func() bool { return tm.own.tag.Load()&mapCellSuspect != 0 }
	contended()
	if tm.own.tag.Load()&0xff != mapCellAttached || !suspect() {
		t.Errorf("after one contended probe: tag %#x; want attached, suspect", tm.own.tag.Load())
	}
	RecordOne(ctx, ref, 1) // a suspect cell still takes records
	tm.ownFinish(a, tm.own.w.Add(1), 1)
	if tm.own.tag.Load()&0xff != mapCellAttached || suspect() {
		t.Errorf("after a clean probe: tag %#x; want attached, not suspect", tm.own.tag.Load())
	}
	contended()
	contended()
	if tm.own.tag.Load() != mapCellNone {
		t.Errorf("after two contended probes in a row: tag %#x; want none", tm.own.tag.Load())
	}
	RecordOne(ctx, ref, 1) // through the series
	if got := countOf(t, a); got != 4+2+1+1+4+1 {
		t.Errorf("count %d; want %d", got, 4+2+1+1+4+1)
	}
}

// A value an integer Sum's cell cannot take (not an integer) goes to the
// series; the cell stays attached and both count.
func TestMapCellIntSumFraction(t *testing.T) {
	ref, a, ctx, tm := mapCellSetup(t, testIntSum, context.Background())
	for range 3 {
		RecordOne(ctx, ref, 1)
	}
	RecordOne(ctx, ref, 0.5)
	RecordOne(ctx, ref, 4)
	if got := a.AppendSeries(nil)[0].ReadSum(); got != 7.5 || tm.own.w.Load() != 4 {
		t.Errorf("sum %v, cell %d; want 7.5 with 4 in the cell", got, tm.own.w.Load())
	}
}

// A map that records into a second view (a Count, an integer Sum) while it
// counts never attaches a cell; one recording into a view whose series are
// not cells besides still does.
func TestMapCellOneViewOnly(t *testing.T) {
	ref, a, ctx, tm := mapCellSetup(t, KindCount, context.Background())
	m2 := &Measure{Name: "mapcell/second"}
	a2 := NewAggregator(KindCount, []string{"k"}, nil, 0)
	m2.Subscribe(a2)
	RecordOne(ctx, ref, 1)
	RecordOne(ctx, &MeasureRef{Desc: m2}, 1)
	for range 10 {
		RecordOne(ctx, ref, 1)
	}
	if tm.own.tag.Load() != mapCellNone || countOf(t, a) != 11 || countOf(t, a2) != 1 {
		t.Errorf("two counters: tag %#x, counts %d and %d; want none, 11 and 1", tm.own.tag.Load(), countOf(t, a), countOf(t, a2))
	}

	ref, a, ctx, tm = mapCellSetup(t, KindCount, context.Background())
	hm := &Measure{Name: "mapcell/histogram"}
	hm.Subscribe(NewAggregator(KindDistribution, []string{"k"}, []float64{1, 2}, 0))
	for range 3 {
		RecordOne(ctx, ref, 1)
		RecordOne(ctx, &MeasureRef{Desc: hm}, 1.5)
	}
	if want := mapCellTag(a, a.cellKind()); tm.own.tag.Load() != want || countOf(t, a) != 3 {
		t.Errorf("a counter and a histogram: tag %#x, count %d; want attached %#x, 3", tm.own.tag.Load(), countOf(t, a), want)
	}
}

// A kept context's record into its attached cell allocates nothing.
func TestMapCellRecordAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts under -race")
	}
	ref, _, ctx, tm := mapCellSetup(t, KindCount, context.Background())
	for range 3 {
		RecordOne(ctx, ref, 1)
	}
	if n := testing.AllocsPerRun(1000, func() { RecordOne(ctx, ref, 1) }); n != 0 {
		t.Errorf("%v allocations a record; want 0", n)
	}
	if tm.own.tag.Load()&0xff != mapCellAttached {
		t.Errorf("tag %#x; want attached", tm.own.tag.Load())
	}
}

// Recorders on a kept context race a reader that evicts and sweeps its
// series, and views subscribed and unsubscribed beside it: every record
// is counted once, through the map's cell, a sealed cell's fallback, a
// revival or a successor (run under -race). One recorder keeps the cell
// through the revivals until its series is freed; four give it up to the
// stripes.
func TestMapCellEvictRacesRecordersConcurrentSafe(t *testing.T) {
	for _, kind := range []Kind{KindCount, testIntSum} {
		for _, g := range []int{1, 4} {
			t.Run(fmt.Sprintf("kind=%d/recorders=%d", kind, g), func(t *testing.T) { mapCellEvictRace(t, kind, g) })
		}
	}
}

func mapCellEvictRace(t *testing.T, kind Kind, G int) {
	ref, a, ctx, _ := mapCellSetup(t, kind, context.Background())
	// Freed one round in 16: a sealed series a record revives keeps the
	// map's cell, which then takes records again.
	evictRace(t, ref.Desc, a, kind, G, 16, func() { RecordOne(ctx, ref, 1) })
}
