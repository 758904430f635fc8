package otel_test

import (
	"context"
	"net/http/httptest"
	"reflect"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/internal/promname"
	"github.com/zerostat/zerostat/internal/testbackend"
	zotel "github.com/zerostat/zerostat/otel"
	"github.com/zerostat/zerostat/view"
)

// A real Prometheus (Debian's 2.42, --enable-feature=exemplar-storage)
// scrapes zerostat's handler in OpenMetrics, and its exemplar query API
// returns, per bucket series of an OTel histogram, the measurement kept
// by the trace_based filter: the latest made in a sampled span, with that
// span's trace_id and span_id, its value, and its time (to Prometheus's
// millisecond); none for buckets recorded only outside a span or in a
// span not sampled. Prometheus keeps history: a bucket recorded into
// again in a sampled span has both exemplars.
func TestBackendPrometheusOTelExemplars(t *testing.T) {
	p := newProvider(t, zotel.WithViewPrefix("otelex."))
	h, _ := p.Meter("m").Int64Histogram("latency", metric.WithUnit("ms"), metric.WithExplicitBucketBoundaries(10, 100))
	route := metric.WithAttributeSet(attribute.NewSet(attribute.String("route", "/a")))
	in := func(sc trace.SpanContext) context.Context { return trace.ContextWithSpanContext(ctx, sc) }
	start := time.Now()
	h.Record(in(sampledSpans[0]), 7, route)  // le=10, replaced before any scrape
	h.Record(in(sampledSpans[1]), 10, route) // le=10, the latest
	h.Record(in(unsampled), 4, route)        // le=10, not sampled: not kept
	h.Record(in(sampledSpans[2]), 50, route) // le=100
	h.Record(ctx, 500, route)                // +Inf, outside a span: no exemplar

	srv := httptest.NewServer(prometheus.NewHandler(prometheus.Options{}))
	defer srv.Close()
	prom := testbackend.StartPrometheus(t, testbackend.PrometheusOptions{
		Jobs:            []testbackend.ScrapeJob{{Name: "otelex", Target: srv.Listener.Addr().String()}},
		ExemplarStorage: true,
	})

	type want = testbackend.StoredExemplar
	// latest says what Prometheus must store for bucket i's exemplar in
	// sc: zerostat's (view.RetrieveData) time, as the exposition spells it
	// in seconds and Prometheus's parser turns it into milliseconds.
	latest := func(i int, sc trace.SpanContext) want {
		t.Helper()
		rows, err := view.RetrieveData(p.ViewName("latency"))
		if err != nil || len(rows) != 1 {
			t.Fatalf("RetrieveData: %v, %v", rows, err)
		}
		e := rows[0].Data.(*view.DistributionData).ExemplarsPerBucket[i]
		sec, err := strconv.ParseFloat(string(promname.AppendOpenMetricsFloat(nil, float64(e.Timestamp.UnixNano())/1e9)), 64)
		if err != nil {
			t.Fatal(err)
		}
		tr, sp := ids(sc)
		return want{Labels: map[string]string{"trace_id": tr, "span_id": sp}, Value: strconv.FormatFloat(e.Value, 'f', -1, 64), Ms: int64(sec * 1000)}
	}
	wants := map[string][]want{
		"10.0":  {latest(0, sampledSpans[1])},
		"100.0": {latest(1, sampledSpans[2])},
	}
	if wants["10.0"][0].Value != "10" || wants["100.0"][0].Value != "50" {
		t.Fatalf("zerostat keeps %+v", wants)
	}
	name := "otelex_latency_milliseconds_bucket"
	expr := name + `{job="otelex"}`
	stored := func(got []testbackend.ExemplarSeries) map[string][]want {
		return testbackend.ExemplarsByLe(t, got, map[string]string{"__name__": name, "job": "otelex", "instance": srv.Listener.Addr().String(), "route": "/a"})
	}
	got := prom.WaitExemplars(t, expr, start, 30*time.Second, func(got []testbackend.ExemplarSeries) bool { return len(got) == 2 })
	if g := stored(got); !reflect.DeepEqual(g, wants) {
		t.Errorf("first scrape: Prometheus stores\n%+v\nwant\n%+v", g, wants)
	}

	// Recorded into le=10 again, in a sampled span: Prometheus adds it.
	h.Record(in(sampledSpans[3]), 9, route)
	wants["10.0"] = append(wants["10.0"], latest(0, sampledSpans[3]))
	got = prom.WaitExemplars(t, expr, start, 30*time.Second, func(got []testbackend.ExemplarSeries) bool {
		n := 0
		for _, s := range got {
			n += len(s.Exemplars)
		}
		return n >= 3
	})
	if g := stored(got); !reflect.DeepEqual(g, wants) {
		t.Errorf("after recording into le=10 again: Prometheus stores\n%+v\nwant\n%+v", g, wants)
	}
}
