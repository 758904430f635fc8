package prometheus

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/zerostat/zerostat/internal/promname"
	"github.com/zerostat/zerostat/internal/testbackend"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// spanKey carries a stats.SpanContext in a test context, as a tracer's
// context key would.
type spanKey struct{}

// A real Prometheus (--enable-feature=exemplar-storage) scrapes the
// handler in OpenMetrics and its exemplar query API returns, per bucket
// series, exactly the exemplars recorded: the value, trace_id and span_id
// labels from a span in the record's context or from an explicit
// SpanContext attachment, no labels for other attachments, the record's
// timestamp (to Prometheus's millisecond), and only the latest per bucket
// at each scrape. Prometheus keeps history: a bucket recorded into again
// after a scrape has both exemplars, and a re-scraped exemplar is stored
// once.
func TestBackendPrometheusExemplars(t *testing.T) {
	fixtureSeq++
	p := fmt.Sprintf("ex%d", fixtureSeq)
	route := tag.MustNewKey("route")
	lat := stats.Float64(p+"/latency", "Request latency", stats.UnitMilliseconds)
	register(t, &view.View{Name: p + "/latency", Measure: lat,
		Aggregation: view.DistributionUpperInclusive(10, 100), TagKeys: []tag.Key{route}})
	stats.SetSpanContextFunc(func(ctx context.Context) (stats.SpanContext, bool) {
		sc, ok := ctx.Value(spanKey{}).(stats.SpanContext)
		return sc, ok
	})
	t.Cleanup(func() { stats.SetSpanContextFunc(nil) })

	span := func(b byte) stats.SpanContext {
		return stats.SpanContext{TraceID: [16]byte{0x4b, 0xf9, 0x2f, 0x35, 14: b, 15: 0x01}, SpanID: [8]byte{0x00, 0xf0, 0x67, 0xaa, 7: b}}
	}
	scA, scB, scC, scD := span(0xa), span(0xb), span(0xc), span(0xd)
	ctx := ctxWith(t, tag.Upsert(route, "/a"))
	inSpan := func(sc stats.SpanContext) context.Context { return context.WithValue(ctx, spanKey{}, sc) }
	rec := func(ctx context.Context, v float64, att map[string]interface{}) {
		t.Helper()
		opts := []stats.Options{stats.WithMeasurements(lat.M(v))}
		if att != nil {
			opts = append(opts, stats.WithAttachments(att))
		}
		if err := stats.RecordWithOptions(ctx, opts...); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	rec(inSpan(scA), 7, nil)                                                  // le=10, replaced before any scrape
	rec(inSpan(scB), 3, nil)                                                  // le=10, the latest
	rec(ctx, 50, map[string]interface{}{stats.AttachmentKeySpanContext: scC}) // le=100, explicit attachment
	stats.Record(ctx, lat.M(20))                                              // le=100, no exemplar: 50 stays
	rec(ctx, 500, map[string]interface{}{"user": "u"})                        // +Inf: an exemplar without labels

	var seen seenFormats
	served := make(chan struct{}, 64) // a value per scrape served
	h := seen.wrap(NewHandler(Options{Namespace: "itest"}))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		select {
		case served <- struct{}{}:
		default:
		}
	}))
	defer srv.Close()
	prom := testbackend.StartPrometheus(t, testbackend.PrometheusOptions{
		Jobs:            []testbackend.ScrapeJob{{Name: "exemplars", Target: srv.Listener.Addr().String()}},
		ExemplarStorage: true,
	})

	// want is what Prometheus must store for one bucket series.
	type want = testbackend.StoredExemplar
	// latest reads the exemplar zerostat keeps for bucket i and says what
	// Prometheus must store for it: the exposition spells its time in
	// seconds (promname.AppendOpenMetricsFloat), which Prometheus's parser
	// turns into int64(seconds*1000) milliseconds.
	latest := func(i int, sc *stats.SpanContext) want {
		t.Helper()
		rows, err := view.RetrieveData(p + "/latency")
		if err != nil || len(rows) != 1 {
			t.Fatalf("RetrieveData: %v, %v", rows, err)
		}
		e := rows[0].Data.(*view.DistributionData).ExemplarsPerBucket[i]
		sec, err := strconv.ParseFloat(string(promname.AppendOpenMetricsFloat(nil, float64(e.Timestamp.UnixNano())/1e9)), 64)
		if err != nil {
			t.Fatal(err)
		}
		w := want{Labels: map[string]string{}, Value: strconv.FormatFloat(e.Value, 'f', -1, 64), Ms: int64(sec * 1000)}
		if d := w.Ms - e.Timestamp.UnixMilli(); d < -1 || d > 1 {
			t.Fatalf("bucket %d: %d ms from %v", i, w.Ms, e.Timestamp)
		}
		if sc != nil {
			w.Labels["trace_id"] = hex.EncodeToString(sc.TraceID[:])
			w.Labels["span_id"] = hex.EncodeToString(sc.SpanID[:])
		}
		return w
	}
	wants := map[string][]want{
		"10.0":  {latest(0, &scB)},
		"100.0": {latest(1, &scC)},
		"+Inf":  {latest(2, nil)},
	}
	if wants["10.0"][0].Value != "3" || wants["100.0"][0].Value != "50" || wants["+Inf"][0].Value != "500" {
		t.Fatalf("zerostat keeps %+v", wants)
	}

	name := "itest_" + p + "_latency_milliseconds_bucket"
	expr := name + `{job="exemplars"}`
	// stored turns the answer into le → exemplars, checking each series'
	// labels.
	stored := func(got []testbackend.ExemplarSeries) map[string][]want {
		return testbackend.ExemplarsByLe(t, got, map[string]string{"__name__": name, "job": "exemplars", "instance": srv.Listener.Addr().String(), "route": "/a"})
	}
	compare := func(phase string, got []testbackend.ExemplarSeries) {
		t.Helper()
		if g := stored(got); !reflect.DeepEqual(g, wants) {
			t.Errorf("%s: Prometheus stores\n%+v\nwant\n%+v", phase, g, wants)
		}
	}
	// Buckets' exemplars come in one scrape: once the three series have
	// one, the scrape that brought them is ingested.
	got := prom.WaitExemplars(t, expr, start, 30*time.Second, func(got []testbackend.ExemplarSeries) bool { return len(got) == 3 })
	compare("first scrape", got)

	// Record into the le=10 bucket again: the next scrapes expose only
	// 8 there, and Prometheus adds it to 3.
	rec(inSpan(scD), 8, nil)
	wants["10.0"] = append(wants["10.0"], latest(0, &scD))
	prom.WaitExemplars(t, expr, start, 30*time.Second, func(got []testbackend.ExemplarSeries) bool {
		n := 0
		for _, s := range got {
			n += len(s.Exemplars)
		}
		return n >= 4
	})
	// Two more scrapes: Prometheus scrapes a target in sequence and
	// commits one scrape before it starts the next, so when the second
	// arrives the first, which re-exposed every bucket's exemplar, is
	// stored.
	for len(served) > 0 {
		<-served
	}
	for i := 0; i < 2; i++ {
		select {
		case <-served:
		case <-time.After(30 * time.Second):
			t.Fatalf("no scrape in 30 s")
		}
	}
	got, err := prom.QueryExemplars(expr, start, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	compare("after recording into le=10 again", got)

	seen.mu.Lock()
	defer seen.mu.Unlock()
	if seen.types[ContentTypeOpenMetrics+" gzip"] == 0 || len(seen.types) != 1 {
		t.Errorf("served %v (Accept %q); want OpenMetrics only", seen.types, seen.accepts)
	}
}
