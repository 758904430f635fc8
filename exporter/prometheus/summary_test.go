package prometheus

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/race"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

var keyQuantile = tag.MustNewKey("quantile")

// summaryFixture registers a summary view of quantiles 0, 0.5 and 1 with
// keys route and quantile (which a summary's own label renames) and sets
// two rows: route=/a,quantile=x (count 3, sum 6) and one without tags
// (count 0, a negative sum, NaN values). It returns the view's prefix.
func summaryFixture(t testing.TB) string {
	fixtureSeq++
	p := fmt.Sprintf("sum%d", fixtureSeq)
	m := stats.Float64(p+"/pause", "GC pauses", stats.UnitSeconds)
	register(t, &view.View{Name: p + "/pause", Measure: m, Aggregation: view.Summary(0, 0.5, 1), TagKeys: []tag.Key{keyRoute, keyQuantile}})
	agg := core.FindView(p + "/pause").Agg
	var tags []core.Tag
	for _, mu := range []tag.Mutator{tag.Upsert(keyRoute, "/a"), tag.Upsert(keyQuantile, "x")} {
		tags = (*core.Mutator)(&mu).Apply(tags)
	}
	if err := agg.SetSummary(tags, 3, 6, []float64{0.1, 0.5, 1.5}); err != nil {
		t.Fatal(err)
	}
	if err := agg.SetSummary(nil, 0, -1, []float64{math.NaN(), math.NaN(), math.NaN()}); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSummaryExposition: a summary view in the text format and
// OpenMetrics as client_golang writes a summary: TYPE summary, a sample
// per quantile labelled quantile="<q>" after the series' labels (a tag
// key "quantile" renamed key_quantile), _sum and _count; in OpenMetrics
// the canonical numbers, an integer count, _created, and no _sum when it
// is negative.
func TestSummaryExposition(t *testing.T) {
	p := summaryFixture(t)
	h := NewHandler(Options{ConstLabels: map[string]string{"env": "prod"}})
	n := p + "_pause_seconds"
	wantText := "# HELP " + n + " GC pauses\n# TYPE " + n + " summary\n" +
		n + `{env="prod",quantile="0.0"} NaN` + "\n" +
		n + `{env="prod",quantile="0.5"} NaN` + "\n" +
		n + `{env="prod",quantile="1.0"} NaN` + "\n" +
		n + `_sum{env="prod"} -1` + "\n" +
		n + `_count{env="prod"} 0` + "\n" +
		n + `{env="prod",key_quantile="x",route="/a",quantile="0.0"} 0.1` + "\n" +
		n + `{env="prod",key_quantile="x",route="/a",quantile="0.5"} 0.5` + "\n" +
		n + `{env="prod",key_quantile="x",route="/a",quantile="1.0"} 1.5` + "\n" +
		n + `_sum{env="prod",key_quantile="x",route="/a"} 6` + "\n" +
		n + `_count{env="prod",key_quantile="x",route="/a"} 3` + "\n"
	if got := familiesText(h.AppendFormat(nil, FormatText), p+"_"); got != wantText {
		t.Errorf("text:\n%s\nwant:\n%s", got, wantText)
	}
	om := string(h.AppendFormat(nil, FormatOpenMetrics))
	created := regexp.MustCompile(`(?m)^` + n + `_created\{[^}]*\} \d\.\d+e\+09\n`)
	if got := len(created.FindAllString(om, -1)); got != 2 {
		t.Errorf("OpenMetrics: %d _created samples; want 2:\n%s", got, om)
	}
	om = created.ReplaceAllString(om, "")
	wantOM := "# HELP " + n + " GC pauses\n# TYPE " + n + " summary\n# UNIT " + n + " seconds\n" +
		n + `{env="prod",quantile="0.0"} NaN` + "\n" +
		n + `{env="prod",quantile="0.5"} NaN` + "\n" +
		n + `{env="prod",quantile="1.0"} NaN` + "\n" +
		n + `_count{env="prod"} 0` + "\n" +
		n + `{env="prod",key_quantile="x",route="/a",quantile="0.0"} 0.1` + "\n" +
		n + `{env="prod",key_quantile="x",route="/a",quantile="0.5"} 0.5` + "\n" +
		n + `{env="prod",key_quantile="x",route="/a",quantile="1.0"} 1.5` + "\n" +
		n + `_sum{env="prod",key_quantile="x",route="/a"} 6.0` + "\n" +
		n + `_count{env="prod",key_quantile="x",route="/a"} 3` + "\n"
	if got := linesWith([]byte(om), n); got != wantOM {
		t.Errorf("OpenMetrics:\n%s\nwant:\n%s", got, wantOM)
	}
}

// TestSummaryProtobuf: the protobuf exposition's family is a SUMMARY (2)
// of Summary messages: sample_count, sample_sum, a Quantile (quantile,
// value) per quantile in order, the created timestamp, with the text
// format's labels (quantile values apart, in the message).
func TestSummaryProtobuf(t *testing.T) {
	p := summaryFixture(t)
	h := NewHandler(Options{})
	fam := familyNamed(t, h.AppendFormat(nil, FormatProtobuf), p+"_pause_seconds")
	if typ, _ := one(fam, 3); typ.v != 2 {
		t.Fatalf("type %d; want 2 (SUMMARY)", typ.v)
	}
	ms := fieldsOf(fam, 4)
	if len(ms) != 2 {
		t.Fatalf("%d metrics; want 2", len(ms))
	}
	var got []string
	for _, mf := range ms {
		m := mustFields(t, mf.b)
		var labels []string
		for _, lf := range fieldsOf(m, 1) {
			l := mustFields(t, lf.b)
			n, _ := one(l, 1)
			v, _ := one(l, 2)
			labels = append(labels, string(n.b)+"="+string(v.b))
		}
		sf, ok := one(m, 4)
		if !ok || len(m) != len(labels)+1 {
			t.Fatalf("metric fields %+v; want the labels and a summary", m)
		}
		s := mustFields(t, sf.b)
		count, _ := one(s, 1)
		sum, _ := one(s, 2)
		var qs []string
		for _, qf := range fieldsOf(s, 3) {
			q := mustFields(t, qf.b)
			qq, _ := one(q, 1)
			qv, _ := one(q, 2)
			qs = append(qs, fmt.Sprint(f64(qq), ":", f64(qv)))
		}
		if c, ok := one(s, 4); !ok || len(mustFields(t, c.b)) == 0 {
			t.Errorf("no created timestamp: %+v", s)
		}
		got = append(got, fmt.Sprint(labels, " ", count.v, " ", f64(sum), " ", qs))
	}
	want := []string{"[] 0 -1 [0:NaN 0.5:NaN 1:NaN]", "[key_quantile=x route=/a] 3 6 [0:0.1 0.5:0.5 1:1.5]"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("metrics %q; want %q", got, want)
	}
	if !strings.Contains(string(h.AppendFormat(nil, FormatText)), "# TYPE "+p+"_pause_seconds summary") {
		t.Error("text: not a summary")
	}
	if race.Enabled {
		return // the race detector allocates
	}
	// Steady state: a scrape of the summary allocates nothing.
	for _, f := range []Format{FormatText, FormatOpenMetrics, FormatProtobuf} {
		buf := h.AppendFormat(nil, f)
		if got := testing.AllocsPerRun(20, func() { buf = h.AppendFormat(buf[:0], f) }); got != 0 {
			t.Errorf("%v: %v allocs per scrape; want 0", f, got)
		}
	}
}
