package promcheck

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	ocprom "contrib.go.opencensus.io/exporter/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	ocstats "go.opencensus.io/stats"
	ocview "go.opencensus.io/stats/view"
	octag "go.opencensus.io/tag"

	zsprom "github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// TestOpenCensusNamesMatchContribExporter: with Options.OpenCensusNames
// the text exposition has the same families (names, types, help), series
// (labels) and values as contrib.go.opencensus.io/exporter/prometheus
// v0.4.2 over go.opencensus.io v0.24.0 with the same views and
// recordings: a migrated service keeps its series, dashboards and alerts.
func TestOpenCensusNamesMatchContribExporter(t *testing.T) {
	type viewDef struct {
		name, desc, unit string
		agg              string
		bounds           []float64
		intMeasure       bool
	}
	defs := []viewDef{
		{"ocn/http/requests", "Requests served", "ms", "count", nil, false},
		{"ocn/http/latency", "Request latency", "ms", "dist", []float64{1, 5, 10, 50}, false},
		{"ocn/io--read.bytes_total", "Bytes read", "By", "sum", nil, true},
		{"ocn/queue:depth", "Queue depth", "1", "last", nil, true},
		{"1ocn/odd name", "Odd", "s", "sum", nil, false},
	}
	// Not "le": the contrib exporter exposes it as a histogram's "le"
	// label, which no parser accepts (zerostat says "key_le").
	keyNames := []string{"http.route", "status-code", "a--b"}
	values := []float64{0.5, 5, 7, 10, 12, 50, 99}

	// OpenCensus and its exporter.
	var ocKeys []octag.Key
	for _, k := range keyNames {
		ocKeys = append(ocKeys, octag.MustNewKey(k))
	}
	reg := prometheus.NewRegistry()
	exp, err := ocprom.NewExporter(ocprom.Options{Namespace: "app", Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	// zerostat.
	var zsKeys []tag.Key
	for _, k := range keyNames {
		zsKeys = append(zsKeys, tag.MustNewKey(k))
	}
	for i, d := range defs {
		var ocm ocstats.Measure
		var zsm stats.Measure
		var ocRec func(ctx context.Context, v float64)
		var zsRec func(ctx context.Context, v float64)
		mname := fmt.Sprintf("ocn/m%d", i)
		if d.intMeasure {
			o, z := ocstats.Int64(mname, "measure", d.unit), stats.Int64(mname, "measure", d.unit)
			ocm, zsm = o, z
			ocRec = func(ctx context.Context, v float64) { ocstats.Record(ctx, o.M(int64(v))) }
			zsRec = func(ctx context.Context, v float64) { stats.Record(ctx, z.M(int64(v))) }
		} else {
			o, z := ocstats.Float64(mname, "measure", d.unit), stats.Float64(mname, "measure", d.unit)
			ocm, zsm = o, z
			ocRec = func(ctx context.Context, v float64) { ocstats.Record(ctx, o.M(v)) }
			zsRec = func(ctx context.Context, v float64) { stats.Record(ctx, z.M(v)) }
		}
		var ocAgg *ocview.Aggregation
		var zsAgg *view.Aggregation
		switch d.agg {
		case "count":
			ocAgg, zsAgg = ocview.Count(), view.Count()
		case "sum":
			ocAgg, zsAgg = ocview.Sum(), view.Sum()
		case "last":
			ocAgg, zsAgg = ocview.LastValue(), view.LastValue()
		default:
			ocAgg, zsAgg = ocview.Distribution(d.bounds...), view.Distribution(d.bounds...)
		}
		ocv := &ocview.View{Name: d.name, Description: d.desc, Measure: ocm, Aggregation: ocAgg, TagKeys: slices.Clone(ocKeys)}
		zsv := &view.View{Name: d.name, Description: d.desc, Measure: zsm, Aggregation: zsAgg, TagKeys: slices.Clone(zsKeys)}
		if err := ocview.Register(ocv); err != nil {
			t.Fatal(err)
		}
		if err := view.Register(zsv); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ocview.Unregister(ocv); view.Unregister(zsv) })
		for j, v := range values {
			route, status := fmt.Sprintf("/r%d", j%3), fmt.Sprint(200+100*(j%2))
			ocCtx, err := octag.New(context.Background(), octag.Upsert(ocKeys[0], route), octag.Upsert(ocKeys[1], status), octag.Upsert(ocKeys[2], "x"))
			if err != nil {
				t.Fatal(err)
			}
			zsCtx, err := tag.New(context.Background(), tag.Upsert(zsKeys[0], route), tag.Upsert(zsKeys[1], status), tag.Upsert(zsKeys[2], "x"))
			if err != nil {
				t.Fatal(err)
			}
			ocRec(ocCtx, v)
			zsRec(zsCtx, v)
		}
	}

	// OpenCensus records through a channel to one worker, and the
	// contrib exporter reads the views without going through it: a
	// scrape now could miss records still queued. RetrieveData goes
	// through the same channel, so once it returns for every view the
	// worker has applied everything recorded above (a barrier, not a
	// sleep).
	for _, d := range defs {
		if _, err := ocview.RetrieveData(d.name); err != nil {
			t.Fatal(err)
		}
	}
	rec := httptest.NewRecorder()
	exp.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	theirs := parseFamilies(t, rec.Body)
	ours := parseFamilies(t, strings.NewReader(string(zsprom.NewHandler(zsprom.Options{Namespace: "app", OpenCensusNames: true}).AppendFormat(nil, zsprom.FormatText))))
	n := 0
	for name, tf := range theirs {
		if !strings.Contains(name, "ocn") {
			continue
		}
		n++
		of := ours[name]
		if of == nil {
			t.Errorf("family %s (%v): missing from zerostat's exposition", name, tf.GetType())
			continue
		}
		if of.GetType() != tf.GetType() || of.GetHelp() != tf.GetHelp() {
			t.Errorf("family %s: %v %q; contrib exporter %v %q", name, of.GetType(), of.GetHelp(), tf.GetType(), tf.GetHelp())
		}
		if got, want := flatten(of), flatten(tf); !slices.Equal(got, want) {
			t.Errorf("family %s:\nzerostat: %q\ncontrib:  %q", name, got, want)
		}
	}
	for name := range ours {
		if strings.Contains(name, "ocn") && theirs[name] == nil {
			t.Errorf("family %s: not in the contrib exporter's exposition", name)
		}
	}
	if n != len(defs) {
		t.Errorf("%d families compared; want %d", n, len(defs))
	}
}

func parseFamilies(t *testing.T, r io.Reader) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(r)
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// flatten lists a family's samples as "labels value" lines, sorted.
func flatten(mf *dto.MetricFamily) []string {
	var out []string
	for _, m := range mf.Metric {
		var ls []string
		for _, l := range m.Label {
			ls = append(ls, l.GetName()+"="+l.GetValue())
		}
		slices.Sort(ls)
		lab := strings.Join(ls, ",")
		switch {
		case m.Counter != nil:
			out = append(out, fmt.Sprint(lab, " ", m.Counter.GetValue()))
		case m.Gauge != nil:
			out = append(out, fmt.Sprint(lab, " ", m.Gauge.GetValue()))
		case m.Histogram != nil:
			h := m.Histogram
			out = append(out, fmt.Sprint(lab, " count=", h.GetSampleCount(), " sum=", h.GetSampleSum()))
			for _, b := range h.Bucket {
				out = append(out, fmt.Sprint(lab, " le=", b.GetUpperBound(), " ", b.GetCumulativeCount()))
			}
		}
	}
	slices.Sort(out)
	return out
}
