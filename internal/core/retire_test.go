package core

import (
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
)

func inExport(r *ExportReader, v *View) bool { return slices.Contains(ExportViews(r), v) }

// TestRetiringViews: a view removed while export readers are registered
// leaves Views and FindView at once but stays in what each reader exports
// (ExportViews(r)), with the series and the overflow series Detach took
// from its aggregator, until that reader has acknowledged an export that
// read it: once per reader. A reader registered after the removal, and
// the nil reader, never see it. When every reader has, its final series
// are dropped. Without readers, a removed view leaves at once; a view
// registered under a retiring view's name replaces it.
func TestRetiringViews(t *testing.T) {
	newView := func(name string) *View {
		a := NewAggregator(KindCount, []string{"k"}, nil, 2)
		v := &View{Name: name, Keys: []string{"k"}, Agg: a}
		AddView(v)
		for _, val := range []string{"a", "b", "c"} { // the third overflows
			a.RecordTags(tagsOf("k", val), 1)
		}
		return v
	}

	v := newView("retire/none")
	RemoveView(v)
	v.Agg.Detach()
	if inExport(nil, v) || FindView(v.Name) != nil {
		t.Fatal("without export readers, a removed view is still exported")
	}

	r1, r2 := AddExportReader(), AddExportReader()
	defer RemoveExportReader(r1)
	defer RemoveExportReader(r2)
	v = newView("retire/two")
	s1, s2 := r1.Ticket(), r2.Ticket()
	RemoveView(v)
	v.Agg.Detach()
	late := AddExportReader()
	defer RemoveExportReader(late)
	if FindView(v.Name) != nil || slices.Contains(Views(), v) {
		t.Fatal("a removed view is still registered")
	}
	if !inExport(r1, v) || !inExport(r2, v) || inExport(late, v) || inExport(nil, v) {
		t.Fatal("a view removed with export readers registered: want it exported to them only")
	}
	if ss := v.Agg.AppendSeries(nil); len(ss) != 2 || v.Agg.Overflow() == nil {
		t.Fatalf("the retiring view's aggregator shows %d series and overflow %v; want its 2 series and its overflow", len(ss), v.Agg.Overflow())
	}
	r1.Ack(s1) // an export that began before the removal read none of it
	if !inExport(r1, v) {
		t.Fatal("the view left r1's exports before an export that read it")
	}
	r1.Ack(r1.Ticket())
	if inExport(r1, v) || !inExport(r2, v) {
		t.Fatal("after r1 exported it: want it in r2's exports only, once in r1's")
	}
	r2.Ack(s2)
	r2.Ack(r2.Ticket())
	if inExport(r2, v) {
		t.Fatal("the view is still exported after every reader read it")
	}
	if ss := v.Agg.AppendSeries(nil); len(ss) != 0 || v.Agg.Overflow() != nil {
		t.Fatalf("after its last export the aggregator keeps %d series, overflow %v; want none", len(ss), v.Agg.Overflow())
	}

	// A new view of a retiring view's name waits for it: each reader's
	// next export holds the retiring view, the one after it the new one.
	old := newView("retire/name")
	RemoveView(old)
	old.Agg.Detach()
	nv := newView("retire/name")
	if !inExport(r1, old) || inExport(r1, nv) || old.Agg.final.Load() == nil {
		t.Fatal("a view registered under a retiring view's name: want the retiring view exported first, the new one held back")
	}
	r1.Ack(r1.Ticket())
	if inExport(r1, old) || !inExport(r1, nv) || !inExport(r2, old) || inExport(r2, nv) {
		t.Fatal("after r1 exported the retiring view: want the new one in r1's exports, the retiring one still in r2's")
	}
	r2.Ack(r2.Ticket())
	late.Ack(late.Ticket())
	if !inExport(r2, nv) || old.Agg.final.Load() != nil {
		t.Fatal("after every reader exported the retiring view: want it gone, the new one exported")
	}
	RemoveView(nv)
	nv.Agg.Detach()
	// Removing the readers drops what only they held.
	RemoveExportReader(r1)
	RemoveExportReader(r2)
	RemoveExportReader(late)
	if inExport(r1, nv) || nv.Agg.final.Load() != nil {
		t.Fatal("a retiring view outlived its readers")
	}
}

// TestRetiringViewsOfOneName: a view unregistered and registered again
// twice before a reader exports: the reader's exports hold one view of the
// name each, oldest first, and an acknowledgement covers only the view
// the export held, never one it held back.
func TestRetiringViewsOfOneName(t *testing.T) {
	r := AddExportReader()
	defer RemoveExportReader(r)
	mk := func() *View {
		a := NewAggregator(KindCount, nil, nil, 0)
		v := &View{Name: "retire/again", Agg: a}
		AddView(v)
		return v
	}
	v1 := mk()
	RemoveView(v1)
	v1.Agg.Detach()
	v2 := mk()
	RemoveView(v2)
	v2.Agg.Detach()
	v3 := mk()
	defer func() { RemoveView(v3); v3.Agg.Detach() }()
	for i, want := range []*View{v1, v2, v3, v3} {
		tk := r.Ticket()
		var got []*View
		for _, v := range ExportViews(r) {
			if v.Name == "retire/again" {
				got = append(got, v)
			}
		}
		if len(got) != 1 || got[0] != want {
			t.Fatalf("export %d holds %d views of the name (%v); want exactly the %d-th registration", i, len(got), got, min(i, 2)+1)
		}
		if v3.Agg.shadowed.Load() != (i < 2) {
			t.Fatalf("export %d: the registered view held back %v; want it until an export holds it", i, v3.Agg.shadowed.Load())
		}
		r.Read(tk)
		r.Ack(tk)
	}
}

// TestRemoveViewAlwaysExported: at every point of RemoveView, an export
// reader finds the view, registered or retiring (retireHook runs between
// the two publications).
func TestRemoveViewAlwaysExported(t *testing.T) {
	r := AddExportReader()
	defer RemoveExportReader(r)
	v := &View{Name: "retire/window", Agg: NewAggregator(KindCount, nil, nil, 0)}
	AddView(v)
	seen := false
	retireHook = func(got *View) {
		seen = true
		if got != v || !inExport(r, v) {
			t.Error("between the two publications an export does not find the view")
		}
	}
	defer func() { retireHook = nil }()
	RemoveView(v)
	v.Agg.Detach()
	if !seen || !inExport(r, v) {
		t.Fatalf("hook ran %v; after RemoveView the view is exported %v", seen, inExport(r, v))
	}
	r.Ack(r.Ticket())
}

// TestSweepWaitsForExportReaders: a series evicted by one delta reader is
// not freed while a started exporter (cumulative too) has not read it
// sealed: an export that began before the seal does not release it, one
// that began after does.
func TestSweepWaitsForExportReaders(t *testing.T) {
	r := AddExportReader() // added before the view is
	defer RemoveExportReader(r)
	a := NewAggregator(KindCount, []string{"k"}, nil, 0)
	v := &View{Name: "retire/hold", Keys: []string{"k"}, Agg: a}
	AddView(v)
	defer func() { RemoveView(v); a.Detach() }()
	mark := a.AddReader()
	a.RecordTags(tagsOf("k", "x"), 1)
	before := r.Ticket()
	a.AppendSeries(nil)[0].Evict()
	mark.Ack(a.SealSeq())
	r.Read(before)
	a.Sweep()
	if a.Len() != 1 {
		t.Fatal("a sealed series was freed before a started exporter read it sealed")
	}
	r.Read(r.Ticket())
	a.Sweep()
	if a.Len() != 0 {
		t.Fatalf("%d series left after every reader read it sealed", a.Len())
	}
}

// TestExportViewsNeverMissesViewBeingRemoved races ExportViews against
// RemoveView: a reader always finds the view, registered or retiring.
// ExportViews loads the registry before the export set, the reverse of
// the order RemoveView publishes them in (a review found the other order
// missing it within about 100 rounds).
func TestExportViewsNeverMissesViewBeingRemoved(t *testing.T) {
	r := AddExportReader()
	defer RemoveExportReader(r)
	rounds := 3000
	if testing.Short() {
		rounds = 300
	}
	for round := range rounds {
		v := &View{Name: "retire/race", Agg: NewAggregator(KindCount, nil, nil, 0)}
		AddView(v)
		var stop, started atomic.Bool
		misses := make(chan int)
		go func() {
			n := 0
			for !stop.Load() {
				started.Store(true)
				if !slices.Contains(ExportViews(r), v) {
					n++
				}
			}
			misses <- n
		}()
		for !started.Load() {
			runtime.Gosched()
		}
		for range round % 64 {
		}
		RemoveView(v)
		stop.Store(true)
		if n := <-misses; n > 0 {
			t.Fatalf("round %d: an export found the view neither registered nor retiring %d times", round, n)
		}
		v.Agg.Detach()
		r.Ack(r.Ticket()) // the export set back to nil
	}
}

// TestHeldBackViewRemovedKeepsSeries: a view held back for a retiring
// one of its name, sealed by another reader, then unregistered before the
// held-back reader exported it: its sealed series is not freed, and the
// reader's later export holds it with its count.
func TestHeldBackViewRemovedKeepsSeries(t *testing.T) {
	r := AddExportReader()
	defer RemoveExportReader(r)
	mk := func() *View {
		a := NewAggregator(KindCount, []string{"k"}, nil, 0)
		v := &View{Name: "retire/heldback", Keys: []string{"k"}, Agg: a}
		AddView(v)
		return v
	}
	v1 := mk()
	RemoveView(v1)
	v1.Agg.Detach()
	v2 := mk()
	a := v2.Agg
	a.RecordTags(tagsOf("k", "x"), 1)
	mark := a.AddReader()
	a.AppendSeries(nil)[0].Evict()
	mark.Ack(a.SealSeq())
	tk := r.Ticket()
	_ = ExportViews(r) // holds v1; v2 held back
	RemoveView(v2)     // a reload; not yet detached
	r.Read(tk)         // the export failed: read, not acknowledged
	a.Sweep()
	if a.Len() == 0 {
		t.Fatal("the held-back view's series was freed before the reader exported it")
	}
	a.Detach()
	r.Ack(r.Ticket()) // an export holding v1
	var got int64
	for _, v := range ExportViews(r) {
		if v == v2 {
			for _, s := range v.Agg.AppendSeries(nil) {
				got += s.ReadCount()
			}
		}
	}
	if got != 1 {
		t.Errorf("the reader's next export holds v2 with count %d; want 1", got)
	}
	r.Ack(r.Ticket())
}

// TestFailingReaderHoldsOnlyHeldBackViews: an exporter whose exports keep
// failing after a view was registered again under a retiring view's name
// holds that view's eviction only (until it exports the retiring one);
// the series of every other view, registered after it too, are freed.
func TestFailingReaderHoldsOnlyHeldBackViews(t *testing.T) {
	r := AddExportReader()
	defer RemoveExportReader(r)
	mk := func(name string) *View {
		a := NewAggregator(KindCount, []string{"k"}, nil, 0)
		v := &View{Name: name, Keys: []string{"k"}, Agg: a}
		AddView(v)
		return v
	}
	v1 := mk("retire/failing")
	RemoveView(v1)
	v1.Agg.Detach()
	v2 := mk("retire/failing")
	other := mk("retire/unrelated")
	defer func() { RemoveView(v2); v2.Agg.Detach(); RemoveView(other); other.Agg.Detach() }()
	seal := func(a *Aggregator) {
		mark := a.AddReader()
		for i := range 100 {
			a.RecordTags(tagsOf("k", fmt.Sprint(i)), 1)
		}
		for _, s := range a.AppendSeries(nil) {
			s.Evict()
		}
		mark.Ack(a.SealSeq())
	}
	seal(v2.Agg)
	seal(other.Agg)
	for range 3 { // failing exports: read, never acknowledged
		r.Read(r.Ticket())
		v2.Agg.Sweep()
		other.Agg.Sweep()
	}
	if n := other.Agg.Len(); n != 0 {
		t.Errorf("%d sealed series of an unrelated view never freed while an exporter fails", n)
	}
	if n := v2.Agg.Len(); n != 100 {
		t.Errorf("%d series of the held-back view left; want its 100 kept until the reader exports it", n)
	}
	// The backend is back: the retiring view is delivered, then the view
	// read, and its series go.
	tk := r.Ticket()
	r.Read(tk)
	r.Ack(tk)
	v2.Agg.Sweep()
	if v2.Agg.Len() != 100 {
		t.Error("the held-back view's series were freed before an export read it")
	}
	r.Read(r.Ticket())
	v2.Agg.Sweep()
	if n := v2.Agg.Len(); n != 0 {
		t.Errorf("%d series left after the reader read the view", n)
	}
}
