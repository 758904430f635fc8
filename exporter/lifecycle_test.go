package exporter

import (
	"context"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
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

// TestRecreatedRowCarriesItsStart: after a series is evicted and its tags
// recorded again, its cumulative count restarts (5 -> 1); the cumulative
// payload gives that row its own start, so a backend sees a reset, not a
// decrease (issue 12, item 4: the payload kept only the view's start).
// Rows never re-created carry none.
func TestRecreatedRowCarriesItsStart(t *testing.T) {
	m := stats.Int64("recreated/m", "", "")
	v := &view.View{Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	ctxOf := func(route string) context.Context {
		ctx, err := tag.New(context.Background(), tag.Upsert(keyRoute, route))
		if err != nil {
			t.Fatal(err)
		}
		return ctx
	}
	again, steady := ctxOf("/again"), ctxOf("/steady")
	for range 5 {
		stats.Record(again, m.M(1))
	}
	var c collect
	cum, err := New(c.sink(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := New(FuncSink(func(context.Context, Payload) error { return nil }), Options{Temporality: Delta, EvictIdleAfter: 1})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // reads the records, seals the idle series, frees it
		stats.Record(steady, m.M(1)) // never idle
		if err := ev.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	// (Not stopped: Stop's final export would find /steady idle.)
	stats.Record(again, m.M(1))
	if err := cum.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	var w *wire.View
	for i := range c.payloads[0].Views {
		if c.payloads[0].Views[i].Name == v.Name {
			w = &c.payloads[0].Views[i]
		}
	}
	if w == nil {
		t.Fatal("view not exported")
	}
	rows, _ := view.RetrieveData(v.Name)
	starts := map[string]time.Time{}
	for _, r := range rows {
		starts[r.Tags[0].Value] = r.Data.(*view.CountData).Start
	}
	for i, r := range w.Rows {
		switch r.Values[0] {
		case "/again":
			if r.Count != 1 || !w.RowStart(i).Equal(starts["/again"]) || !w.RowStart(i).After(w.Start) {
				t.Errorf("re-created row: count %d since %v; want 1 since its series' start %v (view start %v)",
					r.Count, w.RowStart(i), starts["/again"], w.Start)
			}
		case "/steady":
			if r.Count != 3 || !w.RowStart(i).Equal(w.Start) {
				t.Errorf("steady row: count %d since %v; want 3 since the view's start %v", r.Count, w.RowStart(i), w.Start)
			}
		}
	}
	if len(w.Rows) != 2 || len(w.RowStarts) != 1 {
		t.Errorf("%d rows, %d with a start; want 2 and 1", len(w.Rows), len(w.RowStarts))
	}
}

// TestConstantGaugeSurvivesEviction: with EvictIdleAfter on a delta
// exporter, a last value recorded once (build_info 1) is in every payload
// and stays readable by every other reader (issue 12, item 3: it vanished
// after four exports, from RetrieveData and the Prometheus scrape too).
func TestConstantGaugeSurvivesEviction(t *testing.T) {
	m := stats.Int64("gauge/build_info", "", "")
	v := &view.View{Measure: m, Aggregation: view.LastValue()}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	stats.Record(context.Background(), m.M(1))
	var c collect
	e, err := New(c.sink(t), Options{Temporality: Delta, EvictIdleAfter: 1})
	if err != nil {
		t.Fatal(err)
	}
	for range 6 {
		if err := e.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for seq := uint64(1); seq <= 6; seq++ {
		if r, ok := c.rowsOf(t, v.Name, seq)[""]; !ok || r.Value != 1 {
			t.Errorf("export %d: gauge row %+v (present %v); want 1", seq, r, ok)
		}
	}
	if rows, _ := view.RetrieveData(v.Name); len(rows) != 1 || rows[0].Data.(*view.LastValueData).Value != 1 {
		t.Errorf("RetrieveData %v; want the gauge's 1", rows)
	}
}
