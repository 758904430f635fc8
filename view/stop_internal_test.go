package view

import (
	"testing"
	"time"

	"github.com/zerostat/zerostat/stats"
)

type chanExp chan *Data

func (c chanExp) ExportView(d *Data) { c <- d }

// Stop ends the default meter's reporting goroutine (it has returned when
// Stop returns) and RegisterExporter does not restart it; views keep
// aggregating. (Restarted at the end: package-level state.)
func TestStopDefault(t *testing.T) {
	m := stats.Int64("stop/count", "", stats.UnitDimensionless)
	v := &View{Measure: m, Aggregation: Count()}
	if err := Register(v); err != nil {
		t.Fatal(err)
	}
	defer Unregister(v)
	exp := make(chanExp, 64)
	RegisterExporter(exp)
	defer UnregisterExporter(exp)
	SetReportingPeriod(time.Millisecond)
	defer SetReportingPeriod(0)
	select {
	case <-exp:
	case <-time.After(30 * time.Second):
		t.Fatal("no report before Stop")
	}
	Stop()
	defer defaultWorker.Start()
	defaultWorker.expMu.Lock()
	running := defaultWorker.loopStop != nil
	defaultWorker.expMu.Unlock()
	if running {
		t.Fatal("the reporting loop still runs after Stop")
	}
	other := make(chanExp, 1)
	RegisterExporter(other)
	defer UnregisterExporter(other)
	defaultWorker.expMu.Lock()
	running = defaultWorker.loopStop != nil
	defaultWorker.expMu.Unlock()
	if running {
		t.Error("RegisterExporter after Stop restarted the reports")
	}
	stats.Record(nil, m.M(1))
	rows, err := RetrieveData(v.Name)
	if err != nil || len(rows) != 1 || rows[0].Data.(*CountData).Value != 1 {
		t.Errorf("after Stop: rows %v, %v; want count 1", rows, err)
	}
}
