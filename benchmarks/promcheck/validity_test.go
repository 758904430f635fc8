package promcheck

import (
	"context"
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"

	zsprom "github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// hostileFixture registers views chosen to break an exposition: names that
// collide once sanitized, a Count and a LastValue of one sample name,
// negative, NaN and infinite values in every aggregation, tag keys named
// "le", like the overflow label and like reserved labels, quotes,
// backslashes and separators in tag values, invalid UTF-8 and newlines in
// descriptions, a view past its cardinality limit.
func hostileFixture(t *testing.T) {
	f := stats.Float64("hx/f", "desc \"quoted\"\nnew line \\ back \xff slash", "ms")
	n := stats.Int64("hx/n", "", "By")
	u := stats.Float64("hx/u", "", "1") // no unit suffix to keep names apart
	keys := []tag.Key{tag.MustNewKey("le"), tag.MustNewKey("otel.metric.overflow"), tag.MustNewKey("__name__"),
		tag.MustNewKey("1st"), tag.MustNewKey("a-b")}
	vs := []*view.View{
		{Name: "hx/a.b", Measure: u, Aggregation: view.Count(), TagKeys: keys},
		{Name: "hx/a_b", Measure: u, Aggregation: view.Sum(), TagKeys: keys},
		{Name: "hx/x", Measure: u, Aggregation: view.Count()},
		{Name: "hx/x_total", Measure: u, Aggregation: view.LastValue()},
		{Name: "hx/sum", Measure: f, Aggregation: view.Sum(), TagKeys: keys},
		{Name: "hx/isum", Measure: n, Aggregation: view.Sum()},
		{Name: "hx/last", Measure: f, Aggregation: view.LastValue(), TagKeys: keys},
		{Name: "hx/dist", Measure: f, Aggregation: view.Distribution(2.5e-7, 0.5, 1, 1e21), TagKeys: keys, CardinalityLimit: 2},
		{Name: "hx/dist_up", Measure: f, Aggregation: view.DistributionUpperInclusive(1, 5), TagKeys: keys},
		{Name: "hx/seconds", Measure: stats.Float64("hx/s", "", "s"), Aggregation: view.LastValue()},
		{Name: "hx/9lives", Measure: stats.Float64("hx/rate", "", "{req}/s"), Aggregation: view.Sum()},
		{Name: "hx/hist_created", Measure: u, Aggregation: view.LastValue()}, // a histogram's _created
		{Name: "hx/hist_count", Measure: u, Aggregation: view.Count()},       // its _count
		{Name: "hx/hist", Measure: u, Aggregation: view.Distribution(1)},
	}
	if err := view.Register(vs...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(vs...) })
	for i, vals := range [][]string{{`q"uo\te`, "x,y=z}", " sp ace ", "", "{"}, {"a", "true", "b", "c", "d"}, {"1", "2", "3", "4", "5"}} {
		var muts []tag.Mutator
		for j, k := range keys {
			muts = append(muts, tag.Upsert(k, vals[j]))
		}
		ctx, err := tag.New(context.Background(), muts...)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []float64{-3, math.NaN(), math.Inf(1), math.Inf(-1), 1, 5, 0, math.Copysign(0, -1)} {
			stats.Record(ctx, f.M(v+float64(i)))
		}
		stats.Record(ctx, n.M(-7), n.M(int64(i)), u.M(-2))
	}
	stats.Record(context.Background(), f.M(-1))
}

// TestExpositionValidForHostileInput: for hostile views and values, in
// both namings, the text format parses with client_golang's expfmt parser
// and Prometheus's own text parser, and OpenMetrics with Prometheus's
// OpenMetrics parser; and both obey what the parsers do not check: one
// family per name, no duplicate series, no negative or NaN counter (nor
// histogram _sum, _count or bucket), "# UNIT" only as the name's suffix.
func TestExpositionValidForHostileInput(t *testing.T) {
	hostileFixture(t)
	for _, oc := range []bool{false, true} {
		h := zsprom.NewHandler(zsprom.Options{Namespace: "my.ns", OpenCensusNames: oc, ConstLabels: map[string]string{
			"env\n": "line\nbreak \xff", "le": "c", "otel_metric_overflow": "true", "": "dropped", "quote": `"\`}})
		// Refused, as registered later: a_b (a.b's name); hist (its
		// _created is hist_created's, or with OpenCensus naming, which has
		// no _created, its _count is hist_count's); by default x_total (the
		// sample of the counter x).
		err := h.Err()
		refused := []string{"hx/a_b", "hx/hist"}
		if !oc {
			refused = append(refused, "hx/x_total")
		}
		for _, v := range refused {
			if err == nil || !strings.Contains(err.Error(), `"`+v+`" is left out`) {
				t.Errorf("OpenCensusNames %v: Err() = %v; want %s refused", oc, err, v)
			}
		}
		for _, f := range []zsprom.Format{zsprom.FormatText, zsprom.FormatOpenMetrics} {
			out := h.AppendFormat(nil, f)
			name := f.String()
			if oc {
				name += "/opencensus"
			}
			if f == zsprom.FormatText {
				tp := expfmt.NewTextParser(model.UTF8Validation)
				if _, err := tp.TextToMetricFamilies(strings.NewReader(string(out))); err != nil {
					t.Errorf("%s: expfmt: %v\n%s", name, err, out)
				}
				checkRules(t, name, textparse.NewPromParser(out, labels.NewSymbolTable(), false), out, false)
			} else {
				checkRules(t, name, textparse.NewOpenMetricsParser(out, labels.NewSymbolTable()), out, true)
			}
		}
	}
}

// checkRules reads every entry of p, failing on a parse error, and checks
// the OpenMetrics rules the parsers leave to the scraper.
// In the text format a histogram's _sum may be negative or NaN.
func checkRules(t *testing.T, name string, p textparse.Parser, out []byte, om bool) {
	t.Helper()
	types := map[string]model.MetricType{}
	units := map[string]string{}
	series := map[string]bool{}
	family := ""
	nSeries := 0
	for {
		e, err := p.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Errorf("%s: parse: %v\n%s", name, err, out)
			return
		}
		switch e {
		case textparse.EntryType:
			n, typ := p.Type()
			if _, dup := types[string(n)]; dup {
				t.Errorf("%s: second # TYPE for %s", name, n)
			}
			family = string(n)
			types[family] = typ
		case textparse.EntryUnit:
			n, u := p.Unit()
			units[string(n)] = string(u)
			if !strings.HasSuffix(string(n), "_"+string(u)) {
				t.Errorf("%s: # UNIT %s %s: the name does not end in the unit", name, n, u)
			}
		case textparse.EntrySeries:
			nSeries++
			_, _, v := p.Series()
			var ls labels.Labels
			p.Labels(&ls)
			key := ls.String()
			if series[key] {
				t.Errorf("%s: duplicate series %s", name, key)
			}
			series[key] = true
			metric := ls.Get(model.MetricNameLabel)
			if !strings.HasPrefix(metric, family) {
				t.Errorf("%s: sample %s outside its family (%s)", name, key, family)
			}
			suffix := strings.TrimPrefix(metric, family)
			typ := types[family]
			mustBeCount := typ == model.MetricTypeCounter ||
				typ == model.MetricTypeHistogram && suffix != "" && (om || suffix != "_sum") // _bucket, _count, _sum, _created
			if mustBeCount && !(v >= 0) {
				t.Errorf("%s: %s %v: a %s's %q sample is negative or NaN", name, key, v, typ, suffix)
			}
			if typ == model.MetricTypeHistogram && ls.Has("le") != (suffix == "_bucket") {
				t.Errorf("%s: %s has an le label", name, key)
			}
			if strings.Count(key, `otel_metric_overflow="true"`) > 0 && ls.Len() > 3 && !strings.Contains(key, "quote=") {
				t.Errorf("%s: %s: the overflow series carries tag labels", name, key)
			}
		}
	}
	if nSeries < 30 {
		t.Errorf("%s: only %d series", name, nSeries)
	}
}
