package promname

import (
	"math"
	"slices"
	"testing"

	"github.com/zerostat/zerostat/internal/core"
)

func TestMetricName(t *testing.T) {
	for in, want := range map[string]string{
		"demo/latency": "demo_latency", "a:b_c9": "a:b_c9", "9lives": "_9lives",
		"http.server.duration": "http_server_duration", "ünï": "_n_", "": "_", "a b-c": "a_b_c",
	} {
		if got := MetricName(in); got != want || !ValidMetricName(got) {
			t.Errorf("MetricName(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestLabelName(t *testing.T) {
	for in, want := range map[string]string{
		"route": "route", "http.status": "http_status", "1st": "key_1st", "__x": "key__x",
		"_x": "_x", "a:b": "a_b", "": "key_", "Method": "Method",
	} {
		if got := LabelName(in); got != want {
			t.Errorf("LabelName(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestUnitWord(t *testing.T) {
	for in, want := range map[string]string{
		"ms": "milliseconds", "s": "seconds", "By": "bytes", "1": "", "": "",
		"{request}": "", "By/s": "bytes_per_second", "1/s": "per_second", "{req}/s": "per_second",
		"widgets": "widgets", "KiBy": "kibibytes", "%": "percent", "m/s": "meters_per_second",
		"kb.x": "kb_x", "{unclosed": "",
	} {
		if got := UnitWord(in); got != want {
			t.Errorf("UnitWord(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestNewFamily(t *testing.T) {
	mk := func(name, unit string, kind core.Kind, keys ...string) *core.View {
		return &core.View{Name: name, Unit: unit, Description: "d", Keys: keys, Agg: core.NewAggregator(kind, keys, []float64{1}, 0)}
	}
	consts := ConstLabels(map[string]string{"env": "p", "route": "shadowed", "le": "c", "a.b": "1", "a_b": "2"})
	cases := []struct {
		v                  *core.View
		name, sample, unit string
		labels             []string
		typ                Type
	}{
		{mk("demo/latency", "ms", core.KindDistribution, "le", "route"), "demo_latency_milliseconds", "demo_latency_milliseconds_bucket", "milliseconds",
			[]string{"a_b", "a_b_1", "env", "key_le", "route"}, Histogram},
		{mk("demo/requests", "ms", core.KindCount, "route"), "demo_requests", "demo_requests_total", "",
			[]string{"a_b", "a_b_1", "env", "le", "route"}, Counter},
		{mk("io/read_bytes_total", "By", core.KindSum), "io_read_bytes", "io_read_bytes_total", "bytes",
			[]string{"a_b", "a_b_1", "env", "le", "route"}, Counter},
		{mk("temp", "Cel", core.KindLastValue, "x.y", "x_y"), "temp_celsius", "temp_celsius", "celsius",
			[]string{"a_b", "a_b_1", "env", "le", "route", "x_y", "x_y_1"}, Gauge},
		{mk("seconds", "s", core.KindLastValue), "seconds", "seconds", "", // no "# UNIT seconds" on a name without "_seconds"
			[]string{"a_b", "a_b_1", "env", "le", "route"}, Gauge},
	}
	for _, c := range cases {
		f := NewFamily(c.v, Options{Consts: consts})
		var names []string
		for _, l := range f.Labels {
			names = append(names, l.Name)
			if l.Name == "route" && (l.Tag < 0) != (len(c.v.Keys) == 0 || !slices.Contains(c.v.Keys, "route")) {
				t.Errorf("%s: route label %+v", c.v.Name, l)
			}
		}
		if f.Name != c.name || f.Sample != c.sample || f.Unit != c.unit || f.Type != c.typ || !slices.Equal(names, c.labels) {
			t.Errorf("%s: got %s %s %q %v %v; want %s %s %q %v %v", c.v.Name, f.Name, f.Sample, f.Unit, f.Type, names, c.name, c.sample, c.unit, c.typ, c.labels)
		}
		if !slices.IsSortedFunc(f.OverflowLabels, func(a, b Label) int { return cmpStr(a.Name, b.Name) }) || !slices.ContainsFunc(f.OverflowLabels, func(l Label) bool { return l.Name == OverflowLabel && l.Value == "true" }) {
			t.Errorf("%s: overflow labels %v", c.v.Name, f.OverflowLabels)
		}
	}
	if f := NewFamily(mk("x", "", core.KindCount), Options{Namespace: "my.app"}); f.Name != "my_app_x" {
		t.Errorf("namespace: %s", f.Name)
	}
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestAppend(t *testing.T) {
	if got := string(AppendLabelValue(nil, "a\\b\"c\nd")); got != `a\\b\"c\nd` {
		t.Errorf("AppendLabelValue: %s", got)
	}
	if got := string(AppendHelp(nil, "a\\b\"c\nd", false)); got != `a\\b"c\nd` {
		t.Errorf("AppendHelp text: %s", got)
	}
	if got := string(AppendHelp(nil, "a\\b\"c\nd", true)); got != `a\\b\"c\nd` {
		t.Errorf("AppendHelp OpenMetrics: %s", got)
	}
	for f, want := range map[float64][2]string{
		0: {"0", "0.0"}, 1: {"1", "1.0"}, -1: {"-1", "-1.0"}, 0.25: {"0.25", "0.25"}, 1e21: {"1e+21", "1e+21"},
		250: {"250", "250.0"}, math.Inf(1): {"+Inf", "+Inf"}, math.Inf(-1): {"-Inf", "-Inf"}, 1e-7: {"1e-07", "1e-07"},
	} {
		if got := string(AppendFloat(nil, f)); got != want[0] {
			t.Errorf("AppendFloat(%v) = %s; want %s", f, got, want[0])
		}
		if got := string(AppendOpenMetricsFloat(nil, f)); got != want[1] {
			t.Errorf("AppendOpenMetricsFloat(%v) = %s; want %s", f, got, want[1])
		}
	}
	if got := string(AppendFloat(nil, math.NaN())) + string(AppendOpenMetricsFloat(nil, math.NaN())); got != "NaNNaN" {
		t.Errorf("NaN: %s", got)
	}
}
