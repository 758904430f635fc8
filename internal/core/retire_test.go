package core

import (
	"slices"
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
	s1, s2 := r1.Seq(), r2.Seq()
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
	r1.Ack(r1.Seq())
	if inExport(r1, v) || !inExport(r2, v) {
		t.Fatal("after r1 exported it: want it in r2's exports only, once in r1's")
	}
	r2.Ack(s2)
	r2.Ack(r2.Seq())
	if inExport(r2, v) {
		t.Fatal("the view is still exported after every reader read it")
	}
	if ss := v.Agg.AppendSeries(nil); len(ss) != 0 || v.Agg.Overflow() != nil {
		t.Fatalf("after its last export the aggregator keeps %d series, overflow %v; want none", len(ss), v.Agg.Overflow())
	}

	// A new view of a retiring view's name replaces it.
	old := newView("retire/name")
	RemoveView(old)
	old.Agg.Detach()
	nv := newView("retire/name")
	if inExport(r1, old) || !inExport(r1, nv) || old.Agg.final.Load() != nil {
		t.Fatal("a view registered under a retiring view's name did not replace it")
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
