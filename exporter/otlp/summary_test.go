package otlp

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/race"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// summaryMetric finds the metric named name in request b and returns its
// Summary message's points (field 11 of Metric), failing when the metric
// has another data field.
func summaryMetric(t *testing.T, b []byte, name string) (m msg, points []msg) {
	t.Helper()
	req, err := parseMsg(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, mm := range req.sub(1)[0].sub(2)[0].sub(2) {
		if mm.str(1) != name {
			continue
		}
		for _, other := range []uint64{5, 7, 9, 10} {
			if len(mm[other]) > 0 {
				t.Fatalf("%s: data field %d; want a Summary (11)", name, other)
			}
		}
		s := mm.sub(11)
		if len(s) != 1 {
			t.Fatalf("%s: %d Summary fields", name, len(s))
		}
		for num := range s[0] {
			if num != 1 {
				t.Errorf("%s: Summary field %d; a Summary has data_points only", name, num)
			}
		}
		return mm, s[0].sub(1)
	}
	t.Fatalf("no metric %s", name)
	return nil, nil
}

// summaryPointString renders a SummaryDataPoint: attributes, count, sum,
// the quantile values ("absent" for a field left out), in order.
func summaryPointString(p msg) string {
	var attrs []string
	for _, kv := range p.sub(7) {
		attrs = append(attrs, kv.str(1)+"="+kv.sub(2)[0].str(1))
	}
	f := func(m msg, num uint64) string {
		if v, ok := m.f64(num); ok {
			return fmt.Sprint(v)
		}
		return "absent"
	}
	count := "absent"
	if v, ok := p.u64(4); ok {
		count = fmt.Sprint(v)
	}
	var qs []string
	for _, q := range p.sub(6) {
		qs = append(qs, f(q, 1)+":"+f(q, 2))
	}
	return fmt.Sprintf("{%s} count=%s sum=%s %v", strings.Join(attrs, ","), count, f(p, 5), qs)
}

// TestSummaryPoints: a summary view is a Metric whose data is a Summary
// (field 11), a SummaryDataPoint per series with start, time, count, sum,
// the ValueAtQuantile of each quantile in order and the attributes,
// proto3's zero values left out (a count, sum, quantile or value of 0);
// with Delta temporality too, the points are the current values, every
// export, unchanged or not (a Summary has no temporality).
func TestSummaryPoints(t *testing.T) {
	m := stats.Float64("otlpsum/pause", "Pauses", stats.UnitSeconds)
	k := tag.MustNewKey("route")
	v := &view.View{Name: "otlpsum/pause", Measure: m, Aggregation: view.Summary(0, 0.5, 1), TagKeys: []tag.Key{k}}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(v) })
	agg := core.FindView(v.Name).Agg
	mu := tag.Upsert(k, "/a")
	if err := agg.SetSummary((*core.Mutator)(&mu).Apply(nil), 3, 1.5, []float64{0.25, 0.5, math.NaN()}); err != nil {
		t.Fatal(err)
	}
	if err := agg.SetSummary(nil, 0, 0, []float64{0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	want := []string{"{route=/a} count=3 sum=1.5 [absent:0.25 0.5:0.5 1:NaN]", "{} count=absent sum=absent [absent:absent 0.5:absent 1:absent]"}
	for _, temp := range []Temporality{Cumulative, Delta} {
		enc, err := NewEncoder(temp, exporter.Resource{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 { // the second export: nothing changed
			end := time.Now()
			mm, points := summaryMetric(t, enc.Encode(end), "otlpsum/pause")
			if mm.str(2) != "Pauses" || mm.str(3) != "s" {
				t.Errorf("description %q, unit %q", mm.str(2), mm.str(3))
			}
			var got []string
			for _, p := range points {
				got = append(got, summaryPointString(p))
				start, _ := p.u64(2)
				at, _ := p.u64(3)
				if at != uint64(end.UnixNano()) || start != uint64(agg.Start().UnixNano()) {
					t.Errorf("%v, export %d: start %d, time %d; want the view's start %d and %d", temp, i, start, at, agg.Start().UnixNano(), end.UnixNano())
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) { // sorted: "{r" before "{}"
				t.Errorf("%v, export %d: points %q; want %q", temp, i, got, want)
			}
		}
		if !race.Enabled { // the race detector allocates
			end := time.Now()
			if n := testing.AllocsPerRun(20, func() { enc.Encode(end) }); n != 0 {
				t.Errorf("%v: %v allocs per Encode; want 0 in steady state", temp, n)
			}
		}
	}
}
