package wire

import (
	"math"
	"testing"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/promname"
)

// TestViewMetricIsTheMapping: a payload's view maps as the registered view
// it came from does (promname.MetricOf, what the exporters use), for a
// Float64 measure, whose mapping the payload fully determines.
func TestViewMetricIsTheMapping(t *testing.T) {
	for _, c := range []struct {
		kind core.Kind
		agg  Aggregation
		typ  MetricType
	}{
		{core.KindCount, Count, SumType},
		{core.KindSum, Sum, SumType},
		{core.KindLastValue, LastValue, GaugeType},
		{core.KindDistribution, Distribution, HistogramType},
	} {
		ms := &core.Measure{Name: "m", Description: "measured", Unit: "ms"}
		cv := &core.View{Name: "v", Unit: "ms", Description: "the view", Measure: ms,
			Agg: core.NewAggregator(c.kind, nil, []float64{1, 2}, 0)}
		want := promname.MetricOf(cv)
		wv := &View{Name: "v", Unit: "ms", Description: "the view", Aggregation: c.agg, Bounds: []float64{1, 2}}
		got := wv.Metric()
		if got.Type != c.typ || got.Monotonic != want.Monotonic || got.Unit != want.Unit ||
			got.Int != want.Int || got.Help != want.Help {
			t.Errorf("%v: got %+v; want %v and %+v", c.agg, got, c.typ, want)
		}
	}
	if got := (&View{Aggregation: 9}).Metric(); got != (Metric{}) {
		t.Errorf("unknown aggregation: got %+v; want the zero Metric", got)
	}
}

// TestViewMetricNegativeSum: a Sum with a negative or NaN value in the
// payload is non-monotonic, as the OTLP exporter sends it.
func TestViewMetricNegativeSum(t *testing.T) {
	for _, c := range []struct {
		name string
		v    View
		want bool
	}{
		{"positive", View{Aggregation: Sum, Rows: []Row{{Sum: 1}, {Sum: 0}}}, true},
		{"negative row", View{Aggregation: Sum, Rows: []Row{{Sum: 1}, {Sum: -1}}}, false},
		{"NaN row", View{Aggregation: Sum, Rows: []Row{{Sum: math.NaN()}}}, false},
		{"negative overflow", View{Aggregation: Sum, Overflow: &Row{Sum: -2}}, false},
	} {
		if got := c.v.Metric().Monotonic; got != c.want {
			t.Errorf("%s: Monotonic %v; want %v", c.name, got, c.want)
		}
	}
}

func TestAttributeResourceValue(t *testing.T) {
	if n, ok := (Attribute{"process.pid", "42"}).ResourceValue(); !ok || n != 42 {
		t.Errorf("process.pid 42: got %d, %v; want 42, true", n, ok)
	}
	for _, a := range []Attribute{{"process.pid", "x"}, {"host.name", "42"}} {
		if _, ok := a.ResourceValue(); ok {
			t.Errorf("%+v: an integer; want a string", a)
		}
	}
}
