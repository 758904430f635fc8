package otel_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"reflect"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/exporter/remotewrite"
	"github.com/zerostat/zerostat/internal/promname"
	"github.com/zerostat/zerostat/internal/testbackend"
	zotel "github.com/zerostat/zerostat/otel"
)

// A real Prometheus (Debian's 2.42, --enable-feature=exemplar-storage,
// --web.enable-remote-write-receiver) stores an OTel counter's exemplars
// on its _total series, by both paths: the OpenMetrics scrape of
// zerostat's handler carries the newest of the point's reservoir (the
// latest measurement in a sampled span), remote write every exemplar of
// the reservoir once, oldest first (one per millisecond: what Prometheus
// stores of a series' exemplars); each with its span's trace_id and
// span_id, its value and its time (to the millisecond). An up-down
// counter's series (a gauge) gets none by either path, nor do the
// measurements outside a span or in a span not sampled. A later
// measurement in a sampled span adds its exemplar on both paths.
func TestBackendPrometheusOTelCounterExemplars(t *testing.T) {
	atLeastProcs(t, 2) // a reservoir of 2 slots at least: both offers kept
	p := newProvider(t, zotel.WithViewPrefix("otelcex."))
	c, _ := p.Meter("m").Int64Counter("requests")
	ud, _ := p.Meter("m").Int64UpDownCounter("inflight")
	route := metric.WithAttributeSet(attribute.NewSet(attribute.String("route", "/a")))
	in := func(sc trace.SpanContext) context.Context { return trace.ContextWithSpanContext(ctx, sc) }
	start := time.Now()
	c.Add(in(sampledSpans[0]), 2, route)
	c.Add(in(unsampled), 9, route)   // not sampled: not kept
	time.Sleep(2 * time.Millisecond) // Prometheus stores one exemplar per millisecond and series
	c.Add(in(sampledSpans[1]), 3, route)
	c.Add(ctx, 1, route) // outside a span: not kept
	ud.Add(in(sampledSpans[2]), 1, route)

	srv := httptest.NewServer(prometheus.NewHandler(prometheus.Options{}))
	defer srv.Close()
	prom := testbackend.StartPrometheus(t, testbackend.PrometheusOptions{
		Jobs:                []testbackend.ScrapeJob{{Name: "otelcex", Target: srv.Listener.Addr().String()}},
		ExemplarStorage:     true,
		RemoteWriteReceiver: true,
	})
	w, err := remotewrite.New(remotewrite.Options{URL: prom.URL + "/api/v1/write",
		ConstLabels: map[string]string{"job": "zerostat", "instance": "test"}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}

	// kept returns the counter's exemplars as zerostat keeps them (its
	// OTLP encoding), as Prometheus stores them from remote write (Ms:
	// their time in milliseconds) and from the scrape (their time as
	// OpenMetrics spells it in seconds, which Prometheus's parser turns
	// into milliseconds).
	type want = testbackend.StoredExemplar
	kept := func() (rw, scraped []want) {
		t.Helper()
		enc, err := otlp.NewEncoder(otlp.Cumulative, exporter.Resource{})
		if err != nil {
			t.Fatal(err)
		}
		pt := exemplarsFromOTLP(t, enc.Encode(time.Now()), "otelcex.")["requests"]["route=STRING:/a"]
		if pt == nil {
			t.Fatal("no counter point")
		}
		for _, x := range pt.exs {
			sec, err := strconv.ParseFloat(string(promname.AppendOpenMetricsFloat(nil, float64(x.time)/1e9)), 64)
			if err != nil {
				t.Fatal(err)
			}
			labels := map[string]string{"trace_id": x.trace, "span_id": x.span}
			v := strconv.FormatFloat(x.value, 'f', -1, 64)
			rw = append(rw, want{Labels: labels, Value: v, Ms: x.time / 1e6})
			scraped = append(scraped, want{Labels: labels, Value: v, Ms: int64(sec * 1000)})
		}
		return rw, scraped
	}
	rw, scraped := kept()
	if len(rw) != 2 || rw[0].Value != "2" || rw[1].Value != "3" {
		t.Fatalf("zerostat keeps %+v; want 2 and 3", rw)
	}
	tr1, sp1 := ids(sampledSpans[1])
	if rw[1].Labels["trace_id"] != tr1 || rw[1].Labels["span_id"] != sp1 {
		t.Fatalf("zerostat keeps %+v; want 3 with span 1's ids", rw)
	}
	// stored returns what Prometheus stores for the counter's series of
	// job, checking the series' labels.
	stored := func(got []testbackend.ExemplarSeries, job, instance string) []want {
		t.Helper()
		labels := map[string]string{"__name__": "otelcex_requests_total", "job": job, "instance": instance, "route": "/a"}
		var out []want
		for _, s := range got {
			if !reflect.DeepEqual(s.SeriesLabels, labels) {
				t.Errorf("series %v; want %v", s.SeriesLabels, labels)
			}
			for _, e := range s.Exemplars {
				ms, err := e.Millis()
				if err != nil {
					t.Error(err)
				}
				out = append(out, want{Labels: e.Labels, Value: e.Value, Ms: ms})
			}
		}
		return out
	}
	count := func(n int) func([]testbackend.ExemplarSeries) bool {
		return func(got []testbackend.ExemplarSeries) bool { return len(got) == 1 && len(got[0].Exemplars) >= n }
	}
	rwExpr, omExpr := `otelcex_requests_total{job="zerostat"}`, `otelcex_requests_total{job="otelcex"}`

	if err := w.Push(ctx); err != nil {
		t.Fatal(err)
	}
	if g := stored(prom.WaitExemplars(t, rwExpr, start, 10*time.Second, count(2)), "zerostat", "test"); !reflect.DeepEqual(g, rw) {
		t.Errorf("remote write: Prometheus stores\n%+v\nwant\n%+v", g, rw)
	}
	if g := stored(prom.WaitExemplars(t, omExpr, start, 30*time.Second, count(1)), "otelcex", srv.Listener.Addr().String()); !reflect.DeepEqual(g, scraped[1:]) {
		t.Errorf("scrape: Prometheus stores\n%+v\nwant the newest\n%+v", g, scraped[1:])
	}
	// The scrape that brought the counter's brought the up-down
	// counter's series, without exemplars; remote write sends none.
	if got, err := prom.QueryExemplars(`{__name__=~"otelcex_inflight.*"}`, start, time.Now()); err != nil || len(got) != 0 {
		t.Errorf("the up-down counter's exemplars in Prometheus: %+v (%v); want none", got, err)
	}

	// A later measurement in a sampled span: the next push carries it
	// alone, the next scrape exposes it; both add it.
	time.Sleep(2 * time.Millisecond)
	c.Add(in(sampledSpans[3]), 4, route)
	rw2, scraped2 := kept()
	if len(rw2) != 2 || rw2[0].Value != "4" || !reflect.DeepEqual(rw2[1], rw[1]) {
		t.Fatalf("zerostat keeps %+v; want 4 in the first slot (a new cycle), 3 still in the second", rw2)
	}
	if err := w.Push(ctx); err != nil {
		t.Fatal(err)
	}
	if g, w := stored(prom.WaitExemplars(t, rwExpr, start, 10*time.Second, count(3)), "zerostat", "test"), append(rw, rw2[0]); !reflect.DeepEqual(g, w) {
		t.Errorf("remote write, after another measurement: Prometheus stores\n%+v\nwant\n%+v", g, w)
	}
	if g, w := stored(prom.WaitExemplars(t, omExpr, start, 30*time.Second, count(2)), "otelcex", srv.Listener.Addr().String()), append(scraped[1:], scraped2[0]); !reflect.DeepEqual(g, w) {
		t.Errorf("scrape, after another measurement: Prometheus stores\n%+v\nwant\n%+v", g, w)
	}
	if got, err := prom.QueryExemplars(`{__name__=~"otelcex_inflight.*"}`, start, time.Now()); err != nil || len(got) != 0 {
		t.Errorf("the up-down counter's exemplars in Prometheus: %+v (%v); want none", got, err)
	}
}
