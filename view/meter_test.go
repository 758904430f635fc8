package view_test

import (
	"context"
	"testing"
	"time"

	"github.com/zerostat/zerostat/resource"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

func countOf(t *testing.T, rows []*view.Row) int64 {
	t.Helper()
	var n int64
	for _, r := range rows {
		n += r.Data.(*view.CountData).Value
	}
	return n
}

// Two meters and the default one aggregate the same measure independently:
// each view sees only what is recorded into its own meter.
func TestMetersAreIndependent(t *testing.T) {
	m := stats.Int64("meter/requests", "", stats.UnitDimensionless)
	v := &view.View{Name: "meter/requests", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyA}}
	register(t, v)
	m1, m2 := view.NewMeter(), view.NewMeter()
	v1 := &view.View{Name: "meter/requests", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyA}}
	// The same name with other keys is no conflict in another meter.
	v2 := &view.View{Name: "meter/requests", Measure: m, Aggregation: view.Sum()}
	if err := m1.Register(v1); err != nil {
		t.Fatal(err)
	}
	if err := m2.Register(v2); err != nil {
		t.Fatal(err)
	}
	ctx := ctxWith(t, tag.Insert(keyA, "x"))
	stats.Record(ctx, m.M(1))
	for range 2 {
		if err := stats.RecordWithOptions(ctx, stats.WithRecorder(m1), stats.WithMeasurements(m.M(1))); err != nil {
			t.Fatal(err)
		}
	}
	m2.Record(nil, []stats.Measurement{m.M(5), m.M(6)}, nil)
	m2.Record(nil, "not measurements", nil) // ignored

	if got := countOf(t, rows(t, "meter/requests")); got != 1 {
		t.Errorf("default meter: count %d; want 1", got)
	}
	r1, err := m1.RetrieveData("meter/requests")
	if err != nil {
		t.Fatal(err)
	}
	if got := countOf(t, r1); got != 2 || len(r1) != 1 || r1[0].Tags[0].Value != "x" {
		t.Errorf("meter 1: rows %v; want one row a=x count 2", r1)
	}
	r2, err := m2.RetrieveData("meter/requests")
	if err != nil {
		t.Fatal(err)
	}
	if len(r2) != 1 || r2[0].Data.(*view.SumData).Value != 11 {
		t.Errorf("meter 2: rows %v; want one row sum 11", r2)
	}
	if m1.Find("meter/requests") != v1 || m2.Find("meter/requests") != v2 || view.Find("meter/requests") != v {
		t.Error("Find does not return each meter's own view")
	}
	m1.Unregister(v1)
	if _, err := m1.RetrieveData("meter/requests"); err == nil {
		t.Error("meter 1 still has the view after Unregister")
	}
	stats.RecordWithOptions(ctx, stats.WithRecorder(m1), stats.WithMeasurements(m.M(1))) // into no view
	if got := countOf(t, rows(t, "meter/requests")); got != 1 {
		t.Errorf("default meter after meter 1's unregister: count %d; want 1", got)
	}
}

type chanExporter chan *view.Data

func (c chanExporter) ExportView(d *view.Data) { c <- d }

// A meter reports to its own exporters once started, at its own period;
// Stop ends the reports.
func TestMeterExportersAndStop(t *testing.T) {
	m := stats.Int64("meter/exported", "", stats.UnitDimensionless)
	meter := view.NewMeter()
	v := &view.View{Name: "meter/exported", Measure: m, Aggregation: view.Count()}
	if err := meter.Register(v); err != nil {
		t.Fatal(err)
	}
	exp := make(chanExporter, 16)
	meter.RegisterExporter(exp)
	meter.SetReportingPeriod(time.Millisecond)
	meter.Record(nil, []stats.Measurement{m.M(1)}, nil)
	meter.Start()
	select {
	case d := <-exp:
		if d.View != v || len(d.Rows) != 1 || d.Rows[0].Data.(*view.CountData).Value != 1 {
			t.Errorf("report %+v; want the meter's view with count 1", d)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no report from a started meter")
	}
	meter.Stop()
	meter.Stop() // twice: no-op
	for len(exp) > 0 {
		<-exp
	}
	// After Stop returns no report runs: the final one of Unregister is
	// the only one left.
	meter.Unregister(v)
	if d := <-exp; d.View != v {
		t.Errorf("final report of %v; want the unregistered view", d.View)
	}
	if len(exp) != 0 {
		t.Errorf("%d reports after Stop; want none", len(exp))
	}
}

// A meter's exporter gets no report before Start (OpenCensus's meters
// start stopped).
func TestMeterReportsOnlyOnceStarted(t *testing.T) {
	m := stats.Int64("meter/unstarted", "", stats.UnitDimensionless)
	meter := view.NewMeter()
	v := &view.View{Name: "meter/unstarted", Measure: m, Aggregation: view.Count()}
	if err := meter.Register(v); err != nil {
		t.Fatal(err)
	}
	exp := make(chanExporter, 1)
	meter.SetReportingPeriod(time.Nanosecond)
	meter.RegisterExporter(exp)
	meter.Unregister(v) // the final report is synchronous: it proves exp is registered
	if d := <-exp; d.View != v {
		t.Fatalf("final report of %v", d.View)
	}
	meter.UnregisterExporter(exp)
	if len(exp) != 0 {
		t.Fatalf("an unstarted meter reported")
	}
}

type recorderFunc func(*tag.Map, interface{}, map[string]interface{})

func (f *recorderFunc) Record(m *tag.Map, ms interface{}, a map[string]interface{}) { (*f)(m, ms, a) }

// WithRecorder hands the context's tags changed by the mutators, the
// measurements and the attachments to the recorder, and nothing to the
// default views.
func TestWithRecorder(t *testing.T) {
	m := stats.Int64("meter/recorder", "", stats.UnitDimensionless)
	register(t, &view.View{Measure: m, Aggregation: view.Count()})
	var (
		gotTags string
		gotMs   []stats.Measurement
		gotAtt  map[string]interface{}
	)
	rec := recorderFunc(func(tm *tag.Map, ms interface{}, a map[string]interface{}) {
		gotTags, gotMs, gotAtt = tm.String(), ms.([]stats.Measurement), a
	})
	att := map[string]interface{}{"k": "v"}
	err := stats.RecordWithOptions(ctxWith(t, tag.Insert(keyA, "1")), stats.WithRecorder(&rec),
		stats.WithTags(tag.Insert(keyB, "2")), stats.WithMeasurements(m.M(7)), stats.WithAttachments(att))
	if err != nil {
		t.Fatal(err)
	}
	if gotTags != "{ {a 1}{b 2} }" || len(gotMs) != 1 || gotMs[0].Value() != 7 || gotAtt["k"] != "v" {
		t.Errorf("recorder got %s %v %v", gotTags, gotMs, gotAtt)
	}
	if rs := rows(t, "meter/recorder"); len(rs) != 0 {
		t.Errorf("default view got %v; want nothing", rs)
	}
	if err := stats.RecordWithOptions(context.Background(), stats.WithRecorder(&rec),
		stats.WithTags(tag.Insert(tag.Key{}, "x")), stats.WithMeasurements(m.M(1))); err == nil {
		t.Error("an invalid mutator with a recorder: no error")
	}
}

// SetResource replaces the meter's resource (the pointer itself, as in
// OpenCensus); a meter's Views lists its views by name, independent of
// the default meter's.
func TestMeterResourceAndViews(t *testing.T) {
	m := view.NewMeter()
	type bridged interface {
		Resource() *resource.Resource
		Views() []*view.View
	}
	b, ok := m.(bridged)
	if !ok {
		t.Fatalf("%T has no Resource and Views methods", m)
	}
	if r := b.Resource(); r != nil {
		t.Errorf("new meter's resource %+v; want nil", r)
	}
	r1 := &resource.Resource{Type: "k8s", Labels: map[string]string{"k8s.pod.name": "p1"}}
	r2 := &resource.Resource{Type: "host"}
	m.SetResource(r1)
	if b.Resource() != r1 {
		t.Errorf("Resource() = %p; want the %p set", b.Resource(), r1)
	}
	m.SetResource(r2)
	m.SetResource(nil)
	if b.Resource() != nil {
		t.Errorf("Resource() after SetResource(nil) = %+v", b.Resource())
	}
	meas := stats.Int64("meterres/n", "", stats.UnitDimensionless)
	vb := &view.View{Name: "meterres_b", Measure: meas, Aggregation: view.Count()}
	va := &view.View{Name: "meterres_a", Measure: meas, Aggregation: view.Sum()}
	if err := m.Register(vb, va); err != nil {
		t.Fatal(err)
	}
	if got := b.Views(); len(got) != 2 || got[0] != va || got[1] != vb {
		t.Errorf("Views() = %v; want [meterres_a meterres_b]", got)
	}
	if view.Find("meterres_a") != nil {
		t.Error("a meter's view is in the default meter")
	}
	m.Unregister(va)
	if got := b.Views(); len(got) != 1 || got[0] != vb {
		t.Errorf("Views() after Unregister = %v; want [meterres_b]", got)
	}
}
