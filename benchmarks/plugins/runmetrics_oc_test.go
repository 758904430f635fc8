package plugins

import (
	"testing"

	"go.opencensus.io/metric/metricdata"
	"go.opencensus.io/metric/metricproducer"
	ocrun "go.opencensus.io/plugin/runmetrics"

	"github.com/zerostat/zerostat/plugin/runmetrics"
)

// TestRunmetricsMatchOpenCensus enables OpenCensus runmetrics beside
// zerostat's with OpenCensusNames and checks that each of zerostat's
// metrics is one of OpenCensus's, with the same description, unit and
// type (a gauge).
func TestRunmetricsMatchOpenCensus(t *testing.T) {
	if err := ocrun.Enable(ocrun.RunMetricOptions{EnableMemory: true, EnableCPU: true}); err != nil {
		t.Fatal(err)
	}
	defer ocrun.Disable()
	theirs := map[string]metricdata.Descriptor{}
	for _, p := range metricproducer.GlobalManager().GetAll() {
		for _, m := range p.Read() {
			theirs[m.Descriptor.Name] = m.Descriptor
		}
	}
	if len(theirs) == 0 {
		t.Fatal("OpenCensus runmetrics produced no metrics")
	}
	for _, m := range runmetrics.OpenCensusMetrics {
		d, ok := theirs[m.View.Name]
		if !ok {
			t.Errorf("%s: not an OpenCensus runmetrics metric", m.View.Name)
			continue
		}
		if d.Description != m.View.Description || string(d.Unit) != m.View.Measure.Unit() {
			t.Errorf("%s: %q %q; OpenCensus %q %q", m.View.Name, m.View.Description, m.View.Measure.Unit(), d.Description, d.Unit)
		}
		if d.Type != metricdata.TypeGaugeInt64 && d.Type != metricdata.TypeGaugeFloat64 {
			t.Errorf("%s: OpenCensus type %v, not a gauge", m.View.Name, d.Type)
		}
	}
	t.Logf("%d of OpenCensus's %d runmetrics metrics offered", len(runmetrics.OpenCensusMetrics), len(theirs))
}
