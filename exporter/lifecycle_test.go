package exporter

import (
	"context"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

// TestHeaderStartCoversThePayload: a payload's header.start is never
// later than a value it holds (issue 12, item 6). The first delta payload
// carries values recorded before the exporter existed, so it starts at its
// views' start; a cumulative payload starts at the earliest start of its
// own views, not of every registered view.
func TestHeaderStartCoversThePayload(t *testing.T) {
	old := stats.Int64("hdrstart/old", "", "")
	vOld := &view.View{Measure: old, Aggregation: view.Count()}
	if err := view.Register(vOld); err != nil { // never recorded: not in pushed payloads
		t.Fatal(err)
	}
	defer view.Unregister(vOld)
	m := stats.Int64("hdrstart/m", "", "")
	v := &view.View{Measure: m, Aggregation: view.Count()}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	stats.Record(context.Background(), m.M(1))
	vStart, oldStart := viewStart(t, v.Name), viewStart(t, vOld.Name)
	if !oldStart.Before(vStart) {
		t.Skip("the two views started at the same instant") // a coarse clock
	}

	for _, temp := range []wire.Temporality{Delta, Cumulative} {
		var c collect
		e, err := New(c.sink(t), Options{Temporality: temp})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := e.Export(context.Background()); err != nil {
				t.Fatal(err)
			}
			stats.Record(context.Background(), m.M(1))
		}
		for i, p := range c.payloads {
			var w *wire.View
			for j := range p.Views {
				if p.Views[j].Name == v.Name {
					w = &p.Views[j]
				}
				if p.Views[j].Name == vOld.Name {
					t.Errorf("%v payload %d carries the view with no rows", temp, i)
				}
			}
			if w == nil {
				t.Fatalf("%v payload %d: no %s", temp, i, v.Name)
			}
			want := w.Start // first delta, and every cumulative payload
			if temp == Delta && i > 0 {
				want = c.payloads[i-1].End
			}
			if !p.Start.Equal(want) {
				t.Errorf("%v payload %d: header.start %v; want %v (view start %v, exporter created after it)",
					temp, i, p.Start, want, w.Start)
			}
		}
		if err := e.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// viewStart returns when the registered view name started.
func viewStart(t *testing.T, name string) time.Time {
	t.Helper()
	for _, v := range core.Views() {
		if v.Name == name {
			return v.Agg.Start()
		}
	}
	t.Fatalf("view %s not registered", name)
	return time.Time{}
}
