package core

import (
	"testing"
	"unsafe"
)

// mapCellView returns a measure whose one view is an aggregator of kind
// (testIntSum: an integer Sum), and a context carrying a map of one tag.
func mapCellView(kind Kind) (*MeasureRef, *Aggregator, *TagMap) {
	m := &Measure{Name: "mapcell"}
	a := newTestAgg(kind, []string{"k"}, nil, 0)
	m.Subscribe(a)
	return &MeasureRef{Desc: m}, a, NewTagMap(tagsOf("k", "x"))
}

// recordTimes records v n times through m, as stats.Record with a context
// carrying m does.
func recordTimes(r *MeasureRef, m *TagMap, v float64, n int) {
	ctx := NewContext(nil, m)
	for range n {
		RecordOne(ctx, r, v)
	}
}

func valueOf(kind Kind, s *Series) int64 {
	if kind == KindCount {
		return s.ReadCount()
	}
	return int64(s.ReadSum())
}

// A map's cell is attached for a Count or an integer Sum once the map has
// recorded through the series mapCellAfter times after the record that
// created it; later records add to it, and reads count it.
func TestMapCellAttaches(t *testing.T) {
	for _, kind := range []Kind{KindCount, testIntSum} {
		r, a, m := mapCellView(kind)
		j := a.slot % cellSlots
		recordTimes(r, m, 2, 1+mapCellAfter)
		if got := m.cellOwner[j].Load(); got == a.cellID {
			t.Fatalf("kind %d: attached after %d records; want after %d", kind, 1+mapCellAfter, 2+mapCellAfter)
		}
		recordTimes(r, m, 2, 1)
		if got := m.cellOwner[j].Load(); got != a.cellID {
			t.Fatalf("kind %d: owner word %#x after %d records; want %#x (attached)", kind, got, 2+mapCellAfter, a.cellID)
		}
		recordTimes(r, m, 2, 10)
		s := a.AppendSeries(nil)[0]
		n := int64(2 + mapCellAfter + 10)
		want := n
		if kind == testIntSum {
			want = 2 * n
		}
		if got := valueOf(kind, s); got != want {
			t.Errorf("kind %d: series reads %d; want %d", kind, got, want)
		}
		if got, cell := int64(m.cells[j].Load()), want/n*10; got != cell {
			t.Errorf("kind %d: the map's cell holds %d; want %d (the records after it was attached)", kind, got, cell)
		}
	}
}

// A float Sum, a distribution and a last value keep their records in the
// series: their maps attach nothing.
func TestMapCellOnlyForIntegerCells(t *testing.T) {
	for _, kind := range []Kind{KindSum, KindDistribution, KindLastValue} {
		r, a, m := mapCellView(kind)
		recordTimes(r, m, 1.5, 20)
		if got := m.cellOwner[a.slot%cellSlots].Load(); got != 0 {
			t.Errorf("kind %d: owner word %#x; want 0", kind, got)
		}
	}
}

// A map's cell through its series' seal, revival and freeing: sealed with
// the series, revived with it, and given up once the series is freed, the
// map then recording into the successor through the series. Every record
// counts once.
func TestMapCellFollowsEviction(t *testing.T) {
	for _, kind := range []Kind{KindCount, testIntSum} {
		r, a, m := mapCellView(kind)
		j := a.slot % cellSlots
		rd := a.AddReader()
		recordTimes(r, m, 1, 2+mapCellAfter+2) // attached, 2 in the cell
		s := a.AppendSeries(nil)[0]
		total := int64(4 + mapCellAfter)
		s.Evict()
		if c := m.cells[j].Load(); !intSealed(c) || valueOf(kind, s) != total {
			t.Fatalf("kind %d: sealed: cell %#x, series %d; want sealed, %d", kind, c, valueOf(kind, s), total)
		}
		recordTimes(r, m, 1, 1) // revives s
		total++
		if s.Sealed() || m.cellOwner[j].Load() != a.cellID || valueOf(kind, s) != total {
			t.Fatalf("kind %d: revived: sealed %v, owner %#x, series %d; want live, attached, %d", kind, s.Sealed(), m.cellOwner[j].Load(), valueOf(kind, s), total)
		}
		s.Evict()
		rd.Ack(a.SealSeq())
		a.Sweep()
		recordTimes(r, m, 1, 3)
		ns := a.AppendSeries(nil)
		if len(ns) != 1 || ns[0] == s || valueOf(kind, ns[0]) != 3 {
			t.Fatalf("kind %d: successor %v: want one new series of 3", kind, ns)
		}
		if got := m.cellOwner[j].Load(); got != mapCellWord(a, mapCellDead) {
			t.Errorf("kind %d: owner word %#x after the series was freed; want given up", kind, got)
		}
	}
}

// A probe that finds another recorder's add gives the map's cell up; the
// records go on through the series, and none is lost.
func TestMapCellContention(t *testing.T) {
	r, a, m := mapCellView(KindCount)
	j := a.slot % cellSlots
	recordTimes(r, m, 1, 2+mapCellAfter)
	c := &m.cells[j]
	w := c.Add(1)
	c.Add(1) // another recorder's, before the probe
	m.cellFinish(a, j, w, 1)
	if got := m.cellOwner[j].Load(); got != mapCellWord(a, mapCellDead) {
		t.Fatalf("owner word %#x after a contended probe; want given up", got)
	}
	recordTimes(r, m, 1, 5)
	if got, want := countOf(t, a), int64(2+mapCellAfter+2+5); got != want {
		t.Errorf("count %d; want %d", got, want)
	}
}

// Two views whose aggregators share a cell slot, recorded through one map:
// the first to attach keeps the cell, the other records through the
// series, and each counts exactly.
func TestMapCellSlotShared(t *testing.T) {
	m := &Measure{Name: "mapcell/shared"}
	var aggs []*Aggregator
	for len(aggs) < 2 {
		a := NewAggregator(KindCount, []string{"k"}, nil, 0)
		if len(aggs) == 0 || a.slot%cellSlots == aggs[0].slot%cellSlots {
			aggs = append(aggs, a)
			m.Subscribe(a)
		}
	}
	tm := NewTagMap(tagsOf("k", "x"))
	recordTimes(&MeasureRef{Desc: m}, tm, 1, 50)
	for i, a := range aggs {
		if got := countOf(t, a); got != 50 {
			t.Errorf("view %d: count %d; want 50", i, got)
		}
	}
	if got := tm.cellOwner[aggs[0].slot%cellSlots].Load(); got != aggs[0].cellID {
		t.Errorf("owner word %#x; want the first view's, attached", got)
	}
}

// TestTagMapLayout: a map's cells cost it 48 bytes, a context tag.New
// builds around it 160 (see boundcell.go: the context's size is most of a
// record's cost with many live series).
func TestTagMapLayout(t *testing.T) {
	if got := unsafe.Sizeof(TagMap{}); got != 144 {
		t.Errorf("TagMap is %d bytes; want 144", got)
	}
	if got := unsafe.Sizeof(ownCtx{}); got != 160 {
		t.Errorf("ownCtx is %d bytes; want 160", got)
	}
}
