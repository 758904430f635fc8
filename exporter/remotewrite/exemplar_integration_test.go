package remotewrite

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http/httptest"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/internal/testbackend"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// storedExemplar is an exemplar as Prometheus's query API returns it.
type storedExemplar = testbackend.StoredExemplar

// TestBackendRemoteWritePrometheusExemplars (issue 47, items 3 and 4): a
// real Prometheus (--web.enable-remote-write-receiver,
// --enable-feature=exemplar-storage) stores the exemplars remote write
// carries on each bucket series (le) they were recorded into: the trace
// and span ids of the recorded span as trace_id and span_id, none for
// other attachments, the recorded value and time (to the millisecond).
// A later record into one bucket adds its exemplar there, and the stored
// exemplars are those a scrape of the OpenMetrics handler stores: one
// reading of exemplars (core.Series.Exemplars) on both paths.
func TestBackendRemoteWritePrometheusExemplars(t *testing.T) {
	p := fmt.Sprintf("rwexit%d", seq.Add(1))
	lat := stats.Float64(p+"/latency", "Latency", stats.UnitMilliseconds)
	register(t, &view.View{Name: p + "/latency", Measure: lat,
		Aggregation: view.DistributionUpperInclusive(10, 100), TagKeys: []tag.Key{keyRoute}})
	withSpans(t)
	scA, scB, scC, scD := span(0xa), span(0xb), span(0xc), span(0xd)
	ctx := ctxWith(t, tag.Upsert(keyRoute, "/a"))
	inSpan := func(sc stats.SpanContext) context.Context { return context.WithValue(ctx, spanKey{}, sc) }
	start := time.Now()
	recordEx(t, inSpan(scA), lat, 7, nil)                                                  // le=10, replaced before any push
	recordEx(t, inSpan(scB), lat, 3, nil)                                                  // le=10, the latest
	recordEx(t, ctx, lat, 50, map[string]interface{}{stats.AttachmentKeySpanContext: scC}) // le=100, explicit attachment
	stats.Record(ctx, lat.M(20))                                                           // le=100, no exemplar: 50 stays
	recordEx(t, ctx, lat, 500, map[string]interface{}{"user": "u"})                        // +Inf: an exemplar without labels

	om := httptest.NewServer(prometheus.NewHandler(prometheus.Options{Namespace: "rwit"}))
	defer om.Close()
	prom := testbackend.StartPrometheus(t, testbackend.PrometheusOptions{RemoteWriteReceiver: true, ExemplarStorage: true,
		Jobs: []testbackend.ScrapeJob{{Name: "openmetrics", Target: om.Listener.Addr().String()}}})
	w := newWriter(t, Options{URL: prom.URL + "/api/v1/write", Namespace: "rwit",
		ConstLabels: map[string]string{"job": "zerostat", "instance": "test"}})

	// want is, by le, what Prometheus must store: what zerostat keeps
	// for the bucket, its time in milliseconds (remote write's unit).
	want := func(i int, sc *stats.SpanContext) storedExemplar {
		t.Helper()
		x := recorded(t, p+"/latency", "/a", i, sc)
		e := storedExemplar{Labels: map[string]string{}, Value: strconv.FormatFloat(x.value, 'f', -1, 64), Ms: x.ts}
		if sc != nil {
			e.Labels["trace_id"] = hex.EncodeToString(sc.TraceID[:])
			e.Labels["span_id"] = hex.EncodeToString(sc.SpanID[:])
		}
		return e
	}
	wants := map[string][]storedExemplar{
		"10.0":  {want(0, &scB)},
		"100.0": {want(1, &scC)},
		"+Inf":  {want(2, nil)},
	}
	if wants["10.0"][0].Value != "3" || wants["100.0"][0].Value != "50" || wants["+Inf"][0].Value != "500" {
		t.Fatalf("zerostat keeps %+v", wants)
	}

	name := "rwit_" + p + "_latency_milliseconds_bucket"
	// stored turns the answer into le → exemplars, checking each series'
	// labels (the scrape's job and instance, or remote write's
	// ConstLabels).
	stored := func(got []testbackend.ExemplarSeries, job, instance string) map[string][]storedExemplar {
		t.Helper()
		return testbackend.ExemplarsByLe(t, got, map[string]string{"__name__": name, "job": job, "instance": instance, "route": "/a"})
	}
	count := func(n int) func([]testbackend.ExemplarSeries) bool {
		return func(got []testbackend.ExemplarSeries) bool {
			k := 0
			for _, s := range got {
				k += len(s.Exemplars)
			}
			return k >= n
		}
	}
	rwExpr, omExpr := name+`{job="zerostat"}`, name+`{job="openmetrics"}`

	if err := w.Push(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := prom.WaitExemplars(t, rwExpr, start, 10*time.Second, count(3))
	if g := stored(got, "zerostat", "test"); !reflect.DeepEqual(g, wants) {
		t.Errorf("first push: Prometheus stores\n%+v\nwant\n%+v", g, wants)
	}
	// The scrape stores the same three before the next record (its first
	// scrape comes about 5 s after start).
	prom.WaitExemplars(t, omExpr, start, 30*time.Second, count(3))

	// Record into le=10 again: the next push carries that exemplar (and
	// no other: TestExemplars), and Prometheus adds it to 3.
	recordEx(t, inSpan(scD), lat, 8, nil)
	wants["10.0"] = append(wants["10.0"], want(0, &scD))
	for range 2 {
		if err := w.Push(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	got = prom.WaitExemplars(t, rwExpr, start, 10*time.Second, count(4))
	rw := stored(got, "zerostat", "test")
	if !reflect.DeepEqual(rw, wants) {
		t.Errorf("after recording into le=10 again: Prometheus stores\n%+v\nwant\n%+v", rw, wants)
	}

	// The scrape path stores the same exemplars: labels and values
	// equal, times within a millisecond (OpenMetrics spells them in
	// seconds, which Prometheus's parser turns back into milliseconds).
	got = prom.WaitExemplars(t, omExpr, start, 30*time.Second, count(4))
	scraped := stored(got, "openmetrics", om.Listener.Addr().String())
	if len(scraped) != len(rw) {
		t.Errorf("the scrape stores exemplars on %d series, remote write on %d", len(scraped), len(rw))
	}
	for le, rs := range rw {
		ss := scraped[le]
		if len(ss) != len(rs) {
			t.Errorf("le=%s: the scrape stores %+v, remote write %+v", le, ss, rs)
			continue
		}
		for i := range rs {
			if d := ss[i].Ms - rs[i].Ms; !reflect.DeepEqual(ss[i].Labels, rs[i].Labels) || ss[i].Value != rs[i].Value || d < -1 || d > 1 {
				t.Errorf("le=%s: the scrape stores %+v, remote write %+v", le, ss[i], rs[i])
			}
		}
	}
	if st := w.Stats(); st.DroppedPoints != 0 {
		t.Errorf("stats %+v", st)
	}
}
