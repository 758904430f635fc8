package opencensus_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opencensus.io/metric/metricdata"
	"go.opencensus.io/metric/metricexport"
	"go.opencensus.io/metric/metricproducer"
	ocresource "go.opencensus.io/resource"
	ocstats "go.opencensus.io/stats"
	ocview "go.opencensus.io/stats/view"
	octag "go.opencensus.io/tag"

	"github.com/zerostat/zerostat/bridge/opencensus"
	"github.com/zerostat/zerostat/resource"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// captureExporter is a metricexport.Exporter keeping what it was given.
type captureExporter struct {
	mu      sync.Mutex
	metrics []*metricdata.Metric
}

func (e *captureExporter) ExportMetrics(_ context.Context, ms []*metricdata.Metric) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.metrics = append(e.metrics, ms...)
	return nil
}

// normalize keeps the metrics named with prefix, sorted by name, with
// what two SDKs recording the same values cannot share zeroed: read and
// start times, exemplar times.
func normalize(ms []*metricdata.Metric, prefix string) []*metricdata.Metric {
	var out []*metricdata.Metric
	for _, m := range ms {
		if !strings.HasPrefix(m.Descriptor.Name, prefix) {
			continue
		}
		c := *m
		c.TimeSeries = nil
		for _, ts := range m.TimeSeries {
			cts := *ts
			cts.StartTime = time.Time{}
			cts.Points = nil
			for _, p := range ts.Points {
				p.Time = time.Time{}
				if d, ok := p.Value.(*metricdata.Distribution); ok {
					cd := *d
					cd.Buckets = slices.Clone(d.Buckets)
					for i := range cd.Buckets {
						if e := cd.Buckets[i].Exemplar; e != nil {
							ce := *e
							ce.Timestamp = time.Time{}
							cd.Buckets[i].Exemplar = &ce
						}
					}
					p.Value = &cd
				}
				cts.Points = append(cts.Points, p)
			}
			c.TimeSeries = append(c.TimeSeries, &cts)
		}
		// OpenCensus reads rows in map order.
		slices.SortFunc(c.TimeSeries, func(a, b *metricdata.TimeSeries) int {
			return strings.Compare(fmtV(a.LabelValues), fmtV(b.LabelValues))
		})
		out = append(out, &c)
	}
	slices.SortFunc(out, func(a, b *metricdata.Metric) int { return strings.Compare(a.Descriptor.Name, b.Descriptor.Name) })
	return out
}

// A meter's producer publishes the meter's views with its resource
// exactly as OpenCensus's meter publishes the same views recorded alike:
// metricexport's reader (what the contrib exporters use) receives equal
// metrics, Resource included, from both; SetResource takes effect on the
// next read, nil removes it, and Options.Resource overrides it.
func TestMeterProducerMatchesOpenCensus(t *testing.T) {
	const p = "bridgemeter_"
	// OpenCensus's meter, its views and records.
	ocm := ocview.NewMeter()
	ocm.Start()
	t.Cleanup(ocm.Stop)
	ocKey := octag.MustNewKey("route")
	ocLat := ocstats.Float64(p+"lat", "latency", ocstats.UnitMilliseconds)
	ocN := ocstats.Int64(p+"n", "n", ocstats.UnitDimensionless)
	// OpenCensus has no sum that goes down; what it exports for one is a
	// gauge of the running total (its LastValue of it): the oracle for
	// zerostat's UpDownSum, integer and float.
	ocLevel := ocstats.Int64(p+"level", "level", ocstats.UnitDimensionless)
	ocLevelF := ocstats.Float64(p+"levelf", "levelf", ocstats.UnitBytes)
	ocViews := []*ocview.View{
		{Name: p + "lat", Description: "latency", Measure: ocLat, Aggregation: ocview.Distribution(10, 100), TagKeys: []octag.Key{ocKey}},
		{Name: p + "count", Measure: ocN, Aggregation: ocview.Count(), TagKeys: []octag.Key{ocKey}},
		{Name: p + "sum", Measure: ocN, Aggregation: ocview.Sum()},
		{Name: p + "last", Measure: ocLat, Aggregation: ocview.LastValue()},
		{Name: p + "updown", Description: "level", Measure: ocLevel, Aggregation: ocview.LastValue(), TagKeys: []octag.Key{ocKey}},
		{Name: p + "updownf", Description: "levelf", Measure: ocLevelF, Aggregation: ocview.LastValue()},
	}
	if err := ocm.Register(ocViews...); err != nil {
		t.Fatal(err)
	}
	// zerostat's.
	zsm := view.NewMeter()
	zsKey := tag.MustNewKey("route")
	zsLat := stats.Float64(p+"lat", "latency", stats.UnitMilliseconds)
	zsN := stats.Int64(p+"n", "n", stats.UnitDimensionless)
	zsDelta := stats.Int64(p+"delta", "level", stats.UnitDimensionless)
	zsDeltaF := stats.Float64(p+"deltaf", "levelf", stats.UnitBytes)
	if err := zsm.Register(
		&view.View{Name: p + "lat", Description: "latency", Measure: zsLat, Aggregation: view.Distribution(10, 100), TagKeys: []tag.Key{zsKey}},
		&view.View{Name: p + "count", Measure: zsN, Aggregation: view.Count(), TagKeys: []tag.Key{zsKey}},
		&view.View{Name: p + "sum", Measure: zsN, Aggregation: view.Sum()},
		&view.View{Name: p + "last", Measure: zsLat, Aggregation: view.LastValue()},
		&view.View{Name: p + "updown", Description: "level", Measure: zsDelta, Aggregation: view.UpDownSum(), TagKeys: []tag.Key{zsKey}},
		&view.View{Name: p + "updownf", Description: "levelf", Measure: zsDeltaF, Aggregation: view.UpDownSum()},
	); err != nil {
		t.Fatal(err)
	}
	type rec struct {
		route string
		lat   float64
		n     int64
		att   map[string]interface{}
		delta int64 // the up-down sums' change
	}
	level := map[string]int64{}
	var levelF float64
	for _, r := range []rec{
		{"/a", 3, 1, map[string]interface{}{"id": "x"}, 5},
		{"/a", 50, 2, nil, -7}, // below zero: a counter could not show it
		{"/b", 500, 3, map[string]interface{}{"id": "y"}, 4},
		{"/a", 7, 4, map[string]interface{}{"id": "z"}, 3}, // replaces x, the latest per bucket
	} {
		level[r.route] += r.delta
		levelF += float64(r.delta) / 4
		if err := ocstats.RecordWithOptions(ctxOC(t, ocKey, r.route), ocstats.WithRecorder(ocm),
			ocstats.WithMeasurements(ocLevel.M(level[r.route]), ocLevelF.M(levelF))); err != nil {
			t.Fatal(err)
		}
		if err := stats.RecordWithOptions(ctxWith(t, tag.Upsert(zsKey, r.route)), stats.WithRecorder(zsm),
			stats.WithMeasurements(zsDelta.M(r.delta), zsDeltaF.M(float64(r.delta)/4))); err != nil {
			t.Fatal(err)
		}
		octx, err := octag.New(context.Background(), octag.Upsert(ocKey, r.route))
		if err != nil {
			t.Fatal(err)
		}
		if err := ocstats.RecordWithOptions(octx, ocstats.WithRecorder(ocm), ocstats.WithMeasurements(ocLat.M(r.lat), ocN.M(r.n)),
			ocstats.WithAttachments(r.att)); err != nil {
			t.Fatal(err)
		}
		if err := stats.RecordWithOptions(ctxWith(t, tag.Upsert(zsKey, r.route)), stats.WithRecorder(zsm),
			stats.WithMeasurements(zsLat.M(r.lat), zsN.M(r.n)), stats.WithAttachments(r.att)); err != nil {
			t.Fatal(err)
		}
	}
	zsp, err := opencensus.RegisterMeter(zsm, opencensus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zsp.Unregister)

	// OpenCensus records through a channel: a retrieval waits for the
	// records before it. Then stop its meter, which takes it out of
	// GlobalManager (Read still works), so that metricexport reads only
	// the bridge.
	for _, v := range ocViews {
		if _, err := ocm.RetrieveData(v.Name); err != nil {
			t.Fatal(err)
		}
	}
	ocm.Stop()

	// read returns what metricexport reads through the bridge and what
	// OpenCensus's meter, a producer itself, reads.
	read := func() (zs, oc []*metricdata.Metric) {
		t.Helper()
		oc = normalize(ocm.(metricproducer.Producer).Read(), p)
		var e captureExporter
		metricexport.NewReader().ReadAndExport(&e)
		zs = normalize(e.metrics, p)
		return zs, oc
	}
	check := func(phase string, want *ocresource.Resource) {
		t.Helper()
		zs, oc := read()
		if len(zs) != len(ocViews) || !reflect.DeepEqual(zs, oc) {
			t.Errorf("%s: the bridge reads\n%s\nOpenCensus's meter\n%s", phase, dump(zs), dump(oc))
		}
		for _, m := range zs {
			if !reflect.DeepEqual(m.Resource, want) {
				t.Errorf("%s: %s resource %+v; want %+v", phase, m.Descriptor.Name, m.Resource, want)
			}
		}
	}
	check("no resource", nil)

	labels := map[string]string{"k8s.pod.name": "web-1", "k8s.namespace.name": "prod"}
	zsm.SetResource(&resource.Resource{Type: "k8s", Labels: labels})
	ocm.SetResource(&ocresource.Resource{Type: "k8s", Labels: map[string]string{"k8s.pod.name": "web-1", "k8s.namespace.name": "prod"}})
	check("SetResource", &ocresource.Resource{Type: "k8s", Labels: labels})
	// One pointer per SetResource, shared by every metric and read, as
	// OpenCensus's meter returns its own.
	zs1, _ := read()
	zs2, _ := read()
	if zs1[0].Resource != zs1[1].Resource || zs1[0].Resource != zs2[0].Resource {
		t.Errorf("the resource is converted per metric or per read")
	}

	zsm.SetResource(&resource.Resource{Type: "host"})
	ocm.SetResource(&ocresource.Resource{Type: "host"})
	check("SetResource again", &ocresource.Resource{Type: "host"})

	zsm.SetResource(nil)
	ocm.SetResource(nil)
	check("SetResource(nil)", nil)

	over := &ocresource.Resource{Type: "override"}
	op, err := opencensus.NewMeterProducer(zsm, opencensus.Options{Resource: over})
	if err != nil {
		t.Fatal(err)
	}
	zsm.SetResource(&resource.Resource{Type: "k8s"})
	for _, m := range op.Read() {
		if m.Resource != over {
			t.Errorf("Options.Resource: %s resource %+v; want the override", m.Descriptor.Name, m.Resource)
		}
	}

	// Unregister removes the meter from what metricexport reads.
	zsp.Unregister()
	var e captureExporter
	metricexport.NewReader().ReadAndExport(&e)
	if got := normalize(e.metrics, p); len(got) != 0 {
		t.Errorf("after Unregister metricexport reads %s", dump(got))
	}
}

// fakeMeter is a view.Meter that is not from view.NewMeter.
type fakeMeter struct{ view.Meter }

func TestNewMeterProducerRefusesForeignMeters(t *testing.T) {
	p, err := opencensus.NewMeterProducer(fakeMeter{}, opencensus.Options{})
	if err == nil || p != nil || !strings.Contains(err.Error(), "view.NewMeter") {
		t.Errorf("NewMeterProducer(fake) = %v, %v; want an error naming view.NewMeter", p, err)
	}
	if p, err := opencensus.RegisterMeter(fakeMeter{}, opencensus.Options{}); err == nil || p != nil {
		t.Errorf("RegisterMeter(fake) = %v, %v; want an error", p, err)
	}
}

func dump(ms []*metricdata.Metric) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString("  " + m.Descriptor.Name + ": ")
		b.WriteString(strings.ReplaceAll(strings.TrimSpace(sprintMetric(m)), "\n", " "))
		b.WriteByte('\n')
	}
	return b.String()
}

func sprintMetric(m *metricdata.Metric) string {
	s := fmtV(m.Descriptor) + " res=" + fmtV(m.Resource)
	for _, ts := range m.TimeSeries {
		s += " ts{" + fmtV(ts.LabelValues)
		for _, p := range ts.Points {
			s += " " + fmtV(p.Value)
			if d, ok := p.Value.(*metricdata.Distribution); ok {
				for _, b := range d.Buckets {
					s += " " + fmtV(b.Exemplar)
				}
			}
		}
		s += "}"
	}
	return s
}

func fmtV(v any) string { return fmt.Sprintf("%+v", v) }

func ctxOC(t *testing.T, k octag.Key, v string) context.Context {
	t.Helper()
	ctx, err := octag.New(context.Background(), octag.Upsert(k, v))
	if err != nil {
		t.Fatal(err)
	}
	return ctx
}
