package promname

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zerostat/zerostat/internal/core"
)

func newView(name, unit string, kind core.Kind, isInt bool, keys ...string) *core.View {
	m := &core.Measure{Name: "m/" + name, Description: "measured", Unit: unit}
	return &core.View{Name: name, Unit: unit, Description: "d", Keys: keys, Measure: m, Int: isInt,
		Agg: core.NewAggregator(kind, keys, []float64{2.5e-5, 0.5, 1}, 0)}
}

// TestMetricOf is the mapping table of docs/metric-mapping.md.
func TestMetricOf(t *testing.T) {
	for _, c := range []struct {
		kind  core.Kind
		isInt bool
		want  Metric
	}{
		{core.KindCount, false, Metric{Type: Counter, Monotonic: true, Unit: "1", Int: true, Help: "d"}},
		{core.KindCount, true, Metric{Type: Counter, Monotonic: true, Unit: "1", Int: true, Help: "d"}},
		{core.KindSum, false, Metric{Type: Counter, Monotonic: true, Unit: "ms", Help: "d"}},
		{core.KindSum, true, Metric{Type: Counter, Monotonic: true, Unit: "ms", Int: true, Help: "d"}},
		{core.KindLastValue, false, Metric{Type: Gauge, Unit: "ms", Help: "d"}},
		{core.KindLastValue, true, Metric{Type: Gauge, Unit: "ms", Int: true, Help: "d"}},
		{core.KindDistribution, true, Metric{Type: Histogram, Unit: "ms", Help: "d"}},
	} {
		if got := MetricOf(newView("v", "ms", c.kind, c.isInt)); got != c.want {
			t.Errorf("kind %d int %v: got %+v; want %+v", c.kind, c.isInt, got, c.want)
		}
	}
	// A Count view that took its measure's description (OpenCensus's
	// default) says it counts.
	v := newView("c", "ms", core.KindCount, false)
	v.Description = v.Measure.Description
	if got := MetricOf(v).Help; got != "Count of m/c recordings: measured" {
		t.Errorf("count help %q", got)
	}
	d := newView("d", "ms", core.KindDistribution, false)
	d.Agg.CountUpperInclusive()
	if !MetricOf(d).UpperInclusive {
		t.Error("UpperInclusive not mapped")
	}
	// view.UpDownSum (issue 15): a gauge, never a counter.
	ud := newView("ud", "ms", core.KindSum, true)
	ud.UpDown = true
	if got, want := MetricOf(ud), (Metric{Type: Gauge, Unit: "ms", Int: true, Help: "d"}); got != want {
		t.Errorf("UpDownSum: got %+v; want %+v", got, want)
	}
	if f := NewFamily(ud, Options{}); f.Type != Gauge || f.Sample != f.Name {
		t.Errorf("UpDownSum family %q sample %q; want a gauge's name", f.Name, f.Sample)
	}
	v.Description = "bad \xff utf-8"
	if got := MetricOf(v).Help; got != "bad \uFFFD utf-8" {
		t.Errorf("help %q; want invalid UTF-8 replaced", got)
	}
}

func TestIntValue(t *testing.T) {
	for _, c := range []struct {
		f  float64
		i  int64
		ok bool
	}{{3, 3, true}, {-7, -7, true}, {0.5, 0, false}, {math.NaN(), 0, false}, {math.Inf(1), 0, false},
		{1 << 62, 1 << 62, true}, {1 << 63, 0, false}, {-(1 << 63), math.MinInt64, true}} {
		if i, ok := IntValue(c.f); i != c.i || ok != c.ok {
			t.Errorf("IntValue(%v) = %d, %v; want %d, %v", c.f, i, ok, c.i, c.ok)
		}
	}
	for f, want := range map[float64]bool{0: true, 1: true, math.Inf(1): true, -1: false, math.NaN(): false, math.Inf(-1): false} {
		if CounterValid(f) != want {
			t.Errorf("CounterValid(%v) = %v", f, !want)
		}
	}
}

func TestFamilyNamesAndLes(t *testing.T) {
	h := NewFamily(newView("lat", "ms", core.KindDistribution, false, "le"), Options{})
	if h.Name != "lat_milliseconds" || h.Unit != "milliseconds" || h.Created != "lat_milliseconds_created" ||
		fmt.Sprint(h.Les) != "[2.5e-05 0.5 1.0 +Inf]" || h.Labels[0].Name != "key_le" {
		t.Errorf("histogram: %+v", h)
	}
	if fmt.Sprint(h.Names()) != "[lat_milliseconds lat_milliseconds_bucket lat_milliseconds_sum lat_milliseconds_count lat_milliseconds_created]" {
		t.Errorf("histogram names %v", h.Names())
	}
	c := NewFamily(newView("req", "ms", core.KindCount, false), Options{})
	if fmt.Sprint(c.Names()) != "[req req_total req_created]" || c.Unit != "" {
		t.Errorf("counter names %v unit %q", c.Names(), c.Unit)
	}
	// A tag key or a constant label named like the overflow label is
	// renamed: the overflow series cannot be duplicated.
	consts := ConstLabels(map[string]string{OverflowLabel: "true", "v": "bad\xffutf"})
	g := NewFamily(newView("g", "", core.KindLastValue, false, "otel.metric.overflow"), Options{Consts: consts})
	var names []string
	for _, l := range g.Labels {
		names = append(names, l.Name+"="+l.Value)
	}
	if fmt.Sprint(names) != "[otel_metric_overflow_1= v=bad\uFFFDutf]" {
		t.Errorf("labels %v", names)
	}
}

// TestOpenCensusNaming: the names of contrib.go.opencensus.io/exporter/
// prometheus v0.4.2 (benchmarks/promcheck compares with the exporter).
func TestOpenCensusNaming(t *testing.T) {
	for in, want := range map[string]string{
		"demo/latency": "demo_latency", "a--b": "a_b", "a---b.c": "a_b_c", "1st": "key_1st",
		"_x": "key_x", "a:b": "a_b", "x_total": "x_total", strings.Repeat("a", 120): strings.Repeat("a", 100),
	} {
		if got := ocSanitize(in); got != want {
			t.Errorf("ocSanitize(%q) = %q; want %q", in, got, want)
		}
	}
	o := Options{OpenCensus: true, Namespace: "app"}
	c := NewFamily(newView("http/count", "ms", core.KindCount, false, "http.route"), o)
	if c.Name != "app_http_count" || c.Sample != "app_http_count" || c.Created != "" || c.Unit != "" || c.Labels[0].Name != "http_route" {
		t.Errorf("OpenCensus counter: %+v", c)
	}
	h := NewFamily(newView("lat", "ms", core.KindDistribution, false), o)
	if h.Name != "app_lat" || fmt.Sprint(h.Les) != "[2.5e-05 0.5 1 +Inf]" || fmt.Sprint(h.Names()) != "[app_lat app_lat_bucket app_lat_sum app_lat_count]" {
		t.Errorf("OpenCensus histogram: %+v", h)
	}
}

func TestNamerRefusesCollisions(t *testing.T) {
	older := newView("a.b", "", core.KindCount, false)
	time.Sleep(time.Millisecond) // distinct registration times, not a timing assertion
	newer := newView("a_b", "", core.KindSum, false)
	gauge := newView("x_total", "", core.KindLastValue, false)
	count := newView("x", "", core.KindCount, false)
	n := NewNamer(Options{})
	// Views come sorted by name; the one registered first keeps the name.
	if got := n.Sync([]*core.View{older, newer}); got != 1 {
		t.Fatalf("Sync refused %d; want 1", got)
	}
	if n.Family(older) == nil || n.Family(newer) != nil {
		t.Fatalf("admitted %v, %v; want a.b only", n.Family(older), n.Family(newer))
	}
	var ce *CollisionError
	if err := n.Err(); !errors.As(err, &ce) || ce.View != "a_b" || ce.With != "a.b" || ce.Name != "a_b" ||
		!strings.Contains(err.Error(), `view "a_b" is left out`) || !strings.Contains(err.Error(), `view "a.b"'s`) {
		t.Errorf("Err() = %v", n.Err())
	}
	if got := n.Sync([]*core.View{older, newer}); got != 0 {
		t.Errorf("second Sync refused %d again; want 0 (counted once)", got)
	}
	// The rival gone, the refused view is admitted.
	n.Sync([]*core.View{newer})
	if n.Family(newer) == nil || n.Err() != nil {
		t.Errorf("a_b still refused after a.b left: %v", n.Err())
	}
	// A gauge x_total and a counter x (sample x_total) collide.
	n.Sync([]*core.View{newer, gauge, count})
	if (n.Family(gauge) == nil) == (n.Family(count) == nil) {
		t.Errorf("gauge x_total and counter x: admitted %v, %v; want exactly one", n.Family(gauge) != nil, n.Family(count) != nil)
	}
	// A refused view whose keys grew (core.GrowView: a successor of the
	// same aggregator) is not counted as refused again.
	refused, kept := count, gauge
	if n.Family(count) != nil {
		refused, kept = gauge, count
	}
	grown := *refused
	grown.Keys = append(slices.Clone(refused.Keys), "late")
	if got := n.Sync([]*core.View{newer, kept, &grown}); got != 0 || n.Family(&grown) != nil {
		t.Errorf("the successor of a refused view: Sync refused %d newly, admitted %v; want 0, not admitted", got, n.Family(&grown) != nil)
	}
	n.Sync([]*core.View{newer, gauge, count}) // as before, for what follows
	// With OpenCensus naming the counter is "x" and they do not collide.
	oc := NewNamer(Options{OpenCensus: true})
	if oc.Sync([]*core.View{gauge, count}) != 0 || oc.Family(gauge) == nil || oc.Family(count) == nil {
		t.Errorf("OpenCensus naming: %v", oc.Err())
	}
	if !slices.Equal(n.Family(newer).Names(), []string{"a_b", "a_b_total", "a_b_created"}) {
		t.Errorf("names %v", n.Family(newer).Names())
	}
}

func TestNamerSyncAllocs(t *testing.T) {
	vs := []*core.View{newView("p", "", core.KindCount, false), newView("q", "", core.KindDistribution, false)}
	n := NewNamer(Options{})
	n.Sync(vs)
	if got := testing.AllocsPerRun(100, func() { n.Sync(vs) }); got != 0 {
		t.Errorf("steady-state Sync: %v allocs; want 0", got)
	}
}
