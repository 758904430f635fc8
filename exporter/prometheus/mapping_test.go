package prometheus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/internal/promname"
	"github.com/zerostat/zerostat/selfstats"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// TestIssue11Collisions: views whose names collide ("a.b" and "a_b"; a
// Count "x" and a LastValue "x_total") never give two families of one
// name: the later registered view is left out and reported, naming both.
func TestIssue11Collisions(t *testing.T) {
	if err := selfstats.Register(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(selfstats.Unregister)
	fixtureSeq++
	p := fmt.Sprintf("col%d", fixtureSeq)
	m := stats.Int64(p+"/m", "", "1")
	first := &view.View{Name: p + "/a_b", Measure: m, Aggregation: view.Count()}
	register(t, first)
	// Registered after the handler is built: found on the next scrape.
	h := NewHandler(Options{})
	if err := h.Err(); err != nil {
		t.Fatalf("Err() before any collision: %v", err)
	}
	register(t,
		&view.View{Name: p + "/a.b", Measure: m, Aggregation: view.Sum()},
		&view.View{Name: p + "/x", Measure: m, Aggregation: view.Count()},
	)
	register(t, &view.View{Name: p + "/x_total", Measure: m, Aggregation: view.LastValue()})
	stats.Record(context.Background(), m.M(3))
	for _, f := range []Format{FormatText, FormatOpenMetrics} {
		out := linesWith(h.AppendFormat(nil, f), p+"_")
		if n := strings.Count(out, "# TYPE "+p+"_a_b"); n != 1 {
			t.Errorf("%v: %d families named %s_a_b; want 1:\n%s", f, n, p, out)
		}
		if strings.Contains(out, " gauge") {
			t.Errorf("%v: the LastValue x_total (registered last) is exposed:\n%s", f, out)
		}
		one := " 1\n" // two Count views' samples: client_golang's counter spelling
		if f == FormatOpenMetrics {
			one = " 1.0\n"
		}
		if !strings.Contains(out, p+"_a_b_total"+one) || !strings.Contains(out, p+"_x_total"+one) {
			t.Errorf("%v: the first registered views' samples are missing:\n%s", f, out)
		}
	}
	if got := refusedViews(t); got != 2 {
		t.Errorf("zerostat/refused_views{sink=prometheus} = %v; want 2 (counted once each)", got)
	}
	err := h.Err()
	var ce *promname.CollisionError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), `view "`+p+`/a.b" is left out`) ||
		!strings.Contains(err.Error(), `view "`+p+`/a_b"'s`) || !strings.Contains(err.Error(), `view "`+p+`/x_total" is left out`) {
		t.Errorf("Err() = %v; want both refused views, each with its rival", err)
	}
	// The rival unregistered, the refused view is exposed.
	view.Unregister(first)
	if out := linesWith(h.AppendFormat(nil, FormatText), p+"_a_b"); !strings.Contains(out, p+"_a_b_total 3\n") {
		t.Errorf("a.b not exposed once a_b is gone:\n%s", out)
	}
}

// refusedViews returns selfstats' count of refused views for the
// Prometheus sink.
func refusedViews(t *testing.T) float64 {
	t.Helper()
	rows, err := view.RetrieveData("zerostat/refused_views")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if len(r.Tags) == 1 && r.Tags[0].Value == "prometheus" {
			return r.Data.(*view.SumData).Value
		}
	}
	return 0
}

// TestIssue11NegativeSum: a counter is never exposed negative; the Sum
// view of a negative series is untyped for that scrape, with the same
// sample name and its exact value, and a counter again once it is not.
func TestIssue11NegativeSum(t *testing.T) {
	fixtureSeq++
	p := fmt.Sprintf("neg%d", fixtureSeq)
	m := stats.Float64(p+"/balance", "Balance", "By")
	register(t,
		&view.View{Name: p + "/balance", Measure: m, Aggregation: view.Sum(), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/dist", Measure: m, Aggregation: view.Distribution(1)},
	)
	stats.Record(ctxWith(t, tag.Upsert(keyRoute, "/a")), m.M(2))
	stats.Record(ctxWith(t, tag.Upsert(keyRoute, "/b")), m.M(-5))
	h := NewHandler(Options{})
	om := linesWith(h.AppendFormat(nil, FormatOpenMetrics), p+"_")
	want := strings.ReplaceAll(`# HELP P_balance_bytes_total Balance
# TYPE P_balance_bytes_total unknown
P_balance_bytes_total{route="/a"} 2.0
P_balance_bytes_total{route="/b"} -5.0
`, "P_", p+"_")
	if !strings.HasPrefix(om, want) {
		t.Errorf("OpenMetrics:\n%s\nwant it to start with:\n%s", om, want)
	}
	if strings.Contains(om, p+"_dist_bytes_sum") || !strings.Contains(om, p+"_dist_bytes_count 2\n") {
		t.Errorf("OpenMetrics: a histogram of negative values must have no _sum, and a _count:\n%s", om)
	}
	text := linesWith(h.AppendFormat(nil, FormatText), p+"_")
	if !strings.Contains(text, "# TYPE "+p+"_balance_bytes_total untyped\n") || !strings.Contains(text, p+"_dist_bytes_sum -3\n") {
		t.Errorf("text:\n%s", text)
	}
	stats.Record(ctxWith(t, tag.Upsert(keyRoute, "/b")), m.M(5))
	if om := linesWith(h.AppendFormat(nil, FormatOpenMetrics), p+"_balance"); !strings.Contains(om, "# TYPE "+p+"_balance_bytes counter\n# UNIT "+p+"_balance_bytes bytes\n") {
		t.Errorf("non-negative again, not a counter:\n%s", om)
	}
}

// TestIssue11OpenCensusNames: the names of contrib.go.opencensus.io/
// exporter/prometheus (benchmarks/promcheck compares with the exporter
// itself); in OpenMetrics its counters are "unknown", keeping the names.
func TestIssue11OpenCensusNames(t *testing.T) {
	fixtureSeq++
	p := fmt.Sprintf("oc%d", fixtureSeq)
	m := stats.Float64(p+"/latency", "Latency", stats.UnitMilliseconds)
	register(t,
		&view.View{Name: p + "/requests", Description: "Requests", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyStatus}},
		&view.View{Name: p + "/latency", Measure: m, Aggregation: view.Distribution(1, 2.5)},
	)
	stats.Record(ctxWith(t, tag.Upsert(keyStatus, "200")), m.M(2))
	h := NewHandler(Options{Namespace: "app", OpenCensusNames: true})
	text := linesWith(h.AppendFormat(nil, FormatText), "app_"+p+"_")
	want := strings.ReplaceAll(`# HELP app_P_latency Latency
# TYPE app_P_latency histogram
app_P_latency_bucket{le="1"} 0
app_P_latency_bucket{le="2.5"} 1
app_P_latency_bucket{le="+Inf"} 1
app_P_latency_sum 2
app_P_latency_count 1
# HELP app_P_requests Requests
# TYPE app_P_requests counter
app_P_requests{http_status="200"} 1
`, "P_", p+"_")
	if text != want {
		t.Errorf("text:\n%s\nwant:\n%s", text, want)
	}
	om := linesWith(h.AppendFormat(nil, FormatOpenMetrics), "app_"+p+"_requests")
	if om != "# HELP app_"+p+"_requests Requests\n# TYPE app_"+p+"_requests unknown\napp_"+p+"_requests{http_status=\"200\"} 1.0\n" {
		t.Errorf("OpenMetrics:\n%s", om)
	}
}

// TestIssue11OverflowLabelNotDuplicable: a tag key named like the
// overflow label does not give a second otel_metric_overflow="true"
// series.
func TestIssue11OverflowLabelNotDuplicable(t *testing.T) {
	fixtureSeq++
	p := fmt.Sprintf("ovl%d", fixtureSeq)
	m := stats.Int64(p+"/m", "", "1")
	k := tag.MustNewKey("otel.metric.overflow")
	register(t, &view.View{Name: p + "/c", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{k}, CardinalityLimit: 1})
	stats.Record(ctxWith(t, tag.Upsert(k, "true")), m.M(1))
	stats.Record(ctxWith(t, tag.Upsert(k, "other")), m.M(1)) // past the limit: the overflow series
	got := linesWith(NewHandler(Options{}).AppendFormat(nil, FormatText), p+"_")
	want := "# TYPE " + p + "_c_total counter\n" + p + `_c_total{otel_metric_overflow_1="true"} 1` + "\n" + p + `_c_total{otel_metric_overflow="true"} 1` + "\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
