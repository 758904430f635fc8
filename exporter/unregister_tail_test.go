package exporter

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

// TestUnregisterTailReachesPushExporter: records made into a view after
// a started exporter's last export and before the view is unregistered (an
// otel.MeterProvider's Shutdown, a per-tenant view taken down) reach the
// exporter in its next export (core.ExportViews), once, and the view is
// gone from the export after that. Before, the exporter read the
// registered views only, and the backend got 5 of the 8 records.
func TestUnregisterTailReachesPushExporter(t *testing.T) {
	for _, temp := range []wire.Temporality{Delta, Cumulative} {
		m := stats.Int64("unreg_tail/m"+temp.String(), "", "")
		v := &view.View{Name: "unreg_tail/v" + temp.String(), Measure: m, Aggregation: view.Count()}
		if err := view.Register(v); err != nil {
			t.Fatal(err)
		}
		var c collect
		e, err := New(c.sink(t), Options{Temporality: temp, Interval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		e.Start() // from Start to Stop it reads the unregistered views too; the exports below are Export's
		for range 5 {
			stats.Record(context.Background(), m.M(1))
		}
		if err := e.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			stats.Record(context.Background(), m.M(1))
		}
		view.Unregister(v) // recorded 8 in all, 3 after the last export
		if _, err := view.RetrieveData(v.Name); err == nil {
			t.Fatal("RetrieveData of an unregistered view: no error")
		}
		if err := e.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
		n := len(c.payloads)
		if err := e.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, p := range c.payloads[n:] {
			for _, w := range p.Views {
				if w.Name == v.Name {
					t.Errorf("%v: the view is in the export after the one that sent its tail", temp)
				}
			}
		}
		if err := e.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		var total, last uint64
		for _, p := range c.payloads {
			for _, w := range p.Views {
				if w.Name != v.Name {
					continue
				}
				for _, r := range w.Rows {
					total += r.Count
					last = r.Count
				}
			}
		}
		got := total // delta: the sum of the intervals
		if temp == Cumulative {
			got = last // cumulative: the last total sent
		}
		if got != 8 {
			t.Errorf("%v: the backend got %d of the 8 records; want every one, the 3 made after the last export too", temp, got)
		}
	}
}

// TestUnregisterTailWhileExporting: exports running while views are
// unregistered (between RemoveView and Detach, or during Detach) still
// deliver every record made before Unregister, exactly, in delta and in
// cumulative. (Detach used to empty the table before keeping the final
// series: an export in between read none and acknowledged the view.)
func TestUnregisterTailWhileExporting(t *testing.T) {
	for _, temp := range []wire.Temporality{Delta, Cumulative} {
		var c collect
		e, err := New(c.sink(t), Options{Temporality: temp, Interval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		e.Start()
		const views, records = 50, 7
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := range views {
				m := stats.Int64(fmt.Sprintf("unreg_race/%v/m%d", temp, i), "", "")
				v := &view.View{Name: fmt.Sprintf("unreg_race/%v/v%d", temp, i), Measure: m, Aggregation: view.Count()}
				if err := view.Register(v); err != nil {
					t.Error(err)
					return
				}
				for range records {
					stats.Record(context.Background(), m.M(1))
				}
				view.Unregister(v)
			}
		}()
		for exporting := true; exporting; {
			select {
			case <-done:
				exporting = false
			default:
			}
			if err := e.Export(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := viewCounts(c.payloads, temp)
		for i := range views {
			if name := fmt.Sprintf("unreg_race/%v/v%d", temp, i); got[name] != records {
				t.Errorf("%v: %s: the backend got %d of %d records", temp, name, got[name], records)
			}
		}
	}
}
