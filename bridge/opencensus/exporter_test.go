package opencensus_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	ocexporter "go.opencensus.io/examples/exporter"
	"go.opencensus.io/metric/metricdata"
	ocstats "go.opencensus.io/stats"
	ocview "go.opencensus.io/stats/view"
	octag "go.opencensus.io/tag"

	"github.com/zerostat/zerostat/bridge/opencensus"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// firstReports is an OpenCensus view.Exporter that passes to next the
// first report of each view it waits for, once, keeps it, and closes done
// when it has passed them all. Reports of a view registered before the
// workload and read after it repeat the same cumulative data, so the
// first report of each view, whichever period it comes in, is one full
// report of the workload.
type firstReports struct {
	next ocview.Exporter
	done chan struct{}

	mu   sync.Mutex
	wait map[string]bool // the view names not yet passed
	got  []*ocview.Data
}

func newFirstReports(next ocview.Exporter, names []string) *firstReports {
	f := &firstReports{next: next, done: make(chan struct{}), wait: map[string]bool{}}
	for _, n := range names {
		f.wait[n] = true
	}
	return f
}

func (f *firstReports) ExportView(vd *ocview.Data) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.wait[vd.View.Name] {
		return
	}
	delete(f.wait, vd.View.Name)
	f.next.ExportView(vd)
	f.got = append(f.got, vd)
	if len(f.wait) == 0 {
		close(f.done)
	}
}

// printReports returns what OpenCensus's example PrintExporter, unchanged,
// prints (to os.Stdout, read through a pipe) for the first report of each
// view in names, and those reports: register adds the exporter to an SDK
// and unregister removes it. Fails after 10 s without a report of each.
func printReports(t *testing.T, names []string, register, unregister func(ocview.Exporter)) (string, []*ocview.Data) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		out <- string(b)
	}()
	stdout := os.Stdout
	os.Stdout = w // before register: a report prints only after it
	f := newFirstReports(&ocexporter.PrintExporter{}, names)
	register(f)
	var timeout bool
	select {
	case <-f.done:
	case <-time.After(10 * time.Second):
		timeout = true
	}
	unregister(f) // no report calls f after it returns
	os.Stdout = stdout
	w.Close()
	printed := <-out
	r.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	if timeout {
		t.Fatalf("no report within 10 s of the views %v; printed:\n%s", f.wait, printed)
	}
	return printed, f.got
}

// printed is what PrintExporter printed, one entry per row (its line and
// the lines of its tags), the time of the report replaced by "hh:mm:ss",
// sorted (OpenCensus reports views and rows in map order).
var reportTime = regexp.MustCompile(`^\d\d:\d\d:\d\d `)

func printedRows(s string) []string {
	var rows []string
	for l := range strings.Lines(s) {
		if reportTime.MatchString(l) || len(rows) == 0 {
			rows = append(rows, reportTime.ReplaceAllString(l, "hh:mm:ss "))
			continue
		}
		rows[len(rows)-1] += l
	}
	slices.Sort(rows)
	return rows
}

// diffReports returns how two sets of reports differ, field by field:
// every field of the view, its measure and aggregation; the number and
// the tags of the rows; every field of the rows' data, the exemplars'
// values and attachments. Times are checked apart (checkTimes). Mean and
// SumOfSquaredDev are compared as OpenCensus's own DistributionData
// equality compares them (within 1e-9 squared; the two SDKs update them
// with different formulas), everything else exactly.
func diffReports(want, got []*ocview.Data) []string {
	var diffs []string
	byName := func(a, b *ocview.Data) int { return strings.Compare(a.View.Name, b.View.Name) }
	want, got = slices.SortedFunc(slices.Values(want), byName), slices.SortedFunc(slices.Values(got), byName)
	if len(want) != len(got) {
		return []string{fmt.Sprintf("%d views; want %d", len(got), len(want))}
	}
	for i, w := range want {
		g := got[i]
		diff := func(field string, gv, wv any) {
			if gs, ws := fmt.Sprintf("%#v", gv), fmt.Sprintf("%#v", wv); gs != ws {
				diffs = append(diffs, fmt.Sprintf("%s: %s %s; want %s", w.View.Name, field, gs, ws))
			}
		}
		diff("view name", g.View.Name, w.View.Name)
		diff("description", g.View.Description, w.View.Description)
		diff("tag keys", keyNames(g.View.TagKeys), keyNames(w.View.TagKeys))
		diff("measure type", fmt.Sprintf("%T", g.View.Measure), fmt.Sprintf("%T", w.View.Measure))
		diff("measure", [3]string{g.View.Measure.Name(), g.View.Measure.Description(), g.View.Measure.Unit()},
			[3]string{w.View.Measure.Name(), w.View.Measure.Description(), w.View.Measure.Unit()})
		diff("aggregation", g.View.Aggregation.Type, w.View.Aggregation.Type)
		diff("buckets", g.View.Aggregation.Buckets, w.View.Aggregation.Buckets)
		diff("rows nil", g.Rows == nil, w.Rows == nil)
		if len(g.Rows) != len(w.Rows) {
			diff("rows", rowTags(g.Rows), rowTags(w.Rows))
			continue
		}
		gr, wr := sortRows(g.Rows), sortRows(w.Rows)
		for j := range wr {
			row := func(field string, gv, wv any) { diff(fmt.Sprintf("row %s: %s", tagString(wr[j].Tags), field), gv, wv) }
			row("tags", tagString(gr[j].Tags), tagString(wr[j].Tags))
			switch wd := wr[j].Data.(type) {
			case *ocview.CountData, *ocview.SumData, *ocview.LastValueData:
				row("data", value(gr[j].Data), value(wd))
			case *ocview.DistributionData:
				gd, ok := gr[j].Data.(*ocview.DistributionData)
				if !ok {
					row("data type", fmt.Sprintf("%T", gr[j].Data), fmt.Sprintf("%T", wd))
					continue
				}
				row("count, min, max", [3]float64{float64(gd.Count), gd.Min, gd.Max}, [3]float64{float64(wd.Count), wd.Min, wd.Max})
				row("mean", math.Pow(gd.Mean-wd.Mean, 2) < 1e-9, true)
				row("sum of squared deviations", math.Pow(gd.SumOfSquaredDev-wd.SumOfSquaredDev, 2) < 1e-9, true)
				row("bucket counts", gd.CountPerBucket, wd.CountPerBucket)
				row("exemplars", exemplars(gd.ExemplarsPerBucket), exemplars(wd.ExemplarsPerBucket))
			default:
				row("data type", fmt.Sprintf("%T", gr[j].Data), fmt.Sprintf("%T", wd))
			}
		}
	}
	return diffs
}

// checkTimes checks a set of reports' times as OpenCensus's worker sets
// them: Start is the view's registration time (within [regFrom,
// regTo]), End the report's (within [repFrom, repTo]); a row's start is
// when its first value was recorded (within [regTo, repFrom]), as are
// exemplars' timestamps; a LastValueData has none.
func checkTimes(t *testing.T, sdk string, ds []*ocview.Data, regFrom, regTo, repFrom, repTo time.Time) {
	t.Helper()
	in := func(what string, tm, from, to time.Time) {
		if tm.Before(from) || tm.After(to) {
			t.Errorf("%s: %s %v not within [%v, %v]", sdk, what, tm, from, to)
		}
	}
	for _, d := range ds {
		in(d.View.Name+" Start", d.Start, regFrom, regTo)
		in(d.View.Name+" End", d.End, repFrom, repTo)
		for _, r := range d.Rows {
			what := d.View.Name + " row " + tagString(r.Tags)
			switch x := r.Data.(type) {
			case *ocview.CountData:
				in(what+" Start", x.Start, regTo, repFrom)
			case *ocview.SumData:
				in(what+" Start", x.Start, regTo, repFrom)
			case *ocview.DistributionData:
				in(what+" Start", x.Start, regTo, repFrom)
				for _, e := range x.ExemplarsPerBucket {
					if e != nil {
						in(what+" exemplar", e.Timestamp, regTo, repFrom)
					}
				}
			}
		}
	}
}

// value is the type and value of a count, sum or last value (not the
// start time).
func value(d ocview.AggregationData) string {
	switch d := d.(type) {
	case *ocview.CountData:
		return fmt.Sprintf("%T %v", d, d.Value)
	case *ocview.SumData:
		return fmt.Sprintf("%T %v", d, d.Value)
	case *ocview.LastValueData:
		return fmt.Sprintf("%T %v", d, d.Value)
	}
	return fmt.Sprintf("%T", d)
}

func keyNames(ks []octag.Key) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.Name()
	}
	return out
}

func tagString(ts []octag.Tag) string {
	var b strings.Builder
	for _, t := range ts {
		fmt.Fprintf(&b, "%s=%q ", t.Key.Name(), t.Value)
	}
	return strings.TrimSpace(b.String())
}

func sortRows(rs []*ocview.Row) []*ocview.Row {
	return slices.SortedFunc(slices.Values(rs), func(a, b *ocview.Row) int { return strings.Compare(tagString(a.Tags), tagString(b.Tags)) })
}

func rowTags(rs []*ocview.Row) []string {
	var out []string
	for _, r := range sortRows(rs) {
		out = append(out, tagString(r.Tags))
	}
	return out
}

// exemplars is each bucket's exemplar value and attachments ("-" for
// none); their timestamps are checked by checkTimes.
func exemplars(es []*metricdata.Exemplar) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = "-"
		if e != nil {
			out[i] = fmt.Sprintf("%v %v", e.Value, e.Attachments)
		}
	}
	return out
}

// TestExporterMatchesOpenCensus (issue 43, item 9): an OpenCensus
// view.Exporter registered through the bridge receives zerostat's views
// as OpenCensus's worker gives it OpenCensus's own. One workload — a
// Count, an integer and a float Sum, a Distribution with values on its
// bounds and exemplars, a LastValue, an UpDownSum (OpenCensus's oracle: a
// LastValue of the running total), a view that never gets a value, tags
// missing or empty — is recorded into OpenCensus's view package and into
// zerostat's, the same views registered in each. OpenCensus's own example
// exporter (go.opencensus.io/examples/exporter.PrintExporter, imported
// unchanged) registered with OpenCensus's view.RegisterExporter prints
// exactly what it prints registered with opencensus.RegisterExporter,
// the report time aside; and the reports themselves are equal field by
// field, bucket counts and exemplars included (PrintExporter prints a
// distribution's min, max and mean only), with the start and end times
// OpenCensus gives. A planted difference in either comparison is caught.
func TestExporterMatchesOpenCensus(t *testing.T) {
	const p = "bridgeexp_"
	regFrom := time.Now()

	// The measures, zerostat's and OpenCensus's, by the same names.
	type measure struct {
		zs stats.Measure
		oc ocstats.Measure
	}
	lat := measure{stats.Float64(p+"latency", "request latency", stats.UnitMilliseconds),
		ocstats.Float64(p+"latency", "request latency", ocstats.UnitMilliseconds)}
	req := measure{stats.Int64(p+"requests", "requests", stats.UnitDimensionless),
		ocstats.Int64(p+"requests", "requests", ocstats.UnitDimensionless)}
	size := measure{stats.Int64(p+"bytes", "bytes sent", stats.UnitBytes),
		ocstats.Int64(p+"bytes", "bytes sent", ocstats.UnitBytes)}
	ratio := measure{stats.Float64(p+"ratio", "compression ratio", stats.UnitDimensionless),
		ocstats.Float64(p+"ratio", "compression ratio", ocstats.UnitDimensionless)}
	depth := measure{stats.Float64(p+"depth", "queue depth", stats.UnitDimensionless),
		ocstats.Float64(p+"depth", "queue depth", ocstats.UnitDimensionless)}
	// zerostat records the change, OpenCensus the running total.
	inflight := measure{stats.Int64(p+"inflight", "requests in flight", stats.UnitDimensionless),
		ocstats.Int64(p+"inflight", "requests in flight", ocstats.UnitDimensionless)}
	never := measure{stats.Int64(p+"never", "never recorded", stats.UnitDimensionless),
		ocstats.Int64(p+"never", "never recorded", ocstats.UnitDimensionless)}

	zsRoute, zsMethod, zsOther := tag.MustNewKey("route"), tag.MustNewKey("method"), tag.MustNewKey("other")
	ocRoute, ocMethod, ocOther := octag.MustNewKey("route"), octag.MustNewKey("method"), octag.MustNewKey("other")

	zsViews := []*view.View{
		{Name: p + "latency", Measure: lat.zs, Aggregation: view.Distribution(10, 100), TagKeys: []tag.Key{zsRoute}},
		{Name: p + "requests", Description: "requests by route and method", Measure: req.zs, Aggregation: view.Count(), TagKeys: []tag.Key{zsRoute, zsMethod}},
		{Name: p + "bytes", Measure: size.zs, Aggregation: view.Sum(), TagKeys: []tag.Key{zsRoute}},
		{Name: p + "ratio", Measure: ratio.zs, Aggregation: view.Sum()},
		{Name: p + "depth", Measure: depth.zs, Aggregation: view.LastValue(), TagKeys: []tag.Key{zsMethod}},
		{Name: p + "inflight", Measure: inflight.zs, Aggregation: view.UpDownSum(), TagKeys: []tag.Key{zsRoute}},
		{Name: p + "empty", Measure: never.zs, Aggregation: view.Count()},
	}
	ocViews := []*ocview.View{
		{Name: p + "latency", Measure: lat.oc, Aggregation: ocview.Distribution(10, 100), TagKeys: []octag.Key{ocRoute}},
		{Name: p + "requests", Description: "requests by route and method", Measure: req.oc, Aggregation: ocview.Count(), TagKeys: []octag.Key{ocRoute, ocMethod}},
		{Name: p + "bytes", Measure: size.oc, Aggregation: ocview.Sum(), TagKeys: []octag.Key{ocRoute}},
		{Name: p + "ratio", Measure: ratio.oc, Aggregation: ocview.Sum()},
		{Name: p + "depth", Measure: depth.oc, Aggregation: ocview.LastValue(), TagKeys: []octag.Key{ocMethod}},
		{Name: p + "inflight", Measure: inflight.oc, Aggregation: ocview.LastValue(), TagKeys: []octag.Key{ocRoute}},
		{Name: p + "empty", Measure: never.oc, Aggregation: ocview.Count()},
	}
	var names []string
	for _, v := range zsViews {
		names = append(names, v.Name)
	}
	register(t, zsViews...)
	if err := ocview.Register(ocViews...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ocview.Unregister(ocViews...) })
	regTo := time.Now()

	// The workload: each step's tags (a key not listed is missing; "" is
	// OpenCensus's empty value, which both SDKs treat as missing) and
	// values.
	type value struct {
		m measure
		v float64
	}
	steps := []struct {
		tags   [][2]string
		values []value
		att    map[string]interface{}
	}{
		{[][2]string{{"route", "/a"}, {"method", "GET"}}, []value{{lat, 5}, {req, 1}, {size, 300}, {ratio, 0.1}, {inflight, 2}}, nil},
		{[][2]string{{"route", "/a"}, {"method", "GET"}}, []value{{lat, 10}, {req, 1}, {size, 12}, {ratio, 0.2}, {depth, 3}}, map[string]interface{}{"id": "on-bound"}},
		{[][2]string{{"route", "/a"}, {"method", "POST"}, {"other", "x"}}, []value{{lat, 100}, {req, 1}, {inflight, -3}}, nil},
		{[][2]string{{"route", "/b"}}, []value{{lat, 500}, {lat, 0.25}, {req, 1}, {size, 7}, {ratio, 0.7}, {depth, 2.5}, {inflight, 1}}, map[string]interface{}{"id": "b"}},
		{[][2]string{{"route", "/b"}, {"method", ""}}, []value{{lat, 99.5}, {req, 1}, {depth, 4}, {inflight, -1}}, nil},
		{nil, []value{{lat, 42}, {req, 1}, {ratio, 1.5}, {depth, 1}}, nil},
		{[][2]string{{"method", "GET"}}, []value{{lat, 7}, {req, 1}, {depth, 6}}, map[string]interface{}{"id": "no-route"}},
	}
	totals := map[string]int64{} // OpenCensus's running totals of inflight, by route
	for _, s := range steps {
		var zsMut []tag.Mutator
		var ocMut []octag.Mutator
		route := ""
		for _, kv := range s.tags {
			zk, ok := map[string]tag.Key{"route": zsRoute, "method": zsMethod, "other": zsOther}[kv[0]]
			okk := map[string]octag.Key{"route": ocRoute, "method": ocMethod, "other": ocOther}[kv[0]]
			if !ok {
				t.Fatalf("key %q", kv[0])
			}
			zsMut = append(zsMut, tag.Upsert(zk, kv[1]))
			ocMut = append(ocMut, octag.Upsert(okk, kv[1]))
			if kv[0] == "route" {
				route = kv[1]
			}
		}
		var zsMs []stats.Measurement
		var ocMs []ocstats.Measurement
		for _, v := range s.values {
			ocv := v.v
			if v.m == inflight {
				totals[route] += int64(v.v)
				ocv = float64(totals[route])
			}
			switch m := v.m.zs.(type) {
			case *stats.Int64Measure:
				zsMs = append(zsMs, m.M(int64(v.v)))
				ocMs = append(ocMs, v.m.oc.(*ocstats.Int64Measure).M(int64(ocv)))
			case *stats.Float64Measure:
				zsMs = append(zsMs, m.M(v.v))
				ocMs = append(ocMs, v.m.oc.(*ocstats.Float64Measure).M(ocv))
			}
		}
		zctx, err := tag.New(context.Background(), zsMut...)
		if err != nil {
			t.Fatal(err)
		}
		octx, err := octag.New(context.Background(), ocMut...)
		if err != nil {
			t.Fatal(err)
		}
		if err := stats.RecordWithOptions(zctx, stats.WithMeasurements(zsMs...), stats.WithAttachments(s.att)); err != nil {
			t.Fatal(err)
		}
		// One measurement at a time: OpenCensus keeps the order of a
		// record's measurements, and the LastValue must see 0.25 after 500.
		for _, m := range ocMs {
			if err := ocstats.RecordWithOptions(octx, ocstats.WithMeasurements(m), ocstats.WithAttachments(s.att)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// OpenCensus records through a channel: a retrieval waits for the
	// records before it.
	for _, v := range ocViews {
		if _, err := ocview.RetrieveData(v.Name); err != nil {
			t.Fatal(err)
		}
	}
	repFrom := time.Now()

	// Each SDK reports every 10 ms while its exporter waits for a report
	// of each view, then the default periods come back.
	ocview.SetReportingPeriod(10 * time.Millisecond)
	t.Cleanup(func() { ocview.SetReportingPeriod(0) })
	view.SetReportingPeriod(10 * time.Millisecond)
	t.Cleanup(func() { view.SetReportingPeriod(0) })

	ocOut, ocData := printReports(t, names, ocview.RegisterExporter, ocview.UnregisterExporter)
	zsOut, zsData := printReports(t, names, opencensus.RegisterExporter, opencensus.UnregisterExporter)
	repTo := time.Now()

	ocRows, zsRows := printedRows(ocOut), printedRows(zsOut)
	// 15 rows: 3 latency, 5 requests, 2 bytes, 1 ratio, 2 depth, 2
	// inflight, none for the empty view.
	if len(ocRows) != 15 {
		t.Errorf("OpenCensus's PrintExporter printed %d rows; want 15:\n%s", len(ocRows), ocOut)
	}
	if !slices.Equal(zsRows, ocRows) {
		t.Errorf("PrintExporter through the bridge printed\n%s\nthrough OpenCensus\n%s", strings.Join(zsRows, ""), strings.Join(ocRows, ""))
	}
	if d := diffReports(ocData, zsData); len(d) != 0 {
		t.Errorf("the bridge's reports differ from OpenCensus's:\n%s", strings.Join(d, "\n"))
	}
	checkTimes(t, "OpenCensus", ocData, regFrom, regTo, repFrom, repTo)
	checkTimes(t, "the bridge", zsData, regFrom, regTo, repFrom, repTo)

	// The comparisons catch a planted difference: one bucket count, one
	// exemplar, one printed value.
	for _, plant := range []func(*ocview.DistributionData){
		func(d *ocview.DistributionData) { d.CountPerBucket[1]++ },
		func(d *ocview.DistributionData) { d.ExemplarsPerBucket[1] = nil },
	} {
		planted := slices.Clone(zsData)
		for i, d := range planted {
			if d.View.Name == p+"latency" {
				c := *d
				c.Rows = slices.Clone(d.Rows)
				for j, r := range c.Rows {
					if tagString(r.Tags) == `route="/a"` {
						dd := *r.Data.(*ocview.DistributionData)
						dd.CountPerBucket, dd.ExemplarsPerBucket = slices.Clone(dd.CountPerBucket), slices.Clone(dd.ExemplarsPerBucket)
						plant(&dd)
						c.Rows[j] = &ocview.Row{Tags: r.Tags, Data: &dd}
					}
				}
				planted[i] = &c
			}
		}
		if d := diffReports(ocData, planted); len(d) != 1 {
			t.Errorf("a planted difference gives %q; want one difference", d)
		}
	}
	if planted := printedRows(strings.Replace(zsOut, "value=312", "value=313", 1)); slices.Equal(planted, ocRows) {
		t.Error("a planted difference in the printed value of bridgeexp_bytes{route=/a} is not caught")
	}
}

// A meter from view.NewMeter reports to an OpenCensus exporter through
// NewExporter, including a view's last report on Unregister (zerostat's
// view.Exporter contract; OpenCensus gives none); the overflow row of a
// view past its cardinality limit comes as zerostat's view.Exporter gets
// it, every key set to view.OverflowValue.
func TestNewExporterMeter(t *testing.T) {
	if opencensus.NewExporter(nil) != nil {
		t.Error("NewExporter(nil) is not nil")
	}
	m := view.NewMeter()
	key := tag.MustNewKey("route")
	n := stats.Int64("bridgeexp_meter_n", "", stats.UnitDimensionless)
	v := &view.View{Name: "bridgeexp_meter_n", Measure: n, Aggregation: view.Sum(), TagKeys: []tag.Key{key}, CardinalityLimit: 1}
	if err := m.Register(v); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"/a", "/b", "/c"} {
		if err := stats.RecordWithOptions(ctxWith(t, tag.Upsert(key, r)), stats.WithRecorder(m), stats.WithMeasurements(n.M(2))); err != nil {
			t.Fatal(err)
		}
	}
	var got capture
	x := opencensus.NewExporter(&got)
	m.RegisterExporter(x)
	defer m.UnregisterExporter(x)
	m.Unregister(v) // its last report, from this goroutine
	ds := got.take()
	if len(ds) != 1 {
		t.Fatalf("%d reports; want 1", len(ds))
	}
	d := ds[0]
	if d.View.Name != v.Name || d.View.Aggregation.Type != ocview.AggTypeSum || !slices.Equal(keyNames(d.View.TagKeys), []string{"route"}) {
		t.Errorf("view %+v", d.View)
	}
	if _, ok := d.View.Measure.(*ocstats.Int64Measure); !ok {
		t.Errorf("measure %T; want *stats.Int64Measure", d.View.Measure)
	}
	want := []string{`route="/a" 2`, `route="otel.metric.overflow" 4`}
	var rows []string
	for _, r := range d.Rows {
		rows = append(rows, fmt.Sprintf("%s %v", tagString(r.Tags), r.Data.(*ocview.SumData).Value))
	}
	if !slices.Equal(rows, want) {
		t.Errorf("rows %q; want %q", rows, want)
	}
}

// capture is an OpenCensus view.Exporter keeping its reports.
type capture struct {
	mu sync.Mutex
	ds []*ocview.Data
}

func (c *capture) ExportView(d *ocview.Data) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ds = append(c.ds, d)
}

func (c *capture) take() []*ocview.Data {
	c.mu.Lock()
	defer c.mu.Unlock()
	ds := c.ds
	c.ds = nil
	return ds
}

// RegisterExporter and UnregisterExporter, called from many goroutines
// at once while reports run, leave each exporter registered once, and,
// once every UnregisterExporter has returned, no report reaches any of
// them.
func TestRegisterExporterConcurrentSafe(t *testing.T) {
	register(t, &view.View{Name: "bridgeexp_concurrent", Measure: stats.Int64("bridgeexp_concurrent", "", "1"), Aggregation: view.Count()})
	view.SetReportingPeriod(time.Millisecond)
	t.Cleanup(func() { view.SetReportingPeriod(0) })
	exps := make([]*capture, 4)
	for i := range exps {
		exps[i] = &capture{}
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			e := exps[g%len(exps)]
			for range 50 {
				opencensus.RegisterExporter(e)
				opencensus.RegisterExporter(e) // a no-op
				opencensus.UnregisterExporter(e)
			}
		}()
	}
	close(start)
	wg.Wait()
	for _, e := range exps {
		opencensus.UnregisterExporter(e) // if a racing Register came last
		e.take()
	}
	// Registered twice, reported to once per view and period. Each report
	// it gets loaded the exporter set after the unregistrations above, so
	// it reaches none of those exporters.
	e := &capture{}
	opencensus.RegisterExporter(e)
	opencensus.RegisterExporter(e)
	opencensus.RegisterExporter(nil) // a no-op
	deadline := time.Now().Add(10 * time.Second)
	var ds []*ocview.Data
	for len(ds) < 4 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
		for _, d := range e.take() {
			if d.View.Name == "bridgeexp_concurrent" {
				ds = append(ds, d)
			}
		}
	}
	opencensus.UnregisterExporter(e)
	opencensus.UnregisterExporter(e) // a no-op
	for i, x := range exps {
		if got := x.take(); len(got) != 0 {
			t.Errorf("exporter %d got %d reports after UnregisterExporter", i, len(got))
		}
	}
	for i := 1; i < len(ds); i++ {
		if !ds[i].End.After(ds[i-1].End) {
			t.Errorf("reports %d and %d at %v and %v: one exporter registered twice is called twice per period", i-1, i, ds[i-1].End, ds[i].End)
		}
	}
	if len(ds) < 4 {
		t.Errorf("%d reports in 10 s; want 4", len(ds))
	}
}
