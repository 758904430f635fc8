package remotewrite

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/hostile"
	"github.com/zerostat/zerostat/internal/testbackend"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// TestBackendSummaryEveryPathAgrees: a real Prometheus scraping a summary
// view (text format and OpenMetrics) stores the very series remote write
// sends it for the same view, with the same values: a series per
// quantile labelled quantile="<q>", _sum and _count (OpenMetrics adds
// _created), a NaN quantile as NaN; and the values are the summary's.
func TestBackendSummaryEveryPathAgrees(t *testing.T) {
	ns := fmt.Sprintf("rwsumb%d", seq.Add(1))
	m := stats.Float64(ns+"/pause", "Pauses", stats.UnitSeconds)
	register(t, &view.View{Name: ns + "/pause", Measure: m, Aggregation: view.Summary(0, 0.5, 0.99, 1), TagKeys: []tag.Key{keyRoute}})
	agg := core.FindView(ns + "/pause").Agg
	for _, r := range []struct {
		route string
		n     uint64
		sum   float64
		vals  []float64
	}{
		{"/a", 7, 0.0125, []float64{0.001, 0.0015, 0.004, 0.0041}},
		{"/b", 0, 0, []float64{math.NaN(), math.NaN(), math.NaN(), math.NaN()}},
	} {
		mu := tag.Upsert(keyRoute, r.route)
		if err := agg.SetSummary((*core.Mutator)(&mu).Apply(nil), r.n, r.sum, r.vals); err != nil {
			t.Fatal(err)
		}
	}
	om := httptest.NewServer(prometheus.NewHandler(prometheus.Options{}))
	defer om.Close()
	text := httptest.NewServer(prometheus.NewHandler(prometheus.Options{Format: prometheus.FormatText}))
	defer text.Close()
	prom := testbackend.StartPrometheus(t, testbackend.PrometheusOptions{RemoteWriteReceiver: true, Jobs: []testbackend.ScrapeJob{
		{Name: "openmetrics", Target: om.Listener.Addr().String()},
		{Name: "text", Target: text.Listener.Addr().String()},
	}})
	rw := newWriter(t, Options{URL: prom.URL + "/api/v1/write", ConstLabels: map[string]string{"job": "zerostat"}})
	if err := rw.Push(context.Background()); err != nil {
		t.Fatal(err)
	}
	name := ns + "_pause_seconds"
	sel := fmt.Sprintf(`{__name__=~"%s.*"}`, name)
	var byJob map[string]map[string]string
	deadline := time.Now().Add(60 * time.Second)
	for {
		byJob = map[string]map[string]string{}
		got, err := prom.Query(sel)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range got {
			j := s.Metric["job"]
			if byJob[j] == nil {
				byJob[j] = map[string]string{}
			}
			byJob[j][hostile.Key(s.Metric["__name__"], s.Metric)] = s.Value
		}
		if len(byJob["openmetrics"]) > 0 && len(byJob["text"]) > 0 && len(byJob["zerostat"]) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s, series by job: %v", byJob)
		}
		time.Sleep(500 * time.Millisecond)
	}
	want := map[string]string{
		name + `{quantile="0.0",route="/a"}`:  "0.001",
		name + `{quantile="0.5",route="/a"}`:  "0.0015",
		name + `{quantile="0.99",route="/a"}`: "0.004",
		name + `{quantile="1.0",route="/a"}`:  "0.0041",
		name + `_sum{route="/a"}`:             "0.0125",
		name + `_count{route="/a"}`:           "7",
		name + `{quantile="0.0",route="/b"}`:  "NaN",
		name + `{quantile="0.5",route="/b"}`:  "NaN",
		name + `{quantile="0.99",route="/b"}`: "NaN",
		name + `{quantile="1.0",route="/b"}`:  "NaN",
		name + `_sum{route="/b"}`:             "0",
		name + `_count{route="/b"}`:           "0",
	}
	for _, job := range []string{"zerostat", "text", "openmetrics"} {
		got := byJob[job]
		for k, v := range want {
			if g, ok := got[k]; !ok || g != v {
				t.Errorf("%s: %s = %q (present %v); want %s", job, k, g, ok, v)
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok && !(job == "openmetrics" && slices.Contains([]string{name + `_created{route="/a"}`, name + `_created{route="/b"}`}, k)) {
				t.Errorf("%s: %s, not a series of the summary", job, k)
			}
		}
	}
}
