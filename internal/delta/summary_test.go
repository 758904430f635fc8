package delta

import (
	"slices"
	"testing"

	"github.com/zerostat/zerostat/internal/core"
)

// TestSummaryNeverDelta: no preference and no "every view delta" reads a
// summary as deltas (Kinds.Has, Reads); Read gives its current values,
// cumulatively and through a delta tracker alike, unchanged reads too
// (a state: always said, never judged idle, never evicted), reusing the
// Quants buffer.
func TestSummaryNeverDelta(t *testing.T) {
	for _, p := range []Preference{PreferCumulative, PreferDelta, PreferLowMemory} {
		if p.Delta(core.KindSummary) {
			t.Errorf("%v: a summary is delta", p)
		}
		k, err := NewKinds(false, p, "")
		if err != nil {
			t.Fatal(err)
		}
		if k.Has(core.KindSummary) {
			t.Errorf("%v: Kinds has the summary", p)
		}
	}
	all, err := NewKinds(true, PreferCumulative, "")
	if err != nil {
		t.Fatal(err)
	}
	a := core.NewAggregator(core.KindSummary, nil, nil, 0)
	if err := a.SetQuantiles([]float64{0.5, 0.9}); err != nil {
		t.Fatal(err)
	}
	if err := a.SetSummary(nil, 5, 2.5, []float64{0.4, 0.8}); err != nil {
		t.Fatal(err)
	}
	v := &core.View{Name: "s", Agg: a}
	if all.Has(core.KindSummary) || all.Reads(v) {
		t.Error("Temporality Delta reads the summary as deltas")
	}
	s := a.AppendSeries(nil)[0]
	tr := NewTracker(1) // evict after one unchanged read
	defer tr.Close()
	st := tr.View(a)
	var out Values
	for i, view := range []*View{nil, st, st, st} {
		if !Read(core.KindSummary, s, view, nil, &out) {
			t.Fatalf("read %d: nothing to say", i)
		}
		if out.Count != 5 || out.Sum != 2.5 || !slices.Equal(out.Quants, []float64{0.4, 0.8}) {
			t.Errorf("read %d: %+v; want the current values", i, out)
		}
	}
	buf := &out.Quants[0]
	Read(core.KindSummary, s, nil, nil, &out)
	if &out.Quants[0] != buf {
		t.Error("Read did not reuse Quants")
	}
	if s.Sealed() {
		t.Error("the summary's series was evicted")
	}
}
