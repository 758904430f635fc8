package opencensus

import (
	"maps"
	"testing"
	"time"

	"go.opencensus.io/metric/metricdata"

	"github.com/zerostat/zerostat/metric"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// TestProducerSummary: a callback summary is published as OpenCensus's
// summary metric: TypeSummary, a label key per tag key, one point per
// row, a metricdata.Summary with the row's count and sum
// (HasCountAndSum) and its quantiles as percentiles (q×100); the
// view.Exporter path, whose view.Data has no summary, leaves it out.
func TestProducerSummary(t *testing.T) {
	k := tag.MustNewKey("route")
	s, err := metric.NewSummary("ocsum/pause", "Pauses", "s", []float64{0, 0.5, 1}, []tag.Key{k}, func(o *metric.SummaryObserver) {
		o.Observe(4, 0.013, []float64{0.001, 0.0025, 0.006}, "/a")
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Unregister)
	metric.Collect()
	var m *metricdata.Metric
	for _, x := range NewProducer(Options{}).Read() {
		if x.Descriptor.Name == "ocsum/pause" {
			m = x
		}
	}
	if m == nil {
		t.Fatal("the producer left the summary out")
	}
	if m.Descriptor.Type != metricdata.TypeSummary || m.Descriptor.Description != "Pauses" ||
		len(m.Descriptor.LabelKeys) != 1 || m.Descriptor.LabelKeys[0].Key != "route" || len(m.TimeSeries) != 1 {
		t.Fatalf("metric %+v", m)
	}
	ts := m.TimeSeries[0]
	if len(ts.LabelValues) != 1 || ts.LabelValues[0].Value != "/a" || len(ts.Points) != 1 || ts.StartTime.IsZero() {
		t.Fatalf("time series %+v", ts)
	}
	sum, ok := ts.Points[0].Value.(*metricdata.Summary)
	if !ok {
		t.Fatalf("point %T", ts.Points[0].Value)
	}
	want := map[float64]float64{0: 0.001, 50: 0.0025, 100: 0.006}
	if sum.Count != 4 || sum.Sum != 0.013 || !sum.HasCountAndSum || !maps.Equal(sum.Snapshot.Percentiles, want) ||
		sum.Snapshot.Count != 0 || sum.Snapshot.Sum != 0 {
		t.Errorf("summary %+v; want count 4, sum 0.013, percentiles %v", sum, want)
	}
	rows, err := view.RetrieveData("ocsum/pause")
	if err != nil {
		t.Fatal(err)
	}
	d := &view.Data{View: view.Find("ocsum/pause"), Start: time.Now(), End: time.Now(), Rows: rows}
	if vd := viewData(d); vd != nil {
		t.Errorf("view.Exporter path: %+v; want the summary left out", vd)
	}
}
