package view_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// seenExporter reports, once armed, the first ExportView of the view named
// name.
type seenExporter struct {
	name  string
	mu    sync.Mutex
	armed bool
	seen  chan struct{}
}

func (e *seenExporter) arm() {
	e.mu.Lock()
	e.armed = true
	e.mu.Unlock()
}

func (e *seenExporter) ExportView(d *view.Data) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.armed && d.View.Name == e.name {
		e.armed = false
		close(e.seen)
	}
}

// TestUnregisterReleasesOutsideReports: while Unregister releases the rows
// of a view (linear in them: a fraction of a second for a million), the
// periodic reports of the other views go on. Issue 18: Unregister held
// reportMu throughout, 5.8 s for a million rows, and no view reported.
// The release hook blocks the release of the first row until a report of
// another view has been seen; it would wait forever (here: 60 s, then
// fail) if the release ran under the reports' lock.
func TestUnregisterReleasesOutsideReports(t *testing.T) {
	other := stats.Int64("unreg/other", "", "")
	big := stats.Int64("unreg/big", "", "")
	vo := &view.View{Measure: other, Aggregation: view.Count()}
	vb := &view.View{Measure: big, Aggregation: view.Count(), TagKeys: []tag.Key{keyA}}
	register(t, vo, vb)
	stats.Record(context.Background(), other.M(1))
	for i := range 100 {
		stats.Record(ctxWith(t, tag.Upsert(keyA, string(rune('a'+i%26))+string(rune('a'+i/26)))), big.M(1))
	}
	e := &seenExporter{name: vo.Name, seen: make(chan struct{})}
	view.RegisterExporter(e)
	defer view.UnregisterExporter(e)
	view.SetReportingPeriod(time.Millisecond)
	defer view.SetReportingPeriod(0)

	released, blocked := 0, false
	defer core.SetReleaseHook(func(*core.Series) {
		released++
		if released > 1 {
			return
		}
		e.arm()
		select {
		case <-e.seen:
		case <-time.After(60 * time.Second):
			blocked = true
		}
	})()
	view.Unregister(vb)
	if blocked {
		t.Errorf("no report of %q while Unregister released the rows of %q", vo.Name, vb.Name)
	}
	if released != 100 {
		t.Errorf("Unregister released %d rows; want 100", released)
	}
}
